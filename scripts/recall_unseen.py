"""The outsiders' recall fixtures and the end-to-end harness of scripts/bench_recall.py.

`fixtures/recall_unseen.json` was written by hand for this benchmark by someone who had
not read the recall code: 202 memories of one developer (13 of them replaced by a later
correction, 6 written in Chinese) and 134 queries of seven kinds (lexical, meaning-only,
superseded, multi-topic, no-answer, Chinese, mixed Chinese/English). Its figures have been
seen for a while, and the lexical cut and the fusion rule were chosen on it and on
bench_recall's generated fixture. `fixtures/recall_heldout.json` (same shape, a second
outsider) is the held-out one: `load_unseen(path)` reads it, and no constant is chosen on it.

`run_turns` drives the real agent loop (build_runtime, the real anthropic SDK) against
the loopback fake server, one fresh conversation per query, and reads back which
recalled memories were in the conversation when the model answered. The fake plays
both models with a fixed latency:

- the side model is an oracle over the manifest it is sent: it picks exactly the
  relevant files that are offered (none for a no-answer query). So the figures measure
  what the plumbing lets reach the model (the shortlist, the local pass, the timing),
  not a real model's judgement. Asked for English keywords for a request in Chinese
  (recall's bridge, above 400 files), it answers with the words of a translation that
  a bilingual engineer who never saw the memories wrote for the fixture;
- the main model answers a turn either with one tool call (Read) then text, or with
  text at once (no tool-result boundary).
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_mini.memory.store import format_memory

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "recall_unseen.json"
NOW = float(int(time.time()))  # ages are relative to the run, as the e2e harness reads the clock
DAY = 86_400.0
KINDS = ("lexical", "meaning", "superseded", "multi", "none", "chinese", "german", "spanish", "mixed")
_REQUEST = re.compile(r"<request>\n(.*?)\n</request>", re.DOTALL)
_MANIFEST_FILE = re.compile(r"^- \[[^\]]*\] (\S+\.md) \(", re.MULTILINE)


@dataclass
class UnseenMemory:
    file: str
    type: str
    name: str
    description: str
    body: str
    age_days: float
    supersedes: str | None = None
    superseded_by: str | None = None

    @property
    def mtime(self) -> float:
        return NOW - self.age_days * DAY

    def text(self) -> str:
        """The file as claude-mini writes it; a correction and what it replaced are linked
        both ways, as `memory add --supersedes` and extraction leave them."""
        extra: dict[str, Any] = {}
        if self.supersedes:
            extra["supersedes"] = self.supersedes
        if self.superseded_by:
            extra["superseded_by"] = self.superseded_by
        return format_memory(
            name=self.name,
            description=self.description,
            type=self.type,
            body=self.body,
            extra_frontmatter=extra or None,
        )


@dataclass
class UnseenQuery:
    text: str
    relevant: set[str]
    kind: str
    english: str = ""  # for a query in Chinese: a translation by someone who never saw the memories


@dataclass
class Unseen:
    memories: list[UnseenMemory]
    queries: list[UnseenQuery]


def load_unseen(path: Path = FIXTURE) -> Unseen:
    data = json.loads(path.read_text(encoding="utf-8"))
    memories = [
        UnseenMemory(
            m["file"], m["type"], m["name"], m["description"], m["body"], float(m["age_days"]), m.get("supersedes")
        )
        for m in data["memories"]
    ]
    by_file = {m.file: m for m in memories}
    for m in memories:
        if m.supersedes:
            by_file[m.supersedes].superseded_by = m.file
    queries = [UnseenQuery(q["text"], set(q["relevant"]), q["kind"], q.get("english", "")) for q in data["queries"]]
    return Unseen(memories, queries)


def write_memories(root: Path, memories: Iterable[Any]) -> None:
    """Write topic files (anything with filename-or-file, text() and mtime) and a MEMORY.md;
    for both benchmark fixtures."""
    import os

    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for m in memories:
        name = getattr(m, "file", None) or m.filename
        path = root / name
        path.write_text(m.text(), encoding="utf-8")
        os.utime(path, (m.mtime, m.mtime))
        lines.append(f"- [{m.name}]({name}) — {m.description[:80]}\n")
    (root / "MEMORY.md").write_text("".join(lines), encoding="utf-8")


# --- scoring -------------------------------------------------------------------------
@dataclass
class Scores:
    recalls: list[float] = field(default_factory=list)
    precisions: list[float] = field(default_factory=list)
    none_total: int = 0
    none_empty: int = 0

    def add(self, chosen: list[str], relevant: set[str]) -> None:
        chosen = chosen[:5]
        hits = len(set(chosen) & relevant)
        if not relevant:
            self.none_total += 1
            self.none_empty += not chosen
            if chosen:
                self.precisions.append(0.0)
            return
        self.recalls.append(hits / len(relevant))
        if chosen:
            self.precisions.append(hits / len(chosen))

    def line(self) -> str:
        recall = statistics.fmean(self.recalls) if self.recalls else float("nan")
        precision = statistics.fmean(self.precisions) if self.precisions else float("nan")
        abstain = f"{self.none_empty}/{self.none_total}" if self.none_total else "-"
        return f"recall@5 {recall:.2f}  precision@5 {precision:.2f}  no-answer empty {abstain}"


def score(queries: list[UnseenQuery], chosen: list[list[str]]) -> dict[str, Scores]:
    """Scores overall ("all") and per kind."""
    out: dict[str, Scores] = {"all": Scores()}
    for query, picks in zip(queries, chosen, strict=True):
        out["all"].add(picks, query.relevant)
        out.setdefault(query.kind, Scores()).add(picks, query.relevant)
    return out


def print_scores(title: str, scores: dict[str, Scores], *, kinds: bool = True) -> None:
    print(f"  {title:<34} {scores['all'].line()}")
    if kinds:
        for kind in KINDS:
            if kind in scores:
                print(f"      {kind:<30} {scores[kind].line()}")


# --- the end-to-end harness ----------------------------------------------------------
def oracle_server(queries: list[UnseenQuery], latency: float, tools: bool) -> Any:
    """The loopback fake, answering as described in the module docstring."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from fake_anthropic import FakeAnthropic, Reply

    gold = {" ".join(q.text.split()): q.relevant for q in queries}
    english = {" ".join(q.text.split()): q.english for q in queries}

    class Oracle(FakeAnthropic):
        def _choose(self, request: Any) -> Any:
            if request.purpose == "recall":
                prompt = request.body["messages"][0]["content"][0]["text"]
                match = _REQUEST.search(prompt)
                query = " ".join(match.group(1).split()) if match else ""
                if "keywords" in json.dumps(request.body.get("output_config", {})):
                    words = english.get(query, "").split()
                    return Reply.json({"keywords": words}).slow_first_byte(latency)
                offered = _MANIFEST_FILE.findall(prompt)
                relevant = gold.get(query, set())
                picks = [f for f in offered if f.removeprefix("archive/") in relevant][:5]
                return Reply.json({"selected_memories": picks}).slow_first_byte(latency)
            if request.purpose != "main":
                return Reply.text("Nothing to save.")
            last = request.body["messages"][-1]["content"]
            answered = any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last)
            if tools and not answered:
                return Reply.tool("Read", {"file_path": "README.md"}).slow_first_byte(latency)
            return Reply.text("Done.").slow_first_byte(latency)

    return Oracle()


