"""Layer 4's engine: the schedule of extraction runs, the cursor, and what one run does.

    schedule: one extraction at a time, as a background asyncio task; a turn that
        ends while one runs stashes its snapshot (only the newest is kept) and
        exactly one trailing run follows
    a run: messages since the cursor are the fork's only source
        main agent wrote memory itself since the cursor ──► advance the cursor, no fork
        log mode (memory.mode "log") ──► one tool-less fork turn; its bullets go to today's log
        else fork (purpose "extract", ExtractionPolicy + SecretGuard, 5 turns)
            ──► provenance in frontmatter (source, created, updated), index lines
                for new files, "Saved memory: ..." on the notice channel, transcript entries
                (extract/journal.py)
            ──► the cursor advances
        the fork failed (model error, cancelled) ──► what it wrote is rolled back, the
            cursor stays, the user is told once; the same messages go next time

The cursor is the last message already considered, per session (kept by identity, so it
survives the message list being copied). When a run starts is the part's decision
(extract/part.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.agent.fork import DenyAllTools, Fork, ForkSnapshot
from claude_mini.base.fileutil import os_error_text
from claude_mini.base.notices import NoticeChannel
from claude_mini.config.memory_settings import ExtractionSettings
from claude_mini.llm.messages import Message
from claude_mini.memory.extract.journal import (
    MemoryWrites,
    SavedMemory,
    WriteJournal,
    main_agent_wrote_memory,
    memory_fork_policy,
)
from claude_mini.memory.extract.prompt import (
    MAX_TURNS,
    extraction_prompt,
    first_user_words,
    memory_manifest,
    memory_policies,
    team_prompt,
)
from claude_mini.memory.maintenance.daylog import LOG_EXTRACTION_INSTRUCTIONS, append_log, bullets_from_reply
from claude_mini.memory.store import MemoryStore
from claude_mini.memory.team import TeamTier
from claude_mini.permissions import PolicyChain

if TYPE_CHECKING:
    from claude_mini.session import Session

log = logging.getLogger(__name__)


def index_after(messages: list[Message], anchor: tuple[Message, int]) -> int:
    """The index after `anchor` (a message, and how many blocks it had) in `messages`; a user
    message merged into since counts again; 0 when it is gone (the conversation was rewritten)."""
    message, size = anchor
    for i in range(len(messages) - 1, -1, -1):
        if messages[i] is message:
            return i + 1 if len(message.content) == size else i
    return 0


class ExtractionEngine:
    """Runs background memory extraction for one session, one run at a time.

    It tells the user through its notice channel: each saved memory (level `saved`), a
    failure (once), and background work `extract` while a run is in flight.
    """

    def __init__(
        self,
        *,
        store: MemoryStore,
        session: Session,
        policy: PolicyChain,
        project_root: Path,
        notices: NoticeChannel,
        settings: ExtractionSettings,
        clock: Callable[[], float] = time.time,
        team: Callable[[], TeamTier | None] = lambda: None,
    ) -> None:
        self.store = store
        self.session = session
        self.policy = policy  # the session's; its deny and ask rules still bind the fork
        self.project_root = project_root
        self.settings = settings
        self.clock = clock
        self.team = team  # the repository's team tier, asked at each use (trust may change)
        self.notices = notices
        self.writes = MemoryWrites(store, notices, team)
        self.runs = 0  # forks that finished
        self.saved: list[SavedMemory] = []  # what this extractor saved, oldest first
        self.failures = 0
        # Per session (one extractor outlives /clear and /resume): the last message considered.
        self._anchors: dict[str, tuple[Message, int] | None] = {}
        self._sessions = {session.id: session}
        # A resumed conversation was extracted by the session that wrote it.
        self.advance(session.messages, session.id)
        self._pending: ForkSnapshot | None = None
        # The end of the newest snapshot scheduled (session id, anchor): the turns up to it are
        # covered by a run in flight, so the gate does not count them again.
        self._mark: tuple[str, tuple[Message, int]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._told_failure = False

    # -- scheduling

    @property
    def running(self) -> bool:
        """Whether an extraction is in progress (or about to start)."""
        return self._task is not None and not self._task.done()

    def schedule(self, snapshot: ForkSnapshot) -> None:
        """Run an extraction on `snapshot` now, or after the running one (newest snapshot wins)."""
        self._pending = snapshot
        if snapshot.messages:
            last = snapshot.messages[-1]
            self._mark = (snapshot.session_id, (last, len(last.content)))
        if not self.running:
            self._task = asyncio.get_running_loop().create_task(self._drain(), name="memory-extraction")

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running extraction and its trailing run; False if `timeout` passed first."""
        task = self._task
        if task is None or task.done():
            return True
        done, _ = await asyncio.wait({task}, timeout=timeout)
        return bool(done)

    async def stop(self) -> None:
        """Cancel a running extraction (its writes are rolled back, the cursor stays)."""
        self._pending = None
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})  # unlike `await task`, never re-raises its cancellation

    async def _drain(self) -> None:
        self.notices.set_background("extract", True)
        try:
            while self._pending is not None:
                snapshot, self._pending = self._pending, None
                await self._run_once(snapshot)
        finally:
            self._mark = None  # the cursor says what was covered (not a failed run's messages)
            self._forget_other_sessions()
            self.notices.set_background("extract", False)

    # -- the cursor

    @property
    def cursor(self) -> int:
        """How many messages of the session's conversation were already considered."""
        return self.start_index(self.session.messages, self.session.id)

    def reset_cursor(self) -> None:
        """Count the whole current conversation as considered (after compaction replaced it)."""
        self.advance(self.session.messages, self.session.id)

    def pending_messages(self, messages: list[Message] | None = None, session_id: str | None = None) -> list[Message]:
        """The messages of a conversation (the current one by default) that no run has covered
        or been scheduled for: what the gate judges."""
        session_id = session_id or self.session.id
        messages = self.session.messages if messages is None else messages
        start = self.start_index(messages, session_id)
        if self._mark is not None and self._mark[0] == session_id:
            start = max(start, index_after(messages, self._mark[1]))
        return messages[start:]

    def start_index(self, messages: list[Message], session_id: str) -> int:
        """Where the messages no run has considered start in a conversation of `session_id`."""
        found = self._anchors.get(session_id)
        return 0 if found is None else index_after(messages, found)

    def advance(self, messages: list[Message], session_id: str) -> None:
        """Count `messages` (a conversation of `session_id`) as considered."""
        self._anchors[session_id] = (messages[-1], len(messages[-1].content)) if messages else None

    def switch_session(self, session: Session) -> None:
        """Later turns are `session`'s; what it already holds was extracted by the session that
        wrote it. A run for the old conversation still finishes, with the old cursor."""
        self.session = session
        if session.id not in self._sessions:
            self._sessions[session.id] = session
            self.advance(session.messages, session.id)
        if not self.running:
            self._forget_other_sessions()

    def _forget_other_sessions(self) -> None:
        """Keep only the current session's state (an old one's messages can be large)."""
        self._sessions = {self.session.id: self.session}
        self._anchors = {self.session.id: self._anchors.get(self.session.id)}

    # -- one run

    async def _run_once(self, snapshot: ForkSnapshot) -> None:
        messages = snapshot.messages
        session = self._sessions.get(snapshot.session_id, self.session)  # the current one if unknown
        new = messages[self.start_index(messages, session.id) :]
        if not new:
            return
        if main_agent_wrote_memory(new, self.store.root, snapshot.cwd):
            self.advance(messages, session.id)
            session.record_system(
                "memory_extraction_skipped", reason="the main agent wrote to the memory folder itself"
            )
            return
        if self.settings.log_mode:
            await self._log_once(snapshot, new, session)
            self.advance(messages, session.id)
            return
        journal = WriteJournal(snapshot.cwd)
        policy = memory_fork_policy(self.store.root, self.policy, snapshot.cwd).with_guards(journal)
        if snapshot.sandbox is not None:  # the one fork whose Bash may see (and write) the memory folder
            snapshot = replace(snapshot, sandbox=snapshot.sandbox.for_fork(self.store.root))
        fork = Fork(snapshot, purpose="extract", policy=policy, max_turns=MAX_TURNS)
        try:
            result = await fork.run(self._prompt(new))
        except asyncio.CancelledError:
            journal.roll_back()
            raise
        except Exception as exc:  # model errors, and bugs: never let them reach the user's turn
            journal.roll_back()
            self._failed(exc, session)
            return
        self.runs += 1
        self.advance(messages, session.id)
        self.saved += self.writes.record(result, snapshot, journal.kept, session, self.clock())

    async def _log_once(self, snapshot: ForkSnapshot, new: list[Message], session: Session) -> None:
        """Log mode: one tool-less fork turn answers with bullets; they are appended to today's log."""
        prompt = (
            f"Consider the last {len(new)} message(s) of the conversation above (they start "
            f"with: {first_user_words(new)!r}).\n\n{LOG_EXTRACTION_INSTRUCTIONS}"
        )
        fork = Fork(snapshot, purpose="extract", policy=DenyAllTools(), max_turns=1)
        result = await fork.run(prompt)
        bullets = bullets_from_reply(result.text)
        if bullets:
            try:
                path = append_log(self.store.root, "\n".join(f"- {b}" for b in bullets), self.clock)
            except OSError as exc:  # a read-only or full memory folder
                self.notices.say(
                    f"Memory extraction could not save {len(bullets)} note(s) to today's log ({os_error_text(exc)}).",
                    "warning",
                )
                return
            session.record_system("memory_logged", path=str(path), bullets=bullets)
            self.notices.say(f"Logged {len(bullets)} note(s) to {path.relative_to(self.store.root)}")
        self.runs += 1

    def _prompt(self, new: list[Message]) -> str:
        return extraction_prompt(
            count=len(new),
            first_words=first_user_words(new),
            manifest=memory_manifest(self.store),
            root=self.store.root,
            policies=memory_policies(self.project_root, lambda text: self.notices.say(text, "warning", once=True)),
            max_turns=MAX_TURNS,
            team=team_prompt(self.team(), self.store.root),
        )

    def _failed(self, exc: Exception, session: Session) -> None:
        self.failures += 1
        message = (str(exc) or type(exc).__name__).rstrip(".")
        log.info("memory extraction failed: %s", message)  # the user hears it once, below
        session.record_system("memory_extraction_failed", message=message)
        if not self._told_failure:
            self._told_failure = True
            self.notices.say(
                f"Memory extraction failed: {message}. Nothing was saved from these messages; "
                "they will be tried again after the next turn."
            )
