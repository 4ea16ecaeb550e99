"""/dream: a forked agent consolidates the memory folder; a failed dream changes nothing.

The fork (purpose `dream`, extraction's tool policy pointed at a staging
folder) reads MEMORY.md, the memories and any daily-log text not yet distilled,
and writes each new or rewritten memory into `.dream/staging/` under its final
filename, with `replaces: [old.md, ...]` naming the memories it supersedes. It
ends with a short report in plain text. Then this module commits, new files
first and old ones last:

    1. a staged file whose name is live: a copy of the old version goes to archive/,
       then the new one atomically replaces it
    2. other staged files move into the folder; every one gets its MEMORY.md line
    3. each replaced original is archived (store.delete, its successor recorded in
       archive/ARCHIVE.md); its usage count is added to its successor's
    4. each successor's `replaces:` is pointed at the archived copies, so
       `memory restore SUCCESSOR` undoes the merge
    5. consumed logs get a marker line; .dream/state.json records the dream

Until step 1 nothing live has changed: a failed, interrupted or cut-off fork
only leaves a staging folder, which is removed. A crash during the commit can
leave a memory twice (old and new), never none.

Automatic dreaming (`maybe_auto_dream`, setting `memory.autoDream`, default on)
runs at most once per 24 hours and only after 5 sessions since the last dream;
a lock file (`.dream/lock`, flock, released by the OS if the process dies)
keeps two sessions from dreaming at once.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import shutil
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.agent.fork import ForkResult, ForkSnapshot, run_fork
from claude_mini.base.clock import Clock
from claude_mini.base.fileutil import LockTimeout, atomic_write, locked, os_error_text
from claude_mini.base.text import one_line
from claude_mini.config.memory_settings import DreamSettings, ForgetSettings
from claude_mini.llm.protocol import ModelError
from claude_mini.memory.maintenance.daylog import LogSlice, mark_consumed, unconsumed_logs
from claude_mini.memory.maintenance.dream_commit import DREAM_DIR, DreamReport, check_staged, commit
from claude_mini.memory.maintenance.forget import duplicate_groups, gc, index_size, likely_duplicates, pressure
from claude_mini.memory.secrets.guard import SecretGuard
from claude_mini.memory.store import (
    MemoryRecord,
    MemoryStore,
    MemoryStoreError,
    iso_utc,
    render_index_for_prompt,
)
from claude_mini.memory.store.keep import keep_scores, last_written
from claude_mini.permissions import ExtractionPolicy, PolicyChain, ToolPolicy
from claude_mini.permissions.extraction import Restrictions

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent
    from claude_mini.config import Config

log = logging.getLogger(__name__)

ForkRunner = Callable[..., Awaitable[ForkResult]]

STAGING_DIR = "staging"
STATE_FILE = "state.json"
LOCK_FILE = "lock"
MAX_SESSIONS_KEPT = 100
MANIFEST_MAX = 300
MAX_HINTS = 40


class DreamBusy(MemoryStoreError):
    """Another session holds the dream lock."""


# --- state ---------------------------------------------------------------------------------
@dataclass
class DreamState:
    """What the auto-dream gate needs: when the last dream ran and the sessions since."""

    first_seen: float
    last_dream: float | None = None
    last_attempt: float | None = None
    sessions: list[str] = field(default_factory=list)


def state_path(root: Path) -> Path:
    """`.dream/state.json` in the memory folder."""
    return Path(root) / DREAM_DIR / STATE_FILE


def load_state(root: Path, now: float) -> DreamState:
    """The dream state; missing or unreadable starts afresh at `now` (logged)."""
    path = state_path(root)
    try:
        raw = json.loads(path.read_bytes())
        return DreamState(
            float(raw["first_seen"]),
            _opt_float(raw.get("last_dream")),
            _opt_float(raw.get("last_attempt")),
            [str(s) for s in raw.get("sessions", [])],
        )
    except FileNotFoundError:
        return DreamState(now)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("%s is unreadable (%s); the auto-dream count starts again", path, exc)
        return DreamState(now)


def _opt_float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _save_state(root: Path, state: DreamState) -> None:
    data = {
        "first_seen": state.first_seen,
        "last_dream": state.last_dream,
        "last_attempt": state.last_attempt,
        "sessions": state.sessions[-MAX_SESSIONS_KEPT:],
    }
    atomic_write(state_path(root), json.dumps(data, indent=1) + "\n")


def update_state(root: Path, now: float, change: Callable[[DreamState], None]) -> DreamState:
    """Apply `change` to the saved state under its lock; returns the new state."""
    with locked(state_path(root)):
        state = load_state(root, now)
        change(state)
        _save_state(root, state)
        return state


def record_session(root: Path, session_id: str, now: float) -> DreamState:
    """Count a session towards the next auto-dream (each id once)."""

    def add(state: DreamState) -> None:
        if session_id and session_id not in state.sessions:
            state.sessions.append(session_id)

    return update_state(root, now, add)


def auto_dream_due(
    state: DreamState,
    now: float,
    settings: DreamSettings | None = None,
) -> str | None:
    """None when an automatic dream may run now, else why not (for logs and /dream status)."""
    settings = settings or DreamSettings()
    since = max(t for t in (state.first_seen, state.last_dream, state.last_attempt) if t is not None)
    hours = (now - since) / 3600.0
    if hours < settings.min_hours:
        return f"the last dream (or first session) was {hours:.1f} h ago; waiting for {settings.min_hours:g} h"
    if len(state.sessions) < settings.min_sessions:
        return f"{len(state.sessions)} sessions since the last dream; waiting for {settings.min_sessions}"
    return None


# --- the lock ------------------------------------------------------------------------------
@contextlib.contextmanager
def dream_lock(root: Path, clock: Clock = time.time) -> Iterator[None]:
    """Hold `.dream/lock` for one dream; raises DreamBusy at once if another holds it.

    An flock on a descriptor of our own: it excludes other processes and other
    tasks of this one alike, and the OS drops it if the holder dies.
    """
    path = Path(root) / DREAM_DIR / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            raise DreamBusy(
                f"another claude-mini session is consolidating this memory folder "
                f"({_holder(path)}); nothing was changed, try again later"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "started": iso_utc(clock())}).encode())
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text())
        return f"process {info['pid']}, since {info['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "unknown process"


# --- the prompt ----------------------------------------------------------------------------
_PROMPT = """\
Your task now is to consolidate the long-term memory folder of this project, {root}. \
Work only on the memory files: do not look at the project's code or git history, and \
do not continue the conversation above.

