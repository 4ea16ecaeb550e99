"""Benchmark forgetting: a simulated year of memory use, with and without automatic gc.

    uv run python scripts/bench_forgetting.py [--seed N] [--days N]

Two memory folders live through the same year (an injected clock, one
session a day):

- memories arrive at a steady rate: bench_recall's fixture of realistic
  developer memories during the first month (the answers that stay relevant),
  then three short-lived memories a day about made-up components (written from
  the same per-service templates, so they compete for the same words), and a
  user or feedback memory every two weeks;
- usage is skewed as in real use: each day 8 questions about the lasting
  topics written so far, drawn with a Zipf(1.1) popularity (the tail is
  asked every few months), plus questions about each short-lived memory during the three weeks
  after it was written; recall is the `lexical` strategy
  (memory/lexical.select_lexical, top 5) and what it surfaces is recorded in
  the usage record, as recall does in a session;
- the gc folder runs `maybe_auto_gc` at every session start; the other never
  forgets.

Printed month by month: live memories, MEMORY.md lines and bytes, and
recall@5 of the fixture's fixed query set (whose answers stay relevant), for
both folders. Targets: the gc folder's index never exceeds 200 lines or 25,000
bytes (checked every day), and its recall@5 is never lower than without gc.
Exit status 1 when a target is missed.
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

from claude_mini.memory.forget import maybe_auto_gc
from claude_mini.memory.lexical import CandidateScanner, select_lexical
from claude_mini.memory.store import INDEX_MAX_BYTES, INDEX_MAX_LINES, MemoryStore

START = 1_767_225_600.0  # 2026-01-01 00:00 UTC
DAY = 86_400.0
FIXTURE_DAYS = 30
TRANSIENT_PER_DAY = 3
TRANSIENT_LIFE_DAYS = 21
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


class Config:
    """The two settings the simulation changes, shaped like claude_mini.config.Config.get."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.settings
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node


# --- the year's script (identical for both folders) ---------------------------------------------
@dataclass
class Arrival:
    """A memory written on a given day, and the questions that find it while it matters."""

    day: int
    memory: Any  # bench_recall.Memory
    questions: list[str] = field(default_factory=list)


@dataclass
class Year:
    """What happens each day: memories written, questions asked; plus the fixed eval queries."""

    arrivals: dict[int, list[Arrival]]
    questions: dict[int, list[str]]
    eval_queries: list[Any]  # bench_recall.Query with relevant files


def build_year(seed: int, days: int) -> Year:
    """The deterministic script of a simulated year."""
    rng = random.Random(seed)
    fixture = BR.build_fixture(seed)
    arrivals: dict[int, list[Arrival]] = {}
    for i, memory in enumerate(fixture.memories):  # the lasting memories, first month
        arrivals.setdefault(i * FIXTURE_DAYS // len(fixture.memories), []).append(
            Arrival(0, memory))
    taken = {m.filename for m in fixture.memories}
    for day in range(days):
        extra = [transient(rng, taken) for _ in range(TRANSIENT_PER_DAY)]
        if day % PROTECTED_EVERY_DAYS == PROTECTED_EVERY_DAYS - 1:
            extra.append(Arrival(0, protected_memory(rng, day)))
        arrivals.setdefault(day, []).extend(extra)
    for day, items in arrivals.items():
        for a in items:
            a.day = day
    eval_queries = [q for q in fixture.queries if q.relevant]
    questions = daily_questions(rng, days, eval_queries, arrivals)
    return Year(arrivals, questions, eval_queries)


