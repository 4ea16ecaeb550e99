"""Layer 3: recall. Each user turn, bring back the few stored memories that this query needs.

One turn (DESIGN.md section 3):

    prefetch_draft ─► the REPL, after a pause in typing: the same task for the draft, adopted
                      by the turn if the text sent is the draft (ui/draft_recall.py)
    on_turn_start  ─► prefetch task:
                        the local pass (in a thread): scan the folder (on-disk index, only
                          changed files read) ─► manifest of ≤ 200, live and archived ranked
                          together ─► strong BM25 matches, rendered ─► `local` future
                        strategy "model": one side-model request (purpose recall) over the
                          manifest; fails or exceeds recall.timeoutMs ─► the local picks
                        strategy "lexical": the local picks, no request
                      then waits ≤ recall.holdMs for the local pass (recall.waitMs: the task)
    attachments()  ─► right after on_turn_start: the local pass's picks, or the whole selection
                      if it is done; at each tool result: what is done and new
    after_tool     ─► the first tool result waits ≤ recall.holdMs for a selection in flight
    on_turn_end    ─► a prefetch still running is cancelled; the on-disk index is saved

Budgets (DESIGN.md section 5): at most 5 files per turn, 60 KiB per session. The
session budget is counted from the recalled blocks that are in the conversation, so
a compaction that drops them frees it (`after_compact` re-counts at once); files
already in the context are not offered again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.agent.lifecycle import Part, PartContext
from claude_mini.base import paths
from claude_mini.base.notices import NoticeChannel
from claude_mini.base.text import clip
from claude_mini.llm.messages import ToolUseBlock
from claude_mini.memory.recall.engine import RecallEngine
from claude_mini.memory.recall.selection import (
    MAX_SELECTED,
    MIN_USEFUL_BUDGET,
    SESSION_BUDGET_BYTES,
    Prefetch,
    RecalledMemory,
    RecallEvent,
    RecallSummary,
    Selection,
    query_key,
    recalls_in_context,
    recent_tools,
    result_or_empty,
    should_recall,
)
from claude_mini.memory.store import MemoryStore
from claude_mini.memory.store.memory_store import StoreHolder

if TYPE_CHECKING:
    from claude_mini.agent.events import TurnDone
    from claude_mini.agent.lifecycle import EndReason, SessionSource
    from claude_mini.agent.loop import Agent
    from claude_mini.config import Config
    from claude_mini.config.memory_settings import RecallSettings
    from claude_mini.llm.protocol import ModelClient
    from claude_mini.session import Session
    from claude_mini.tools.base import ToolResult

log = logging.getLogger(__name__)
# How long a turn that starts while the ranking's libraries still import waits for them before its
# hold: ~0.2 s idle, seconds on a loaded machine. In -p that wait is free (the SDK, five times their
# size, imports meanwhile and the request waits for it anyway); the REPL warmed them long before.
WARM_UP_WAIT_S = 10.0

# --- the hook ------------------------------------------------------------------------


class RecallPart(Part):
    """Layer 3 in the agent loop: prefetch at turn start (or while the user types), inject the
    local pass's strong matches into the user's message and the side model's picks at the next
    tool-result boundary after they are ready.

    A selection in flight shows as background work `recall` on the notice channel, which
    also carries one-line messages (a fallback, the budget used up); `summary()` feeds /context.
    The `recall.*` settings are read from `config.memory.recall` at each turn (validated,
    and their problems said, in config/memory_settings.py and runtime.py).

    The lifecycle side only: when a prefetch starts, is adopted or dropped, what it injects and
    the session budget; the selection itself is the engine's (recall/engine.py).
    """

    def __init__(
        self,
        store: MemoryStore,
        config: Config,
        notices: NoticeChannel | None = None,
        *,
        client: ModelClient | None = None,
        clock: Callable[[], float] = time.time,
        cache_dir: Path | None = None,
        team_root: Path | None = None,
    ) -> None:
        self.config = config
        self.engine = RecallEngine(
            store, config, notices, client=client, clock=clock, cache_dir=cache_dir, team_root=team_root
        )
        self.events: list[RecallEvent] = []
        self._prefetch: Prefetch | None = None
        self._saving: asyncio.Future[None] | None = None
        self._ledger: dict[str, int] = {}  # recalled file -> bytes, as in the context

    @property
    def running(self) -> bool:
        """True while a prefetch is selecting memories."""
        return self._prefetch is not None and not self._prefetch.task.done()

    @property
    def _task(self) -> asyncio.Task[Selection] | None:
        """The selection in flight (benchmarks and tests await it)."""
        return self._prefetch.task if self._prefetch is not None else None

    @property
    def bytes_used(self) -> int:
        """Bytes of recalled memories in the context (the session budget's meter)."""
        return sum(self._ledger.values())

    def summary(self) -> RecallSummary:
        """What was recalled this session and how much budget it uses."""
        settings = self.config.memory.recall
        return RecallSummary(
            settings.strategy,
            _enabled(self.config),
            self.running,
            SESSION_BUDGET_BYTES,
            dict(self._ledger),
            list(self.events),
        )

    def context_report(self) -> list[str]:
        """/context's lines: the strategy, the budget used and this session's recalls."""
        return self.summary().lines()

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """/clear or /resume: drop a prefetch for the old conversation, count the budget from
        the new one, forget the old turns' events, and let notices be said once more."""
        self._drop("the session changed")
        self.engine.new_session(session)
        self.events.clear()
        self.reset_budget()

    async def after_compact(self, agent: Agent) -> None:
        """The compaction dropped the recalled blocks it summarised: their budget is free again."""
        self.reset_budget()

    def reset_budget(self) -> None:
        """Re-count the budget from the conversation as it is now."""
        self._ledger = recalls_in_context(self.engine.session.messages) if self.engine.session else {}

    def warm_up(self) -> None:
        """Start loading the ranking's libraries and the embedding model in the background: the
        REPL calls this once its runtime is ready (after the first paint), long before a first
        Enter. A `-p` run does not: its first turn cannot use the model (module embed.py)."""
        if _enabled(self.config):
            self.engine.warm_up()

    def prefetch_draft(self, agent: Agent, text: str) -> bool:
        """Start recall for what the user is typing (the REPL calls this after a pause), so the
        side model's choice is often ready when Enter is pressed; a later draft replaces it.

        True if a prefetch for `text` is now running or done. Costs one side-model request per
        pause with a changed draft; the turn adopts it only if the sent text is the same.
        """
        key = query_key(text)
        current = self._prefetch
        if current is not None and current.key == key:
            return True
        settings = self.config.memory.recall
        if not _enabled(self.config) or not should_recall(text) or not _room_left(self.bytes_used):
            return False
        self._drop("the draft changed")
        self.engine.session = agent.session
        self.reset_budget()
        self._start(agent, text, key, settings, typed=True)
        return True

    def settle_draft(self, text: str) -> None:
        """Enter was pressed with `text`: keep the draft's prefetch only if it is for this text."""
        current = self._prefetch
        if current is not None and current.typed and current.key != query_key(text):
            self._drop("the draft changed before it was sent")

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        """Start the prefetch for this turn (or adopt the one the REPL started while the user
        typed it), then wait at most `recall.holdMs` for the local pass, so its strong
        matches join the user's message; `recall.waitMs` waits for the whole selection."""
        key = query_key(text)
        current = self._prefetch
        if current is not None and current.typed and not current.adopted and key.startswith(current.key):
            current.adopted = True
            if current.task.done():
                current.event.note = "ready before Enter"
        else:
            self._drop("a new turn started first")
            current = None
        self.engine.session = agent.session
        self.reset_budget()
        settings = self.config.memory.recall
        if current is None:
            if not _enabled(self.config) or not should_recall(text):
                return
            if not _room_left(self.bytes_used):
                self.engine.say(
                    "recall stopped for this session: its 60 KiB budget is used up (/compact or /clear frees it)"
                )
                return
            current = self._start(agent, text, key, settings, typed=False)
        if settings.wait_ms > 0:
            await asyncio.wait({current.task}, timeout=settings.wait_ms / 1000)
        elif settings.hold_ms > 0 and not current.local.done():
            self.engine.warm_up(model=False)  # started by the REPL already; in -p, here
            await self.engine.warmed(WARM_UP_WAIT_S)  # the hold is for ranking, not for importing its libraries
            await asyncio.wait({current.local}, timeout=settings.hold_ms / 1000)

    async def after_tool(self, agent: Agent, call: ToolUseBlock, result: ToolResult) -> list[str]:
        """At the turn's first tool result, wait at most `recall.holdMs` for a side-model
        selection still in flight, so it joins this tool result rather than missing the turn
        (a turn with one tool call has no later boundary). `attachments()` then takes it."""
        current = self._prefetch
        hold_ms = self.config.memory.recall.hold_ms
        if current is not None and not current.held and hold_ms > 0 and not current.task.done():
            current.held = True
            await asyncio.wait({current.task}, timeout=hold_ms / 1000)
        return []

    def attachments(self) -> list[str]:
        """What is ready and new: the whole selection once it is done, else the local pass's
        strong matches (once); nothing while the local pass still runs."""
        current = self._prefetch
        if current is None:
            return []
        task, event = current.task, current.event
        if task.done():
            self._prefetch = None
            if task.cancelled():
                event.outcome = "dropped"
                return []
            error = task.exception()
            if error is not None:
                event.outcome, event.note = "dropped", f"{type(error).__name__}: {error}"
                self.engine.say(f"memory recall failed ({event.note}); this turn goes on without it")
                return []
            selection = task.result()
            local = [] if current.local_taken else result_or_empty(current.local)
            event.strategy = selection.strategy
            event.note = selection.fallback_reason or event.note
            path = "model" if selection.strategy == "model" else "local"
            return self._inject(current, local, "local", selection.restored) + self._inject(
                current, selection.memories, path, selection.restored, final=True
            )
        if not current.local_taken and current.local.done():
            current.local_taken = True
            return self._inject(current, result_or_empty(current.local), "local", [])
        return []

    async def on_turn_end(self, agent: Agent, done: TurnDone) -> None:
        """The turn ended before the selection could be used: drop it, never wait. What the
        scans learnt is written to the on-disk index in the background."""
        self._drop("the turn ended first")
        if self._saving is None or self._saving.done():
            self._saving = asyncio.ensure_future(asyncio.to_thread(self.engine.save_indexes))

    async def on_session_end(self, agent: Agent, reason: EndReason = "other") -> None:
        """Cancel a prefetch in flight; keep the on-disk index for the next process."""
        task = self._task
        self._drop("the session ended")
        pending = {t for t in (task, self._saving) if t is not None}
        if pending:
            await asyncio.wait(pending, timeout=1)
        await asyncio.to_thread(self.engine.save_indexes)

    def _start(self, agent: Agent, text: str, key: str, settings: RecallSettings, *, typed: bool) -> Prefetch:
        event = RecallEvent(clip(key, 80), settings.strategy, self.engine.clock())
        self.events.append(event)
        client = self.engine.client or agent.client
        tools = recent_tools(agent.session.messages)
        local: asyncio.Future[list[RecalledMemory]] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(
            self.engine.run(text, frozenset(self._ledger), tools, settings, client, event, local)
        )
        self._prefetch = Prefetch(key, event, local, task, typed=typed)
        return self._prefetch

    def _drop(self, why: str) -> None:
        current, self._prefetch = self._prefetch, None
        if current is None:
            return
        if not current.task.done():
            current.task.cancel()
        if current.typed and not current.adopted:
            # A draft's prefetch that never reached a turn is not one of this session's recalls.
            with contextlib.suppress(ValueError):
                self.events.remove(current.event)
        elif current.event.outcome == "running":
            current.event.outcome, current.event.note = "dropped", why

    def _inject(
        self, current: Prefetch, memories: list[RecalledMemory], path: str, restored: list[str], *, final: bool = False
    ) -> list[str]:
        """The attachments that are new, fit the session budget and the turn's 5 files; records
        each surfacing and the path that brought it. `final`: the selection is complete."""
        event = current.event
        out, names = [], []
        for memory in memories:
            if memory.filename in self._ledger:
                continue
            if current.injected >= MAX_SELECTED:
                break
            if self.bytes_used + memory.size > SESSION_BUDGET_BYTES:
                event.note = "session budget reached"
                continue
            self._ledger[memory.filename] = memory.size
            current.injected += 1
            out.append(memory.text)
            names.append(memory.filename)
            event.via[memory.filename] = path + (", while typing" if current.typed else "")
        event.injected += names
        if final or names:
            event.outcome = "injected" if event.injected else ("over budget" if memories else "nothing selected")
        self.engine.record_use([n for n in names if n not in restored])  # restoring counted already
        return out


def _enabled(config: Config) -> bool:
    return config.auto_memory and config.memory.recall.strategy != "off"


def _room_left(used: int) -> bool:
    return SESSION_BUDGET_BYTES - used >= MIN_USEFUL_BUDGET


def part(ctx: PartContext[StoreHolder]) -> RecallPart:
    """Layer 3 over the project's memory folder and, when the tier is on, the team's."""
    return RecallPart(
        ctx.runtime.store, ctx.config, ctx.notices, cache_dir=paths.recall_cache_dir(), team_root=ctx.team_root
    )
