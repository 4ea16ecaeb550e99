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
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.agent.lifecycle import Part
from claude_mini.base.notices import NoticeChannel
from claude_mini.base.text import clip
from claude_mini.llm.messages import Message, ModelRequest, TextBlock, ToolUseBlock
from claude_mini.llm.protocol import ModelError
from claude_mini.memory.archive_recall import ArchiveTier, is_archived_name
from claude_mini.memory.lexical import (
    SHORTLIST_SIZE,
    Candidate,
    CandidateScanner,
    cjk_characters,
    crosses_scripts,
    index_cache_file,
    manifest_line,
    select_lexical,
    shortlist,
)
from claude_mini.memory.staleness import header_line, stale_memories
from claude_mini.memory.store import MemoryStore, read_text_head
from claude_mini.memory.supersede import superseded_names
from claude_mini.memory.team.folder import is_team_name

if TYPE_CHECKING:
    from claude_mini.agent.events import TurnDone
    from claude_mini.agent.lifecycle import EndReason, SessionSource
    from claude_mini.agent.loop import Agent
    from claude_mini.config import Config
    from claude_mini.config.memory_settings import RecallSettings
    from claude_mini.llm.protocol import ModelClient
    from claude_mini.memory.team.recall import TeamRecall
    from claude_mini.session import Session
    from claude_mini.tools.base import ToolResult

log = logging.getLogger(__name__)

# --- constants (DESIGN.md section 5) -------------------------------------------------
MAX_SELECTED = 5
LOCAL_MAX_SELECTED = 3  # of them, what the local pass may send before the side model answers
RECALL_MAX_TOKENS = 256
FILE_MAX_BYTES = 4096
FILE_MAX_LINES = 200
SESSION_BUDGET_BYTES = 60 * 1024
MIN_USEFUL_BUDGET = 1024  # below this a prefetch could not inject anything worth its cost
STALE_AFTER_DAYS = 30
CJK_SENTENCE_CHARS = 4  # a request written without spaces: this many characters or more
QUERY_MAX_CHARS = 4_000  # a pasted log is cut before it goes into the recall prompt
RECENT_TOOL_MESSAGES = 10  # how far back "recently used tools" looks


def _list_of_strings(key: str) -> dict[str, Any]:
    """The JSON schema of `{key: [str, ...]}`, the side model's structured answers."""
    return {
        "type": "object",
        "properties": {key: {"type": "array", "items": {"type": "string"}}},
        "required": [key],
        "additionalProperties": False,
    }


RECALL_SCHEMA = _list_of_strings("selected_memories")
KEYWORDS_SCHEMA = _list_of_strings("keywords")
KEYWORDS_MAX_TOKENS = 128
# Above this many files (live and archived) the manifest of 200 shows less than half of the
# folder: a request in another script is then worth one keyword request before the selection.
BRIDGE_FOLDER_FILES = 400
HEADER_PREFIX = "Recalled memory: "
_REMINDER_OPEN = "<system-reminder>\n"
_REMINDER_CLOSE = "\n</system-reminder>"
_HEADER = re.compile(r"^Recalled memory: (?P<file>.+?) — saved ")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)

RECALL_SYSTEM = """\
You choose which saved memory files a coding assistant should read before it answers \
the user's request. Each memory file is listed on one line as \
`- [type] filename (when saved): description`.

Select at most 5 files that will clearly help with this request, judged by their names \
and descriptions. Be selective: a loosely related file costs attention and helps nothing, \
and when no file clearly helps, select none.

If the assistant used a tool recently, skip reference material or usage notes about that \
tool (it is already using it), but do select warnings, gotchas and known pitfalls about it.

Files marked `archived` were put away because nobody used them for a while; select one \
only when it clearly answers this request.

Answer with JSON only, no prose: {"selected_memories": ["file.md", ...]}, copying each \
filename exactly as listed."""


KEYWORDS_SYSTEM = """\
You help search a developer's saved notes, which are written in English. Turn the request \
below into the English words those notes would use: up to 12 keywords (technical terms, \
names, identifiers, and plain English words for the request's subject), no sentences.

Answer with JSON only: {"keywords": ["...", ...]}."""


class RecallFailed(Exception):
    """The side model gave no usable selection (error, deadline, or an answer that is not JSON)."""


