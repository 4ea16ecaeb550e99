"""The transcript view (Ctrl-O): the whole conversation, every tool call's input and output in full.

The conversation scrolls by with tool output cut to a few lines (`render.outcome_lines`, `… +N lines
(ctrl+o to expand)`). Ctrl-O at the prompt opens this view on the terminal's alternate screen, as
Claude Code's transcript mode takes the screen: each user message, each answer, each tool call
with every argument and its whole result (what the model received), the `!` lines with their
output, attachments as one dim line each. Ctrl-O again, Esc or q goes back to the prompt, the
screen and the input as they were. Drawn once on opening (`conversation_lines`): the
conversation does not change while the view is open.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from pathlib import Path

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples, to_formatted_text
from prompt_toolkit.formatted_text.utils import split_lines
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import HSplit, Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output
from rich.console import Console, Group, RenderableType
from rich.text import Text

from claude_mini.base.text import one_line, visible_controls
from claude_mini.llm.messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from claude_mini.ui.render import AnswerMarkdown, indented, tool_label
from claude_mini.ui.shell_mode import shell_part

FOOTER = " Transcript · ↑↓ PgUp PgDn Home End to scroll · ctrl+o, esc or q to go back"


def conversation_renderables(messages: Sequence[Message], cwd: Path | None = None) -> list[RenderableType]:
    """Every message of the conversation, drawn in full, tool results under their calls."""
    results = {b.tool_use_id: b for m in messages for b in m.content if isinstance(b, ToolResultBlock)}
    out: list[RenderableType] = []
    for message in messages:
        for block in message.content:
            out += _block(message, block, results, cwd)
    return out or [Text("No conversation yet.", style="dim")]


def _block(
    message: Message, block: object, results: dict[str, ToolResultBlock], cwd: Path | None
) -> list[RenderableType]:
    """One content block as the view shows it (a tool result is drawn with its call, not here)."""
    if isinstance(block, ToolUseBlock):
        return _tool_call(block, results.get(block.id), cwd)
    if isinstance(block, ThinkingBlock):
        return [Text("✻ " + visible_controls(block.thinking), style="dim italic")]
    if not isinstance(block, TextBlock) or not block.text.strip():
        return []
    if message.role == "assistant":
        return [AnswerMarkdown(visible_controls(block.text), hyperlinks=False)]
    part = shell_part(block.text)
    if part is not None:  # a `!` line: its command as typed, then its output; the model's note is not shown
        kind, text = part
        if kind == "input":
            return [Text("! " + visible_controls(text), style="bold magenta")]
        return [_result_lines(text or "(no output)", "  ⎿  ")] if kind == "output" else []
    if block.text.lstrip().startswith("<"):  # an attachment: a reminder, recalled memories, a hook's context
        return [Text(f"  ⋯ {one_line(block.text, 100, terminal=True)}", style="dim")]
    return [Text("> " + visible_controls(block.text.strip()), style="bold")]


def _tool_call(call: ToolUseBlock, result: ToolResultBlock | None, cwd: Path | None) -> list[RenderableType]:
    """`● Bash(make)`, every argument in full, then the whole result under `⎿`."""
    failed = result is not None and result.is_error
    rows: list[RenderableType] = [
        Text.assemble(("● ", "red" if failed else "green"), (tool_label(call, cwd, 200), "bold"))
    ]
    for name, value in call.input.items():
        rows.append(_result_lines(f"{name}: {_argument(value)}", "    ", style="dim"))
    if result is None:
        rows.append(Text("  ⎿  (no result)", style="dim"))
    else:
        rows.append(_result_lines(result.content, "  ⎿  ", style="red" if failed else ""))
    return [Group(*rows)]


def _argument(value: object) -> str:
    """An argument's whole value (a string as is, anything else as JSON)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _result_lines(content: str, first: str, style: str = "") -> RenderableType:
    """Some text in full, its lines wrapped under an indent."""
    lines = visible_controls(content.replace("\r\n", "\n")).rstrip("\n").split("\n") or ["(no output)"]
    return indented([Text(line, style=style, overflow="fold") for line in lines], first or "     ")


def conversation_lines(messages: Sequence[Message], width: int, cwd: Path | None = None) -> list[StyleAndTextTuples]:
    """The view's lines, laid out at `width` with rich and handed to prompt-toolkit as styled text."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=True,
        color_system=None if os.environ.get("NO_COLOR") else "standard",
        highlight=False,
        emoji=False,
        markup=False,
    )
    for renderable in conversation_renderables(messages, cwd):
        console.print(renderable)
        console.print()
    return list(split_lines(to_formatted_text(ANSI(buffer.getvalue()))))


class TranscriptPager:
    """A full-screen, scrollable view of `lines`; opens at the end (the latest exchange)."""

    def __init__(self, lines: list[StyleAndTextTuples], *, input: Input | None = None, output: Output | None = None):
        """`input`, `output`: the terminal's (the default), or a test's."""
        self.lines = lines
        self.top = 0
        self.app: Application[None] = Application(
            layout=Layout(
                HSplit(
                    [
                        Window(FormattedTextControl(self._visible), wrap_lines=False),
                        Window(FormattedTextControl(lambda: [("reverse", FOOTER)]), height=1),
                    ]
                )
            ),
            key_bindings=self._keys(),
            full_screen=True,
            input=input,
            output=output,
        )

    def _height(self) -> int:
        return max(1, self.app.output.get_size().rows - 1)

    def _visible(self) -> StyleAndTextTuples:
        height = self._height()
        self.top = max(0, min(self.top, len(self.lines) - height))
        shown: StyleAndTextTuples = []
        for line in self.lines[self.top : self.top + height]:
            shown += [*line, ("", "\n")]
        return shown

    def scroll(self, rows: int) -> None:
        """Move the view by `rows` lines (negative: up)."""
        self.top = max(0, min(self.top + rows, len(self.lines) - self._height()))

    def _keys(self) -> KeyBindings:
        keys = KeyBindings()
        moves = {
            "up": -1,
            "k": -1,
            "down": 1,
            "j": 1,
            "pageup": "-page",
            "b": "-page",
            "pagedown": "page",
            "space": "page",
            "home": "top",
            "g": "top",
            "end": "end",
            "G": "end",
        }
        for key, move in moves.items():
            keys.add(key)(lambda event, move=move: self._move(move))
        for key in ("c-o", "escape", "q", "c-c"):
            keys.add(key, eager=True)(lambda event: event.app.exit())
        return keys

    def _move(self, move: int | str) -> None:
        page = self._height() - 1
        step = {"-page": -page, "page": page, "top": -len(self.lines), "end": len(self.lines)}
        self.scroll(move if isinstance(move, int) else step[move])

    async def run(self) -> None:
        """Show the view until the user leaves it."""
        self.top = len(self.lines)  # clamped to the last screenful on the first draw
        await self.app.run_async()


async def show_transcript(messages: Sequence[Message], cwd: Path | None, width: int) -> None:
    """Open the transcript view of `messages` (Ctrl-O), until Ctrl-O, Esc or q."""
    await TranscriptPager(conversation_lines(messages, width, cwd)).run()
