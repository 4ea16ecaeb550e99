"""Layer 4: after a turn, a forked agent saves what is worth remembering.

    turn ends (end_turn) ──► Extractor.on_turn_end
        auto memory off, or the in-process local model ──► nothing
        the pending turns (since the cursor, or since the newest run scheduled):
            fewer than memory.extractEvery ──► held
            the gate (memory/extract_gate.py) finds something durable ──► run
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
The hook also keeps the secret guard (memory/secrets.py) around the main
agent's policy. The cache-friendly prefix is the fork's business (agent/fork.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.agent.events import TurnDone
from claude_mini.agent.fork import WRITING_TOOLS, Fork, ForkResult, ForkSnapshot
from claude_mini.agent.lifecycle import ConversationRewind, Part
from claude_mini.base import paths
from claude_mini.base.fileutil import atomic_write, os_error_text
from claude_mini.base.notices import NoticeChannel
from claude_mini.base.safe_read import Unreadable, read_file
from claude_mini.base.text import one_line
from claude_mini.config.memory_settings import ExtractionSettings
from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock
from claude_mini.memory.extract_gate import GateDecision, assess, count_turns, no_gate
from claude_mini.memory.lexical import Candidate, manifest_line
from claude_mini.memory.secrets import lands_in
from claude_mini.memory.store import (
    ARCHIVE_DIR,
    INDEX_FILENAME,
    LOGS_DIR,
    MemoryStore,
    MemoryStoreError,
    dump_frontmatter,
    index_line,
    iso_utc,
    parse_memory_text,
)
from claude_mini.memory.supersede import apply_links, record_links, successor_of
from claude_mini.memory.team import TeamTier, team_tier
from claude_mini.memory.team.moves import drop_team_flag, propose, proposed_for_team
from claude_mini.permissions import Allow, Decision, ExtractionPolicy, Guard, PolicyChain

if TYPE_CHECKING:
    from claude_mini.agent.lifecycle import CompactRequest, EndReason, SessionSource
    from claude_mini.agent.loop import Agent
    from claude_mini.config import Config
    from claude_mini.session import Session

log = logging.getLogger(__name__)

MAX_TURNS = 5  # DESIGN.md section 5
COMPACT_FLUSH_SECONDS = 60.0  # how long a compaction waits for the extraction it asked for
MANIFEST_MAX = 200  # as many as recall offers
POLICY_FILENAME = "memory-policy.md"
POLICY_MAX_CHARS = 8_000  # a policy is guidance, not a second CLAUDE.md
NOTICE_DESCRIPTION_CHARS = 100


# ---------------------------------------------------------------- records


@dataclass
class SavedMemory:
    """A memory file an extraction created or updated; `line` is what the user is shown."""

    filename: str
    description: str
    path: Path
    created: bool

    @property
    def line(self) -> str:
        """`Saved memory: feedback_testing.md — always run pytest with -x`."""
        desc = self.description
        if len(desc) > NOTICE_DESCRIPTION_CHARS:
            desc = desc[: NOTICE_DESCRIPTION_CHARS - 1].rstrip() + "…"
        return f"Saved memory: {self.filename} — {desc}" if desc else f"Saved memory: {self.filename}"


# ---------------------------------------------------------------- the prompt

PROMPT = """\
You are now the memory extraction agent: a background helper of the main assistant. \
Nobody reads this reply; it never joins the conversation.

Your task: decide whether the last {count} messages of the conversation above{since} \
hold anything worth keeping in the project's memory folder `{root}`, and save it there. \
Those messages are your only source. Do not investigate or verify anything: no searching \
or reading the code, no git, no shell commands. Read only files in the memory folder; \
write only there, with absolute paths. Other calls are refused.

Worth saving — what a future session would need and could not easily find out again:
- user: who the user is, their role, expertise and how they like to work;
- feedback: a correction or a confirmed way of working ("always run pytest with -x");
- project: decisions, goals, deadlines, incidents: context that is not in the code;
- reference: where things live outside the repository (dashboards, tickets, docs).
Not worth saving: what the code or git history shows, the state of the task at hand, \
what CLAUDE.md already says, guesses. Never secrets, keys, tokens or passwords: such \
writes are refused.