# --- records -------------------------------------------------------------------------
@dataclass
class RecalledMemory:
    """One selected file, rendered as the attachment the model will see."""

    filename: str
    path: Path
    text: str

    @property
    def size(self) -> int:
        """Bytes this attachment takes in the context (what the session budget counts)."""
        return len(self.text.encode("utf-8"))


@dataclass
class Selection:
    """What one prefetch chose, and how."""

    memories: list[RecalledMemory]
    strategy: str  # model | lexical | lexical (fallback)
    offered: int  # files in the manifest
    fallback_reason: str | None = None
    restored: list[str] = field(default_factory=list)  # brought back from the archive (a use)


@dataclass
class RecallEvent:
    """One turn's recall, for /context: what was chosen and what reached the model, and how.

    `via` names the path that brought each injected file: `local` (the lexical pass, in the
    user's message), `model` (the side model: in the user's message when it was ready in time,
    else at a tool result), with `, while typing` when the REPL started it before Enter.
    """

    query: str
    strategy: str
    started: float
    selected: list[str] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)
    outcome: str = "running"  # running | injected | nothing selected | dropped | over budget
    note: str = ""
    via: dict[str, str] = field(default_factory=dict)


@dataclass
class Prefetch:
    """One query's recall in flight: the local pass resolves `local` within milliseconds, then
    `task` ends with the side model's selection (or the local one under strategy `lexical`)."""

    key: str  # the query, whitespace-normalised: what a turn must match to adopt it
    event: RecallEvent
    local: asyncio.Future[list[RecalledMemory]]
    task: asyncio.Task[Selection]
    typed: bool = False  # started by the REPL while the user was typing
    adopted: bool = False  # a turn took it (a typed one is dropped otherwise)
    local_taken: bool = False
    held: bool = False  # the turn already waited for it at a tool result
    injected: int = 0  # files this turn has received so far (at most MAX_SELECTED)


@dataclass
class RecallSummary:
    """What recall did this session: for /context and tests."""

    strategy: str
    enabled: bool
    running: bool
    budget: int
    in_context: dict[str, int]
    events: list[RecallEvent]

    @property
    def used(self) -> int:
        """Bytes of recalled memories in the context now."""
        return sum(self.in_context.values())

    def lines(self) -> list[str]:
        """A plain-text report: the recalled files in the context and the last turns."""
        state = f"strategy {self.strategy}" if self.enabled else "off"
        head = (
            f"Recalled memories ({state}): {len(self.in_context)} in the context, "
            f"{self.used:,} of {self.budget:,} bytes" + (" · selecting…" if self.running else "")
        )
        lines = [head]
        lines += [f"  {name}  {size:,} bytes" for name, size in self.in_context.items()]
        for event in self.events[-5:]:
            picked = (
                ", ".join(
                    [f"{name} ({event.via[name]})" if name in event.via else name for name in event.injected]
                    or event.selected
                )
                or "-"
            )
            note = f" ({event.note})" if event.note else ""
            lines.append(f'  turn "{clip(event.query, 40)}": {event.strategy} → {event.outcome}: {picked}{note}')
        return lines


# --- pure helpers --------------------------------------------------------------------
def should_recall(text: str) -> bool:
    """Recall runs for real requests, not slash commands or one-word inputs ("thanks"); a
    sentence in a script without spaces counts by its characters ("谢谢" no, "怎么部署" yes)."""
    stripped = text.strip()
    if stripped.startswith("/"):
        return False
    return len(stripped.split()) > 1 or cjk_characters(stripped) >= CJK_SENTENCE_CHARS


def recent_tools(messages: Sequence[Message], window: int = RECENT_TOOL_MESSAGES) -> list[str]:
    """Names of the tools called in the last `window` messages, most recent first."""
    names: list[str] = []
    for message in reversed(messages[-window:]):
        for block in reversed(message.content):
            if isinstance(block, ToolUseBlock) and block.name not in names:
                names.append(block.name)
    return names


