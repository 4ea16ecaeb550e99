"""Ctrl-V in the REPL: an image on the clipboard becomes a file whose path goes into the input.

Pillow's `ImageGrab.grabclipboard` reads the clipboard: natively on macOS and Windows, through
`wl-paste` (Wayland) or `xclip` (X11) on Linux, which claude-mini does not install; without them
Ctrl-V says so in one line. The image is saved as a PNG in a temp folder and its quoted path is
typed into the input, so it is attached when the message is sent, as a pasted path is
(mentions.py), and the user sees what goes.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

NO_TOOL = (
    "Ctrl-V pastes an image from the clipboard; on Linux that needs wl-paste (Wayland) or xclip (X11), "
    "and neither is installed. Paste or drag the image's file path instead."
)


def clipboard_image(folder: Path | None = None) -> tuple[Path | None, str]:
    """The clipboard's image saved as a PNG (its path), or None and one line saying why not."""
    from PIL import Image, ImageGrab  # startup: Pillow loads only on Ctrl-V

    try:
        grabbed = ImageGrab.grabclipboard()
    except NotImplementedError:
        return None, NO_TOOL
    except Exception as exc:  # a clipboard tool that failed (no display, a timeout): said, not raised
        return None, f"Could not read the clipboard ({type(exc).__name__}: {exc})."
    if not isinstance(grabbed, Image.Image):
        return None, "There is no image on the clipboard (Ctrl-V pastes images; paste text as usual)."
    target = folder or Path(tempfile.gettempdir()) / "claude-mini-pasted"
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"pasted-{time.strftime('%Y%m%d-%H%M%S')}-{id(grabbed) % 10_000:04d}.png"
    grabbed.save(path, "PNG")
    return path, ""
