"""Keep-scores: how much each memory deserves its place (the formula is in maintenance/forget.py).

The store uses them to choose which MEMORY.md lines the prompt leaves out when the index is
over its limits (`overflow_order`); gc archives the lowest first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from claude_mini.config.memory_settings import HALF_LIFE_DAYS, ForgetSettings
from claude_mini.memory.store.links import record_links
from claude_mini.memory.store.topic import MemoryRecord, epoch_of
from claude_mini.memory.store.usage import UsageEntry

if TYPE_CHECKING:
    from claude_mini.memory.store.memory_store import MemoryStore


FREQUENCY_WEIGHT = 0.5
FREQUENCY_FADE = 2.0  # the use bonus halves every 2 half-lives
PROTECTED_TYPES = ("user", "feedback")
PROTECTED_FLOOR = 1.0  # as if used just now
DAY = 86_400.0


@dataclass(frozen=True)
class KeepScore:
    """How much a memory deserves its place; the lowest go to the archive first."""

    filename: str
    name: str
    type: str | None
    score: float
    last_used: float  # the later of its last recall and its last write
    count: int  # recall surfacings
    protected: str | None = None  # why gc never archives it automatically (user/feedback/pinned)


def last_written(record: MemoryRecord) -> float:
    """When a memory was last written: frontmatter `updated`, else `created`, else the file time."""
    for key in ("updated", "created"):
        when = epoch_of(record.frontmatter.get(key))
        if when is not None:
            return when
    return record.mtime


def protection(record: MemoryRecord) -> str | None:
    """Why `record` is never archived automatically (its type, or pinned), else None."""
    if record.pinned:
        return "pinned"
    return record.type if record.type in PROTECTED_TYPES else None


def keep_score(
    record: MemoryRecord, usage: UsageEntry | None, now: float, half_life_days: float = HALF_LIFE_DAYS
) -> KeepScore:
    """The keep-score of one memory at `now` (see the module docstring for the formula)."""
    count = usage["count"] if usage else 0
    last = max(last_written(record), usage["last_used"] if usage else 0.0)
    age_days = max(0.0, now - last) / DAY
    recency = 0.5 ** (age_days / half_life_days)
    bonus = FREQUENCY_WEIGHT * math.log1p(count) * 0.5 ** (age_days / (half_life_days * FREQUENCY_FADE))
    guard = protection(record)
    score = max(recency + bonus, PROTECTED_FLOOR) if guard else recency + bonus
    return KeepScore(record.filename, record.name, record.type, score, last, count, guard)


def keep_scores(
    store: MemoryStore,
    now: float | None = None,
    settings: ForgetSettings | None = None,
    records: list[MemoryRecord] | None = None,
) -> list[KeepScore]:
    """Every memory's keep-score, lowest first (ties: least recently used, then filename)."""
    settings = settings or ForgetSettings()
    now = store.clock() if now is None else now
    usage = store.usage()
    records = store.list() if records is None else records
    superseded, corrections = record_links(records)
    scores = [
        superseding(keep_score(r, usage.get(r.filename), now, settings.half_life_days), superseded, corrections)
        for r in records
    ]
    scores.sort(key=lambda s: (s.score, s.last_used, s.filename))
    return scores


def superseding(score: KeepScore, superseded: set[str], corrections: set[str]) -> KeepScore:
    """A correction is kept while the memory it replaced is live (archiving it would bring the
    old fact back); a memory superseded by a live one goes first (score 0, unless pinned)."""
    if score.filename in corrections and not score.protected:
        return replace(score, score=max(score.score, PROTECTED_FLOOR), protected="correction")
    if score.filename in superseded and score.protected != "pinned" and score.filename not in corrections:
        return replace(score, score=0.0, protected=None)
    return score


def overflow_order(store: MemoryStore, settings: ForgetSettings | None = None) -> list[str]:
    """MEMORY.md entries in the order the prompt leaves them out when the index is over its
    limits: lines whose file is gone (the last first), then the lowest keep-scores (the oldest
    and least-used; corrections and protected memories last), never simply the newest lines."""
    scores = keep_scores(store, settings=settings)
    known = {s.filename for s in scores}
    dangling = [e.filename for e in reversed(store.index_entries()) if e.filename not in known]
    return list(dict.fromkeys([*dangling, *(s.filename for s in scores)]))


def describe_score(score: KeepScore, now: float) -> str:
    """`0.42  used 3x, last 12 days ago` or `1.00  protected (feedback)` for `memory list --scores`."""
    age = max(0.0, now - score.last_used) / DAY
    used = (
        f"used {score.count}x, last {age:.0f} days ago"
        if score.count
        else f"never recalled, written {age:.0f} days ago"
    )
    guard = f", kept ({score.protected})" if score.protected else ""
    return f"{score.score:5.2f}  {used}{guard}"
