"""Benchmark forgetting: a simulated year of memory use, with and without automatic gc.

    uv run python scripts/bench_forgetting.py [--seed N] [--per-day R] [--usage model|lexical]
                                              [--live-only] [--seeds N]

Two memory folders live through the same year (an injected clock, one
session a day):

- memories arrive at a steady rate: in the first month, the answers to 40
  questions from bench_recall's fixture of realistic developer memories (they
  stay relevant all year) and 20 more fixture memories nobody asks about; then
  every day on average one short-lived memory about a made-up component
  (written from the same per-service templates, so it competes for the same
  words) that is asked about during the two weeks after it was written; and
  a user or feedback memory every two weeks;
- usage is skewed as in real use: each day 8 questions about the lasting
  topics written so far, drawn with a Zipf(1.1) popularity (the tail is asked
  every month or two, with gaps of 100 days now and then), plus the questions
  about recent short-lived memories. Recall is the `lexical` strategy
  (memory/lexical.select_lexical, top 5), which also searches what gc
  archived (memory/recall/archive.py) and restores an archived answer it
  finds, as a session does. What it records as a use follows the default
  `model` strategy: of the lexical top 5, the memories that answer the
  question (`--usage lexical` records all five);
- the gc folder runs `maybe_auto_gc` at every session start; the other never
  forgets. `--live-only` searches the live memories alone (gc without the
  archive tier), to show what the tier is worth.

Printed month by month: live memories, MEMORY.md lines and bytes, recall@5 of
the 40 fixed questions, and how many of their answers gc archived. Targets: the
gc folder's index never exceeds 200 lines or 25,000 bytes (checked every day),
and recall@5 over the year is not lower with gc (the worst month is shown).
Exit status 1 when a target is missed.

Capacity, for reading the figures: index lines of these memories are ~150
bytes, so 25,000 bytes hold ~165 memories and gc keeps ~140 (85%). Usage-based
forgetting can only keep what was used lately: what it loses are lasting
answers with at most one recorded use when the folder is full (asked rarely,
or never surfaced for their own question), and the more memories arrive
(`--per-day 2`), the more of those it loses. Recall still finds them in the
archive and brings them back when they are asked for; `--live-only` shows the
loss without that. `--seeds 8` shows the spread over seeds.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_mini.config import Config
from claude_mini.memory.maintenance.forget import maybe_auto_gc
from claude_mini.memory.recall.archive import ArchiveTier, is_archived_name
from claude_mini.memory.recall.lexical import select_lexical
from claude_mini.memory.recall.scan import CandidateScanner
from claude_mini.memory.store import INDEX_MAX_BYTES, INDEX_MAX_LINES, MemoryStore

START = 1_767_225_600.0  # 2026-01-01 00:00 UTC
DAY = 86_400.0
FIXTURE_DAYS = 30
TRANSIENT_ASK_P = 0.25
LASTING_QUESTIONS_PER_DAY = 8
ZIPF_S = 1.1
PROTECTED_EVERY_DAYS = 14
MAX_FILES = 200


def load_bench_recall() -> Any:
    """scripts/bench_recall.py as a module (its fixture and templates are reused here)."""
    path = Path(__file__).with_name("bench_recall.py")
    spec = importlib.util.spec_from_file_location("bench_recall", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_recall"] = module
    spec.loader.exec_module(module)
    return module


BR = load_bench_recall()


# --- the year's script (identical for both folders) ---------------------------------------------
@dataclass
class Arrival:
    """A memory written on a given day, and the questions that find it while it matters."""

    day: int
    memory: Any  # bench_recall.Memory
    questions: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Scenario:
    """The shape of the simulated year."""

    days: int = 360
    lasting_queries: int = 40  # fixed eval queries; their answers are the lasting memories
    idle: int = 20  # more fixture memories that nobody asks about
    per_day: float = 1.0  # short-lived memories written a day (on average)
    life_days: int = 14  # how long each is asked about
    usage: str = "model"  # what counts as a use: "model" (what helps) or "lexical" (all top 5)
    archive_recall: bool = True  # recall searches what gc archived (and restores what it uses)


@dataclass(frozen=True)
class Question:
    """A question asked in a session, and the memories that answer it."""

    text: str
    answers: frozenset[str]


@dataclass
class Year:
    """What happens each day: memories written, questions asked; plus the fixed eval queries."""

    arrivals: dict[int, list[Arrival]]
    questions: dict[int, list[Question]]
    eval_queries: list[Any]  # bench_recall.Query with relevant files
    scenario: Scenario


def build_year(seed: int, sc: Scenario) -> Year:
    """The deterministic script of a simulated year."""
    rng = random.Random(seed)
    fixture = BR.build_fixture(seed)
    answerable = [q for q in fixture.queries if q.relevant]
    eval_queries = rng.sample(answerable, min(sc.lasting_queries, len(answerable)))
    lasting = set().union(*(q.relevant for q in eval_queries))
    asked = set().union(*(q.relevant for q in answerable))
    idle = [m for m in fixture.memories if m.filename not in asked]
    chosen = [m for m in fixture.memories if m.filename in lasting]
    chosen += rng.sample(idle, min(sc.idle, len(idle)))
    rng.shuffle(chosen)
    arrivals: dict[int, list[Arrival]] = {}
    for i, memory in enumerate(chosen):  # the lasting memories arrive during the first month
        arrivals.setdefault(i * FIXTURE_DAYS // len(chosen), []).append(Arrival(0, memory))
    taken = {m.filename for m in fixture.memories}
    for day in range(sc.days):
        count = int(sc.per_day) + (rng.random() < sc.per_day % 1)
        extra = [transient(rng, taken) for _ in range(count)]
        if day % PROTECTED_EVERY_DAYS == PROTECTED_EVERY_DAYS - 1:
            extra.append(Arrival(0, protected_memory(rng, day)))
        arrivals.setdefault(day, []).extend(extra)
    for day, items in arrivals.items():
        for a in items:
            a.day = day
    questions = daily_questions(rng, sc, eval_queries, arrivals)
    return Year(arrivals, questions, eval_queries, sc)


def transient(rng: random.Random, taken: set[str]) -> Arrival:
    """A short-lived memory about a made-up component, from a per-service template."""
    syl = BR._SYLLABLES.split()
    while True:
        comp = "".join(rng.choice(syl) for _ in range(rng.choice((2, 3))))
        key, type_, name, descs, body, why, how, qs = rng.choice(BR.SERVICE_TOPICS)
        if f"{comp}-{key}.md" not in taken:
            break
    taken.add(f"{comp}-{key}.md")
    fill = {
        "s": comp,
        "S": comp.capitalize(),
        "U": comp.upper(),
        "team": rng.choice(("Core", "Edge", "Growth")),
        "limit": rng.choice((60, 120)),
    }
    # Corrections (feedback) are rare in real folders; a stream of them would all be protected.
    kind = "project" if type_ == "feedback" else type_
    memory = BR.Memory(
        f"{comp}-{key}.md",
        kind,
        name.format(**fill),
        rng.choice(descs).format(**fill),
        body.format(**fill),
        why.format(**fill),
        how.format(**fill),
    )
    return Arrival(0, memory, [q.format(**fill) for q in qs])


def protected_memory(rng: random.Random, day: int) -> Any:
    """A user or feedback memory (never archived automatically)."""
    tool = rng.choice(("uv", "ruff", "mypy", "pytest", "docker", "make", "tmux", "pnpm"))
    type_ = rng.choice(("user", "feedback"))
    text = f"Preference {day}: the user wants {tool} used with its defaults, no extra flags"
    return BR.Memory(
        f"pref-{day}-{tool}.md",
        type_,
        f"{tool} preference {day}",
        text,
        text,
        "said so" if type_ == "feedback" else "",
        "always" if type_ == "feedback" else "",
    )


def daily_questions(
    rng: random.Random, sc: Scenario, lasting: list[Any], arrivals: dict[int, list[Arrival]]
) -> dict[int, list[Question]]:
    """Questions per day: Zipf-popular lasting topics (once written), plus bursts about
    each short-lived memory in the weeks after it was written."""
    written = {a.memory.filename: day for day, items in arrivals.items() for a in items}
    ready = [max(written[f] for f in q.relevant) for q in lasting]
    order = list(range(len(lasting)))
    rng.shuffle(order)
    weight = {i: 1.0 / (rank + 1) ** ZIPF_S for rank, i in enumerate(order)}
    out: dict[int, list[Question]] = {}
    for day in range(sc.days):
        open_ = [i for i in order if ready[i] <= day]
        picks = rng.choices(open_, weights=[weight[i] for i in open_], k=LASTING_QUESTIONS_PER_DAY) if open_ else []
        out.setdefault(day, []).extend(Question(lasting[i].text, frozenset(lasting[i].relevant)) for i in picks)
    for day, items in arrivals.items():
        for a in items:
            for later in range(day, min(sc.days, day + sc.life_days)):
                if a.questions and rng.random() < TRANSIENT_ASK_P:
                    answer = frozenset({a.memory.filename})
                    out.setdefault(later, []).append(Question(rng.choice(a.questions), answer))
    return out


# --- one memory folder living through the year ---------------------------------------------------
class Clock:
    """The simulated time, moved by the simulation (one session a day at 09:00)."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@dataclass
