"""Which conversation this is: /clear, /resume, /exit (/model is in context_commands.py).

A new or resumed session goes through `Runtime.switch_session`, so every memory
layer follows it; the old session stays on disk, resumable.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from claude_mini.base.text import clip, visible_controls
from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.session import (
    Session,
    ambiguous_message,
    list_sessions,
    maybe_another_projects,
    open_transcript,
    read_transcript,
    request_text,
)
from claude_mini.ui.commands import CommandContext, command
from claude_mini.ui.shell_mode import shell_part


@command("clear", help="Start a new session in this process (the old one stays resumable).")
def clear_session(ctx: CommandContext) -> None:
    """Swap in a fresh session and rebuild the system prompt."""
    old = ctx.rt.session
    ctx.rt.switch_session(Session(ctx.rt.config.cwd), "clear")
    ctx.host.session_changed()
    kept = f" The previous session ({old.id}) is saved; /resume brings it back." if old.messages else ""
    ctx.console.print(f"Started a new session.{kept}", markup=False)


@command("resume", help="Continue an earlier session of this directory.", usage="[number|id|id prefix]")
async def resume(ctx: CommandContext) -> None:
    """Pick an earlier session from a list (or by number, id or id prefix) and switch to it.

    The list shows the 20 newest; an id or a prefix of one finds any session of the directory.
    """
    rt = ctx.rt
    found = [p for p in list_sessions(rt.config.cwd) if p.stem != rt.session.id]
    if not found:
        ctx.console.print("No earlier session in this directory.", markup=False)
        return
    if ctx.args:
        path = _find(ctx, found)
    else:
        choice = await ctx.host.choose("Resume which session?", _options(rt.config.cwd, found[:PICKER_SIZE]))
        path = next((p for p in found if p.stem == choice), None)
        if path is None:
            ctx.console.print("Nothing resumed.", markup=False)
    if path is None:
        return
    session = open_transcript(rt.config.cwd, path)
    rt.switch_session(session, "resume")
    ctx.host.session_changed()
    for line in resumed_lines(session):
        ctx.console.print(line, markup=False, highlight=False)


PICKER_SIZE = 20


def _options(cwd: Path, paths: list[Path]) -> list[tuple[str, str]]:
    """The picker's rows: age, message count and the session's first request (before any compaction);
    a session from before that may be another project's says so (`-c` skips those)."""
    options = []
    for path in paths:
        contents = read_transcript(path)
        title = _title(contents.first_request, 60) or "(no text)"
        if maybe_another_projects(cwd, path):
            title = "(from before, may be another project's) " + title
        options.append(
            (path.stem, f"{ago(time.time() - path.stat().st_mtime):>8}  {len(contents.messages):>3} msgs  {title}")
        )
    return options


def _find(ctx: CommandContext, found: list[Path]) -> Path | None:
    """`/resume 3` (a number of the list) or an id or id prefix of any session; None (said) if none fits."""
    arg = ctx.args.split()[0]
    if arg.isdigit() and 1 <= int(arg) <= min(len(found), PICKER_SIZE):
        return found[int(arg) - 1]
    matches = [p for p in found if p.stem == arg] or [p for p in found if p.stem.startswith(arg)]
    if len(matches) == 1:
        return matches[0]
    ctx.console.print(
        ambiguous_message(arg, matches)
        if matches
        else f"No earlier session matches {arg!r}; /resume without an argument lists them.",
        markup=False,
    )
    return None


def _title(text: str, width: int) -> str:
    """A user message on one line, without the files its @mentions attached."""
    return " ".join(visible_controls(text.split("\n\n<attached-")[0]).split())[:width]


RECAP_REQUESTS = 3  # the last exchanges redrawn on resume
RECAP_LINES = 3  # of each message
RECAP_WIDTH = 100


def resumed_lines(session: Session) -> list[str]:
    """What a resume prints before the prompt: which session, then its last exchanges, shortened.

    As Claude Code redraws a resumed conversation, so the user sees where it stood: the last
    few requests with what came after them, each message cut to a few lines.
    """
    messages = session.messages
    requests = [i for i, m in enumerate(messages) if m.role == "user" and request_text(m)]
    first = requests[-RECAP_REQUESTS] if len(requests) >= RECAP_REQUESTS else (requests or [len(messages)])[0]
    lines = [f"Resumed session {session.id} ({len(messages)} messages)."]
    if first:
        lines.append(f"  ⋮ {first} earlier message{'s' if first != 1 else ''}")
    outcomes = _call_outcomes(messages)
    cwd = Path(session.cwd) if session.cwd else None
    for message in messages[first:]:
        if message.role == "user":
            lines += _user_lines(message)
            continue
        lines += _shortened("● ", message.text)
        lines += [
            clip(f"● {_tool_label(call, cwd)}{outcomes.get(call.id, '')}", RECAP_WIDTH) for call in message.tool_uses
        ]
    return lines


def _user_lines(message: Message) -> list[str]:
    """A user message as typed: its `!` lines (shell_mode.py) as `! command`, then the request."""
    lines, rest = [], []
    for block in message.content:
        part = shell_part(block.text) if isinstance(block, TextBlock) else None
        if part is None:
            rest.append(block)
        elif part[0] == "input":
            lines += _shortened("! ", part[1])
    return lines + _shortened("> ", request_text(Message("user", rest)))


def _call_outcomes(messages: list[Message]) -> dict[str, str]:
    """` (declined)`, ` (denied)` or ` (failed)` by tool call id, for the calls that did not run
    as asked (their result is an error), so a redrawn refusal does not look like an edit made."""
    out = {}
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolResultBlock) and block.is_error:
                first = block.content.split("\n", 1)[0]
                why = (
                    "declined" if first.startswith("The user declined") else "denied" if "denied" in first else "failed"
                )
                out[block.tool_use_id] = f" ({why})"
    return out


def _shortened(marker: str, text: str) -> list[str]:
    """`text` under `marker`, at most RECAP_LINES lines of RECAP_WIDTH characters."""
    rows = [row for row in visible_controls(text).strip().splitlines() if row.strip()]
    if not rows:
        return []
    shown = [clip(("  " if i else marker) + row, RECAP_WIDTH) for i, row in enumerate(rows[:RECAP_LINES])]
    if len(rows) > RECAP_LINES:
        shown.append(f"  … +{len(rows) - RECAP_LINES} lines")
    return shown


def _tool_label(call: ToolUseBlock, cwd: Path | None = None) -> str:
    """`Bash(git status)`, `Edit(src/app.py)`: the tool and its key argument, a path inside `cwd`
    relative to it as the conversation drew it (render.tool_label without importing rich)."""
    key = next((call.input[k] for k in ("command", "file_path", "pattern", "path", "url") if k in call.input), "")
    if cwd is not None and isinstance(key, str) and ("file_path" in call.input or "path" in call.input):
        with contextlib.suppress(ValueError):
            key = str(Path(key).relative_to(cwd)) if Path(key).is_absolute() else key
    return " ".join(visible_controls(f"{call.name}({key})").split())


def ago(seconds: float) -> str:
    """`just now`, `4m ago`, `2h ago`, `3d ago` (pickers' age column)."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


@command("exit", help="Leave claude-mini (the session is saved).", aliases=("quit",), needs_runtime=False)
def exit_repl(ctx: CommandContext) -> None:
    """Ask the REPL to stop."""
    ctx.host.request_exit()
