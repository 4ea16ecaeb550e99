"""Rendering of agent events, printed to a StringIO console at a fixed width."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console
from rich.markdown import Markdown
from rich.text import Text

from claude_mini.agent.events import MessageAdded, ToolFinished, ToolStarted
from claude_mini.base.notices import Notice
from claude_mini.llm.events import BlockDone, Retrying, TextDelta, ToolUseStart
from claude_mini.llm.messages import Message, TextBlock, ToolUseBlock
from claude_mini.tools.base import ToolResult
from claude_mini.ui.render import (
    Renderer,
    _Trimmed,
    permission_preview,
    preview_diff,
    split_complete,
    tool_block,
    tool_label,
)
from tests.ui.conftest import WIDTH, make_console


def rendered(renderable, width: int = WIDTH) -> str:
    console = make_console(width)
    console.print(renderable)
    return console.file.getvalue()


def lines_of(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def stream(renderer: Renderer, text: str, size: int = 7) -> None:
    for i in range(0, len(text), size):
        renderer.on_event(TextDelta(text[i : i + size], 0))


@pytest.mark.parametrize(
    ("text", "done", "rest"),
    [
        ("Hello", "", "Hello"),
        ("Hello\n", "", "Hello\n"),
        ("One.\n\nTwo", "One.\n\n", "Two"),
        ("```py\nx = 1\n\ny = 2\n", "", "```py\nx = 1\n\ny = 2\n"),  # a blank line inside a fence
        ("```py\nx = 1\n```\nAfter", "```py\nx = 1\n```\n", "After"),
        ("A\n\nB\n\n```\ncode", "A\n\nB\n\n", "```\ncode"),
    ],
)
def test_split_complete(text, done, rest):
    assert split_complete(text) == (done, rest, False)


def test_a_long_open_block_is_cut_into_pieces():
    code = "Intro\n\n```python\n" + "".join(f"x{i} = {i}\n" for i in range(5)) + "x5"
    assert split_complete(code, chunk_lines=4) == (
        "Intro\n\n```python\nx0 = 0\nx1 = 1\nx2 = 2\n```\n",
        "```python\nx3 = 3\nx4 = 4\nx5",
        True,
    )
    prose = "".join(f"line {i}\n" for i in range(6))
    assert split_complete(prose, chunk_lines=4) == ("line 0\nline 1\nline 2\nline 3\n", "line 4\nline 5\n", True)


def test_long_code_is_printed_in_pieces_that_look_like_one_block():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    stream(renderer, "```\n" + "".join(f"row {i}\n" for i in range(45)))
    assert "row 18" in console.file.getvalue() and "row 40" not in console.file.getvalue()
    stream(renderer, "```\nafter\n")
    renderer.end_turn()
    out = lines_of(console.file.getvalue())
    assert out[:45] == [f" row {i}" for i in range(45)] and out[45:] == ["", "after"]


def test_markdown_is_printed_block_by_block():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    stream(renderer, "Hello **world**, see `x`.\n\n")
    assert lines_of(console.file.getvalue()) == ["Hello world, see x."]  # printed before the turn ends
    stream(renderer, "- one\n- two\n\n```python\ndef f():\n    return 1\n```\nLast words")
    assert "Last words" not in console.file.getvalue()
    renderer.on_event(BlockDone(TextBlock("..."), 0))
    renderer.end_turn()
    assert lines_of(console.file.getvalue()) == [
        "Hello world, see x.",
        "",
        " • one",
        " • two",
        "",
        " def f():",
        "     return 1",
        "",
        "Last words",
    ]


def test_plain_output_streams_raw_text():
    console = make_console()
    renderer = Renderer(console, plain=True)
    renderer.begin_turn()
    stream(renderer, "Hello **world**\n\nNext")
    assert console.file.getvalue() == "Hello **world**\n\nNext"
    renderer.end_turn()
    assert console.file.getvalue() == "Hello **world**\n\nNext\n"


def test_a_console_that_is_not_a_terminal_is_plain():
    assert Renderer(make_console()).plain


def test_an_answer_that_was_not_streamed_is_shown_whole():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    renderer.on_event(MessageAdded(Message.user("hi")))
    renderer.on_event(MessageAdded(Message("assistant", [TextBlock("A *local* answer.")])))
    renderer.end_turn()
    assert lines_of(console.file.getvalue()) == ["A local answer."]


def test_a_streamed_answer_is_not_printed_twice():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    stream(renderer, "Once.")
    renderer.on_event(BlockDone(TextBlock("Once."), 0))
    renderer.on_event(MessageAdded(Message("assistant", [TextBlock("Once.")])))
    renderer.end_turn()
    assert console.file.getvalue().count("Once.") == 1


def call(name: str, **input) -> ToolUseBlock:
    return ToolUseBlock(f"toolu_{name}", name, input)


def test_tool_label_shows_the_key_argument(tmp_path):
    assert tool_label(call("Bash", command="git status\n  --short")) == "Bash(git status --short)"
    assert tool_label(call("Read", file_path=str(tmp_path / "src" / "a.py")), tmp_path) == "Read(src/a.py)"
    assert tool_label(call("Grep", pattern="def main", path="/elsewhere")) == "Grep(def main)"
    assert tool_label(call("Bash", command="x" * 200), width=20) == "Bash(" + "x" * 19 + "…)"
    assert tool_label(call("Mystery")) == "Mystery()"


def test_bash_output_is_shown_compactly():
    result = ToolResult("\n".join(f"line {i}" for i in range(1, 8)))
    out = lines_of(rendered(tool_block(call("Bash", command="seq 7"), result)))
    assert out == ["● Bash(seq 7)", "  ⎿  line 1", "     line 2", "     line 3", "     … +4 lines (ctrl+o to expand)"]


def test_read_shows_a_count_and_errors_in_full_lines():
    read = ToolResult("1\tx\n2\ty", metadata={"num_lines": 2})
    assert lines_of(rendered(tool_block(call("Read", file_path="a.py"), read))) == ["● Read(a.py)", "  ⎿  Read 2 lines"]
    error = ToolResult("File does not exist: a.py.\nDid you mean b.py?", is_error=True)
    assert lines_of(rendered(tool_block(call("Read", file_path="a.py"), error))) == [
        "● Read(a.py)",
        "  ⎿  File does not exist: a.py.",
        "     Did you mean b.py?",
    ]


def test_a_failed_command_shows_its_exit_code_and_the_end_of_its_output():
    output = "\n".join(f"test {i} ok" for i in range(30))
    error = "ModuleNotFoundError: No module named 'nonexistent_package_with_a_long_name_for_wrapping'"
    result = ToolResult(f"{output}\n{error}\n\nExit code 1", is_error=True, metadata={"exit_code": 1})
    out = lines_of(rendered(tool_block(call("Bash", command="python3 -m unittest"), result), 60))
    assert out[:3] == ["● Bash(python3 -m unittest)", "  ⎿  Exit code 1", "     … +21 lines (ctrl+o to expand)"]
    assert out[3] == "     test 21 ok"
    # The error is whole, wrapped under the indent rather than cut at the screen's edge.
    assert out[-2:] == [
        "     ModuleNotFoundError: No module named",
        "     'nonexistent_package_with_a_long_name_for_wrapping'",
    ]
    assert all(len(line) <= 60 for line in out)


def test_a_killed_or_timed_out_command_says_so_first():
    killed = ToolResult("partial\n\nKilled by signal SIGKILL", is_error=True, metadata={"exit_code": -9})
    assert lines_of(rendered(tool_block(call("Bash", command="x"), killed)))[1:] == [
        "  ⎿  Killed by signal SIGKILL",
        "     partial",
    ]
    late = ToolResult("Command timed out after 1 s\n\nsome", is_error=True, metadata={"timed_out": True})
    assert lines_of(rendered(tool_block(call("Bash", command="x"), late)))[1] == "  ⎿  Timed out"


def test_ordered_lists_keep_their_numbers_with_a_period():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    stream(renderer, "Steps:\n\n1. normalises the input\n2. checks it\n")
    renderer.end_turn()
    assert lines_of(console.file.getvalue())[2:4] == [" 1. normalises the input", " 2. checks it"]


def test_a_permission_prompt_shows_every_argument_cut_with_a_marker_and_the_description():
    content = "line one\nline two\x1b[2J\n" + "y" * 1500
    mcp = call("mcp__fs__write_file", path="/tmp/a.txt", content=content, mode={"append": False})
    about = "Create a new file or overwrite one.\n\nMore details nobody needs here."
    out = lines_of(rendered(permission_preview(mcp, "", None, "", about), 80))
    assert "    path: /tmp/a.txt" in out
    assert "    content: line one" in out and "    line two\\x1b[2J" in out  # the escape is shown, not obeyed
    hidden = len("line one\nline two\\x1b[2J\n" + "y" * 1500) - 1000
    assert f"    … [{hidden} more characters not shown]" in out
    assert '    mode: {"append": false}' in out
    assert out[-1] == "    Create a new file or overwrite one."
    bash = call("Bash", command="make", dangerouslyDisableSandbox=True)
    assert lines_of(rendered(permission_preview(bash, "", None, "")))[-1] == "    dangerouslyDisableSandbox: true"


def test_edit_shows_a_coloured_diff():
    diff = "--- a.py\n+++ a.py\n@@ -1,2 +1,2 @@\n def greet():\n-    return 1\n+    return 2\n"
    result = ToolResult(
        "The file a.py has been updated.", metadata={"path": "/r/a.py", "diff": diff, "replacements": 1}
    )
    block = tool_block(call("Edit", file_path="/r/a.py", old_string="1", new_string="2"), result, cwd=Path("/r"))
    assert lines_of(rendered(block)) == [
        "● Edit(a.py)",
        "  ⎿  Updated a.py (1 replacement)",
        "     @@ -1,2 +1,2 @@",
        "      def greet():",
        "     -    return 1",
        "     +    return 2",
    ]
    console = Console(file=StringIO(), width=WIDTH, color_system="standard", force_terminal=True)
    console.print(block)
    coloured = console.file.getvalue()
    assert "\x1b[31m-    return 1" in coloured and "\x1b[32m+    return 2" in coloured


def test_long_diffs_and_lines_are_cut_to_the_width():
    diff = "".join(f"+{'x' * 300} {i}\n" for i in range(100))
    result = ToolResult("Created a.txt.", metadata={"diff": diff, "created": True})
    out = lines_of(rendered(tool_block(call("Write", file_path="a.txt", content="x\n" * 100), result), 60))
    assert out[1] == "  ⎿  Created a.txt (100 lines)"
    assert len(out) == 2 + 40 + 1 and out[-1] == "     … 60 more diff lines"
    assert all(len(line) <= 60 for line in out)


def test_denied_calls_are_red_lines():
    result = ToolResult("The user declined this Write call. The user said: no", is_error=True)
    out = lines_of(rendered(tool_block(call("Write", file_path="a"), result, denied=True)))
    assert out == ["● Write(a)", "  ⎿  The user declined this Write call. The user said: no"]


def test_events_render_tools_retries_notices_and_errors():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    stream(renderer, "Let me look.")
    renderer.on_event(ToolUseStart("toolu_1", "Bash", 1))
    assert renderer.activity == "Preparing Bash"
    bash = call("Bash", command="ls")
    renderer.on_event(ToolStarted(bash))
    assert renderer.activity == "Running Bash(ls)"
    renderer.on_event(ToolFinished(bash, ToolResult("a.py")))
    renderer.on_event(Retrying(2, 4, 1.5, "Server overloaded\n(529)"))
    renderer.on_event(Notice("Saved a memory", "info"))
    renderer.error("Request failed:\n  the server said no")
    renderer.end_turn()
    assert lines_of(console.file.getvalue()) == [
        "Let me look.",
        "",
        "● Bash(ls)",
        "  ⎿  a.py",
        "⟳ retrying in 1.5 s (attempt 2 of 4): Server overloaded (529)",
        "Saved a memory",
        "✗ Request failed: the server said no",
    ]


def test_interrupted_keeps_what_arrived_and_marks_it():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    stream(renderer, "A first paragraph.\n\nhalf an ans")
    renderer.interrupted()
    renderer.end_turn()
    assert lines_of(console.file.getvalue()) == [
        "A first paragraph.",
        "",
        "half an ans",
        "⎿  Interrupted. The conversation is kept; say what to do next.",
    ]


RETRY = Retrying(2, 4, 0.5, "connection lost mid-response (RemoteProtocolError)")
RETRY_LINE = "⟳ retrying in 0.5 s (attempt 2 of 4): connection lost mid-response (RemoteProtocolError)"
CUT_LINE = "  ⎿  the answer above was cut off; it starts again below"


def test_a_retry_after_shown_text_marks_it_cut_and_the_answer_starts_again():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    stream(renderer, "First paragraph.\n\nSecond one, half-writ")
    renderer.on_event(RETRY)
    stream(renderer, "First paragraph.\n\nSecond one, whole.")
    renderer.end_turn()
    assert lines_of(console.file.getvalue()) == [
        "First paragraph.",
        RETRY_LINE,
        CUT_LINE,
        "",
        "First paragraph.",
        "",
        "Second one, whole.",
    ]


def test_a_retry_before_any_text_was_shown_is_one_line():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    stream(renderer, "The quick bro")  # an open block: not on screen yet
    renderer.on_event(RETRY)
    stream(renderer, "The quick brown fox.")
    renderer.end_turn()
    assert lines_of(console.file.getvalue()) == [RETRY_LINE, "The quick brown fox."]


def test_plain_output_ends_the_cut_line_before_the_retry():
    console = make_console()
    renderer = Renderer(console, plain=True)
    renderer.begin_turn()
    stream(renderer, "The quick bro")
    renderer.on_event(RETRY)
    stream(renderer, "The quick brown fox.")
    renderer.end_turn()
    assert lines_of(console.file.getvalue()) == ["The quick bro", RETRY_LINE, CUT_LINE, "The quick brown fox."]


class Words:
    def __init__(self, words: str) -> None:
        self.value = words

    def words(self) -> str:
        return self.value


def test_spinner_text_has_elapsed_time_and_background_work():
    now = [100.0]
    renderer = Renderer(make_console(), plain=False, status=Words("extracting"), clock=lambda: now[0])
    renderer.begin_turn()
    now[0] = 103.7
    assert renderer.spinner_text() == "Thinking… 3s · extracting · esc to interrupt"
    renderer.activity, renderer.pending = "Responding", "a\nb\nc"
    assert renderer.spinner_text() == "Responding… 3s · 2 lines so far · extracting · esc to interrupt"


def test_the_live_region_is_the_open_block_then_one_cropped_spinner_line():
    console = Console(file=StringIO(), width=30, height=12, color_system=None)
    renderer = Renderer(console, plain=False, status=Words("extracting, recalling"))
    renderer.pending = "\n".join(f"word{i}" for i in range(200))  # a long paragraph in flight
    console.print(renderer)
    lines = lines_of(console.file.getvalue())
    assert len(lines) == 8 + 1  # the open block's last lines fit the screen, with the spinner under them
    assert lines[-2] == "word198 word199"  # one Markdown paragraph, rewrapped
    assert lines[-1].endswith("…") and len(lines[-1]) <= 30 and "Thinking" in lines[-1]


def test_streamed_text_is_live_before_its_block_ends_and_printed_once_when_it_does():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    stream(renderer, "A **bold** paragraph still being writ")
    assert console.file.getvalue() == ""  # nothing printed yet: the block is open
    live = make_console()
    live.print(renderer)
    assert lines_of(live.file.getvalue())[0] == "A bold paragraph still being writ"  # drawn live, as Markdown
    stream(renderer, "ten.\n\nNext")
    assert lines_of(console.file.getvalue()) == ["A bold paragraph still being written."]
    renderer.end_turn()
    assert lines_of(console.file.getvalue()) == ["A bold paragraph still being written.", "", "Next"]


def test_text_typed_ahead_is_shown_under_the_spinner():
    console = make_console(60)
    renderer = Renderer(console, plain=False)
    renderer.typeahead = "first line\nand the sec"
    console.print(renderer)
    assert lines_of(console.file.getvalue())[-1] == "> (+1 lines) and the sec▏ Enter queues it"


def test_trimmed_drops_rich_padding_lines():
    assert lines_of(rendered(_Trimmed(Markdown("- a\n- b")))) == [" • a", " • b"]
    assert lines_of(rendered(_Trimmed(Text("\n\na\nb\nc\n\n"), 2))) == ["b", "c"]


def test_permission_preview_for_bash_and_write(tmp_path):
    bash = call("Bash", command="rm -rf build", description="Remove the build folder")
    out = lines_of(rendered(permission_preview(bash, "Bash needs approval", tmp_path, "")))
    assert out == ["● Bash(rm -rf build)", "    rm -rf build", "    Remove the build folder", "    Bash needs approval"]
    write = call("Write", file_path="new.txt", content="one\ntwo\n")
    diff = preview_diff(write, tmp_path)
    out = lines_of(rendered(permission_preview(write, "", tmp_path, diff)))
    assert out == ["● Write(new.txt)", "    @@ -0,0 +1,2 @@", "    +one", "    +two"]


def test_preview_diff_of_an_edit_and_an_overwrite(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\ny = 1\n")
    edit = call("Edit", file_path="a.py", old_string="= 1", new_string="= 2")
    assert "-x = 1\n+x = 2\n" in preview_diff(edit, tmp_path) and "y = 2" not in preview_diff(edit, tmp_path)
    edit_all = call("Edit", file_path="a.py", old_string="= 1", new_string="= 2", replace_all=True)
    assert "+y = 2" in preview_diff(edit_all, tmp_path)
    missing = call("Edit", file_path="a.py", old_string="nope", new_string="yes")
    assert "-nope" in preview_diff(missing, tmp_path)
    overwrite = call("Write", file_path=str(tmp_path / "a.py"), content="z\n")
    assert "-x = 1" in preview_diff(overwrite, tmp_path) and "+z" in preview_diff(overwrite, tmp_path)
    assert preview_diff(call("Bash", command="ls"), tmp_path) == ""