class MonthRow:
    """One folder at the end of a month."""

    live: int
    lines: int
    bytes: int
    recall: float
    lasting_archived: int


class World:
    """A memory folder, its clock, its recall index, with or without automatic gc."""

    def __init__(self, root: Path, with_gc: bool, usage: str = "model", archive_recall: bool = True) -> None:
        self.usage = usage
        self.clock = Clock()
        self.store = MemoryStore(root, clock=self.clock)
        self.scanner = CandidateScanner(root)
        self.archive = ArchiveTier(self.store) if archive_recall else None
        self.with_gc = with_gc
        self.config = Config(cwd=root, project_root=root, settings={"memory": {"maxFiles": MAX_FILES}})
        self.max_lines = self.max_bytes = 0
        self.archived: set[str] = set()

    def day(self, day: int, arrivals: list[Arrival], questions: list[Question]) -> None:
        """One session: gc at its start, then the day's writes and questions."""
        self.clock.now = START + day * DAY + 9 * 3600
        if self.with_gc:
            self.archived |= {a.filename for a in maybe_auto_gc(self.store, self.config)}
        for a in arrivals:
            self.write(a.memory)
        self.scanner.scan()
        surfaced: list[str] = []
        for q in questions:
            chosen = self.select(q.text)
            # The default `model` strategy: the side model keeps, of the shortlist, what helps.
            if self.usage == "model":
                chosen = [f for f in chosen if self.original(f) in q.answers]
            for name in chosen:
                original = self.original(name)
                if not is_archived_name(name):
                    surfaced.append(name)
                elif self.archive and self.archive.bring_back(name, self.clock.now):
                    self.archived.discard(original)  # restoring counted as a use
                    self.scanner.scan()
        if surfaced:
            self.store.record_use(surfaced, when=self.clock.now)
        text = self.store.index_text()
        self.max_lines = max(self.max_lines, len(text.splitlines()))
        self.max_bytes = max(self.max_bytes, len(text.encode()))

    def write(self, m: Any) -> None:
        """Save a memory as extraction would, with the file time set to the simulated day."""
        path = self.store.write(
            m.filename,
            name=m.name,
            description=m.description,
            type=m.type,
            body=m.body,
            why=m.why or None,
            how_to_apply=m.how or None,
        )
        os.utime(path, (self.clock.now, self.clock.now))  # recall's recency prior reads mtimes

    def select(self, query: str) -> list[str]:
        """The lexical recall strategy's top 5 for `query` now (archived ones as archive/...)."""
        archive = self.archive.refresh() if self.archive else None
        return [f for f, _ in select_lexical(query, self.scanner.index, now=self.clock.now, archive=archive)]

    def original(self, name: str) -> str:
        """The memory's live filename, also for an `archive/...` name."""
        return self.archive.original(name) if self.archive else name

    def month_row(self, eval_queries: list[Any]) -> MonthRow:
        """The folder now, and recall@5 of the fixed queries (not counted as uses)."""
        self.scanner.scan()
        recalls = [
            len({self.original(f) for f in self.select(q.text)} & q.relevant) / len(q.relevant) for q in eval_queries
        ]
        text = self.store.index_text()
        lasting = set().union(*(q.relevant for q in eval_queries))
        return MonthRow(
            len(self.scanner.index),
            len(text.splitlines()),
            len(text.encode()),
            statistics.fmean(recalls),
            len(self.archived & lasting),
        )


