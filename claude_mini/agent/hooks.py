"""The session lifecycle: every point where a part of claude_mini observes or steers a session.

This is the one declaration of the extension points (DESIGN.md sections 3 and 8).
The memory layers implement it today (instructions, recall, extraction,
compaction); the user's hooks from settings are one more implementation of the
same interface. Every method has a default that does nothing, so a part
overrides only the points it cares about. In the order a session meets them:

    on_session_start      the runtime is ready (source: startup | resume)
    on_session_change     /clear or /resume put another conversation in place
    on_turn_start         a user message arrives, before it is added
    attachments           text to append to the next user-role message
    before_request        a model request is about to be built
    on_context_too_long   the API refused the request as too long
    before_tool           a tool call is about to be checked and run
    after_tool            a tool call finished
    on_turn_end           the model stopped asking for tools
    before_compact        a compaction is about to summarise the conversation
    after_compact         the conversation was replaced by its summary
    on_session_end        the session is closing
    context_report        lines for /context (not an event: read on demand)

Parts tell the user things through the `NoticeChannel` they were built with
(`claude_mini.notices`), never through attributes a UI polls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from claude_mini.llm.messages import TextBlock, ToolUseBlock
from claude_mini.tools.base import ToolResult

if TYPE_CHECKING:
    from claude_mini.agent.events import TurnDone
    from claude_mini.agent.loop import Agent
    from claude_mini.agent.permissions import Decision
    from claude_mini.session import Session

SessionSource = Literal["startup", "resume", "clear"]
CompactTrigger = Literal["auto", "manual"]


def system_reminder(text: str) -> TextBlock:
    """Wrap an attachment so the model knows it came from the harness, not the user."""
    return TextBlock(f"<system-reminder>\n{text}\n</system-reminder>")


class AgentHooks:
    """One part's view of the session lifecycle; every method is a no-op by default."""

    # -- the session

    async def on_session_start(self, agent: Agent, source: SessionSource) -> None:
        """The runtime is ready and no turn has run yet (`resume`: it holds an earlier conversation)."""

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """/clear (`clear`) or /resume (`resume`) replaced the conversation; per-conversation
        state starts again from `session`."""

    async def on_session_end(self, agent: Agent) -> None:
        """The session is closing: stop background work (the UI has already waited for it)."""

    # -- one user turn

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        """A user turn begins, before its message joins the conversation (recall's prefetch)."""

    def attachments(self) -> list[str]:
        """Attachments ready to go with the next user-role message (recalled memories)."""
        return []

    async def before_request(self, agent: Agent) -> None:
        """A request is about to be built (compaction checks the context size here)."""

    async def on_context_too_long(self, agent: Agent) -> bool:
        """The API rejected the request as too long; return True if the context was shrunk."""
        return False

    async def before_tool(self, agent: Agent, call: ToolUseBlock) -> Decision | None:
        """A tool call is about to run: None has no opinion; Deny refuses it (its reason goes to
        the model), Ask makes the user confirm it, Allow spares the user a question. Deny rules
        of the permission policy still bind: code decides what is safe, not a hook."""
        return None

    def after_tool(self, call: ToolUseBlock, result: ToolResult) -> list[str]:
        """A tool finished; return attachments it makes due (path-scoped rules)."""
        return []

    async def on_turn_end(self, agent: Agent, done: TurnDone) -> None:
        """The turn ended normally (extraction is scheduled here)."""

    # -- compaction

    async def before_compact(self, agent: Agent, trigger: CompactTrigger) -> None:
        """A compaction is about to summarise the conversation (extraction flushes first)."""

    def after_compact(self, agent: Agent) -> None:
        """The conversation was replaced by its summary (per-conversation counters restart)."""

    # -- reports

    def context_report(self) -> list[str]:
        """Lines about what this part put in the context, for /context."""
        return []
