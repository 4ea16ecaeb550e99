"""`/dream` in the REPL: consolidate this project's memories now, or show the auto-dream gate.

    /dream           run a consolidation (Ctrl-C cancels it; nothing changes then)
    /dream status    when the last dream ran, sessions since, whether one is due

The registry imports `*_commands.py` modules by itself, so this file registers `/dream`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from claude_mini.config.memory_settings import DreamSettings
from claude_mini.memory.maintenance.dream import DreamBusy, auto_dream_due, dream, load_state
from claude_mini.memory.store import MemoryStore, MemoryStoreError, iso_utc
from claude_mini.ui.commands import CommandContext, command

if TYPE_CHECKING:
    from claude_mini.config import Config
    from claude_mini.runtime import Runtime

USAGE = "Usage: /dream [status]"


def status_lines(store: MemoryStore, config: Config | None, now: float | None = None) -> list[str]:
    """When the last dream ran, how many sessions since, and whether an automatic one is due."""
    now = time.time() if now is None else now
    settings = DreamSettings.from_config(config)
    state = load_state(store.root, now)
    last = iso_utc(state.last_dream) if state.last_dream else "never"
    lines = [f"Last dream: {last}; sessions since: {len(state.sessions)}."]
    if not settings.auto_dream:
        lines.append("Automatic dreaming is off (memory.autoDream: false); /dream still works.")
    else:
        why_not = auto_dream_due(state, now, settings)
        lines.append(
            "An automatic dream is due at the next session start."
            if why_not is None
            else f"Next automatic dream: {why_not}."
        )
    return lines


async def run_dream_command(runtime: Runtime, say: Callable[[str], None]) -> None:
    """Run /dream on the live session: the fork's report, then rebuild the prompt if memory changed."""
    say("Dreaming: a background agent is consolidating this project's memories...")
    try:
        report = await dream(runtime.agent, runtime.store, runtime.config, base_policy=runtime.policy)
    except DreamBusy as exc:
        say(str(exc))
        return
    except MemoryStoreError as exc:
        say(f"Dream not started: {exc}")
        return
    assert report is not None  # only_if_due is False
    for line in report.message().splitlines():
        say(line)
    if report.changed:
        runtime.rebuild_prompt()
        say("The system prompt was rebuilt with the new MEMORY.md.")


@command(
    "dream",
    help="Consolidate memories: merge duplicates, settle contradictions, sharpen descriptions, distil daily logs.",
    usage="[status]",
)
async def dream_now(ctx: CommandContext) -> None:
    """Dispatch /dream and /dream status."""

    def say(line: str) -> None:
        ctx.console.print(line, markup=False, highlight=False)

    arg = ctx.args.strip()
    if arg == "status":
        for line in status_lines(ctx.rt.store, ctx.rt.config):
            say(line)
    elif arg:
        say(USAGE)
    else:
        await run_dream_command(ctx.rt, say)