# --- running and reporting -----------------------------------------------------------------------
def simulate(year: Year, root: Path, with_gc: bool, on_month: Callable[[int, MonthRow], None]) -> World:
    """Live through the year; `on_month` gets a row at the end of every 30 days."""
    world = World(root, with_gc, year.scenario.usage, year.scenario.archive_recall)
    for day in range(year.scenario.days):
        world.day(day, year.arrivals.get(day, []), year.questions.get(day, []))
        if (day + 1) % 30 == 0:
            on_month((day + 1) // 30, world.month_row(year.eval_queries))
    return world


def print_table(plain: list[MonthRow], gc: list[MonthRow]) -> None:
    """The month-by-month figures of both folders side by side."""
    print(
        f"{'month':>5} | {'live memories':>15} | {'MEMORY.md lines':>16} | "
        f"{'MEMORY.md bytes':>17} | {'recall@5':>15} | lasting archived"
    )
    print(
        f"{'':>5} | {'no gc':>7} {'gc':>7} | {'no gc':>7} {'gc':>8} | {'no gc':>8} {'gc':>8} | {'no gc':>7} {'gc':>7} |"
    )
    for month, (a, b) in enumerate(zip(plain, gc, strict=True), start=1):
        print(
            f"{month:>5} | {a.live:>7} {b.live:>7} | {a.lines:>7} {b.lines:>8} | "
            f"{a.bytes:>8,} {b.bytes:>8,} | {a.recall:>7.3f} {b.recall:>7.3f} | "
            f"{b.lasting_archived:>4}"
        )


def check_targets(plain: list[MonthRow], gc: list[MonthRow], world: World) -> bool:
    """The targets: the index within its limits every day; recall@5 not lower with gc
    (over the year; the worst single month is printed too)."""
    index_ok = world.max_lines <= INDEX_MAX_LINES and world.max_bytes <= INDEX_MAX_BYTES
    mean_plain = statistics.fmean(a.recall for a in plain)
    mean_gc = statistics.fmean(b.recall for b in gc)
    recall_ok = mean_gc >= mean_plain - 1e-9
    worst = min(b.recall - a.recall for a, b in zip(plain, gc, strict=True))
    print(
        f"\nIndex with gc, largest on any day: {world.max_lines} lines, {world.max_bytes:,} "
        f"bytes (limits {INDEX_MAX_LINES}, {INDEX_MAX_BYTES:,}): {'OK' if index_ok else 'MISSED'}"
    )
    print(
        f"recall@5 over the year: {mean_plain:.3f} without gc, {mean_gc:.3f} with gc: "
        f"{'OK' if recall_ok else 'MISSED'} (worst month: {worst:+.3f} with gc)"
    )
    return index_ok and recall_ok


def run(year: Year) -> tuple[list[MonthRow], list[MonthRow], World]:
    """Both folders through the same year, in a scratch folder (RAM-backed when possible)."""
    shm = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(prefix="bench-forget-", dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None))
    plain: list[MonthRow] = []
    with_gc: list[MonthRow] = []
    try:
        simulate(year, base / "plain", False, lambda m, row: plain.append(row))
        world = simulate(year, base / "gc", True, lambda m, row: with_gc.append(row))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return plain, with_gc, world


