"""Layer 5 in the agent loop: CompactPart decides when to compact; the Compactor (compact/compactor.py)
does it.

    before_request        auto-compacts before a request that would cross the threshold
    on_context_too_long   compacts once when the API says the prompt is too long
    attachments           past half the threshold, a line on the context used
    on_session_start      on resume, rebuilds the files read from the conversation"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.agent.lifecycle import ConversationRewind, Part, PartContext
from claude_mini.llm.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from claude_mini.memory.compact.budget import (
    budget_line,
)
from claude_mini.memory.compact.compactor import (
    MAX_FAILURES,
    CompactionError,
    CompactionRefused,
    Compactor,
    CompactorRuntime,
    fork_summary,
)
from claude_mini.session import transcript_entries

if TYPE_CHECKING:
    from claude_mini.agent.lifecycle import SessionSource
    from claude_mini.agent.loop import Agent
    from claude_mini.base.notices import NoticeChannel
    from claude_mini.session import Session
    from claude_mini.tools.base import ToolContext


class CompactPart(Part):
    """Auto-compaction before a request that would cross the threshold, with a circuit breaker;
    the budget line past half the threshold; the files read, rebuilt when a session is resumed."""

    def __init__(self, compactor: Compactor, notices: NoticeChannel) -> None:
        self.compactor = compactor
        self.notices = notices
        self.refused = False  # a hook refused an auto-compaction this turn: not asked again until the next
        self.budget_due = True  # the budget line goes with the next user message at most once per request
        # Read now, before this run writes to it: when the resumed conversation saw each file.
        self.seen_times = seen_times(compactor.runtime.session)

    async def on_session_start(self, agent: Agent, source: SessionSource) -> None:
        """-c / -r: the files the resumed conversation read count as read again (unless changed since)."""
        if source == "resume":
            rebuild_read_files(agent.ctx, agent.session.messages, self.seen_times)

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        self.refused = False

    def attachments(self) -> list[str]:
        """One line on the context used, once past half the auto-compact threshold (or of the
        window when auto-compact is off), so the model can wrap up or save state in time."""
        if not self.budget_due or not self.compactor.runtime.agent.session.messages:
            return []
        self.budget_due = False
        line = budget_line(self.compactor)
        return [line] if line else []

    async def before_request(self, agent: Agent) -> None:
        c = self.compactor
        if c.auto_enabled and not self.refused and agent.session.messages and c.used() > c.threshold:
            await self.auto_compact(f"over the auto-compact threshold of {c.threshold:,}")
        c.meter.mark_sent(agent)
        self.budget_due = True

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """/clear or /resume: a new conversation starts with no compactions and no failures
        (the breaker's message tells the user that /clear turns auto-compact back on); /resume
        gets back the files its conversation read."""
        c = self.compactor
        c.count = c.failures = 0
        c.meter.sent_messages = len(session.messages)
        if source == "resume":
            self.seen_times = seen_times(session)
            rebuild_read_files(c.runtime.agent.ctx, session.messages, self.seen_times)

    async def on_rewind(self, agent: Agent, rewind: ConversationRewind) -> None:
        """/rewind: the files the kept conversation read count as read again, as on a resume (one
        restored or changed since must be read afresh before an edit); nothing the rewound-away part
        read does."""
        rebuild_read_files(agent.ctx, agent.session.messages, seen_times(agent.session))

    async def on_context_too_long(self, agent: Agent) -> bool:
        """The API refused the request as too long: compact once, unless the breaker is open."""
        if self.compactor.failures >= MAX_FAILURES:
            return False
        return await self.auto_compact("the model said the prompt is too long")

    async def auto_compact(self, why: str) -> bool:
        """One automatic compaction; True when it worked. Failures count toward the breaker."""
        c = self.compactor
        self.notices.say(f"Compacting the conversation ({why}: {c.used():,} of {c.window:,} tokens)…")
        try:
            result = await c.compact(trigger="auto")
        except CompactionRefused as exc:
            self.refused = True
            self.notices.say(f"Compaction skipped: {exc}.", once=True)
            return False
        except CompactionError as exc:
            c.failures += 1
            self.notices.say(f"Compaction failed: {exc}")
            if c.failures >= MAX_FAILURES:
                self.notices.say(
                    f"Auto-compact is off for this session after {MAX_FAILURES} failures. "
                    "Run /compact to try again, or /clear to start a fresh conversation."
                )
            return False
        c.failures = 0
        self.notices.say(
            f"Compacted: {result.tokens_before:,} → {result.tokens_after:,} tokens; "
            f"restored {len(result.restored_files)} file(s) and the latest request."
        )
        return True


def part(ctx: PartContext[CompactorRuntime]) -> CompactPart:
    """Layer 5 over the session's compactor (summaries from a forked request)."""
    return CompactPart(Compactor(ctx.runtime, fork_summary), ctx.notices)


# The header of a file a compaction put back (Compactor._replace_conversation).
_RESTORED_FILE = re.compile(r"\A<system-reminder>\nCurrent contents of (.+?) \(read earlier\):\n")


# The tools whose success leaves the model knowing a file's current contents.
_FILE_TOOLS = ("Read", "Write", "Edit")


@dataclass
class SeenTimes:
    """When a resumed conversation saw its files, from its transcript's entries: each tool
    result's entry time, and the last compaction's (for the files it put back)."""

    results: dict[str, float] = field(default_factory=dict)
    compacted: float = 0.0


def seen_times(session: Session) -> SeenTimes:
    """The times of the session's transcript entries (nothing when it has none or cannot be read)."""
    from datetime import datetime

    times = SeenTimes()
    for entry in transcript_entries(session.transcript.path):
        try:
            when = datetime.fromisoformat(str(entry["timestamp"]).replace("Z", "+00:00")).timestamp()
        except (ValueError, KeyError):
            continue
        if entry.get("type") == "compact_boundary":
            times.compacted = when
        content = entry.get("message", {}).get("content") if isinstance(entry.get("message"), dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                times.results[str(block.get("tool_use_id"))] = when
    return times


def files_seen(messages: list[Message], ctx: ToolContext) -> list[tuple[Path, str | None]]:
    """The files a conversation showed the model, oldest first, each once at its latest place,
    with the call that showed it (None: a compaction put it back): those a compaction put back,
    then each successful Read, Write and Edit. Relative paths resolve from `ctx.cwd` (a `cd`
    during the session is not followed)."""
    succeeded = {
        b.tool_use_id for m in messages for b in m.content if isinstance(b, ToolResultBlock) and not b.is_error
    }
    seen: dict[Path, str | None] = {}
    for message in messages:
        restored = [
            m.group(1) for b in message.content if isinstance(b, TextBlock) and (m := _RESTORED_FILE.match(b.text))
        ]
        for path in reversed(restored):  # a compaction lists the most recent first
            seen.pop(Path(path), None)
            seen[Path(path)] = None
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.name in _FILE_TOOLS and block.id in succeeded:
                name = block.input.get("file_path") if isinstance(block.input, dict) else None
                if isinstance(name, str) and name:
                    path = ctx.resolve(name)
                    seen.pop(path, None)
                    seen[path] = block.id
    return list(seen.items())


def rebuild_read_files(ctx: ToolContext, messages: list[Message], times: SeenTimes) -> None:
    """The read-before-write state of a resumed conversation, in reading order (for the
    post-compact restore). A file unchanged since the conversation saw it counts as read as it
    is now; one changed since (by the user, during or after the session) as read before that,
    so Write and Edit ask for a fresh Read; a deleted one, or one whose time is unknown, is left
    out."""
    ctx.read_files.clear()
    for path, call_id in files_seen(messages, ctx):
        seen = times.results.get(call_id, 0.0) if call_id is not None else times.compacted
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if seen:
            ctx.read_files[path] = mtime if mtime <= seen else seen