def age_phrase(mtime: float, now: float) -> str:
    """ "saved 12 days ago"; past 30 days it adds that the memory may be outdated."""
    days = int(max(0.0, now - mtime) // 86_400)
    phrase = {0: "saved today", 1: "saved yesterday"}.get(days, f"saved {days} days ago")
    if days > STALE_AFTER_DAYS:
        phrase += "; may be outdated, check before relying on it"
    return phrase


def build_recall_request(model: str, query: str, manifest: Sequence[str], tools: Sequence[str]) -> ModelRequest:
    """The side-model request that selects memories from the manifest."""
    prompt = (
        f"Request:\n<request>\n{clip(query.strip(), QUERY_MAX_CHARS)}\n</request>\n\n"
        f"Recently used tools: {', '.join(tools) if tools else 'none'}\n\n"
        "Memory files:\n" + "\n".join(manifest)
    )
    return ModelRequest(
        model=model,
        system=[RECALL_SYSTEM],
        messages=[Message.user(prompt)],
        max_tokens=RECALL_MAX_TOKENS,
        purpose="recall",
        output_schema=RECALL_SCHEMA,
        cache=False,
    )


def build_keywords_request(model: str, query: str) -> ModelRequest:
    """The side-model request that turns a request in another script into English keywords."""
    prompt = f"Request:\n<request>\n{clip(query.strip(), QUERY_MAX_CHARS)}\n</request>"
    return ModelRequest(
        model=model,
        system=[KEYWORDS_SYSTEM],
        messages=[Message.user(prompt)],
        max_tokens=KEYWORDS_MAX_TOKENS,
        purpose="recall",
        output_schema=KEYWORDS_SCHEMA,
        cache=False,
    )


def parse_keywords(text: str) -> list[str]:
    """The keywords of the side model's answer (at most 12 short ones); [] if there are none."""
    data = _find_json_object(text, "keywords")
    words = data.get("keywords") if data is not None else None
    if not isinstance(words, list):
        return []
    return [w.strip()[:40] for w in words if isinstance(w, str) and w.strip()][:12]


def parse_selection(text: str, allowed: Iterable[str]) -> list[str]:
    """The filenames the side model chose that are in the manifest, at most 5, in its order.

    Raises RecallFailed when the answer holds no `{"selected_memories": [...]}` object
    (as text from an endpoint without structured output, fences and prose are tolerated).
    """
    data = _find_json_object(text, "selected_memories")
    chosen = data.get("selected_memories") if data is not None else None
    if not isinstance(chosen, list):
        raise RecallFailed(f"the answer is not the expected JSON: {clip(' '.join(text.split()), 80)!r}")
    allowed_set = set(allowed)
    out: list[str] = []
    for item in chosen:
        name = item.strip().removeprefix("./") if isinstance(item, str) else ""
        if name and not name.endswith(".md") and f"{name}.md" in allowed_set:
            name += ".md"
        if name in allowed_set and name not in out:
            out.append(name)
    return out[:MAX_SELECTED]


def _find_json_object(text: str, key: str) -> dict[str, Any] | None:
    """The first JSON object with `key` in `text` (the whole answer, a fenced block, or an object
    inside prose), or None."""
    for candidate in (text.strip(), *_FENCE.findall(text)):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict) and key in value:
            return value
    return None


def render_memory(candidate: Candidate, now: float) -> RecalledMemory | None:
    """The attachment for one file: header with its age, then at most 4 KiB / 200 lines."""
    path = candidate.path
    if path is None:
        return None
    text, _reason = read_text_head(path, FILE_MAX_BYTES)
    try:
        st = os.stat(path)
    except OSError:
        return None
    if text is None:
        return None
    body, note = _cut(text, st.st_size, path)
    header = (
        f"{HEADER_PREFIX}{candidate.filename} — {age_phrase(st.st_mtime, now)}\n"
        f"(file {path}; chosen by recall for this request, not written by the user)"
    )
    return RecalledMemory(candidate.filename, path, f"{header}\n\n{body.rstrip()}{note}")


def add_stale_lines(memories: Sequence[RecalledMemory], repo: Sequence[Path]) -> None:
    """Put `Possibly stale: it mentions src/x.py, which no longer exists...` under the header
    of each memory that names what is gone or was rewritten since in `repo` (the repository
    root, then the working folder). One batch for all (memory/staleness.py: no model call,
    at most two git calls)."""
    texts = {}
    for memory in memories:
        try:
            texts[memory.filename] = (memory.text.partition("\n\n")[2], memory.path.stat().st_mtime)
        except OSError:
            continue
    found = stale_memories(texts, repo) if texts and repo else {}
    for memory in memories:
        if memory.filename in found:
            head, _, body = memory.text.partition("\n\n")
            memory.text = f"{head}\n{header_line(found[memory.filename])}\n\n{body}"