Goals:
1. Merge duplicates and near-duplicates into one memory each.
2. Where memories contradict each other, keep the newer statement (see the updated \
times below) and say so in the merged text, e.g. "(Changed 2026-11-02: it used to be X.)".
3. Rewrite vague descriptions so a search for the topic finds them: one line saying what \
the memory is about and when it applies, with specific words.
4. Distil the daily-log entries below (if any) into memories: new ones, or new versions \
of existing ones. Skip what is temporary or can be read from the code.
5. Leave good memories alone; never drop a fact that is still true.

How to write (enforced): you may Read any file, but Write only inside the staging folder \
{staging}. Nothing you write is live until you finish. For each memory you create or \
rewrite, Write the complete file to {staging}/<filename>.md:

---
name: Short title
description: One specific line saying what this is and when it matters
type: user | feedback | project | reference
replaces: [old-a.md, old-b.md]
---
The merged text. Keep **Why:** and **How to apply:** lines, and `pinned: true` if an \
original had it.

`replaces` lists every existing memory this file supersedes; the harness archives those \
(restorable) and updates MEMORY.md itself: never edit MEMORY.md, archive/ or logs/, and \
never delete anything. To rewrite one memory in place, use its own filename and list it \
in replaces. A memory distilled only from the logs has no replaces.