@dataclass
class TurnResult:
    reached: list[str]
    seconds: float


async def _worker(
    runtime: Any, jobs: list[tuple[int, UnseenQuery]], results: dict[int, TurnResult], typing_lead: float | None
) -> None:
    from claude_mini.memory.recall.part import RecallPart
    from claude_mini.memory.recall.selection import recalls_in_context

    hook = runtime.lifecycle.find(RecallPart)
    for index, query in jobs:
        runtime.session.messages.clear()
        hook.reset_budget()
        if typing_lead is not None:  # the REPL: a pause in typing, then Enter `typing_lead` later
            hook.prefetch_draft(runtime.agent, query.text)
            await asyncio.sleep(typing_lead)
            hook.settle_draft(query.text)
        start = time.perf_counter()
        async for _ in runtime.agent.run(query.text):
            pass
        reached = list(recalls_in_context(runtime.session.messages))
        results[index] = TurnResult(reached, time.perf_counter() - start)


def run_turns(
    workdir: Path,
    queries: list[UnseenQuery],
    *,
    latency: float,
    tools: bool,
    typing_lead: float | None = None,
    workers: int = 8,
    settings: dict[str, Any] | None = None,
) -> list[TurnResult]:
    """Each query as the first turn of a conversation in `workdir` (its memory folder is
    `paths.memory_dir(workdir)` under $CLAUDE_MINI_HOME); what reached the model, in order."""
    from claude_mini.agent.lifecycle import Lifecycle
    from claude_mini.config import load_config
    from claude_mini.llm.anthropic_client import AnthropicClient
    from claude_mini.memory.extract.part import Extractor
    from claude_mini.runtime import build_runtime

    (workdir / ".claude").mkdir(parents=True, exist_ok=True)
    (workdir / "README.md").write_text("# demo\n")
    (workdir / ".claude" / "settings.json").write_text(json.dumps(settings or {}))
    results: dict[int, TurnResult] = {}

    async def go(server: Any) -> None:
        runtimes = []
        for _ in range(workers):
            config = load_config(workdir)
            client = AnthropicClient(base_url=server.base_url, api_key="bench", max_retries=0)
            rt = build_runtime(config, client=client)
            rt.agent.lifecycle = Lifecycle(h for h in rt.lifecycle.parts if not isinstance(h, Extractor))
            runtimes.append(rt)
        jobs = list(enumerate(queries))
        try:
            await asyncio.gather(
                *(_worker(rt, jobs[i::workers], results, typing_lead) for i, rt in enumerate(runtimes))
            )
        finally:
            for rt in runtimes:
                await rt.client.aclose()

    with oracle_server(queries, latency, tools) as server:
        asyncio.run(go(server))
    return [results[i] for i in range(len(queries))]


def reached_names(results: list[TurnResult]) -> list[list[str]]:
    return [r.reached for r in results]


def mean_seconds(results: list[TurnResult]) -> float:
    return statistics.fmean(r.seconds for r in results)


Select = Callable[[str], list[str]]