def _cut(text: str, size: int, path: Path) -> tuple[str, str]:
    """`text` cut to 200 lines (it is already at most 4 KiB), and the note saying so."""
    by_bytes = size > FILE_MAX_BYTES
    newline = text.rfind("\n")
    if by_bytes and newline > len(text) // 2:
        text = text[:newline]  # no half line at the byte cut, unless the line is most of it
    lines = text.split("\n")
    if len(lines) > FILE_MAX_LINES:
        shown = "\n".join(lines[:FILE_MAX_LINES])
        return shown, (
            f"\n\n[Truncated to the first {FILE_MAX_LINES} lines "
            f"({len(shown.encode()):,} of {size:,} bytes). Read {path} for the rest.]"
        )
    if by_bytes:
        return text, (
            f"\n\n[Truncated to the first {len(text.encode()):,} of {size:,} bytes "
            f"(limit {FILE_MAX_BYTES:,}). Read {path} for the rest.]"
        )
    return text, ""


def recalls_in_context(messages: Iterable[Message]) -> dict[str, int]:
    """filename -> bytes of every recalled-memory block still in the conversation."""
    found: dict[str, int] = {}
    prefix = _REMINDER_OPEN + HEADER_PREFIX
    for message in messages:
        if message.role != "user":
            continue
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.startswith(prefix):
                inner = block.text[len(_REMINDER_OPEN) :].removesuffix(_REMINDER_CLOSE)
                match = _HEADER.match(inner)
                if match:
                    found[match.group("file")] = len(inner.encode("utf-8"))
    return found


# --- the hook ------------------------------------------------------------------------
def query_key(text: str) -> str:
    """A query as a prefetch is matched to a turn: its words, single-spaced."""
    return " ".join(text.split())


