"""The transcript view's content: every message, tool calls with every argument and their whole output."""

from __future__ import annotations

from prompt_toolkit.input import DummyInput
from prompt_toolkit.output import DummyOutput

from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.tools.base import ToolResult
from claude_mini.ui.shell_mode import exchange_blocks, shell_command, shell_part
from claude_mini.ui.transcript_view import TranscriptPager, conversation_lines


def plain(lines) -> list[str]:
    return ["".join(text for _, text, *_ in line).rstrip() for line in lines]


def test_the_view_shows_every_argument_and_the_whole_result():
    output = "\n".join(str(n) for n in range(1, 31))
    messages = [
        Message("user", [TextBlock("count please")]),
        Message("assistant", [TextBlock("Counting."), ToolUseBlock("t1", "Bash", {"command": "seq 30", "timeout": 5})]),
        Message(
            "user", [ToolResultBlock("t1", output), TextBlock("<system-reminder>\nrecalled things\n</system-reminder>")]
        ),
        Message("assistant", [TextBlock("1. first\n2. second")]),
    ]
    lines = plain(conversation_lines(messages, 60))
    assert "> count please" in lines and "Counting." in lines
    assert "● Bash(seq 30)" in lines
    assert "    command: seq 30" in lines and "    timeout: 5" in lines
    assert "  ⎿  1" in lines and "     30" in lines  # nothing cut
    assert any(line.startswith("  ⋯ <system-reminder> recalled things") for line in lines)
    assert " 1. first" in lines


def test_a_shell_exchange_has_claude_codes_shapes_and_is_shown_as_typed():
    note, typed, output = exchange_blocks("git status", ToolResult("On branch main"))
    assert note.text.startswith("<local-command-caveat>") and note.text.endswith("</local-command-caveat>")
    assert typed.text == "<bash-input>git status</bash-input>"
    assert output.text == "<bash-stdout>On branch main</bash-stdout><bash-stderr></bash-stderr>"
    assert [shell_part(b.text) for b in (note, typed, output)] == [
        ("note", ""),
        ("input", "git status"),
        ("output", "On branch main"),
    ]
    assert shell_part("please run <bash-input>x</bash-input>") is None  # only a whole block is one
    lines = plain(conversation_lines([Message("user", [note, typed, output, TextBlock("and now?")])], 60))
    assert [line for line in lines if line] == ["! git status", "  ⎿  On branch main", "> and now?"]
    assert shell_command("  !ls -la ") == "ls -la" and shell_command("!") == "" and shell_command("ls") is None


def test_the_pager_opens_at_the_end_and_scrolls_within_bounds():
    # Its own input and output: a default one would be the process's, kept for later tests' prints.
    pager = TranscriptPager([[("", str(n))] for n in range(100)], input=DummyInput(), output=DummyOutput())
    pager._height = lambda: 10  # type: ignore[method-assign]
    pager.top = 100
    assert plain([[f] for f in pager._visible() if f[1] != "\n"])[0] == "90"
    pager.scroll(-500)
    assert pager.top == 0
    pager.scroll(5)
    assert pager.top == 5
