"""Rich rendering of agent events for the REPL: streamed Markdown, compact tool calls, diffs, a spinner.

Assistant text streams through a live region with a committed prefix: a
paragraph or a code fence is printed once, as Markdown, as soon as it is complete
(a very long one in pieces of `CHUNK_LINES` lines), so output of any length
scrolls like normal output; only the block still being written is live, drawn as
Markdown under the printed ones and redrawn as it grows, above the spinner line
and the line the user is typing ahead (`typeahead`). The live part is cut to its
last lines to fit the screen (`live_lines`): rich erases and redraws a live region
by its height, and one taller than the terminal would leave copies behind. A
console that is not a terminal gets plain text as it arrives: no spinner, no
colour, no cursor movement.

Everything is drawn on an injected `rich.console.Console`, so tests print to a
`StringIO` at a fixed width.

Text from the model or from tools never reaches the terminal raw: every string
drawn here goes through `base.text.visible_controls` first (escape sequences,
carriage returns, bidi overrides become visible `\\x1b`, `\\r`, `\\u202e`), and
is wrapped in `rich.text.Text` or `Markdown`, never parsed as rich markup.
`guard_console` adds the same conversion as a last line of defence to
everything printed on a console (slash commands' output included).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from rich.console import (
    Console,
    ConsoleOptions,
    ConsoleRenderable,
    Group,
    RenderableType,
    RenderHook,
    RenderResult,
)
from rich.live import Live
from rich.markdown import ListItem, Markdown
from rich.segment import Segment
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from claude_mini.agent.events import AgentEvent, MessageAdded, ToolFinished, ToolStarted
from claude_mini.base.notices import Notice
from claude_mini.base.text import clip, one_line, visible_controls
from claude_mini.llm.events import BlockDone, Retrying, TextDelta, ToolUseStart
from claude_mini.llm.messages import TextBlock, ToolUseBlock
from claude_mini.tools.base import ToolResult
from claude_mini.tools.todo import Status, Todo, progress
from claude_mini.tools.write import unified_diff

if TYPE_CHECKING:
    from claude_mini.agent.subagent_run import SubagentRun

MAX_DIFF_LINES = 40
MAX_OUTPUT_LINES = 3
MAX_ERROR_LINES = 10  # of a failed command's output, its last ones (where the error is)
EXPAND_HINT = "(ctrl+o to expand)"
MAX_COMMAND_LINES = 20  # of a Bash command in an approval prompt; the rest is counted
MAX_ARGUMENT_LINES = 12  # of any other argument in an approval prompt; the rest is counted
MAX_ARGUMENT_CHARS = 1_000
MAX_DESCRIPTION_CHARS = 300  # the tool's description under the arguments (its first paragraph)
CHUNK_LINES = 20  # a block still open after this many lines is printed in pieces
KEY_ARGS = ("command", "file_path", "pattern", "path", "url", "skill", "bash_id", "shell_id")
TODO_MARKS: dict[Status, str] = {"completed": "☒", "in_progress": "◼", "pending": "☐"}


class Background(Protocol):
    """Anything that can say which background work runs now (the REPL's `BackgroundStatus`)."""

    def words(self) -> str: ...


# ---------------------------------------------------------------- a console that draws no raw controls


class _VisibleSegments:
    """Another renderable whose text segments have their controls made visible.

    rich's own escape codes are styles and control segments, never segment text,
    so they pass unchanged; only the text being drawn is converted.
    """

    def __init__(self, renderable: ConsoleRenderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            if segment.control or not segment.text:
                yield segment
            else:
                yield Segment(visible_controls(segment.text), segment.style)


class ControlsVisible(RenderHook):
    """A render hook that makes controls visible in everything printed on a console."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_VisibleSegments(r) for r in renderables]


def guard_console(console: Console) -> Console:
    """`console`, made to draw no raw control characters whoever prints on it.

    A last line of defence: the renderer converts text before layout (so widths are
    right); this catches anything printed elsewhere, e.g. by a slash command.
    """
    console.push_render_hook(ControlsVisible())
    return console


# ---------------------------------------------------------------- Markdown streaming


class _NumberedItem(ListItem):
    """A list item whose number ends with a period, as it was written (`1. step`, not rich's `1 step`)."""

    def render_number(self, console: Console, options: ConsoleOptions, number: int, last_number: int) -> RenderResult:
        width = len(str(last_number)) + 3
        lines = console.render_lines(self.elements, options.update(width=options.max_width - width), style=self.style)
        style = console.get_style("markdown.item.number", default="none")
        for index, line in enumerate(lines):
            yield Segment(f"{number}.".rjust(width - 1) + " " if index == 0 else " " * width, style)
            yield from line
            yield Segment("\n")


class AnswerMarkdown(Markdown):
    """Markdown as the REPL draws an answer: ordered lists keep their `1.`."""

    elements = {**Markdown.elements, "list_item_open": _NumberedItem}


def _is_fence(line: str) -> bool:
    stripped = line.lstrip(" ")
    return len(line) - len(stripped) <= 3 and stripped.startswith(("```", "~~~"))


def split_complete(text: str, chunk_lines: int = CHUNK_LINES) -> tuple[str, str, bool]:
    """Split streamed Markdown into what can be printed now, the still-open rest, and whether the
    rest continues the printed block.

    A block ends at a blank line outside a code fence, or at a closing fence. An
    open block of `chunk_lines` complete lines is cut: a paragraph at a line end,
    a code fence closed here and reopened (same info string) in the rest.
    """
    in_fence, boundary, pos, opener, since = False, 0, 0, "", 0
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # the last line is still being written
        pos += len(line)
        since += 1
        if _is_fence(line):
            in_fence, opener = not in_fence, line
            if not in_fence:
                boundary, since = pos, 0
        elif not in_fence and not line.strip():
            boundary, since = pos, 0
        if since >= chunk_lines:
            if not in_fence:
                return text[:pos], text[pos:], True
            fence = opener.strip()[:3]
            return text[:pos] + fence + "\n", opener + text[pos:], True
    return text[:boundary], text[boundary:], False


class _Trimmed:
    """Another renderable without its leading and trailing blank lines, optionally only its last lines.

    Rich pads lists, quotes and code blocks with blank lines; blocks printed one by
    one would otherwise be spaced unevenly.
    """

    def __init__(self, renderable: RenderableType, max_lines: int | None = None) -> None:
        self.renderable = renderable
        self.max_lines = max_lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options.update(height=None), pad=False)
        blank = [not "".join(seg.text for seg in line).strip() for line in lines]
        start = next((i for i, b in enumerate(blank) if not b), len(lines))
        end = len(lines) - next((i for i, b in enumerate(reversed(blank)) if not b), len(lines))
        lines = lines[start:end]
        if self.max_lines is not None:
            lines = lines[-self.max_lines :]
        for line in lines:
            yield from _rstrip(line)
            yield Segment.line()


def _rstrip(line: list[Segment]) -> list[Segment]:
    """A rendered line without trailing spaces (rich pads to the width; copied text should not)."""
    line = list(line)
    while line and not line[-1].control:
        last = line.pop()
        text = last.text.rstrip()
        if text:
            line.append(Segment(text, last.style))
            break
    return line


# ---------------------------------------------------------------- tool calls


def short_path(path: str, cwd: Path | None) -> str:
    """`path` relative to `cwd` when it is inside it, else as given."""
    if cwd is None or not path.startswith("/"):
        return path
    try:
        return str(Path(path).relative_to(cwd))
    except ValueError:
        return path


def tool_label(call: ToolUseBlock, cwd: Path | None = None, width: int = 70) -> str:
    """`Bash(git status)`, `Edit(src/app.py)`, `Skill(gl --since=1.week)`: the tool and its key
    argument on one line (a skill's args too: they reach its `!` lines); an Agent call is its
    type and task, `Explore(Find date parsing)`."""
    if call.name == "Agent":
        return agent_label(call.input.get("subagent_type") or "general-purpose", call.input.get("description", ""))
    name = next((k for k in KEY_ARGS if k in call.input), None)
    key = one_line(call.input[name], terminal=True) if name else ""
    if name == "skill":
        key = one_line(" ".join(str(call.input[k]) for k in ("skill", "args") if call.input.get(k)), terminal=True)
    if name in ("file_path", "path"):
        key = short_path(key, cwd)
    return f"{one_line(call.name, terminal=True)}({clip(key, width)})"


def agent_label(agent_type: object, description: object, width: int = 50) -> str:
    """`Explore(Find date parsing)`: a subagent by its type and task."""
    task = one_line(description, terminal=True)
    return f"{one_line(agent_type, terminal=True)}({clip(task, width)})"


def child_words(run: SubagentRun, doing: str) -> str:
    """`Explore(Find date parsing) · 3 tool calls · Read(dates.py)`: a running subagent in a few words."""
    calls = f"{run.tool_count} tool call{'s' * (run.tool_count != 1)}"
    return f"{agent_label(run.agent_type, run.description)} · {calls} · {doing}"


def _crop(line: str, style: str = "") -> Text:
    """One line of model- or tool-derived text, controls made visible, cut at the width."""
    return Text(visible_controls(line), style=style, no_wrap=True, overflow="ellipsis")


def diff_lines(diff: str, limit: int = MAX_DIFF_LINES) -> list[Text]:
    """A unified diff as coloured lines (+ green, - red, @@ cyan), headers dropped, at most `limit`."""
    # Made visible before splitting: a CR, VT or U+2028 inside a line must not start a new one.
    lines = visible_controls(diff).splitlines()
    body = [line for line in lines if not line.startswith(("+++", "---"))]
    out = []
    for line in body[:limit]:
        style = (
            "green"
            if line.startswith("+")
            else "red"
            if line.startswith("-")
            else "cyan"
            if line.startswith("@@")
            else "dim"
        )
        out.append(_crop(line, style))
    if len(body) > limit:
        out.append(_crop(f"… {len(body) - limit} more diff lines", "dim"))
    return out


def outcome_lines(call: ToolUseBlock, result: ToolResult, denied: bool = False) -> list[Text]:
    """What a finished tool call produced, in a few lines: an error, a summary, a diff or some output."""
    content = visible_controls(result.content.replace("\r\n", "\n"))
    lines = content.strip().splitlines() or ["(no output)"]
    if denied or result.is_error:
        return error_lines(result, lines)
    if call.name == "Agent":  # the subagent's summary line; `/agents last` shows the rest
        return [_crop(lines[-1], "dim")]
    if call.name == "Read" and ("media" in result.metadata or "cells" in result.metadata):  # an image, PDF, notebook
        what = result.metadata.get("media") or f"{result.metadata['cells']} cells"
        return [_crop(f"Read {what}", "dim")]
    if call.name == "Read":
        return [_crop(f"Read {result.metadata.get('num_lines', len(lines))} lines", "dim")]
    if call.name == "NotebookEdit":  # its message names the cell; the diff is the cell's source
        return [_crop(lines[0], "dim"), *diff_lines(result.metadata.get("diff") or "")]
    if call.name in ("Write", "Edit"):
        return [_crop(_file_change(call, result), "dim"), *diff_lines(result.metadata.get("diff") or "")]
    if call.name == "TodoWrite" and "todos" in result.metadata:  # the list itself follows the answer
        return [_crop(f"Updated the todo list: {progress(result.metadata['todos'])}", "dim")]
    return head_lines(lines)


def head_lines(lines: list[str], limit: int = MAX_OUTPUT_LINES) -> list[Text]:
    """The first `limit` lines of some output, then `… +N lines (ctrl+o to expand)`."""
    shown = [_crop(line, "dim") for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(_crop(f"… +{len(lines) - limit} lines {EXPAND_HINT}", "dim"))
    return shown


def error_lines(result: ToolResult, lines: list[str]) -> list[Text]:
    """A failure, readable: a command's exit code first, then the last lines of its output (where a
    traceback ends), each line wrapped rather than cut at the screen's edge; another error's first lines."""
    exit_line = _exit_line(result, lines)
    if exit_line is None:
        shown = [_wrapped(line, "red") for line in lines[:MAX_ERROR_LINES]]
        if len(lines) > MAX_ERROR_LINES:
            shown.append(_crop(f"… +{len(lines) - MAX_ERROR_LINES} lines {EXPAND_HINT}", "dim"))
        return shown
    body = lines[:-1] if lines and lines[-1] == exit_line else lines
    while body and not body[-1].strip():
        body = body[:-1]
    hidden = len(body) - MAX_ERROR_LINES
    rows = [_crop(exit_line, "red")]
    if hidden > 0:
        rows.append(_crop(f"… +{hidden} lines {EXPAND_HINT}", "dim"))
    return rows + [_wrapped(line) for line in body[-MAX_ERROR_LINES:]]


def _exit_line(result: ToolResult, lines: list[str]) -> str | None:
    """`Exit code 1`, `Killed by signal SIGKILL`, `Timed out`: how a command failed (None for other errors)."""
    if result.metadata.get("timed_out"):
        return "Timed out"
    code = result.metadata.get("exit_code")
    if not isinstance(code, int) or code == 0:
        return None
    last = lines[-1] if lines else ""
    return last if last.startswith(("Exit code", "Killed by signal")) else f"Exit code {code}"


def _wrapped(line: str, style: str = "") -> Text:
    """One line of tool output that wraps (under its indent) instead of being cut at the width."""
    return Text(visible_controls(line), style=style, overflow="fold")


def _file_change(call: ToolUseBlock, result: ToolResult) -> str:
    """`Created notes.txt (3 lines)`, `Updated app.py (1 replacement)`."""
    meta = result.metadata
    name = Path(str(meta.get("path") or call.input.get("file_path", ""))).name
    if call.name == "Edit" and "replacements" in meta:
        count = meta["replacements"]
        return f"Updated {name} ({count} replacement{'s' if count != 1 else ''})"
    lines = str(call.input.get("content", "")).count("\n")
    return f"{'Created' if meta.get('created') else 'Wrote'} {name} ({lines} lines)"


def tool_block(call: ToolUseBlock, result: ToolResult, *, denied: bool = False, cwd: Path | None = None) -> Group:
    """`● Bash(ls)` and its indented outcome under `⎿`."""
    ok = not (denied or result.is_error)
    rows: list[RenderableType] = [
        Text.assemble(
            ("● ", "green" if ok else "red"), (tool_label(call, cwd), "bold"), no_wrap=True, overflow="ellipsis"
        )
    ]
    rows.append(indented(outcome_lines(call, result, denied), "  ⎿  "))
    return Group(*rows)


def indented(lines: list[Text], first: str = "     ") -> _Trimmed:
    """`lines` under a 5-column indent (`first` before the first): a line that wraps stays indented."""
    grid = Table.grid(padding=0)
    grid.add_column(width=len(first), no_wrap=True)
    grid.add_column(ratio=1)
    for index, line in enumerate(lines):
        grid.add_row(first if index == 0 else " " * len(first), line)
    return _Trimmed(grid)


def todo_lines(todos: list[Todo]) -> list[str]:
    """`Todos · 2 of 5 completed`, then one line per item, its status mark first (also /todos)."""
    return [
        f"Todos · {progress(todos)}",
        *(f"  {TODO_MARKS[t.status]} {one_line(t.content, terminal=True)}" for t in todos),
    ]


def todo_block(todos: list[Todo]) -> Group:
    """The list under the answer of a turn whose TodoWrite changed it: todo_lines, cropped, the
    item in progress in bold and the completed ones dim."""
    if not todos:
        return Group(_crop("Todos · the list is empty now", "dim"))
    header, *items = todo_lines(todos)
    styles = {"completed": "dim", "in_progress": "bold", "pending": ""}
    return Group(_crop(header, "dim"), *(_crop(line, styles[t.status]) for t, line in zip(todos, items, strict=True)))


# ---------------------------------------------------------------- the renderer


class Renderer:
    """Draws one turn's events on a console; `plain` (default: not a terminal) disables Markdown and the spinner."""

    def __init__(
        self,
        console: Console,
        *,
        plain: bool | None = None,
        cwd: Path | None = None,
        status: Background | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.console = console
        self.plain = (not console.is_terminal) if plain is None else plain
        self.cwd = cwd
        self.status = status
        self.clock = clock
        self.pending = ""  # the open Markdown block
        self.activity = "Thinking"
        self.started = clock()
        self._text_seen = False
        self._answer_shown = False  # text of the response being streamed is on screen
        self._printed_any = False
        self._glue = False
        self._todos: list[Todo] | None = None  # the list a TodoWrite of this turn left
        self._children: dict[str, tuple[SubagentRun, str]] = {}  # running subagents, what each does now
        self._live: Live | None = None
        self._spinner = Spinner("dots", style="cyan")
        self.typeahead = ""  # what the user types while the turn runs, shown under the spinner
        self._open_cache: tuple[object, list[Segment]] = (None, [])  # the open block's last layout

    # -- turn lifecycle

    def begin_turn(self) -> None:
        """Start the spinner; call once before feeding a turn's events."""
        self.started = self.clock()
        self.activity, self.pending, self._text_seen, self._printed_any = "Thinking", "", False, False
        self.typeahead = ""
        self._answer_shown, self._todos = False, None
        self._children = {}
        self.resume()

    def end_turn(self) -> None:
        """Print what is left, then the todo list if a TodoWrite changed it, and stop the spinner."""
        self.flush()
        if self._todos is not None:
            self.print(todo_block(self._todos))
            self._todos = None
        self.pause()

    def pause(self) -> None:
        """Stop the live region (before a permission prompt takes the terminal)."""
        if self._live is not None:
            self._live.stop()
            self._live = None

    def resume(self) -> None:
        """Restart the live region after `pause`."""
        if self.plain or self._live is not None or not self.console.is_terminal:
            return
        self._live = Live(
            self,
            console=self.console,
            transient=True,
            refresh_per_second=8,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    # -- events

    def on_event(self, event: AgentEvent) -> None:
        """Render one event from `Agent.run`."""
        if isinstance(event, TextDelta):
            self._text(event.text)
        elif isinstance(event, BlockDone):
            if isinstance(event.block, TextBlock):
                self.flush()
        elif isinstance(event, ToolUseStart):
            self.flush()
            self.activity = f"Preparing {one_line(event.name, terminal=True)}"
        elif isinstance(event, ToolStarted):
            self._answer_shown = False  # that response is complete: a later retry is another's
            self.activity = f"Running {tool_label(event.call, self.cwd, 40)}"
        elif isinstance(event, ToolFinished):
            self.flush()
            self.print(tool_block(event.call, event.result, denied=event.denied, cwd=self.cwd))
            if event.call.name == "TodoWrite" and not (event.denied or event.result.is_error):
                self._todos = event.result.metadata.get("todos", self._todos)
            self._children = {k: v for k, v in self._children.items() if v[0].tool_use_id != event.call.id}
            self.activity = "Thinking"
        elif isinstance(event, Retrying):
            self._retrying(event)
        elif isinstance(event, Notice):
            self.line(event.text, "yellow" if event.level != "info" else "dim")
        elif isinstance(event, MessageAdded):
            self._message(event)

    def on_subagent(self, run: SubagentRun, event: AgentEvent) -> None:
        """An event of a subagent (`runtime.subagents.listen`): the live line says what it does; its
        messages are its own, never printed here."""
        if isinstance(event, ToolStarted):
            doing = tool_label(event.call, self.cwd, 30)
        elif isinstance(event, (ToolFinished, MessageAdded)):
            doing = "thinking"
        elif isinstance(event, TextDelta):
            doing = "answering"
        elif isinstance(event, Retrying):
            doing = "retrying"
        else:
            return
        self._children = {**self._children, run.agent_id: (run, doing)}  # a new dict: the refresh thread reads it

    def _retrying(self, event: Retrying) -> None:
        """The retry line. The next attempt streams its answer from the start (llm/events.py), so
        an open block is dropped (it was never shown), and text already on screen is marked as
        cut off: the new answer is never glued to the old one mid-word."""
        if self.plain:
            self.flush()  # ends the half-printed line
        self.pending, self._glue = "", False
        self.line(f"⟳ {event.describe()}", "yellow")
        if self._answer_shown:
            self.console.print(_crop("  ⎿  the answer above was cut off; it starts again below", "dim"))
        self._answer_shown = False

    def _message(self, event: MessageAdded) -> None:
        message = event.message
        if message.role == "assistant" and not self._text_seen and message.text.strip():
            self._text(message.text)  # a client that does not stream: show the answer at once
            self.flush()
        self._text_seen = self._answer_shown = False
        self.activity = "Thinking"

    def _text(self, text: str) -> None:
        text = visible_controls(text)  # per character: a sequence split across deltas is caught too
        self._text_seen = True
        self.activity = "Responding"
        if self.plain:
            self.console.print(text, end="", markup=False, highlight=False, soft_wrap=True)
            self._answer_shown = self._answer_shown or bool(text)
            self.pending += text
            self.pending = self.pending[-1:]  # only remember whether the last char was a newline
            return
        self.pending += text
        done, self.pending, cut = split_complete(self.pending)
        if done.strip():
            self._markdown(done)
            self._answer_shown = True
            self._glue = cut  # the next piece continues this block: no blank line between

    def flush(self) -> None:
        """Print the open block now (the text block ended, a tool starts, the turn ends)."""
        if self.plain:
            if self.pending and not self.pending.endswith("\n"):
                self.console.print()
            self.pending = ""
            return
        # Cleared before printing: the live region is redrawn under the printed block at once,
        # and must not show the same text a second time.
        text, self.pending = self.pending, ""
        if text.strip():
            self._markdown(text)
            self._answer_shown = True

    def _markdown(self, text: str) -> None:
        self.print(_Trimmed(AnswerMarkdown(text.strip("\n"), hyperlinks=False)))

    # -- one-liners

    def print(self, renderable: RenderableType) -> None:
        """Print a block, separated from the previous one by a blank line."""
        if self._printed_any and not self.plain and not self._glue:
            self.console.print()
        self._glue = False
        self.console.print(renderable)
        self._printed_any = True

    def line(self, text: str, style: str = "") -> None:
        """One line of status (retry notices, warnings)."""
        self.console.print(_crop(one_line(text, terminal=True), style))

    def error(self, text: str) -> None:
        """An error in one readable line."""
        self.flush()
        self.console.print(_crop(f"✗ {one_line(text, terminal=True)}", "red"))

    def interrupted(self) -> None:
        """Say the turn was cancelled, under what had arrived of the answer (it stays on screen)."""
        self.flush()
        self.pause()
        self.console.print(_crop("⎿  Interrupted. The conversation is kept; say what to do next.", "yellow"))

    # -- the live region (drawn by rich's refresh thread)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        pending, typed = self.pending, self.typeahead  # read once: the stream's thread replaces them
        if pending.strip():
            yield from self._open_block(console, options, pending)
        self._spinner.text = Text(self.spinner_text(), style="dim")
        line = cast(Text, self._spinner.render(console.get_time()))  # frame and text as one Text
        line.no_wrap, line.overflow = True, "ellipsis"  # one row, whatever the width
        yield line
        if typed:
            yield typeahead_line(typed)

    def _open_block(self, console: Console, options: ConsoleOptions, pending: str) -> list[Segment]:
        """The open block as the live region draws it, laid out again only when it or the width
        changed (the spinner redraws the region 8 times a second; Markdown layout is the costly part)."""
        key = (pending, options.max_width, live_lines(console))
        if self._open_cache[0] != key:
            block = _Trimmed(AnswerMarkdown(pending.strip("\n"), hyperlinks=False), key[2])
            self._open_cache = (key, list(console.render(block, options)))
        return self._open_cache[1]

    def spinner_text(self) -> str:
        """`Responding… 3s · 2 lines so far · esc to interrupt` (plus background work); while
        subagents run, each one's type, task, tool count and current step in place of the activity."""
        elapsed = int(self.clock() - self.started)
        lines = self.pending.count("\n")
        words = self.status.words() if self.status else ""
        extra = (f" · {lines} lines so far" if lines > 1 else "") + (f" · {words}" if words else "")
        children = [child_words(run, doing) for run, doing in self._children.values() if run.status == "running"]
        return f"{'; '.join(children) or self.activity}… {elapsed}s{extra} · esc to interrupt"


def live_lines(console: Console) -> int:
    """How many lines of the open block the live region shows: its last ones, leaving room for the
    spinner, the type-ahead line and the prompt's rows under a short terminal."""
    return max(1, min(CHUNK_LINES, console.height - 4))


def typeahead_line(typed: str) -> Text:
    """`> what the user types while the model works` (its last line, cut at the width from the left)."""
    rows = visible_controls(typed).split("\n")
    more = f"(+{len(rows) - 1} lines) " if len(rows) > 1 else ""
    line = Text.assemble(("> ", "bold"), (more, "dim"), rows[-1], ("▏", "dim"), (" Enter queues it", "dim"))
    line.no_wrap, line.overflow = True, "ellipsis"
    return line


# ---------------------------------------------------------------- permission prompts


def permission_preview(
    call: ToolUseBlock, reason: str, cwd: Path | None, preview_diff: str, description: str = ""
) -> Group:
    """What a tool is about to do, shown above the yes/no question: every argument and what the tool is.

    The command is shown with its controls made visible (a CR or a cursor movement cannot
    make it look like another one), and lines past `MAX_COMMAND_LINES` are counted, not hidden.
    Every other argument follows as `name: value` (a long value cut with a marker saying how much
    is not shown), so an MCP tool's `sql` or `body` is never approved blind; then the first
    paragraph of the tool's `description`.
    """
    rows: list[RenderableType] = [Text.assemble(("● ", "yellow"), (tool_label(call, cwd), "bold"))]
    shown: tuple[str, ...] = ()
    if call.name == "Bash":
        lines = visible_controls(str(call.input.get("command", ""))).splitlines()
        rows += [Text("    " + line, style="bold") for line in lines[:MAX_COMMAND_LINES]]
        if len(lines) > MAX_COMMAND_LINES:
            rows.append(
                Text(f"    … {len(lines) - MAX_COMMAND_LINES} more lines of this command are not shown", style="yellow")
            )
        if call.input.get("description"):
            rows.append(Text("    " + one_line(call.input["description"], terminal=True), style="dim"))
        shown = ("command", "description")
    elif preview_diff:
        rows += [Text.assemble("    ", line) for line in diff_lines(preview_diff)]
        shown = ("file_path", "content", "old_string", "new_string")
    rows += [_argument(name, value) for name, value in call.input.items() if name not in shown]
    if description.strip():
        about = description.strip().split("\n\n")[0]
        rows.append(indented([_wrapped(clip(one_line(about, terminal=True), MAX_DESCRIPTION_CHARS), "dim")], "    "))
    if reason:
        rows.append(Text("    " + one_line(reason, terminal=True), style="dim"))
    return Group(*rows)


def argument_text(value: object) -> str:
    """One argument's value as the user reads it: a string as is, anything else as JSON; a value past
    `MAX_ARGUMENT_LINES` lines or `MAX_ARGUMENT_CHARS` characters cut, with what is not shown counted."""
    text = visible_controls(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    lines = text.split("\n")
    kept = "\n".join(lines[:MAX_ARGUMENT_LINES])
    if len(kept) > MAX_ARGUMENT_CHARS:
        return f"{kept[:MAX_ARGUMENT_CHARS]}\n… [{len(text) - MAX_ARGUMENT_CHARS:,} more characters not shown]"
    if len(lines) > MAX_ARGUMENT_LINES:
        return f"{kept}\n… [{len(lines) - MAX_ARGUMENT_LINES} more lines not shown]"
    return kept


def _argument(name: str, value: object) -> RenderableType:
    """`    name: value`, a value of several lines indented under it."""
    label = one_line(name, terminal=True)
    lines = argument_text(value).split("\n")
    return indented([Text.assemble((f"{label}: ", "bold"), _wrapped(lines[0])), *map(_wrapped, lines[1:])], "    ")


def preview_diff(call: ToolUseBlock, cwd: Path) -> str:
    """The diff a Write or Edit would make, computed before it runs ('' if unknown)."""
    raw = call.input.get("file_path")
    if call.name not in ("Write", "Edit") or not isinstance(raw, str):
        return ""
    path = Path(raw).expanduser()
    path = path if path.is_absolute() else cwd / path
    try:
        old = path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        return ""
    if call.name == "Write":
        return unified_diff(path, old or "", str(call.input.get("content", "")), created=old is None)
    old_string, new_string = str(call.input.get("old_string", "")), str(call.input.get("new_string", ""))
    if old is None or not old_string or old_string not in old:
        return unified_diff(path, old_string, new_string)
    count = -1 if call.input.get("replace_all") else 1
    return unified_diff(path, old, old.replace(old_string, new_string, count))


def plan_panel(plan: str, width: int) -> RenderableType:
    """A plan presented for approval (ExitPlanMode), drawn as markdown in a frame."""
    from rich.panel import Panel  # startup: only a plan needs it

    body = Markdown(plan.strip("\n") or "(an empty plan)", hyperlinks=False)
    return Panel(body, title="Plan", title_align="left", border_style="cyan", width=min(width, 100))