Existing memories (update the right one instead of adding a duplicate, and correct \
one these messages proved wrong):
{manifest}

One memory per file, `{root}/<type>_<topic>.md` (e.g. `feedback_testing.md`):

```markdown
---
name: Short title
description: One line saying what it is and when it matters (recall finds memories by it)
type: user | feedback | project | reference
---
The fact or rule, with absolute dates.
**Why:** the reason. **How to apply:** when it applies (feedback and project memories need both).
```

`{root}/MEMORY.md` is the index: one line per memory, `- [Short title](file.md) — short hook`.

When these messages correct or replace an existing memory (a fact that changed, a rule the \
user reversed): if it is still the same memory, update that file in place and keep its \
filename. If a new file replaces an old one, add `supersedes: old_file.md` to the new file's \
frontmatter and leave the old file and its MEMORY.md line alone: the old one is then marked \
and no longer recalled. Memories listed as `superseded by` another are history: correct \
their successor instead.

Work in two steps ({max_turns} responses at most):
1. In one response, Read every file you will change — the memories to update and \
MEMORY.md if it exists — all the calls at once (they run in parallel). A file must be \
read before it can be changed.
2. In the next response, make every Write and Edit at once: new memories, updated \
ones, and the MEMORY.md lines.
Then answer with one short line. If nothing is worth saving, call no tool and answer \
"Nothing to save."
"""


TEAM_PROMPT = """
# The team memory

This repository also has a team memory in `{team_root}`, shared through git with everyone \
who works on it. Its memories (do not save them again):
{team_manifest}

