"""Images and PDFs as the model sees them: checked, scaled to the API's limits, base64 blocks.

An image (png, jpg, gif, webp) is recognised by its first bytes, opened with Pillow (imported
here, never at start-up) so a broken file is one clear error, and scaled down when it is larger
than the API would use: the API shrinks every image to 1568 px a side and about 1.15 megapixels
(~1,600 tokens) anyway, and refuses one over 8000 px or 5 MB, so sending more only costs upload
time. A PDF goes as a `document` block; a long one is read in parts (`pages`, at most
MAX_PDF_PAGES a call), cut out with pypdf.
"""

from __future__ import annotations

import base64
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.llm.messages import MediaBlock
from claude_mini.tools.base import ToolError

if TYPE_CHECKING:
    from PIL import Image

IMAGE_EXTENSIONS = frozenset(("png", "jpg", "jpeg", "gif", "webp"))
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
MAX_EDGE = 1568
MAX_PIXELS = 1_150_000
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # the API's limit, on the base64 text sent
MAX_FILE_BYTES = 50 * 1024 * 1024  # an image file larger than this is not opened at all
# A PDF longer than this must be read in parts; one call reads at most MAX_PDF_PAGES pages.
PDF_WHOLE_PAGES = 10
MAX_PDF_PAGES = 20
MAX_PDF_BYTES = 20 * 1024 * 1024  # the request must stay under the API's 32 MB once base64 grows it
PDF_PAGE_TOKENS = 2000  # the API's documents: 1,500-3,000 tokens a page (its text and its image)


@dataclass
class Loaded:
    """A media block and the line that tells the model (and the user) what it is."""

    block: MediaBlock
    summary: str


def is_image_path(path: Path) -> bool:
    """Whether the name says image (png, jpg, jpeg, gif, webp)."""
    return path.suffix.lower().lstrip(".") in IMAGE_EXTENSIONS


def is_pdf_path(path: Path) -> bool:
    """Whether the name says PDF."""
    return path.suffix.lower() == ".pdf"


def sniff_image(head: bytes) -> str | None:
    """The Pillow format name for an image's first bytes, or None when they are no image we send."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    return None


def load_image(path: Path, label: str) -> Loaded:
    """The image at `path` as an image block, scaled down if over the limits; ToolError if it is
    not a readable png, jpg, gif or webp."""
    data = _read_bytes(path, MAX_FILE_BYTES, "image")
    return image_from_bytes(data, label)


def image_from_bytes(data: bytes, label: str) -> Loaded:
    """An image block from the bytes of an image file (a pasted or clipboard image too)."""
    fmt = sniff_image(data[:16])
    if fmt is None:
        raise ToolError(f"{label} is not a PNG, JPEG, GIF or WebP image (its first bytes say otherwise); nothing sent.")
    from PIL import Image, UnidentifiedImageError  # startup: Pillow loads only for an image

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()  # a truncated or corrupt file fails here, not in the API
            return _fit(img, data, fmt, label)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise ToolError(f"{label} is a broken {fmt} image ({exc}); nothing sent.") from None


def _fit(img: Image.Image, data: bytes, fmt: str, label: str) -> Loaded:
    """The block for an opened image: as it is when within the limits, else scaled and re-encoded."""
    width, height = img.size
    scale = min(1.0, MAX_EDGE / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    if scale >= 1.0 and _b64_len(data) <= MAX_IMAGE_BYTES and fmt != "GIF":
        return Loaded(_block(data, MEDIA_TYPES[fmt], width, height, label), f"{fmt} {width}x{height}")
    # GIFs are re-encoded too: an animated one would cost every frame; the first one is sent.
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    frame = img.convert("RGBA" if img.mode in ("RGBA", "LA", "P") else "RGB").resize(size)
    out, media_type = _encode(frame)
    note = f"{fmt} {width}x{height}, sent scaled to {size[0]}x{size[1]}" if scale < 1.0 else f"{fmt} {width}x{height}"
    return Loaded(_block(out, media_type, *size, label), note)


def _encode(frame: Image.Image) -> tuple[bytes, str]:
    """PNG when it fits the API's size limit (sharp text in screenshots), else JPEG."""
    buffer = io.BytesIO()
    frame.save(buffer, "PNG", optimize=True)
    if _b64_len(buffer.getvalue()) <= MAX_IMAGE_BYTES:
        return buffer.getvalue(), "image/png"
    buffer = io.BytesIO()
    frame.convert("RGB").save(buffer, "JPEG", quality=85)
    return buffer.getvalue(), "image/jpeg"


