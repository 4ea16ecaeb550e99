"""The lifecycle part that keeps file checkpoints: before each Write, Edit or NotebookEdit, what the
file was.

    before_tool   a Write or Edit of this agent's last response: the file's content now, held
                  in memory (nothing is stored for a call the rules or the user then refuse)
    after_tool    the call succeeded: the content before and a hash of the content after go to
                  the session's store, keyed to the user's message that started the turn; a
                  Bash command that is not read-only is noted (its changes are not tracked)
    for_subagent  the same part watches every subagent, with the subagent's own working folder

The auto memory folder is left out: memory files have an archive of their own (memory/store).
Nothing here blocks a tool: a store that cannot be written is said once, and the session goes on.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.agent.lifecycle import Part, PartContext, RuntimeView, ToolVerdict
from claude_mini.base.notices import NoticeChannel
from claude_mini.config.checkpoint_settings import CheckpointSettings
from claude_mini.rewind.store import Before, FileHistory, StoreError, capture, fingerprint
from claude_mini.shell.read_only import is_read_only_command

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent
    from claude_mini.agent.subagent_run import SubagentRun
    from claude_mini.llm.messages import ToolUseBlock
    from claude_mini.session import Session
    from claude_mini.tools.base import ToolResult

CHANGING_TOOLS = ("Write", "Edit", "NotebookEdit")
log = logging.getLogger(__name__)


class FileHistoryPart(Part):
    """Keeps, for the session in place, what each Write and Edit replaced (the main agent's and
    its subagents'), and notes the commands that may have changed files."""

    def __init__(
        self,
        session: Callable[[], Session],
        *,
        settings: Callable[[], CheckpointSettings],
        memory_root: Path | None,
        notices: NoticeChannel,
    ) -> None:
        self.session = session  # the runtime's: it changes with /clear and /resume
        self.settings = settings
        self.memory_root = Path(os.path.realpath(memory_root)) if memory_root is not None else None
        self.notices = notices
        self._pending: dict[str, tuple[Path, Before, bytes | None]] = {}  # call id -> the file before it
        self._failed = False

    def history(self) -> FileHistory:
        """The store of the session in place."""
        return FileHistory.of_session(self.session().id, self.settings())

    # -- the lifecycle

    async def before_tool(self, agent: Agent, call: ToolUseBlock) -> ToolVerdict | None:
        """Read the file a Write or Edit is about to change. A subagent's call also reaches its
        parent's parts; only the subagent's own part (same object, its agent) takes it."""
        if call.name in CHANGING_TOOLS and _of_last_response(agent, call):
            path = self._tracked_path(agent, call.input)
            if path is not None:
                before, data = await asyncio.to_thread(capture, path)
                self._pending[call.id] = (path, before, data)
        return None

    async def after_tool(self, agent: Agent, call: ToolUseBlock, result: ToolResult) -> list[str]:
        """Store what the file was when the call succeeded; note a command that may change files
        (a failing command too: it may have changed some before it failed)."""
        pending = self._pending.pop(call.id, None)
        message = self.session().prompt_id
        if message is None:
            return []
        if pending is not None and not result.is_error:
            path, before, data = pending
            by = "main" if agent.purpose == "main" else "subagent"
            await self._store(
                lambda history: history.record_change(message, path, before, data, fingerprint(path), call.name, by)
            )
        elif call.name == "Bash" and _may_change_files(call.input):
            await self._store(lambda history: history.record_command(message, str(call.input["command"])))
        return []

    def after_turn(self, agent: Agent) -> None:
        """A call refused after its file was read never reaches after_tool: its copy goes here."""
        if agent.purpose == "main":
            self._pending.clear()

    def for_subagent(self, agent: Agent, run: SubagentRun) -> Part:
        """This part, in the child's lifecycle too (its calls carry their own ids)."""
        return self

    # -- helpers

    def _tracked_path(self, agent: Agent, input: dict[str, Any]) -> Path | None:
        """The file a call would change, as the tool resolves it; None outside what is tracked."""
        raw = (input.get("file_path") or input.get("notebook_path")) if isinstance(input, dict) else None
        if not isinstance(raw, str) or not raw:
            return None
        path = agent.ctx.resolve(raw)
        if self.memory_root is not None:
            real = Path(os.path.realpath(path))
            if real == self.memory_root or self.memory_root in real.parents:
                return None
        return path

    async def _store(self, write: Callable[[FileHistory], str | None]) -> None:
        """Run one store update in a worker thread; what it has to say goes on the notice channel."""
        try:
            note = await asyncio.to_thread(write, self.history())
        except Exception as exc:  # a store that cannot be written (or a bug) must not end the turn
            if not isinstance(exc, StoreError):
                log.warning("file checkpoint failed", exc_info=True)
            if not self._failed:
                self._failed = True
                self.notices.say(
                    f"{str(exc).rstrip('.')}: /rewind cannot restore this change (said once; the session goes on).",
                    "warning",
                )
            return
        if note:
            self.notices.say(note, "warning", once=True)


def _of_last_response(agent: Agent, call: ToolUseBlock) -> bool:
    """Whether `call` is one of `agent`'s own last response (not a subagent's passing through)."""
    messages = agent.session.messages
    return bool(messages) and messages[-1].role == "assistant" and any(c.id == call.id for c in messages[-1].tool_uses)


def _may_change_files(input: Any) -> bool:
    """A Bash command that is not known to only read (its changes are not tracked)."""
    command = input.get("command") if isinstance(input, dict) else None
    return isinstance(command, str) and bool(command.strip()) and not is_read_only_command(command)[0]


def part(ctx: PartContext[RuntimeView]) -> FileHistoryPart:
    """The session's file checkpoints: the store follows the runtime's session (/clear, /resume)."""
    runtime = ctx.runtime
    return FileHistoryPart(
        lambda: runtime.session,
        settings=lambda: ctx.config.checkpoints,
        memory_root=ctx.memory_root,
        notices=ctx.notices,
    )
