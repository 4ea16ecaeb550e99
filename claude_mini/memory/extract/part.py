"""Layer 4: after a turn, a forked agent saves what is worth remembering.

    turn ends (end_turn) ──► Extractor.on_turn_end
        auto memory off, or the in-process local model ──► nothing
        the pending turns (since the cursor, or since the newest run scheduled):
            fewer than memory.extractEvery ──► held
            the gate (memory/extract/gate.py) finds something durable ──► run
            memory.extractBatchTurns of them (5) ──► run, durable or not (the gate's safety net)
            else ──► held: the cursor stays, the next run reads them too
    before a compaction ──► whatever is new runs, gate aside, and is waited for (`flush`)
    the session ends (the UIs' exit, /clear, /resume) ──► the pending turns run if the gate
        finds them durable (`schedule_final_run`; "hello" alone costs no fork at exit)
    schedule: one extraction at a time, as a background asyncio task; a turn that
        ends while one runs stashes its snapshot (only the newest is kept) and
        exactly one trailing run follows
    a run: messages since the cursor are the fork's only source
        main agent wrote memory itself since the cursor ──► advance the cursor, no fork
        else fork (purpose "extract", ExtractionPolicy + SecretGuard, 5 turns)
            ──► provenance in frontmatter (source, created, updated), index lines
                for new files, "Saved memory: ..." on the notice channel, transcript entries
            ──► the cursor advances
        the fork failed (model error, cancelled) ──► what it wrote is rolled back, the
            cursor stays, the user is told once; the same messages go next time

The cursor is the last message already considered (kept by identity, so it
survives the message list being copied); a resumed conversation starts as
considered (the session that wrote it extracted it, or its gate found nothing). Before a
compaction replaces the conversation, whatever is new is extracted (`before_compact`); after
it, the cursor moves to the end (`after_compact`). After a /rewind (`on_rewind`) a run in
flight or waiting is cancelled (its writes rolled back) and the cursor is no later than the
rewind point: the part rewound away is never extracted again.
The hook also keeps the secret guard (memory/secrets/guard.py) around the main
agent's policy. The cache-friendly prefix is the fork's business (agent/fork.py).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.agent.events import TurnDone
from claude_mini.agent.fork import ForkSnapshot
from claude_mini.agent.lifecycle import ConversationRewind, Part, PartContext
from claude_mini.base.notices import NoticeChannel
from claude_mini.config.memory_settings import ExtractionSettings
from claude_mini.llm.local import is_local_model
from claude_mini.llm.messages import Message
from claude_mini.memory.extract.engine import ExtractionEngine
from claude_mini.memory.extract.gate import GateDecision, assess, count_turns, no_gate
from claude_mini.memory.store import MemoryStore
from claude_mini.memory.store.memory_store import StoreHolder
from claude_mini.memory.team import TeamTier, team_tier
from claude_mini.permissions import PolicyChain

if TYPE_CHECKING:
    from claude_mini.agent.lifecycle import CompactRequest, EndReason, SessionSource
    from claude_mini.agent.loop import Agent
    from claude_mini.config import Config
    from claude_mini.session import Session

log = logging.getLogger(__name__)

COMPACT_FLUSH_SECONDS = 60.0  # how long a compaction waits for the extraction it asked for


@dataclass(frozen=True)
class TurnVerdict:
    """What the extractor made of the newest turn end: whether a run started, and why (/context)."""

    ran: bool
    reason: str


class Extractor(Part):
    """Layer 4 in the agent loop: decides when the pending turns are extracted; the runs are
    the engine's (extract/engine.py).

    The UIs call `schedule_final_run()` when the session ends, then `wait()` for `running` work.
    """

    def __init__(
        self,
        *,
        store: MemoryStore,
        session: Session,
        policy: PolicyChain,
        project_root: Path,
        notices: NoticeChannel | None = None,
        settings: ExtractionSettings | None = None,
        enabled: Callable[[], bool] = lambda: True,
        gate: Callable[[list[Message]], GateDecision] | None = None,
        clock: Callable[[], float] = time.time,
        team: Callable[[], TeamTier | None] = lambda: None,
    ) -> None:
        self.settings = settings or ExtractionSettings()
        self.enabled = enabled
        # The pending messages -> whether they may hold something durable (extract/gate.py).
        self.gate = gate or (assess if self.settings.gate else no_gate)
        self.last_verdict: TurnVerdict | None = None
        self.engine = ExtractionEngine(
            store=store,
            session=session,
            policy=policy,
            project_root=project_root,
            notices=notices or NoticeChannel(),
            settings=self.settings,
            clock=clock,
            team=team,
        )
        self._held: ForkSnapshot | None = None  # the newest turn end that started no run (/clear)

    @classmethod
    def for_runtime(
        cls, config: Config, session: Session, store: MemoryStore, policy: PolicyChain, notices: NoticeChannel
    ) -> Extractor:
        """The extractor of a session built from `config` (auto memory checked at each turn end).

        Not with the in-process local model: its one worker would be busy for tens of seconds
        while the user waits for the next answer, and a small model rarely writes a usable
        memory file. `/memory add` still saves by hand.
        """
        return cls(
            store=store,
            session=session,
            policy=policy,
            project_root=config.project_root,
            notices=notices,
            settings=config.memory.extraction,
            enabled=lambda: config.auto_memory and not is_local_model(config.model),
            team=lambda: team_tier(config),
        )

    async def on_turn_end(self, agent: Agent, done: TurnDone) -> None:
        """Schedule an extraction when the turn ended normally and the pending turns call for
        one (`verdict`); otherwise they wait for a later run."""
        if done.stop_reason != "end_turn" or not self.enabled():
            return
        verdict = self.last_verdict = self.verdict(agent.session.messages)
        log.debug("memory extraction %s: %s", "runs" if verdict.ran else "waits", verdict.reason)
        snapshot = ForkSnapshot.of(agent)
        if not verdict.ran:
            self._held = snapshot
            return
        self._held = None
        self.engine.policy = agent.policy
        self.engine.schedule(snapshot)

    def verdict(self, messages: list[Message]) -> TurnVerdict:
        """Whether the pending turns of the current conversation (`messages`) are extracted now:
        at least `extractEvery` of them, and durable or `extractBatchTurns` of them."""
        pending = self.engine.pending_messages(messages)
        turns, every = count_turns(pending), self.settings.every
        gate = self.gate(pending)
        if turns < every:
            return TurnVerdict(
                False, f"{turns} of {every} turns since the last run (memory.extractEvery); {gate.reason}"
            )
        if gate.durable:
            return TurnVerdict(True, gate.reason)
        if turns >= self.settings.batch_turns:
            return TurnVerdict(True, f"{turns} turns pending (memory.extractBatchTurns); {gate.reason}")
        return TurnVerdict(False, gate.reason)

    def schedule_final_run(self, agent: Agent) -> bool:
        """The session ends (the UIs call this before their bounded wait): the pending turns are
        extracted if the gate finds them durable, whatever `extractEvery` says. Whether a run is
        now in flight."""
        if self.enabled() and self._durable_pending(agent.session.messages, agent.session.id):
            self._held = None
            self.engine.policy = agent.policy
            self.engine.schedule(ForkSnapshot.of(agent))
        return self.running

    def _durable_pending(self, messages: list[Message], session_id: str) -> bool:
        pending = self.engine.pending_messages(messages, session_id)
        return count_turns(pending) > 0 and self.gate(pending).durable

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """/clear or /resume: the old conversation's pending turns get their final run (in the
        background, if durable); later turns are `session`'s, and what it already holds was
        extracted by the session that wrote it. A run for the old conversation still finishes,
        with the old cursor, and reports to the old transcript."""
        held, self._held = self._held, None
        if held is not None and self.enabled() and self._durable_pending(held.messages, held.session_id):
            with contextlib.suppress(RuntimeError):  # no event loop: nothing can run in the background
                self.engine.schedule(held)
        self.engine.switch_session(session)
        self.last_verdict = None

    async def before_compact(self, agent: Agent, request: CompactRequest) -> None:
        """Extract what the compaction is about to summarise away, and wait for it."""
        await self.flush(agent, COMPACT_FLUSH_SECONDS)

    async def after_compact(self, agent: Agent) -> None:
        """The summary replaced what was extracted: count it all as considered."""
        self.engine.reset_cursor()

    async def on_session_end(self, agent: Agent, reason: EndReason = "other") -> None:
        """An extraction the UI stopped waiting for is cancelled (its writes are rolled back)."""
        await self.engine.stop()

    async def on_rewind(self, agent: Agent, rewind: ConversationRewind) -> None:
        """The conversation went back: a run (or a waiting snapshot) that may hold the part rewound
        away is cancelled, its writes rolled back; what stayed counts as considered as far as it
        was before. A conversation rebuilt from before a compaction was extracted before it."""
        await self.engine.stop()
        session_id = agent.session.id
        if rewind.rebuilt:
            self.engine.reset_cursor()
            return
        considered = min(self.engine.start_index(rewind.old, session_id), rewind.kept)
        self.engine.advance(agent.session.messages[:considered], session_id)

    def context_report(self) -> list[str]:
        """/context's line: how many turns wait for extraction, and what became of the last one."""
        if not self.enabled():
            return []
        turns = count_turns(self.engine.pending_messages())
        line = f"Memory extraction: {turns} turn{'' if turns == 1 else 's'} pending"
        if self.settings.gate:
            line += f" (a run at a durable turn or at {self.settings.batch_turns})"
        verdict = self.last_verdict
        if verdict is not None:
            line += f" · last turn {'extracted' if verdict.ran else 'held'}: {verdict.reason}"
        return [line]

    @property
    def saved_names(self) -> list[str]:
        """The file names of the memories saved in this session, in the order first saved (each
        once, however often it was updated), for the compaction checkpoint."""
        return list(dict.fromkeys(m.filename for m in self.engine.saved))

    @property
    def running(self) -> bool:
        """Whether an extraction is in progress (or about to start)."""
        return self.engine.running

    async def flush(self, agent: Agent, timeout: float | None = None) -> bool:
        """Extract whatever is new since the cursor now, throttle aside, and wait (compaction)."""
        if self.enabled() and self.engine.cursor < len(agent.session.messages):
            self.engine.policy = agent.policy
            self.engine.schedule(ForkSnapshot.of(agent))
        return await self.engine.wait(timeout)

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running extraction and its trailing run; False if `timeout` passed first."""
        return await self.engine.wait(timeout)

    async def stop(self) -> None:
        """Cancel a running extraction (its writes are rolled back, the cursor stays)."""
        await self.engine.stop()

    @property
    def cursor(self) -> int:
        """How many messages of the session's conversation were already considered."""
        return self.engine.cursor


def part(ctx: PartContext[StoreHolder]) -> Extractor:
    """Layer 4 for the session's first conversation (auto memory is checked at each turn end)."""
    return Extractor.for_runtime(ctx.config, ctx.session, ctx.runtime.store, ctx.policy, ctx.notices)