A feedback or project memory that concerns the whole team, not only this user (a rule of \
the repository, a decision, a pitfall of its build, tests or deploys), gets `team: true` in \
its frontmatter: write it in `{root}` like any other, and it is proposed for the team \
memory after a check for secrets and personal data. Never mark user or reference memories, \
personal preferences, or text with people's names, e-mail addresses or paths on this \
machine. Never write into `{team_root}` yourself.
"""


def extraction_prompt(
    *,
    count: int,
    first_words: str,
    manifest: str,
    root: Path,
    policies: list[tuple[Path, str]],
    max_turns: int = MAX_TURNS,
    team: str = "",
) -> str:
    """The fork's task: the messages since the cursor, the manifest, format, method, the team
    tier (`team`: `team_prompt`'s text, or ''), policies."""
    since = f' (from the user\'s "{first_words}")' if first_words else ""
    text = (
        PROMPT.format(count=count, since=since, root=root, manifest=manifest or "(none yet)", max_turns=max_turns)
        + team
    )
    for path, policy in policies:
        text += f"\n# What should be remembered, according to {path}\n\n{policy}\n"
    return text


def team_prompt(tier: TeamTier | None, root: Path) -> str:
    """The extraction prompt's part about the team tier: what it holds and how to propose a
    memory for it; '' without a team tier, or when nothing may be proposed (an untrusted
    folder whose proposals would go straight to the team folder)."""
    if tier is None or tier.write_problem() and tier.proposals != "private":
        return ""
    return TEAM_PROMPT.format(
        team_root=tier.root, root=root, team_manifest=memory_manifest(tier.store()) or "(none yet)"
    )


def memory_manifest(store: MemoryStore) -> str:
    """One line per existing memory, newest first: `- [type] file.md (time): description`,
    with `superseded by new.md` beside the time of a memory a live one replaced."""
    records = sorted(store.list(), key=lambda r: r.mtime, reverse=True)[:MANIFEST_MAX]
    superseded, _ = record_links(records)
    return "\n".join(
        manifest_line(
            Candidate(r.filename, r.type, r.mtime, r.description, head_text=""),
            f"superseded by {successor_of(r.frontmatter)}" if r.filename in superseded else "",
        )
        for r in records
    )


def memory_policies(
    project_root: Path,
    warn: Callable[[str], None] | None = None,
) -> list[tuple[Path, str]]:
    """The project's `.claude/memory-policy.md` and the user's `memory-policy.md`, when present.

    Read through safe_read (no /proc, /dev, /sys or credential file, no FIFO, a capped read);
    the project's must resolve inside the project, trusted or not: a committed policy linking
    out of it would carry whatever it names into the extraction prompt.
    """
    found = []
    for path, inside in (
        (project_root / ".claude" / POLICY_FILENAME, project_root),
        (paths.home_dir() / POLICY_FILENAME, None),
    ):
        try:
            data = read_file(path, POLICY_MAX_CHARS * 4, cut=True, inside=inside)
        except (OSError, Unreadable) as exc:
            if warn is not None and not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
                warn(
                    f"The memory policy {path} was not read ({exc}); extraction runs without it. "
                    "Make it a regular text file to use it."
                )
            continue
        text = data[: POLICY_MAX_CHARS * 4].decode("utf-8", errors="replace").strip()
        if text:
            found.append((path, text[:POLICY_MAX_CHARS]))
    return found


def first_user_words(messages: list[Message], limit: int = 80) -> str:
    """The start of the first thing the user typed in `messages` (not a tool result or reminder)."""
    for message in messages:
        if message.role != "user":
            continue
        for block in message.content:
            if isinstance(block, TextBlock) and not block.text.startswith("<system-reminder>"):
                words = one_line(block.text)
                return words if len(words) <= limit else words[: limit - 1] + "…"
    return ""


# ---------------------------------------------------------------- the fork's policy


def memory_fork_policy(memory_dir: Path, session_policy: PolicyChain, cwd: Path) -> PolicyChain:
    """The tool policy of extraction: ExtractionPolicy bound by the session's deny and ask rules,
    under the session chain's fork guards (the secret guard). Relative paths resolve against
    the fork's `cwd`."""
    return session_policy.for_fork(ExtractionPolicy(memory_dir, base=session_policy, cwd=cwd), cwd)


# ---------------------------------------------------------------- what the messages say


def main_agent_wrote_memory(messages: list[Message], memory_dir: Path, cwd: Path) -> bool:
    """Whether a successful Write/Edit of the main agent in `messages` targets the memory folder."""
    ids = {
        block.id
        for m in messages
        if m.role == "assistant"
        for block in m.tool_uses
        if block.name in ("Write", "Edit") and lands_in(block.input.get("file_path"), memory_dir, cwd)
    }
    return any(
        isinstance(block, ToolResultBlock) and block.tool_use_id in ids and not block.is_error
        for m in messages
        if m.role == "user"
        for block in m.content
    )


# ---------------------------------------------------------------- files: journal, provenance


def unsaved_writes(result: ForkResult, cwd: Path) -> list[str]:
    """`name (why)` of each file the fork's Write or Edit could not save because of the disk
    (full, read-only) and never changed. The fork's own mistakes (an old_string not found, a
    Write over an unread file) are its to retry, not a save failure: those go to the debug log."""
    written = {os.path.realpath(p) for p in result.written}
    failed: dict[str, str] = {}
    for run in result.tool_runs:
        path = run.call.input.get("file_path") if run.call.name in WRITING_TOOLS else None
        if (
            isinstance(path, str)
            and run.result.is_error
            and not run.denied
            and not run.result.metadata.get("disk_error")
        ):
            log.debug("extraction %s of %s failed: %s", run.call.name, path, run.result.content)
        elif isinstance(path, str) and run.result.is_error and not run.denied:
            real = os.path.realpath(cwd / path)
            if real not in written:
                failed[real] = (run.result.content.strip().splitlines() or ["failed"])[0].rstrip(".")
    return [f"{Path(p).name} ({why})" for p, why in failed.items()]


class WriteJournal(Guard):
    """The fork's outermost guard: before an allowed Write/Edit runs, keeps its target's old bytes.

    `kept` maps each real path the fork was allowed to write to its bytes at
    that moment (None: it did not exist), so a failed run can be rolled back
    and a rewritten memory keeps its `created` time.
    """

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.kept: dict[str, bytes | None] = {}

    def after(self, tool_name: str, input: dict[str, Any], decision: Decision) -> Decision:
        """The decision unchanged; an allowed write is journalled first."""
        raw = input.get("file_path")
        if isinstance(decision, Allow) and tool_name in WRITING_TOOLS and isinstance(raw, str):
            self._keep(os.path.realpath(os.path.join(self.cwd, os.path.expanduser(raw))))
        return decision

    def _keep(self, real: str) -> None:
        if real in self.kept:
            return  # the first write of a run is the one to undo
        try:
            self.kept[real] = Path(real).read_bytes()
        except FileNotFoundError:
            self.kept[real] = None
        except OSError as exc:  # unreadable: the write will most likely fail too
            log.warning("cannot keep a copy of %s before the extraction writes it: %s", real, exc)

    def roll_back(self) -> None:
        """Put every journalled file back as it was (one that did not exist is removed)."""
        for real, old in self.kept.items():
            try:
                if old is None:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(real)
                elif Path(real).read_bytes() != old:
                    atomic_write(Path(real), old)
            except OSError as exc:
                log.warning("could not roll back %s after a failed extraction: %s", real, exc)


def _stamp(value: Any) -> str | None:
    """A frontmatter time (YAML may have parsed it into a datetime) as `2026-11-30T12:00:00Z`."""
    if isinstance(value, datetime):
        value = value if value.tzinfo else value.replace(tzinfo=UTC)
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value) if value else None