Work in two steps: first Read every memory you need, all in one response; then Write \
all staged files in one response. Finish with a short plain-text report, one line per \
change (what was merged, which contradiction was resolved and how, which descriptions \
were rewritten), or say that nothing needed changing.

## MEMORY.md
{index}

## Memories (filename, type, last updated, recall uses, description)
{manifest}
"""


def dream_prompt(
    store: MemoryStore, staging: Path, records: list[MemoryRecord], logs: list[LogSlice], now: float
) -> str:
    """The fork's task: goals, the staging protocol, the index, the manifest, hints, logs."""
    index, _ = render_index_for_prompt(store.index_text())
    text = _PROMPT.format(
        root=store.root,
        staging=staging,
        index=index or "(empty)",
        manifest=_manifest(store, records, now) or "(no memories yet)",
    )
    groups = duplicate_groups(likely_duplicates(store))
    if groups:
        text += (
            "\n## Look-alikes by wording (check before merging)\n"
            + "\n".join(
                f"- {' ~ '.join(files)} (up to {round(score * 100)}% similar)" for files, score in groups[:MAX_HINTS]
            )
            + "\n"
        )
    if logs:
        text += "\n## Daily-log entries not yet distilled\n" + "\n".join(
            f"### {piece.relative(store.root)}\n{piece.text}\n" for piece in logs
        )
    return text


def _manifest(store: MemoryStore, records: list[MemoryRecord], now: float) -> str:
    counts = {s.filename: s.count for s in keep_scores(store, now, records=records)}
    lines = []
    for r in records[:MANIFEST_MAX]:
        pinned = ", pinned" if r.pinned else ""
        lines.append(
            f"- [{r.type or 'untyped'}] {r.filename} (updated {iso_utc(last_written(r))[:10]}, "
            f"used {counts.get(r.filename, 0)}x{pinned}): {one_line(r.description)}"
        )
    if len(records) > MANIFEST_MAX:
        lines.append(f"- ... and {len(records) - MANIFEST_MAX} more (Glob {store.root}/*.md)")
    return "\n".join(lines)


# --- the dream -----------------------------------------------------------------------------
async def dream(
    parent: Agent | ForkSnapshot,
    store: MemoryStore,
    config: Config | None = None,
    *,
    clock: Clock | None = None,
    base_policy: Restrictions | None = None,
    only_if_due: bool = False,
    run: ForkRunner = run_fork,
) -> DreamReport | None:
    """Consolidate `store` with a fork of `parent` (an Agent or a ForkSnapshot).

    Raises DreamBusy when another session is dreaming; with `only_if_due`,
    returns None when the auto-dream gate (re-checked under the lock) says no.
    A model failure or a fork that stops short gives a report with ok=False
    and leaves every memory as it was; cancellation does the same, then propagates.
    """
    settings = DreamSettings.from_config(config)
    clock = clock or store.clock
    with dream_lock(store.root, clock):
        now = clock()
        if only_if_due and auto_dream_due(load_state(store.root, now), now, settings):
            return None
        staging = _fresh_staging(store.root)
        try:
            return await _dream_locked(parent, store, config, settings, staging, clock, base_policy, run)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