class RecallPart(Part):
    """Layer 3 in the agent loop: prefetch at turn start (or while the user types), inject the
    local pass's strong matches into the user's message and the side model's picks at the next
    tool-result boundary after they are ready.

    A selection in flight shows as background work `recall` on the notice channel, which
    also carries one-line messages (a fallback, the budget used up); `summary()` feeds /context.
    The `recall.*` settings are read from `config.memory.recall` at each turn (validated,
    and their problems said, in config/memory_settings.py and runtime.py).
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
        self.store = store
        self.config = config
        self.notices = notices or NoticeChannel()
        self.client = client  # None: use the agent's client (the main one; purpose tells them apart)
        self.clock = clock
        self.scanner = CandidateScanner(store.root, cache_file=_cache_file(cache_dir, store.root))
        # what gc archived: ranked with the live files, restored when chosen
        self.archive = ArchiveTier(store, cache_file=_cache_file(cache_dir, store.archive_dir))
        # the repository's team folder (memory/team/), searched beside the private one
        self.team = _team_recall(team_root, cache_dir) if team_root is not None else None
        self.events: list[RecallEvent] = []
        self._scan_lock = threading.Lock()  # the scanner is not thread-safe
        self._prefetch: Prefetch | None = None
        self._saving: asyncio.Future[None] | None = None
        self._session: Session | None = None
        self._ledger: dict[str, int] = {}  # recalled file -> bytes, as in the context
        self._said: set[str] = set()

    # -- what a UI reads --
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
            self._enabled(settings),
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
        self._session = session
        self._said.clear()
        self.events.clear()
        self.reset_budget()

    async def after_compact(self, agent: Agent) -> None:
        """The compaction dropped the recalled blocks it summarised: their budget is free again."""
        self.reset_budget()

    def reset_budget(self) -> None:
        """Re-count the budget from the conversation as it is now."""
        self._ledger = recalls_in_context(self._session.messages) if self._session else {}

    # -- the REPL, before Enter --
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
        if not self._enabled(settings) or not should_recall(text) or not self._room_left():
            return False
        self._drop("the draft changed")
        self._session = agent.session
        self.reset_budget()
        self._start(agent, text, key, settings, typed=True)
        return True

    def settle_draft(self, text: str) -> None:
        """Enter was pressed with `text`: keep the draft's prefetch only if it is for this text."""
        current = self._prefetch
        if current is not None and current.typed and current.key != query_key(text):
            self._drop("the draft changed before it was sent")

    # -- hook points --
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
        self._session = agent.session
        self.reset_budget()
        settings = self.config.memory.recall
        if current is None:
            if not self._enabled(settings) or not should_recall(text):
                return
            if not self._room_left():
                self._say("recall stopped for this session: its 60 KiB budget is used up (/compact or /clear frees it)")
                return
            current = self._start(agent, text, key, settings, typed=False)
        if settings.wait_ms > 0:
            await asyncio.wait({current.task}, timeout=settings.wait_ms / 1000)
        elif settings.hold_ms > 0 and not current.local.done():
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
                self._say(f"memory recall failed ({event.note}); this turn goes on without it")
                return []
            selection = task.result()
            local = [] if current.local_taken else _result_or_empty(current.local)
            event.strategy = selection.strategy
            event.note = selection.fallback_reason or event.note
            path = "model" if selection.strategy == "model" else "local"
            return self._inject(current, local, "local", selection.restored) + self._inject(
                current, selection.memories, path, selection.restored, final=True
            )
        if not current.local_taken and current.local.done():
            current.local_taken = True
            return self._inject(current, _result_or_empty(current.local), "local", [])
        return []

    async def on_turn_end(self, agent: Agent, done: TurnDone) -> None:
        """The turn ended before the selection could be used: drop it, never wait. What the
        scans learnt is written to the on-disk index in the background."""
        self._drop("the turn ended first")
        if self._saving is None or self._saving.done():
            self._saving = asyncio.ensure_future(asyncio.to_thread(self._save_indexes))

    async def on_session_end(self, agent: Agent, reason: EndReason = "other") -> None:
        """Cancel a prefetch in flight; keep the on-disk index for the next process."""
        task = self._task
        self._drop("the session ended")
        pending = {t for t in (task, self._saving) if t is not None}
        if pending:
            await asyncio.wait(pending, timeout=1)
        await asyncio.to_thread(self._save_indexes)

    # -- internals --
    def _enabled(self, settings: RecallSettings) -> bool:
        return self.config.auto_memory and settings.strategy != "off"

    def _room_left(self) -> bool:
        return SESSION_BUDGET_BYTES - self.bytes_used >= MIN_USEFUL_BUDGET

    def _start(self, agent: Agent, text: str, key: str, settings: RecallSettings, *, typed: bool) -> Prefetch:
        event = RecallEvent(clip(key, 80), settings.strategy, self.clock())
        self.events.append(event)
        client = self.client or agent.client
        tools = recent_tools(agent.session.messages)
        local: asyncio.Future[list[RecalledMemory]] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._run(text, tools, settings, client, event, local))
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

    async def _run(
        self,
        query: str,
        tools: list[str],
        settings: RecallSettings,
        client: ModelClient,
        event: RecallEvent,
        local: asyncio.Future[list[RecalledMemory]],
    ) -> Selection:
        try:
            with self.notices.busy("recall"):
                return await self._select(query, tools, settings, client, event, local)
        finally:
            if not local.done():  # failed or cancelled before the local pass finished
                local.set_result([])

    async def _select(
        self,
        query: str,
        tools: list[str],
        settings: RecallSettings,
        client: ModelClient,
        event: RecallEvent,
        local: asyncio.Future[list[RecalledMemory]],
    ) -> Selection:
        exclude = frozenset(self._ledger)
        manifest, strong, cut = await asyncio.to_thread(self._local_pass, query, exclude)
        by_name = {c.filename: c for c in manifest}
        # With a side model to come, the local pass leaves it room in the turn's 5 files (and
        # brings back from the archive only what it sends).
        sent = strong if settings.strategy == "lexical" else strong[:LOCAL_MAX_SELECTED]
        rendered, restored = await asyncio.to_thread(self._render, sent, by_name)
        found = list(rendered.values())
        local.set_result(found)
        if not manifest:
            return Selection([], settings.strategy, 0)
        if settings.strategy == "lexical":
            event.selected = list(strong)
            return Selection(found, "lexical", len(manifest), restored=restored)
        if cut and crosses_scripts(query, self.scanner.index):
            manifest = await self._bridged(client, settings, query, exclude) or manifest
            by_name |= {c.filename: c for c in manifest}
        try:
            names = await self._ask_model(client, settings, query, manifest, tools)
        except RecallFailed as exc:
            self._say(f"memory recall fell back to lexical search: {exc}")
            event.selected = list(strong)
            rest, rest_restored = await asyncio.to_thread(
                self._render, [n for n in strong if n not in rendered], by_name
            )
            return Selection(
                found + list(rest.values()), "lexical (fallback)", len(manifest), str(exc), restored + rest_restored
            )
        event.selected = list(names)
        more, more_restored = await asyncio.to_thread(self._render, [n for n in names if n not in rendered], by_name)
        rendered |= more
        chosen = [rendered[n] for n in names if n in rendered]
        return Selection(chosen, "model", len(manifest), restored=restored + more_restored)

    def _local_pass(self, query: str, exclude: frozenset[str]) -> tuple[list[Candidate], list[str], bool]:
        """The manifest for the side model, the lexical pass's strong matches, and whether the
        manifest had to leave files out, from one scan (in a worker thread: the first scan of a
        process reads the on-disk index or the files)."""
        with self._scan_lock:
            self.scanner.scan()
            view = self.archive.refresh()
            exclude |= superseded_names(self.scanner.index.docs, view.index.docs)
            now = self.clock()
            best = shortlist(query, self.scanner.index, SHORTLIST_SIZE, now, exclude=exclude, archive=view)
            scored = select_lexical(query, self.scanner.index, now=now, exclude=exclude, archive=view)
            if self.team is not None:
                best, scored = self._with_team(query, now, exclude, best, scored)
            strong = [f for f, _ in scored]
            candidates = [c for name, _ in best if (c := self._candidate_locked(name))]
            cut = len(self.scanner.index) + len(view.eligible) > BRIDGE_FOLDER_FILES
        manifest = sorted(candidates, key=lambda c: (-c.mtime, c.filename))
        return manifest, strong, cut

    async def _bridged(
        self, client: ModelClient, settings: RecallSettings, query: str, exclude: frozenset[str]
    ) -> list[Candidate]:
        """A request in Chinese or Japanese to a folder of mostly English memories shares almost
        no words with them, and above BRIDGE_FOLDER_FILES the manifest can show only part of the
        folder: one small side-model request turns it into English keywords, and the manifest
        is ranked again with them. [] when that request fails (the first manifest is used)."""
        request = build_keywords_request(self.config.small_model, query)
        try:
            done = await asyncio.wait_for(client.complete(request), settings.timeout_ms / 1000)
            keywords = parse_keywords(done.message.text)
        except Exception as exc:  # the plain manifest still works: never fail the turn for it
            log.info("recall's keyword request failed: %s", exc)
            return []
        if self._session is not None:
            self._session.costs.add("recall", done.model or self.config.small_model, done.billed)
        if not keywords:
            return []
        widened = f"{query} {' '.join(keywords)}"
        manifest, _, _ = await asyncio.to_thread(self._local_pass, widened, exclude)
        return manifest

    def _with_team(
        self,
        query: str,
        now: float,
        exclude: frozenset[str],
        best: list[tuple[str, float]],
        scored: list[tuple[str, float]],
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """The private tier's shortlist and strong matches merged with the team folder's
        (memory/team/recall.py); under the scan lock."""
        from claude_mini.memory.team.recall import merge_tiers

        assert self.team is not None
        team_best, team_strong = self.team.local_pass(query, now, exclude)
        return merge_tiers(best, scored, team_best, team_strong)

    def _render(self, names: list[str], by_name: dict[str, Candidate]) -> tuple[dict[str, RecalledMemory], list[str]]:
        """The chosen files as attachments by the name they were chosen under, and the live
        names of those brought back from the archive (in a worker thread: restoring takes the
        index lock; the loop never waits)."""
        now, out, restored = self.clock(), {}, []
        for name in names:
            candidate = by_name.get(name) or self._candidate(name)
            if candidate is not None and is_archived_name(name):
                live = self._bring_back(name, now)
                if live is not None:
                    restored.append(live)
                    candidate = replace(candidate, filename=live, path=self.store.root / live)
            memory = render_memory(candidate, now) if candidate else None
            if memory is not None:
                out[name] = memory
        add_stale_lines(list(out.values()), self._repo)
        return out, restored

    def _bring_back(self, name: str, now: float) -> str | None:
        """Restore an archived memory recall chose; its live name, or None (then it is shown
        from the archive and stays there)."""
        with self._scan_lock:
            live = self.archive.bring_back(name, now)
        if live is not None:
            self._say(
                f"memory recall brought {live} back from the archive (gc had put it away; it is in MEMORY.md again)"
            )
        return live

    @property
    def _repo(self) -> tuple[Path, ...]:
        """Where a recalled memory's paths are checked: the repository root, then the cwd."""
        return tuple(dict.fromkeys((self.config.project_root, self.config.cwd)))

    def _candidate(self, filename: str) -> Candidate | None:
        with self._scan_lock:
            return self._candidate_locked(filename)

    def _candidate_locked(self, filename: str) -> Candidate | None:
        if is_archived_name(filename):
            return self.archive.candidate(filename)
        if is_team_name(filename):
            return self.team.candidate(filename) if self.team is not None else None
        return self.scanner.index.docs.get(filename)

    def _save_indexes(self) -> None:
        """Keep what this process learnt of the folder for the next one (advisory)."""
        with self._scan_lock:
            self.scanner.save_cache()
            self.archive.scanner.save_cache()
            if self.team is not None:
                self.team.save_cache()

    async def _ask_model(
        self, client: ModelClient, settings: RecallSettings, query: str, manifest: list[Candidate], tools: list[str]
    ) -> list[str]:
        """One side-model request; any failure or the deadline raises RecallFailed."""
        lines = [manifest_line(c, _tier_note(c.filename)) for c in manifest]
        model = self.config.small_model
        request = build_recall_request(model, query, lines, tools)
        try:
            done = await asyncio.wait_for(client.complete(request), settings.timeout_ms / 1000)
        except TimeoutError:
            raise RecallFailed(f"the side model did not answer within {settings.timeout_ms} ms") from None
        except ModelError as exc:
            raise RecallFailed(f"the side model failed: {exc}") from exc
        except Exception as exc:  # an unmapped transport error must not cost the turn its recall
            raise RecallFailed(f"the side model failed: {type(exc).__name__}: {exc}") from exc
        if self._session is not None:
            self._session.costs.add("recall", done.model or model, done.billed)
        return parse_selection(done.message.text, [c.filename for c in manifest])

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
        self._record_use([n for n in names if n not in restored])  # restoring counted already
        return out

    def _record_use(self, names: list[str]) -> None:
        names = [n for n in names if not is_team_name(n)]  # the private usage record only
        if not names:
            return
        try:
            self.store.record_use(names, self.clock())
        except Exception as exc:  # the usage record is advisory; never fail a turn for it
            self._say(f"could not update the memory usage record: {exc}")

    def _say(self, message: str) -> None:
        """Tell the user once per session (a notice the UI shows, and the log), later only at debug.

        INFO, not WARNING: Python's last-resort handler would print a warning on stderr over
        the REPL's screen; the notice channel reaches the user instead.
        """
        key = message.split(":")[0]
        if key in self._said:
            log.debug(message)
            return
        self._said.add(key)
        log.info(message)
        self.notices.say(message)


def _team_recall(root: Path, cache_dir: Path | None) -> TeamRecall:
    from claude_mini.memory.team.recall import TeamRecall

    return TeamRecall(root, cache_file=_cache_file(cache_dir, root))


def _tier_note(filename: str) -> str:
    """What a manifest line says of a file that is not a live private memory."""
    if is_archived_name(filename):
        return "archived"
    return "team" if is_team_name(filename) else ""


def _result_or_empty(future: asyncio.Future[list[RecalledMemory]]) -> list[RecalledMemory]:
    if not future.done() or future.cancelled() or future.exception() is not None:
        return []
    return future.result()


def _cache_file(cache_dir: Path | None, folder: Path) -> Path | None:
    return index_cache_file(cache_dir, folder) if cache_dir is not None else None
