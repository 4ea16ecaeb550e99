"""Text helpers: model- and tool-derived text made safe to draw in a terminal; one line, clip, within.

A terminal obeys control characters wherever they come from. Text from the
model, from a file or from a command's output could otherwise move the cursor
and erase what an approval prompt shows (so `ls -la` is displayed while
`rm -f ...` is approved), overwrite a line with a carriage return, change the
window title, or write the clipboard (OSC 52). Unicode bidi overrides and
isolates reorder what is shown without any escape sequence at all.

`visible_controls` replaces each such character by a visible, printable
escape written as Python's repr writes it: `\\x1b` for ESC, `\\r` for CR,
`\\x9b` for the C1 CSI, `\\u202e` for a right-to-left override. Every
character is replaced on its own, so a sequence split across two streamed
chunks is neutralised as well as a whole one, and the result is idempotent
(escapes are plain printable ASCII). Newline and tab are kept. One scan for
a character class, then one `str.translate` pass: linear in the length
(0.1-0.2 µs a character here when most are controls, 10 ns when none is).
"""

from __future__ import annotations

import os
import re

# C0 but newline and tab, DEL, C1; the bidi embeddings/overrides (U+202A-U+202E), isolates
# (U+2066-U+2069) and implicit marks (U+061C, U+200E, U+200F); the line and paragraph
# separators some renderers treat as newlines.
UNSAFE_CODES = (
    *range(0x00, 0x09),
    *range(0x0B, 0x20),
    *range(0x7F, 0xA0),
    0x061C,
    0x200E,
    0x200F,
    0x2028,
    0x2029,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
)
UNSAFE = re.compile("[" + "".join(re.escape(chr(code)) for code in UNSAFE_CODES) + "]")


def _escape(code: int) -> str:
    """The visible form of one unsafe character, as Python's repr writes it: `\\r`, `\\x1b`, `\\u202e`."""
    if code == 0x0D:
        return "\\r"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


VISIBLE = {code: _escape(code) for code in UNSAFE_CODES}
JSON_ESCAPES = {code: f"\\u{code:04x}" for code in UNSAFE_CODES}


def visible_controls(text: str) -> str:
    """`text` with every terminal control (C0 but newline and tab, DEL, C1) and bidi control made visible."""
    return text.translate(VISIBLE) if UNSAFE.search(text) else text


def json_safe(dumped: str) -> str:
    """A `json.dumps` result with the raw DEL, C1 and bidi characters it leaves as `\\uXXXX` escapes.

    `json.dumps(..., ensure_ascii=False)` escapes C0 controls but writes DEL, C1 and
    the bidi controls raw. Outside strings JSON is plain ASCII, so the only places
    these characters can be are inside strings, where `\\uXXXX` parses to the same
    value: the output means exactly the same to a JSON reader.
    """
    return dumped.translate(JSON_ESCAPES) if UNSAFE.search(dumped) else dumped


def one_line(text: object, limit: int | None = None, *, terminal: bool = False) -> str:
    """`text` on one line (every whitespace run, newlines included, one space), clipped to `limit` if given.

    `terminal`: terminal controls are made visible first, for text from the model, a file or a
    command that is drawn in a terminal (a newline would otherwise end the line, an escape redraw it).
    """
    raw = str(text)
    flat = " ".join((visible_controls(raw) if terminal else raw).split())
    return flat if limit is None else clip(flat, limit)


def clip(text: str, limit: int, *, strip: bool = False) -> str:
    """`text` cut to `limit` characters, the last one "…" when it was cut; `strip` drops spaces before "…"."""
    if len(text) <= limit:
        return text
    kept = text[: max(limit - 1, 0)]
    return (kept.rstrip() if strip else kept) + "…"


def within(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies under it (both absolute and normalised, or both resolved)."""
    # The separator matters: /repo-other is not under /repo.
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def estimate_tokens(text: str) -> int:
    """A cheap, deterministic token count (about 4 characters a token), enough for budgets and reports."""
    return (len(text) + 3) // 4