def created_stamp(data: bytes | None) -> str | None:
    """The `created` time in the frontmatter of a file's old bytes, if any."""
    if not data:
        return None
    return _stamp(parse_memory_text(data.decode("utf-8", "replace")).frontmatter.get("created"))


def stamp_provenance(path: Path, session_id: str, created: str | None, now: str) -> dict[str, Any] | None:
    """Add `source`, `created`, `updated` to a memory's frontmatter, atomically.

    Returns the new frontmatter, or None when the file has no usable frontmatter
    block (it is left as the fork wrote it; `memory doctor` reports it).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("extraction wrote %s but it cannot be read back: %s", path, exc)
        return None
    parsed = parse_memory_text(text)
    if parsed.problem_kind in ("missing", "unclosed", "invalid_yaml", "not_mapping"):
        log.warning("extraction wrote %s without valid frontmatter (%s)", path, parsed.problem)
        return None
    fm = dict(parsed.frontmatter)
    fm["source"] = session_id
    fm["created"] = created or _stamp(fm.get("created")) or now
    fm["updated"] = now
    atomic_write(path, f"---\n{dump_frontmatter(fm)}---\n\n{parsed.body}")
    return fm


# ---------------------------------------------------------------- the hook


def index_after(messages: list[Message], anchor: tuple[Message, int]) -> int:
    """The index after `anchor` (a message, and how many blocks it had) in `messages`; a user
    message merged into since counts again; 0 when it is gone (the conversation was rewritten)."""
    message, size = anchor
    for i in range(len(messages) - 1, -1, -1):
        if messages[i] is message:
            return i + 1 if len(message.content) == size else i
    return 0


@dataclass(frozen=True)
class TurnVerdict:
    """What the extractor made of the newest turn end: whether a run started, and why (/context)."""

    ran: bool
    reason: str


class Extractor(Part):
    """Schedules and runs background memory extraction for one session.

    It tells the user through its notice channel: each saved memory (level `saved`), a
    failure (once), and background work `extract` while a run is in flight. The UIs call
    `schedule_final_run()` when the session ends, then `wait()` for `running` work.
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
        self.store = store
        self.session = session
        self.policy = policy  # the session's; its deny and ask rules still bind the fork
        self.project_root = project_root
        self.settings = settings or ExtractionSettings()
        self.enabled = enabled
        # The pending messages -> whether they may hold something durable (memory/extract_gate.py).
        self.gate = gate or (assess if self.settings.gate else no_gate)
        self.last_verdict: TurnVerdict | None = None
        self.clock = clock
        self.team = team  # the repository's team tier, asked at each use (trust may change)
        self.notices = notices or NoticeChannel()
        self.runs = 0  # forks that finished
        self.saved: list[SavedMemory] = []  # what this extractor saved, oldest first
        self.failures = 0
        # Per session (one extractor outlives /clear and /resume): the last message considered.
        self._anchors: dict[str, tuple[Message, int] | None] = {}
        self._sessions = {session.id: session}
        # A resumed conversation was extracted by the session that wrote it.
        self._advance(session.messages, session.id)
        self._pending: ForkSnapshot | None = None
        # The end of the newest snapshot scheduled (session id, anchor): the turns up to it are
        # covered by a run in flight, so the gate does not count them again.
        self._mark: tuple[str, tuple[Message, int]] | None = None
        self._held: ForkSnapshot | None = None  # the newest turn end that started no run (/clear)
        self._task: asyncio.Task[None] | None = None
        self._told_failure = False

    @classmethod
    def for_runtime(
        cls, config: Config, session: Session, store: MemoryStore, policy: PolicyChain, notices: NoticeChannel
    ) -> Extractor:
        """The extractor of a session built from `config` (auto memory checked at each turn end).

        Not with the in-process local model: its one worker would be busy for tens of seconds
        while the user waits for the next answer, and a small model rarely writes a usable
        memory file. `/memory add` still saves by hand.
        """
        from claude_mini.llm.local import is_local_model

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

    # -- lifecycle events

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
        self.policy = agent.policy
        self.schedule(snapshot)

    def verdict(self, messages: list[Message]) -> TurnVerdict:
        """Whether the pending turns of the current conversation (`messages`) are extracted now:
        at least `extractEvery` of them, and durable or `extractBatchTurns` of them."""
        pending = self.pending_messages(messages)
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
            self.policy = agent.policy
            self.schedule(ForkSnapshot.of(agent))
        return self.running

    def _durable_pending(self, messages: list[Message], session_id: str) -> bool:
        pending = self.pending_messages(messages, session_id)
        return count_turns(pending) > 0 and self.gate(pending).durable

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """/clear or /resume: the old conversation's pending turns get their final run (in the
        background, if durable); later turns are `session`'s, and what it already holds was
        extracted by the session that wrote it. A run for the old conversation still finishes,
        with the old cursor, and reports to the old transcript."""
        held, self._held = self._held, None
        if held is not None and self.enabled() and self._durable_pending(held.messages, held.session_id):
            with contextlib.suppress(RuntimeError):  # no event loop: nothing can run in the background
                self.schedule(held)
        self.session = session
        if session.id not in self._sessions:
            self._sessions[session.id] = session
            self._advance(session.messages, session.id)
        self.last_verdict = None
        if not self.running:
            self._forget_other_sessions()

    async def before_compact(self, agent: Agent, request: CompactRequest) -> None:
        """Extract what the compaction is about to summarise away, and wait for it."""
        await self.flush(agent, COMPACT_FLUSH_SECONDS)

    async def after_compact(self, agent: Agent) -> None:
        """The summary replaced what was extracted: count it all as considered."""
        self.reset_cursor()

    async def on_session_end(self, agent: Agent, reason: EndReason = "other") -> None:
        """An extraction the UI stopped waiting for is cancelled (its writes are rolled back)."""
        await self.stop()

    async def on_rewind(self, agent: Agent, rewind: ConversationRewind) -> None:
        """The conversation went back: a run (or a waiting snapshot) that may hold the part rewound
        away is cancelled, its writes rolled back; what stayed counts as considered as far as it
        was before. A conversation rebuilt from before a compaction was extracted before it."""
        await self.stop()
        session_id = agent.session.id
        if rewind.rebuilt:
            self.reset_cursor()
            return
        considered = min(self._start_index(rewind.old, session_id), rewind.kept)
        self._advance(agent.session.messages[:considered], session_id)

    def _forget_other_sessions(self) -> None:
        """Keep only the current session's state (an old one's messages can be large)."""
        self._sessions = {self.session.id: self.session}
        self._anchors = {self.session.id: self._anchors.get(self.session.id)}

    def context_report(self) -> list[str]:
        """/context's line: how many turns wait for extraction, and what became of the last one."""
        if not self.enabled():
            return []
        turns = count_turns(self.pending_messages())
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
        return list(dict.fromkeys(m.filename for m in self.saved))

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

    async def flush(self, agent: Agent, timeout: float | None = None) -> bool:
        """Extract whatever is new since the cursor now, throttle aside, and wait (compaction)."""
        if self.enabled() and self.cursor < len(agent.session.messages):
            self.policy = agent.policy
            self.schedule(ForkSnapshot.of(agent))
        return await self.wait(timeout)

    async def _drain(self) -> None:
        self._show_status(True)
        try:
            while self._pending is not None:
                snapshot, self._pending = self._pending, None
                await self._run_once(snapshot)
        finally:
            self._mark = None  # the cursor says what was covered (not a failed run's messages)
            self._forget_other_sessions()
            self._show_status(False)

    def _show_status(self, running: bool) -> None:
        self.notices.set_background("extract", running)

    # -- the cursor

    @property
    def cursor(self) -> int:
        """How many messages of the session's conversation were already considered."""
        return self._start_index(self.session.messages, self.session.id)

    def reset_cursor(self) -> None:
        """Count the whole current conversation as considered (after compaction replaced it)."""
        self._advance(self.session.messages, self.session.id)

    def pending_messages(self, messages: list[Message] | None = None, session_id: str | None = None) -> list[Message]:
        """The messages of a conversation (the current one by default) that no run has covered
        or been scheduled for: what the gate judges."""
        session_id = session_id or self.session.id
        messages = self.session.messages if messages is None else messages
        start = self._start_index(messages, session_id)
        if self._mark is not None and self._mark[0] == session_id:
            start = max(start, index_after(messages, self._mark[1]))
        return messages[start:]

    def _start_index(self, messages: list[Message], session_id: str) -> int:
        found = self._anchors.get(session_id)
        return 0 if found is None else index_after(messages, found)

    def _advance(self, messages: list[Message], session_id: str) -> None:
        self._anchors[session_id] = (messages[-1], len(messages[-1].content)) if messages else None

    def _session_of(self, snapshot: ForkSnapshot) -> Session:
        """The session a snapshot was taken of (the current one if unknown)."""
        return self._sessions.get(snapshot.session_id, self.session)

    # -- one run

    async def _run_once(self, snapshot: ForkSnapshot) -> None:
        messages = snapshot.messages
        session = self._session_of(snapshot)
        start = self._start_index(messages, session.id)
        new = messages[start:]
        if not new:
            return
        if main_agent_wrote_memory(new, self.store.root, snapshot.cwd):
            self._advance(messages, session.id)
            session.record_system(
                "memory_extraction_skipped", reason="the main agent wrote to the memory folder itself"
            )
            return
        if self.settings.log_mode:
            await self._log_once(snapshot, new, session)
            self._advance(messages, session.id)
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
        self._advance(messages, session.id)
        self._finish(result, snapshot, journal.kept, session)

    async def _log_once(self, snapshot: ForkSnapshot, new: list[Message], session: Session) -> None:
        """Log mode: one tool-less fork turn answers with bullets; they are appended to today's log."""
        from claude_mini.agent.fork import DenyAllTools
        from claude_mini.memory.daylog import (
            LOG_EXTRACTION_INSTRUCTIONS,
            append_log,
            bullets_from_reply,
        )

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
            policies=memory_policies(self.project_root, self._warn_once),
            max_turns=MAX_TURNS,
            team=team_prompt(self.team(), self.store.root),
        )

    def _warn_once(self, text: str) -> None:
        self.notices.say(text, "warning", once=True)

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

    # -- after a successful run

    def _finish(
        self, result: ForkResult, snapshot: ForkSnapshot, before: dict[str, bytes | None], session: Session
    ) -> None:
        if result.hit_turn_limit:
            session.record_system("memory_extraction_stopped", turns=result.turns)
        now = iso_utc(self.clock())
        saved, unsaved = [], unsaved_writes(result, snapshot.cwd)
        for path in result.written:
            try:
                memory = self._stamp_and_index(path, snapshot.session_id, before, now)
            except Exception as exc:  # one bad file must not hide the others
                unsaved.append(f"the index line of {Path(path).name} ({exc})")
                continue
            if memory is not None:
                saved.append(memory)
        if unsaved:  # a full or read-only memory folder: the user must know what is missing
            self.notices.say(f"Memory extraction could not save {'; '.join(unsaved)}.", "warning")
        for memory in saved:
            session.record_system(
                "memory_saved",
                file=memory.filename,
                path=str(memory.path),
                description=memory.description,
                created=memory.created,
            )
            self.saved.append(memory)
            self.notices.say(memory.line, "saved")
        self._mark_superseded(saved, session)
        self._propose_for_team(saved, session)

    def _mark_superseded(self, saved: list[SavedMemory], session: Session) -> None:
        """Stamp `superseded_by` on the memories the saved ones say they supersede (one line
        each on the notice channel; a link that cannot be right is refused and said)."""
        for memory in saved:
            for outcome in apply_links(self.store, memory.filename):
                if outcome.marked:
                    session.record_system("memory_superseded", file=outcome.marked, by=memory.filename)
                self.notices.say(outcome.message, "saved" if outcome.marked else "warning")

    def _propose_for_team(self, saved: list[SavedMemory], session: Session) -> None:
        """The saved memories marked `team: true` go to the team tier, or stay private with a
        reason (memory/team/moves.py); one line each on the notice channel."""
        tier = self.team()
        for memory in saved:
            try:
                record = self.store.read(memory.filename)
                if not proposed_for_team(record):
                    continue
                if tier is None:
                    drop_team_flag(record.path)  # no team tier here: nothing to propose to
                    continue
                line, proposed = propose(tier, self.store, memory.filename)
            except (MemoryStoreError, OSError) as exc:
                line, proposed = (
                    (
                        f"Could not propose {memory.filename} for the team memory "
                        f"({os_error_text(exc)}); it stays private"
                    ),
                    False,
                )
            session.record_system("memory_team_proposal", file=memory.filename, outcome=line)
            self.notices.say(line, "saved" if proposed else "warning")

    def _stamp_and_index(
        self, path: Path, session_id: str, before: dict[str, bytes | None], now: str
    ) -> SavedMemory | None:
        filename = self._memory_filename(path)
        if filename is None:
            return None
        real = os.path.realpath(path)
        fm = stamp_provenance(Path(real), session_id, created_stamp(before.get(real)), now)
        if fm is None:
            return None
        name, description = one_line(fm.get("name") or Path(filename).stem), one_line(fm.get("description") or "")
        if filename not in {e.filename for e in self.store.index_entries()}:
            self.store.update_index(add_or_replace={filename: index_line(filename, name, description)})
        return SavedMemory(filename, description, Path(real), created=before.get(real) is None)

    def _memory_filename(self, path: Path) -> str | None:
        """`path` relative to the memory folder when it is a topic file, else None."""
        real, root = os.path.realpath(path), os.path.realpath(self.store.root)
        if not real.startswith(root + os.sep) or not real.endswith(".md"):
            return None
        rel = Path(os.path.relpath(real, root))
        if rel.as_posix() == INDEX_FILENAME or rel.parts[0] in (ARCHIVE_DIR, LOGS_DIR):
            return None
        return rel.as_posix()
