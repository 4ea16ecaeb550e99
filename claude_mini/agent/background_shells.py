"""The session's background shells as a lifecycle part: the model hears when one ends, and the
session's end ends them all (tools/background.py holds the shells themselves)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_mini.agent.lifecycle import EndReason, Part, PartContext
from claude_mini.base.notices import NoticeChannel
from claude_mini.tools.background import BackgroundShell, BackgroundShells

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent


class BackgroundShellPart(Part):
    """Tells the model once about each background shell that ended on its own; ends the rest with
    the session (and, through signals.py and the reaper, when claude-mini itself is ended)."""

    def __init__(self, shells: BackgroundShells, notices: NoticeChannel | None = None) -> None:
        self.shells = shells
        if notices is not None:  # the user sees it too (and the REPL's status line is redrawn)
            shells.on_end = lambda shell: notices.say(f"Background shell {shell.id} ended: {shell.state()}.")

    def attachments(self) -> list[str]:
        """One reminder per shell that ended since the last user-role message."""
        return [ended_note(shell) for shell in self.shells.untold()]

    async def on_session_end(self, agent: Agent, reason: EndReason = "other") -> None:
        """Kill every shell still running, and whatever its commands left behind."""
        await self.shells.close()

    def context_report(self) -> list[str]:
        """How many background shells run, for /context."""
        running = len(self.shells.running())
        return [f"Background shells: {running} running (/bashes)"] if running else []


def ended_note(shell: BackgroundShell) -> str:
    """What the model is told when a background shell ends without having been asked about."""
    unread = shell.spool.total - shell.read_to
    output = f"{unread:,} bytes of output unread" if unread > 0 else "no unread output"
    return (
        f"Background shell {shell.id} ({shell.command}) has ended: {shell.state()}, {output}. "
        f'Read it with BashOutput (bash_id "{shell.id}").'
    )


def part(ctx: PartContext[object]) -> BackgroundShellPart | None:
    """The part over the main agent's shells (None where its context has none)."""
    shells = ctx.agent.ctx.shells
    return BackgroundShellPart(shells, ctx.notices) if shells is not None else None
