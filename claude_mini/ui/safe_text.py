"""Make model- and tool-derived text safe to draw in a terminal.

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
(escapes are plain printable ASCII). Newline and tab are kept. The scan is
one regular-expression pass over a character class: linear in the length.
"""

from __future__ import annotations

import re

# Bidi embeddings/overrides (U+202A-U+202E), isolates (U+2066-U+2069), the implicit marks
# (U+200E, U+200F, U+061C), and the line/paragraph separators some renderers treat as newlines.
_UNICODE_CONTROLS = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_UNICODE_CONTROLS}]")


def _escape(char: str) -> str:
    """The visible form of one unsafe character, as Python's repr writes it: `\\r`, `\\x1b`, `\\u202e`."""
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible_controls(text: str) -> str:
    """`text` with every terminal control (C0 but newline and tab, DEL, C1) and bidi control made visible."""
    if not UNSAFE.search(text):
        return text
    return UNSAFE.sub(lambda match: _escape(match.group()), text)


def json_safe(dumped: str) -> str:
    """A `json.dumps` result with the raw DEL, C1 and bidi characters it leaves as `\\uXXXX` escapes.

    `json.dumps(..., ensure_ascii=False)` escapes C0 controls but writes DEL, C1 and
    the bidi controls raw. Outside strings JSON is plain ASCII, so the only places
    these characters can be are inside strings, where `\\uXXXX` parses to the same
    value: the output means exactly the same to a JSON reader.
    """
    if not UNSAFE.search(dumped):
        return dumped
    return UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", dumped)
