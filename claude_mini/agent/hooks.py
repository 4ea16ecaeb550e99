"""Extension points where the memory layers plug into the agent loop (DESIGN.md section 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_mini.llm.messages import TextBlock, ToolUseBlock
from claude_mini.tools.base import ToolResult

if TYPE_CHECKING:
    from claude_mini.agent.events import TurnDone
    from claude_mini.agent.loop import Agent


def system_reminder(text: str) -> TextBlock:
    """Wrap an attachment so the model knows it came from the harness, not the user."""
    return TextBlock(f"<system-reminder>\n{text}\n</system-reminder>")


class AgentHooks:
    """Extension points for the memory layers; every method is a no-op by default."""

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        """A user turn begins (recall starts its prefetch here)."""

    async def before_request(self, agent: Agent) -> None:
        """A request is about to be built (compaction checks the context size here)."""

    async def on_context_too_long(self, agent: Agent) -> bool:
        """The API rejected the request as too long; return True if the context was shrunk."""
        return False

    def after_tool(self, call: ToolUseBlock, result: ToolResult) -> list[str]:
        """A tool finished; return attachments it makes due (path-scoped rules)."""
        return []

    def attachments(self) -> list[str]:
        """Attachments ready to go with the next user-role message (recalled memories)."""
        return []

    async def on_turn_end(self, agent: Agent, done: TurnDone) -> None:
        """The turn ended normally (extraction is scheduled here)."""