def summarise_seeds(sc: Scenario, seeds: int) -> int:
    """Robustness: the year's mean recall@5 with and without gc, and the worst month, per seed."""
    ok_all = True
    for seed in range(1, seeds + 1):
        plain, with_gc, world = run(build_year(seed, sc))
        a = statistics.fmean(r.recall for r in plain)
        b = statistics.fmean(r.recall for r in with_gc)
        worst = min(y.recall - x.recall for x, y in zip(plain, with_gc, strict=True))
        within = world.max_lines <= INDEX_MAX_LINES and world.max_bytes <= INDEX_MAX_BYTES
        ok_all &= within and b >= a - 1e-9
        print(
            f"seed {seed}: recall@5 {a:.3f} without gc, {b:.3f} with gc ({b - a:+.3f}; worst "
            f"month {worst:+.3f}); lasting answers archived {with_gc[-1].lasting_archived}; "
            f"index max {world.max_lines} lines, {world.max_bytes:,} bytes"
        )
    return 0 if ok_all else 1


def main(argv: list[str] | None = None) -> int:
    """Parse the scenario, run both folders, print the table and the targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1234, help="as bench_recall (default 1234)")
    parser.add_argument("--days", type=int, default=360, help="a multiple of 30 (default 360)")
    parser.add_argument(
        "--lasting",
        type=int,
        default=Scenario.lasting_queries,
        help="fixed eval queries, whose answers stay relevant (default 40)",
    )
    parser.add_argument(
        "--idle", type=int, default=Scenario.idle, help="fixture memories nobody asks about (default 20)"
    )
    parser.add_argument(
        "--per-day",
        type=float,
        default=Scenario.per_day,
        help="short-lived memories written a day, on average (default 1)",
    )
    parser.add_argument(
        "--life", type=int, default=Scenario.life_days, help="days each short-lived memory is asked about (default 14)"
    )
    parser.add_argument(
        "--usage",
        choices=("model", "lexical"),
        default=Scenario.usage,
        help="what recall records as a use (default model)",
    )
    parser.add_argument(
        "--live-only", action="store_true", help="recall searches live memories only, not what gc archived"
    )
    parser.add_argument(
        "--seeds", type=int, default=0, help="instead of the table, one summary line for each of seeds 1..N"
    )
    args = parser.parse_args(argv)
    sc = Scenario(args.days, args.lasting, args.idle, args.per_day, args.life, args.usage, not args.live_only)
    if args.seeds:
        return summarise_seeds(sc, args.seeds)
    year = build_year(args.seed, sc)
    n_written = sum(len(v) for v in year.arrivals.values())
    n_asked = sum(len(v) for v in year.questions.values())
    lasting = len(set().union(*(q.relevant for q in year.eval_queries)))
    print(
        f"Simulating {sc.days} days (seed {args.seed}): {n_written} memories written "
        f"({lasting} lasting answers, {sc.idle} never asked about, {sc.per_day} short-lived a "
        f"day asked about for {sc.life_days} days, a user/feedback one every "
        f"{PROTECTED_EVERY_DAYS} days); {n_asked} questions; {len(year.eval_queries)} fixed "
        "eval queries."
    )
    started = time.perf_counter()
    plain, with_gc, world = run(year)
    print_table(plain, with_gc)
    ok = check_targets(plain, with_gc, world)
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
