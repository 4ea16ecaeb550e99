"""The text as the secret scan sees it: what a reader would copy, without the tricks that hide a token.

A token survives as a secret when a person (or a model) reading the file can
copy it, even if its characters are not the ASCII ones the patterns expect. So,
for the scan only (the file keeps its text), `fold_for_scan`:

- decomposes compatibility forms (NFKD: fullwidth `ｇｈｐ＿` is `ghp_`, `é` is `e` + a mark);
- drops what draws nothing or merges with its neighbour: formatting characters
  (category Cf: zero-width space/joiners, bidi overrides like U+202E, tag
  characters U+E0000-U+E007F), combining and enclosing marks (Mn, Me, which
  include the variation selectors), private-use characters, control characters
  (BEL, backspace, ESC, ...; tab, line breaks, VT and FF stay), Hangul fillers (U+3164, U+FFA0, U+115F, U+1160) and the
  blank braille pattern U+2800;
- folds the Cyrillic and Greek letters that look like Latin ones (`р`, `А`, `ο`)
  to ASCII, so `ghр_…` or `DB_PАSSWORD` reads as `ghp_…` / `DB_PASSWORD`.

Line breaks are never added or removed, so line numbers stay those of the file.
ASCII text costs one `isascii` and one search for control characters.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_HIDDEN_CATEGORIES = frozenset({"Cf", "Mn", "Me", "Co"})
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# Lookalikes of Latin letters (Unicode's confusables for the Cyrillic and Greek blocks, the
# letters people actually use to disguise ASCII words); each maps to one ASCII letter.
_LOOKALIKES = {
    # Cyrillic lower case
    "а": "a",
    "в": "b",
    "е": "e",
    "к": "k",
    "м": "m",
    "н": "h",
    "о": "o",
    "р": "p",
    "с": "c",
    "т": "t",
    "у": "y",
    "х": "x",
    "ѕ": "s",
    "і": "i",
    "ј": "j",
    "ԁ": "d",
    "ԛ": "q",
    "ԝ": "w",
    "һ": "h",
    "ӏ": "l",
    "ү": "y",
    "ѵ": "v",
    # Cyrillic upper case
    "А": "A",
    "В": "B",
    "Е": "E",
    "К": "K",
    "М": "M",
    "Н": "H",
    "О": "O",
    "Р": "P",
    "С": "C",
    "Т": "T",
    "Х": "X",
    "У": "Y",
    "Ѕ": "S",
    "І": "I",
    "Ј": "J",
    "Ԛ": "Q",
    "Ԝ": "W",
    "Ү": "Y",
    "Ӏ": "I",
    "Һ": "H",
    "Ԁ": "D",
    "Ѵ": "V",
    # Greek
    "Α": "A",
    "Β": "B",
    "Ε": "E",
    "Ζ": "Z",
    "Η": "H",
    "Ι": "I",
    "Κ": "K",
    "Μ": "M",
    "Ν": "N",
    "Ο": "O",
    "Ρ": "P",
    "Τ": "T",
    "Υ": "Y",
    "Χ": "X",
    "ο": "o",
    "α": "a",
    "ν": "v",
    "ρ": "p",
    "τ": "t",
    "υ": "u",
    "κ": "k",
    "ι": "i",
    "χ": "x",
    "ϲ": "c",
    "ϳ": "j",
    "ε": "e",
    "γ": "y",
    "Ϲ": "C",
    "Ϳ": "J",
    # Latin letters that are not ASCII but read as ASCII (NFKD leaves them alone)
    "ı": "i",
    "ȷ": "j",
    "ɑ": "a",
    "ɡ": "g",
    "ɩ": "i",
    "ʏ": "y",
    "ɪ": "i",
    "ℓ": "l",
}
_FOLD = str.maketrans(_LOOKALIKES)
_LOOKALIKE_RUN = re.compile("[" + "".join(sorted(_LOOKALIKES)) + "]+")
_ASTRAL = 0x10000
_KEPT_CONTROLS = "\t\n\r\x0b\x0c\x85"  # whitespace and line breaks: they separate words
_ASCII_HIDDEN = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]+")


def is_hidden(char: str) -> bool:
    """Whether `char` draws nothing of its own (or only changes its neighbour) when shown."""
    category = unicodedata.category(char)
    return category in _HIDDEN_CATEGORIES or char in _BLANK_LETTERS or (category == "Cc" and char not in _KEPT_CONTROLS)


@functools.cache
def _hidden_run() -> re.Pattern[str]:
    """A regex for runs of hidden BMP characters or of any astral ones (checked one by one).

    Built on first use (about 0.01 s): the BMP class is one bitmap in the regex
    engine, which is fast; astral ranges would be tested one by one per character.
    """
    ranges: list[tuple[int, int]] = []
    for code in range(0x80, _ASTRAL):
        if is_hidden(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    parts = "".join(re.escape(chr(a)) + ("" if a == b else "-" + re.escape(chr(b))) for a, b in ranges)
    return re.compile(f"[{parts}\U00010000-\U0010ffff]+")


def _without_hidden(match: re.Match[str]) -> str:
    """A run of the hidden-or-astral regex with the visible astral characters kept."""
    run = match.group()
    return "".join(c for c in run if ord(c) >= _ASTRAL and not is_hidden(c))


def fold_for_scan(text: str) -> str:
    """`text` as a reader would copy it, for the secret scan only (see the module docstring)."""
    if text.isascii():
        return _ASCII_HIDDEN.sub("", text) if _ASCII_HIDDEN.search(text) else text
    text = unicodedata.normalize("NFKD", text)
    text = _hidden_run().sub(_without_hidden, text)
    return _LOOKALIKE_RUN.sub(lambda m: m.group().translate(_FOLD), text)