def transient(rng: random.Random, taken: set[str]) -> Arrival:
    """A short-lived memory about a made-up component, from a per-service template."""
    syl = BR._SYLLABLES.split()
    while True:
        comp = "".join(rng.choice(syl) for _ in range(rng.choice((2, 3))))
        key, type_, name, descs, body, why, how, qs = rng.choice(BR.SERVICE_TOPICS)
        if f"{comp}-{key}.md" not in taken:
            break
    taken.add(f"{comp}-{key}.md")
    fill = {"s": comp, "S": comp.capitalize(), "U": comp.upper(),
            "team": rng.choice(("Core", "Edge", "Growth")), "limit": rng.choice((60, 120))}
    # Corrections (feedback) are rare in real folders; a stream of them would all be protected.
    kind = "project" if type_ == "feedback" else type_
    memory = BR.Memory(f"{comp}-{key}.md", kind, name.format(**fill),
                       rng.choice(descs).format(**fill), body.format(**fill),
                       why.format(**fill), how.format(**fill))
    return Arrival(0, memory, [q.format(**fill) for q in qs])


def protected_memory(rng: random.Random, day: int) -> Any:
    """A user or feedback memory (never archived automatically)."""
    tool = rng.choice(("uv", "ruff", "mypy", "pytest", "docker", "make", "tmux", "pnpm"))
    type_ = rng.choice(("user", "feedback"))
    text = f"Preference {day}: the user wants {tool} used with its defaults, no extra flags"
    return BR.Memory(f"pref-{day}-{tool}.md", type_, f"{tool} preference {day}", text, text,
                     "said so" if type_ == "feedback" else "", "always" if type_ == "feedback" else "")


def daily_questions(rng: random.Random, days: int, lasting: list[Any],
                    arrivals: dict[int, list[Arrival]]) -> dict[int, list[str]]:
    """Questions per day: Zipf-popular lasting topics (once written), plus bursts about
    each short-lived memory in the weeks after it was written."""
    written = {a.memory.filename: day for day, items in arrivals.items() for a in items}
    ready = [max(written[f] for f in q.relevant) for q in lasting]
    order = list(range(len(lasting)))
    rng.shuffle(order)
    weight = {i: 1.0 / (rank + 1) ** ZIPF_S for rank, i in enumerate(order)}
    out: dict[int, list[str]] = {}
    for day in range(days):
        open_ = [i for i in order if ready[i] <= day]
        picks = rng.choices(open_, weights=[weight[i] for i in open_],
                            k=LASTING_QUESTIONS_PER_DAY) if open_ else []
        out.setdefault(day, []).extend(lasting[i].text for i in picks)
    for day, items in arrivals.items():
        for a in items:
            for later in range(day, min(days, day + TRANSIENT_LIFE_DAYS)):
                if a.questions and rng.random() < TRANSIENT_ASK_P:
                    out.setdefault(later, []).append(rng.choice(a.questions))
    return out


# --- one memory folder living through the year ---------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@dataclass
class MonthRow:
    live: int
    lines: int
    bytes: int
    recall: float
    lasting_archived: int


class World:
    """A memory folder, its clock, its recall index, with or without automatic gc."""

    def __init__(self, root: Path, with_gc: bool) -> None:
        self.clock = Clock()
        self.store = MemoryStore(root, clock=self.clock)
        self.scanner = CandidateScanner(root)
        self.with_gc = with_gc
        self.config = Config({"memory": {"maxFiles": MAX_FILES}})
        self.max_lines = self.max_bytes = 0
        self.archived: set[str] = set()

    def day(self, day: int, arrivals: list[Arrival], questions: list[str]) -> None:
        """One session: gc at its start, then the day's writes and questions."""
        self.clock.now = START + day * DAY + 9 * 3600
        if self.with_gc:
            self.archived |= {a.filename for a in maybe_auto_gc(self.store, self.config)}
        for a in arrivals:
            self.write(a.memory)
        self.scanner.scan()
        surfaced: list[str] = []
        for q in questions:
            surfaced += self.select(q)
        if surfaced:
            self.store.record_use(surfaced, when=self.clock.now)
        text = self.store.index_text()
        self.max_lines = max(self.max_lines, len(text.splitlines()))
        self.max_bytes = max(self.max_bytes, len(text.encode()))

    def write(self, m: Any) -> None:
        path = self.store.write(m.filename, name=m.name, description=m.description, type=m.type,
                                body=m.body, why=m.why or None, how_to_apply=m.how or None)
        os.utime(path, (self.clock.now, self.clock.now))  # recall's recency prior reads mtimes

    def select(self, query: str) -> list[str]:
        return [f for f, _ in select_lexical(query, self.scanner.index, now=self.clock.now)]

    def month_row(self, eval_queries: list[Any]) -> MonthRow:
        """The folder now, and recall@5 of the fixed queries (not counted as uses)."""
        self.scanner.scan()
        recalls = [len(set(self.select(q.text)[:5]) & q.relevant) / len(q.relevant)
                   for q in eval_queries]
        text = self.store.index_text()
        lasting = set().union(*(q.relevant for q in eval_queries))
        return MonthRow(len(self.scanner.index), len(text.splitlines()), len(text.encode()),
                        statistics.fmean(recalls), len(self.archived & lasting))


