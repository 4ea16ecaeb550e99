"""Brace expansion of globs, as bash does it: `src/**/*.{ts,tsx}` is two patterns.

Glob and Grep, the rules' `paths:` globs (memory/globs.py) and the Bash reads a command line
may expand (shell/bash_reads.py) expand braces the same way, so it lives below all of them.
"""

from __future__ import annotations

# A glob with several brace sets multiplies out; past this many patterns it is
# almost certainly a mistake, and compiling it would stall the session.
MAX_BRACE_EXPANSIONS = 256


def _match_brace(text: str, start: int) -> tuple[int, list[int]] | None:
    """Index of the `}` closing the `{` at `start`, and its top-level commas; None if unclosed."""
    depth, i = 0, start
    commas: list[int] = []
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i, commas
        elif ch == "," and depth == 1:
            commas.append(i)
        i += 1
    return None


def _first_brace_set(text: str) -> tuple[int, int, list[str]] | None:
    """The first `{a,b}` set in `text` as (start, end, options); `{a}` alone is literal, as in bash."""
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "{":
            closed = _match_brace(text, i)
            if closed is None:
                return None  # an unclosed brace: everything after it is literal
            end, commas = closed
            if commas:
                cuts = [i, *commas, end]
                return i, end, [text[a + 1 : b] for a, b in zip(cuts, cuts[1:], strict=False)]
        i += 1
    return None


def expand_braces(glob: str) -> list[str]:
    """`src/**/*.{ts,tsx}` -> [`src/**/*.ts`, `src/**/*.tsx`]; nested and repeated sets expand too.

    `{a}` and an unclosed `{` stay literal (as in bash) and a backslash escapes a brace;
    a glob that would expand to more than MAX_BRACE_EXPANSIONS patterns raises ValueError.
    """
    found = _first_brace_set(glob)
    if found is None:
        return [glob]
    start, end, options = found
    out: list[str] = []
    for option in options:
        # Re-expanding the whole string handles sets nested in `option` and sets after `end`.
        out.extend(expand_braces(glob[:start] + option + glob[end + 1 :]))
        if len(out) > MAX_BRACE_EXPANSIONS:
            raise ValueError(f"{glob!r} expands to more than {MAX_BRACE_EXPANSIONS} patterns; use fewer brace sets")
    return out


def split_outside_braces(body: str) -> list[str]:
    """Split at commas that are not inside braces: 'a,{b,c}' -> ['a', '{b,c}']."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in body:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += (char == "{") - (char == "}")
        current.append(char)
    parts.append("".join(current))
    return parts