def _block(data: bytes, media_type: str, width: int, height: int, label: str) -> MediaBlock:
    tokens = math.ceil(width * height / 750)  # the API's rule for an image's tokens
    return MediaBlock("image", media_type, base64.b64encode(data).decode("ascii"), tokens, label)


def _b64_len(data: bytes) -> int:
    return (len(data) + 2) // 3 * 4


def load_pdf(path: Path, label: str, pages: str | None) -> Loaded:
    """The PDF at `path` (or the `pages` of it) as a document block; ToolError when it is not a
    PDF, is too long to read whole, or `pages` is malformed."""
    data = _read_bytes(path, None, "PDF")
    if not data.startswith(b"%PDF-"):
        raise ToolError(f"{label} is not a PDF (it does not start with %PDF-); nothing sent.")
    from pypdf import PdfReader, PdfWriter  # startup: pypdf loads only for a PDF
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        count = len(reader.pages)
        if pages is None:
            if count > PDF_WHOLE_PAGES or len(data) > MAX_PDF_BYTES:
                size = f" ({len(data) / 1e6:.0f} MB)" if len(data) > MAX_PDF_BYTES else ""
                raise ToolError(
                    f"{label} has {count} pages{size}: too long to read whole. "
                    f'Read it in parts with `pages` (e.g. "1-{MAX_PDF_PAGES}"), at most {MAX_PDF_PAGES} pages a call.'
                )
            chosen, body = list(range(1, count + 1)), data
        else:
            chosen = parse_pages(pages, count)
            writer = PdfWriter()
            for number in chosen:
                writer.add_page(reader.pages[number - 1])
            buffer = io.BytesIO()
            writer.write(buffer)
            body = buffer.getvalue()
    except (PyPdfError, ValueError, KeyError, OSError) as exc:
        raise ToolError(f"{label} cannot be read as a PDF ({exc}); nothing sent.") from None
    block = MediaBlock("document", "application/pdf", base64.b64encode(body).decode("ascii"), 0, label)
    block.tokens = len(chosen) * PDF_PAGE_TOKENS
    whole = f"{count} page{'s' if count != 1 else ''}"
    shown = f"pages {chosen[0]}-{chosen[-1]} of {count}" if pages is not None else whole
    return Loaded(block, f"PDF, {shown}")


_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d*)\s*)?$")


def parse_pages(text: str, count: int) -> list[int]:
    """`"3"`, `"1-5"` or `"10-"` -> 1-based page numbers within `count`; ToolError when malformed,
    past the end or longer than MAX_PDF_PAGES."""
    match = _RANGE.match(text)
    if not match:
        raise ToolError(f'`pages` must be a page or a range like "3" or "1-5", got {text!r}.')
    first = int(match.group(1))
    last = first if match.group(2) is None else int(match.group(2) or count)
    if first < 1 or last < first:
        raise ToolError(f"`pages` {text!r} is not a range of pages (they start at 1).")
    if first > count:
        raise ToolError(f"The PDF has {count} pages; `pages` {text!r} starts past its end.")
    last = min(last, count)
    if last - first + 1 > MAX_PDF_PAGES:
        raise ToolError(f"`pages` {text!r} names {last - first + 1} pages; read at most {MAX_PDF_PAGES} a call.")
    return list(range(first, last + 1))


def _read_bytes(path: Path, limit: int | None, what: str) -> bytes:
    try:
        size = path.stat().st_size
        if limit is not None and size > limit:
            raise ToolError(
                f"{path} is {size / 1e6:.0f} MB, too large to send as an {what} (limit {limit / 1e6:.0f} MB)."
            )
        return path.read_bytes()
    except PermissionError:
        raise ToolError(f"Permission denied reading {path}.") from None
    except OSError as exc:
        raise ToolError(f"{path} could not be read ({exc.strerror or exc}).") from None