# --- running and reporting -----------------------------------------------------------------------
def simulate(year: Year, days: int, root: Path, with_gc: bool,
             on_month: Callable[[int, MonthRow], None]) -> World:
    """Live through `days` days; `on_month` gets a row at the end of every 30 days."""
    world = World(root, with_gc)
    for day in range(days):
        world.day(day, year.arrivals.get(day, []), year.questions.get(day, []))
        if (day + 1) % 30 == 0:
            on_month((day + 1) // 30, world.month_row(year.eval_queries))
    return world


def print_table(plain: list[MonthRow], gc: list[MonthRow]) -> None:
    print(f"{'month':>5} | {'live memories':>15} | {'MEMORY.md lines':>16} | "
          f"{'MEMORY.md bytes':>17} | {'recall@5':>15} | lasting archived")
    print(f"{'':>5} | {'no gc':>7} {'gc':>7} | {'no gc':>7} {'gc':>8} | {'no gc':>8} {'gc':>8} | "
          f"{'no gc':>7} {'gc':>7} |")
    for month, (a, b) in enumerate(zip(plain, gc, strict=True), start=1):
        print(f"{month:>5} | {a.live:>7} {b.live:>7} | {a.lines:>7} {b.lines:>8} | "
              f"{a.bytes:>8,} {b.bytes:>8,} | {a.recall:>7.3f} {b.recall:>7.3f} | "
              f"{b.lasting_archived:>4}")


def check_targets(plain: list[MonthRow], gc: list[MonthRow], world: World) -> bool:
    index_ok = world.max_lines <= INDEX_MAX_LINES and world.max_bytes <= INDEX_MAX_BYTES
    recall_ok = all(b.recall >= a.recall - 1e-9 for a, b in zip(plain, gc, strict=True))
    print(f"\nIndex with gc, largest on any day: {world.max_lines} lines, {world.max_bytes:,} "
          f"bytes (limits {INDEX_MAX_LINES}, {INDEX_MAX_BYTES:,}): {'OK' if index_ok else 'MISSED'}")
    mean = statistics.fmean
    print(f"recall@5 over the year: {mean(a.recall for a in plain):.3f} without gc, "
          f"{mean(b.recall for b in gc):.3f} with gc; never lower with gc: "
          f"{'OK' if recall_ok else 'MISSED'}")
    return index_ok and recall_ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--days", type=int, default=360, help="multiple of 30 (default 360)")
    args = parser.parse_args(argv)
    year = build_year(args.seed, args.days)
    n_written = sum(len(v) for v in year.arrivals.values())
    n_asked = sum(len(v) for v in year.questions.values())
    print(f"Simulating {args.days} days: {n_written} memories written, {n_asked} questions, "
          f"{len(year.eval_queries)} fixed eval queries (seed {args.seed}).")
    shm = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(prefix="bench-forget-",
                                 dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None))
    started = time.perf_counter()
    try:
        plain: list[MonthRow] = []
        gc_rows: list[MonthRow] = []
        simulate(year, args.days, base / "plain", False, lambda m, row: plain.append(row))
        world = simulate(year, args.days, base / "gc", True, lambda m, row: gc_rows.append(row))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print_table(plain, gc_rows)
    ok = check_targets(plain, gc_rows, world)
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
