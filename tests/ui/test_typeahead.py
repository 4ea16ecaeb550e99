"""Keys typed while a turn runs: the lines they send with Enter and the line shown as it is typed."""

from __future__ import annotations

from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

from claude_mini.ui.terminal import split_submitted, typed_text


def typed(text: str) -> list[KeyPress]:
    return [KeyPress(Keys.ControlM, "\r") if ch == "\r" else KeyPress(ch, ch) for ch in text]


def test_enter_sends_a_line_and_the_rest_is_the_line_being_typed():
    keys = typed("fix the tests\rand th")
    lines, rest = split_submitted(keys)
    assert lines == ["fix the tests"]
    assert typed_text(keys) == "and th" == typed_text(rest)


def test_the_line_being_typed_is_edited_as_the_prompt_would():
    backspace = [KeyPress(Keys.ControlH, "\x08")]
    assert typed_text([*typed("helo"), *backspace, *typed("lo")]) == "hello"
    assert typed_text([*typed("delete these words "), KeyPress(Keys.ControlW, "\x17")]) == "delete these "
    assert typed_text([*typed("gone"), KeyPress(Keys.ControlU, "\x15"), *typed("kept")]) == "kept"
