"""Benchmark Layer 4's cache sharing (issue 5): how much of the extraction fork's input is read
from the prompt cache the main agent already paid for.

Runs a scripted 10-turn session in-process against the fake Anthropic server
(real SDK, real SSE, its deterministic prompt-cache simulation): each turn the
main agent reads a source file and answers; after each turn the extraction fork
runs, saving a memory on some turns (read, then write, then a last line). Prints
per turn the extraction requests' input tokens and the share read from cache,
then the total over every extraction request after the first. Target: >= 90%.

For contrast it runs the same session with a fork that sends its own, smaller
tool list (what "restricting the fork by removing tools" would cost).

    uv run python scripts/bench_cache.py [--turns N]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_anthropic import FakeAnthropic, Reply  # noqa: E402

from claude_mini import paths  # noqa: E402
from claude_mini.agent.fork import Fork  # noqa: E402
from claude_mini.config import load_config, merge  # noqa: E402
from claude_mini.llm.client import AnthropicClient  # noqa: E402
from claude_mini.memory.store import format_memory  # noqa: E402
from claude_mini.runtime import build_runtime  # noqa: E402

SAVE_ON = {2, 5, 8}
SOURCE = '''\
"""Module {i}: part of the demo service."""

import logging

log = logging.getLogger(__name__)


def handler_{i}(request):
    """Handle one request of kind {i}: validate, transform, store."""
    if not request.get("id"):
        raise ValueError("request {i} needs an id")
    payload = {{k: v for k, v in request.items() if k != "secret"}}
    log.info("handling %s", payload["id"])
    return {{"ok": True, "kind": {i}, "payload": payload}}
'''


def make_repo(root: Path, turns: int) -> None:
    """A git repository with one source file per turn."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for i in range(1, turns + 1):
        (root / f"module_{i}.py").write_text(SOURCE.format(i=i) * 3)


def script(server: FakeAnthropic, memdir: Path, turns: int) -> None:
    """Main replies (read a file, answer) and extraction replies (save on some turns)."""
    for i in range(1, turns + 1):
        server.on(Reply.tool("Read", {"file_path": f"module_{i}.py"}), purpose="main")
        server.on(Reply.text(f"module_{i}.py validates, transforms and stores requests."), purpose="main")
        if i not in SAVE_ON:
            server.on(Reply.text("Nothing to save."), purpose="extract")
            continue
        memory = format_memory(name=f"Convention {i}", description=f"how handlers of kind {i} are written",
                               type="project", body=f"Handlers of kind {i} drop the `secret` field.",
                               why="privacy review", how_to_apply="every new handler")
        server.on(Reply.tool("Read", {"file_path": str(memdir / "MEMORY.md")}), purpose="extract")
        server.on(Reply.tool("Write", {"file_path": str(memdir / f"project_kind_{i}.md"),
                                       "content": memory}), purpose="extract")
        server.on(Reply.text("Saved one memory."), purpose="extract")


async def run_session(repo: Path, server: FakeAnthropic, turns: int) -> None:
    config = load_config(repo)
    config.settings = merge(config.settings, {"recall": {"strategy": "off"}})
    rt = build_runtime(config, client=AnthropicClient(base_url=server.base_url, api_key="bench"))
    for i in range(1, turns + 1):
        async for _ in rt.agent.run(f"Explain what module_{i}.py does; remember conventions you see."):
            pass
        await rt.extractor.wait(30)
    await rt.client.aclose()


def measure(turns: int, fork_tools: int | None = None) -> list[list[dict[str, int]]]:
    """Usage of each extraction request, grouped by turn (a fresh home, repo and server)."""
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as server, \
            mock.patch.dict(os.environ, {"CLAUDE_MINI_HOME": str(Path(tmp) / "home")}):
        repo = Path(tmp) / "repo"
        make_repo(repo, turns)
        script(server, paths.memory_dir(repo), turns)
        patch = mock.patch.object(Fork, "request", _trimmed_request(fork_tools)) if fork_tools else None
        with patch or _nothing():
            asyncio.run(run_session(repo, server, turns))
        by_turn: list[list[dict[str, int]]] = []
        for request in server.requests:
            if request.purpose == "main" and request.body["messages"][-1]["role"] == "user" \
                    and isinstance(request.body["messages"][-1]["content"][0].get("text"), str):
                by_turn.append([])
            elif request.purpose == "extract" and request.usage:
                by_turn[-1].append(request.usage)
        return by_turn


def _trimmed_request(keep: int):
    original = Fork.request

    def request(self):
        req = original(self)
        return replace(req, tools=req.tools[:keep])

    return request


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def total_input(usage: dict[str, int]) -> int:
    return usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]


def share(usages: list[dict[str, int]]) -> float:
    total = sum(total_input(u) for u in usages)
    return 100.0 * sum(u["cache_read_input_tokens"] for u in usages) / total if total else 0.0


def report(title: str, by_turn: list[list[dict[str, int]]]) -> float:
    print(f"\n{title}")
    print(f"{'turn':>4}  {'requests':>8}  {'input tokens':>12}  {'from cache':>10}  {'share':>6}")
    for n, usages in enumerate(by_turn, start=1):
        read = sum(u["cache_read_input_tokens"] for u in usages)
        total = sum(total_input(u) for u in usages)
        print(f"{n:>4}  {len(usages):>8}  {total:>12,}  {read:>10,}  {share(usages):>5.1f}%")
    after_first = [u for usages in by_turn for u in usages][1:]
    figure = share(after_first)
    print(f"extraction requests after the first: {len(after_first)}, "
          f"{figure:.1f}% of their input tokens read from the cache")
    return figure


class _Count(logging.Handler):
    """Counts the cache guard's warnings instead of printing each one."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    guard = logging.getLogger("claude_mini.agent.fork")
    counter = _Count()
    guard.addHandler(counter)
    guard.propagate = False
    figure = report("Fork on the parent's exact prefix (claude_mini)", measure(args.turns))
    print(f"cache-prefix mismatches logged: {len(counter.messages)}")
    counter.messages.clear()
    report("Fork with its own tool list (Read, Write, Edit only): for contrast",
           measure(args.turns, fork_tools=3))
    first = counter.messages[0] if counter.messages else "none"
    print(f"cache-prefix mismatches logged: {len(counter.messages)}, e.g. {first}")
    print(f"\nTarget >= 90%: {'met' if figure >= 90 else 'NOT met'} ({figure:.1f}%)")
    return 0 if figure >= 90 else 1


if __name__ == "__main__":
    sys.exit(main())