async def _dream_locked(
    parent: Agent | ForkSnapshot,
    store: MemoryStore,
    config: Config | None,
    settings: DreamSettings,
    staging: Path,
    clock: Clock,
    base_policy: Restrictions | None,
    run: ForkRunner,
) -> DreamReport:
    records = store.list()
    seen = {r.filename: (r.mtime, r.size) for r in records}
    logs = unconsumed_logs(store.root)
    prompt = dream_prompt(store, staging, records, logs, clock())
    try:
        result = await run(
            parent,
            prompt,
            purpose="dream",
            policy=_fork_policy(staging, store.root, base_policy, _cwd_of(parent)),
            max_turns=settings.max_turns,
        )
    except ModelError as exc:
        return _failed(store, clock, f"the model request failed ({exc})")
    except Exception as exc:  # a bug in the fork must not take the session down
        log.exception("dream fork crashed")
        return _failed(store, clock, f"{type(exc).__name__}: {exc}")
    if result.hit_turn_limit:
        return _failed(
            store,
            clock,
            f"the dream agent was still working after {settings.max_turns} turns, so its output was discarded",
        )
    report = DreamReport(ok=True, summary=result.text)
    staged = check_staged(store, staging, report.skipped)
    try:
        commit(store, staged, clock(), report, seen)
    except (MemoryStoreError, LockTimeout, OSError) as exc:
        log.exception("dream commit failed")
        report.ok = False
        report.error = (
            f"saving its result failed partway ({exc}); a new memory may sit next "
            "to one it was to replace, but nothing was lost"
        )
        return report
    mark_consumed(logs, clock)
    report.logs = [piece.relative(store.root) for piece in logs]
    _after_commit(store, config, clock, report)
    return report


def _fresh_staging(root: Path) -> Path:
    # A staging folder left by a crashed dream was never committed: it can go.
    staging = Path(root) / DREAM_DIR / STAGING_DIR
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    return staging


def _cwd_of(parent: Agent | ForkSnapshot) -> Path:
    """Where the fork's relative paths resolve: the parent's working folder."""
    return parent.cwd if isinstance(parent, ForkSnapshot) else Path(parent.ctx.cwd)


def _fork_policy(staging: Path, root: Path, base: Restrictions | None, cwd: Path | None) -> ToolPolicy:
    """Extraction's policy with the staging folder as the only writable place, bound by the
    session's deny and ask rules (`base`), under the secret guard of the memory folder."""
    return PolicyChain(ExtractionPolicy(staging, base=base, cwd=cwd), [SecretGuard(root, cwd=cwd)])


def _failed(store: MemoryStore, clock: Clock, error: str) -> DreamReport:
    log.warning("dream failed: %s", error)
    with contextlib.suppress(OSError, LockTimeout):
        update_state(store.root, clock(), lambda s: setattr(s, "last_attempt", clock()))
    return DreamReport(ok=False, error=error)


def _after_commit(store: MemoryStore, config: Config | None, clock: Clock, report: DreamReport) -> None:
    """Keep the index within its limits, and reset the auto-dream gate."""
    settings = ForgetSettings.from_config(config)
    if pressure(index_size(store), settings):
        report.archived += gc(store, settings, clock, stale=False).archived
    now = clock()

    def done(state: DreamState) -> None:
        state.last_dream = state.last_attempt = now
        state.sessions = []

    update_state(store.root, now, done)


# --- automatic dreaming ------------------------------------------------------------------------
async def maybe_auto_dream(
    parent: Agent | ForkSnapshot,
    store: MemoryStore,
    config: Config,
    session_id: str,
    *,
    clock: Clock | None = None,
    base_policy: Restrictions | None = None,
    run: ForkRunner = run_fork,
) -> DreamReport | None:
    """At session start: count the session, and dream if the 24 h / 5-session gate allows.

    Returns None when it did not dream (off, not due, or another session holds
    the lock). Never raises, except for cancellation.
    """
    settings = config.memory.dream
    if not settings.auto_dream or not config.auto_memory:
        return None
    clock = clock or store.clock
    try:
        now = clock()
        if auto_dream_due(record_session(store.root, session_id, now), now, settings):
            return None
        return await dream(parent, store, config, clock=clock, base_policy=base_policy, only_if_due=True, run=run)
    except DreamBusy:
        return None
    except (MemoryStoreError, LockTimeout, OSError) as exc:  # a read-only or full folder
        store.tell(f"Automatic dream skipped ({os_error_text(exc)}); the memories were left as they are.")
        return None
