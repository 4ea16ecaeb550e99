"""/rewind (and Esc Esc on an empty prompt): go back to before one of your messages.

    pick a message (newest first, with the files its turn changed)
      ─► restore code and conversation | conversation | code | never mind
    code          rewind/restore.py: every file the assistant changed since, as it was before;
                  a file changed outside the assistant since is kept unless you say otherwise
    conversation  rewind/conversation.py: the conversation as it was before the message, which
                  comes back into the input; memories saved since are listed, to forget if wanted

`/rewind 2` or `/rewind <message id>` skips the list. The checkpoints and rewinds live on disk,
so all of it works the same after `-c` / `-r` (and from scripts: `claude-mini checkpoints`).
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.base.text import one_line, visible_controls
from claude_mini.ui.commands import CommandContext, command

if TYPE_CHECKING:
    from claude_mini.rewind.points import RewindPoint, SessionCheckpoints

PICKER_SIZE = 20
TEXT_WIDTH = 48
FILES_SHOWN = 3
NOTHING_CHANGED = "Nothing was changed."
ACTIONS = (
    ("both", "Restore code and conversation"),
    ("conversation", "Restore conversation"),
    ("code", "Restore code"),
    ("cancel", "Never mind"),
)


@command(
    "rewind",
    help="Go back to before one of your messages: the code, the conversation or both "
    "(also Esc Esc on an empty prompt).",
    usage="[number|message id]",
)
async def rewind(ctx: CommandContext) -> None:
    """Pick a message, then what to restore; say what was done and what was not."""
    from claude_mini.rewind.points import read_checkpoints
    from claude_mini.rewind.store import StoreError

    rt = ctx.rt
    assert rt.file_history is not None, "the runtime always builds the checkpoint part"
    try:
        checkpoints = await asyncio.to_thread(read_checkpoints, rt.session.transcript.path, rt.file_history.history())
    except StoreError as exc:
        _say(ctx, f"✗ {exc} {NOTHING_CHANGED}", "red")
        return
    for problem in checkpoints.problems:
        _say(ctx, f"⚠ {problem}", "yellow")
    point = await _pick(ctx, checkpoints)
    if point is None:
        return
    has_code = checkpoints.changes_since(point.prompt)
    actions = ACTIONS if has_code else (ACTIONS[1], ACTIONS[3])
    question = f"Rewind to before “{one_line(point.prompt.text, TEXT_WIDTH, terminal=True)}”?"
    if not has_code:
        question += " (the assistant has changed no files since)"
    action = await ctx.host.choose(question, list(actions))
    if action in (None, "cancel"):
        _say(ctx, NOTHING_CHANGED)
        return
    if action in ("both", "code") and not await _restore_code(ctx, checkpoints, point):
        return
    if action in ("both", "conversation"):
        await _restore_conversation(ctx, point)


async def _pick(ctx: CommandContext, checkpoints: SessionCheckpoints) -> RewindPoint | None:
    """The point the argument names, or the one picked from the list (None: said why)."""
    points = checkpoints.points
    if not points:
        _say(ctx, "Nothing to rewind to: this conversation has no message of yours yet.")
        return None
    if ctx.args:
        point = checkpoints.find(ctx.args.split()[0], numbers=True)
        if point is None:
            _say(
                ctx,
                f"No message {ctx.args.split()[0]!r} to rewind to (a number of the list, or a message id "
                f"or a unique start of one); /rewind without an argument lists them. {NOTHING_CHANGED}",
            )
        return point
    options = [(p.prompt.id, _label(p, ctx.rt.config.cwd)) for p in points[:PICKER_SIZE]]
    more = f" ({len(points) - PICKER_SIZE} older: /rewind N or a message id)" if len(points) > PICKER_SIZE else ""
    choice = await ctx.host.choose(f"Rewind to before which message? (newest first){more}", options)
    point = next((p for p in points if p.prompt.id == choice), None)
    if point is None:
        _say(ctx, NOTHING_CHANGED)
    return point


def _label(point: RewindPoint, cwd: Path) -> str:
    """`2m ago  add a multiply function  · app.py, util.py (new) · ran commands`."""
    from claude_mini.rewind.restore import shown
    from claude_mini.ui.session_commands import ago

    text = one_line(point.prompt.text, TEXT_WIDTH, terminal=True) or "(no text)"
    parts = [f"{ago(_seconds_since(point.prompt.timestamp)):>8}  {text}"]
    if point.files:
        names = [shown(Path(f.path), cwd) + (" (new)" if f.created else "") for f in point.files]
        more = f" +{len(names) - FILES_SHOWN} more" if len(names) > FILES_SHOWN else ""
        parts.append(", ".join(names[:FILES_SHOWN]) + more)
    if point.commands:
        parts.append("ran commands (not tracked)")
    return visible_controls("  · ".join(parts))


async def _restore_code(ctx: CommandContext, checkpoints: SessionCheckpoints, point: RewindPoint) -> bool:
    """Restore the files; False when the user cancelled at the question about outside changes."""
    from claude_mini.rewind.restore import (
        apply_code_restore,
        conflict_lines,
        plan_code_restore,
        result_lines,
    )
    from claude_mini.rewind.store import StoreError

    cwd = ctx.rt.config.cwd
    plan = await asyncio.to_thread(plan_code_restore, checkpoints, point.prompt, root=ctx.rt.config.project_root)
    overwrite = False
    if plan.conflicts:
        for line in conflict_lines(plan, cwd):
            _say(ctx, f"⚠ {line}", "yellow")
        answer = await ctx.host.choose(
            "Restore those files too?",
            [
                ("keep", "No: keep them as they are, restore the others"),
                ("overwrite", "Yes: restore them too, losing those changes"),
                ("cancel", "Cancel: change nothing"),
            ],
        )
        if answer in (None, "cancel"):
            _say(ctx, NOTHING_CHANGED)
            return False
        overwrite = answer == "overwrite"
    try:
        result = await asyncio.to_thread(apply_code_restore, checkpoints, plan, overwrite_outside=overwrite)
    except StoreError as exc:  # the files are restored; only the record of it failed
        _say(ctx, f"⚠ {exc}: a later /rewind may call these files changed outside the assistant.", "yellow")
        return True
    for line in result_lines(result, plan, cwd):
        _say(ctx, line)
    return True


async def _restore_conversation(ctx: CommandContext, point: RewindPoint) -> None:
    """Rewind the conversation; the message goes back into the input; memories saved since are listed."""
    from claude_mini.rewind.conversation import memories_since, rewind_conversation
    from claude_mini.session import RewindError

    rt = ctx.rt
    before = len(rt.session.messages)
    try:
        await rewind_conversation(rt.agent, point.prompt.id)
    except RewindError as exc:
        _say(ctx, f"✗ {exc}", "red")
        return
    removed = before - len(rt.session.messages)
    ctx.host.put_in_input(point.prompt.text)
    _say(
        ctx,
        f"Rewound the conversation to before that message ({removed} message{'s' if removed != 1 else ''} "
        "left out of it; the transcript keeps them). Your message is back in the input, to edit or send.",
    )
    memories = await asyncio.to_thread(memories_since, rt.session.transcript.path, point.prompt.id, rt.store.root)
    if memories:
        _say(
            ctx,
            f"Memories saved since that message: {', '.join(memories)}. They stay; forget one with "
            "/memory forget NAME.",
            "yellow",
        )


def _seconds_since(timestamp: str) -> float:
    try:
        return max(0.0, time.time() - datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0.0


def _say(ctx: CommandContext, line: str, style: str | None = None) -> None:
    ctx.console.print(line, style=style, markup=False, highlight=False)
