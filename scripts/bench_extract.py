"""Benchmark Layer 4's cost: extraction behind the gate, with batching, against
extraction after every turn, on one scripted 20-turn session.

    uv run python scripts/bench_extract.py

The same 20 turns run twice in-process against the fake Anthropic server (real SDK, real SSE,
its deterministic prompt-cache simulation), each time with a fresh home, repository and server:

  (a) every turn: `memory.extractGate: false`, the behaviour before the gate;
  (b) the gate and batching: the defaults (memory/extract/gate.py, memory/extract/).

The turns are what a working session holds: greetings, a listing, questions answered by
reading code, edits, a failing test made to pass, and four turns that state something a
later session needs (a preference, a correction, a deadline, a person). The main agent's
replies are scripted per turn and its tools really run in the temporary repository.

The extraction fork's replies are a function of the request it gets, the same in both modes:
it saves one memory for each durable statement (FACTS) found in the messages its prompt asks
it to consider and not yet in the manifest of existing memories, and answers "Nothing to save."
otherwise. So both modes save the same memories exactly when every durable statement reaches
some fork. After the last turn the session ends as the UIs end it (`schedule_final_run`, then
a bounded wait).

Prints, per mode: the main agent's cost, extraction's cost and its share of the main cost,
extraction runs and requests, and the memory files saved; for (b), what the gate said at each
turn. Target: (b) extraction cost <= 30% of main cost, and the same files as (a).
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_anthropic import FakeAnthropic, RecordedRequest, Reply  # noqa: E402

from claude_mini.base import paths  # noqa: E402
from claude_mini.config import load_config  # noqa: E402
from claude_mini.config.layers import merge  # noqa: E402
from claude_mini.llm.anthropic_client import AnthropicClient  # noqa: E402
from claude_mini.memory.store import INDEX_FILENAME, format_memory  # noqa: E402
from claude_mini.runtime import Runtime, build_runtime  # noqa: E402

TARGET_SHARE = 0.30
WAIT_SECONDS = 30.0

SERVER_PY = '''"""The HTTP server: routes requests to handlers, with retries on the database."""

from app.config import load_cfg
from app.retry import retry

PORT = 3000  # TODO: read from the config


def handle(request):
    """Route one request: /health, /orders, else 404."""
    if request.path == "/health":
        return 200, "ok"
    if request.path == "/orders":
        return 200, list_orders()
    return 404, "not found"


@retry(times=3)
def list_orders():
    """The open orders, from the database named by DATABASE_URL."""
    cfg = load_cfg()
    return query(cfg["database_url"], "select * from orders where open")


def query(url, sql):
    raise NotImplementedError("the database driver is injected in production")
'''


def _seam(port: int) -> str:
    """server.py's first PORT line to the second copy's first words: unique in the doubled file."""
    return SERVER_PY[SERVER_PY.index("PORT = 3000") :].replace("3000", str(port), 1) + '"""The HTTP server'


FILES = {
    "README.md": "# shop\n\nA small web shop: an HTTP server, a config loader, a cache and a CLI.\n",
    "app/__init__.py": "",
    "app/server.py": SERVER_PY * 2,
    "app/config.py": '''"""Configuration: environment variables over defaults."""

import os

DEFAULTS = {"database_url": "postgres://localhost/shop", "cache_ttl": 300}


def load_cfg():
    """The merged configuration: DATABASE_URL and CACHE_TTL override the defaults."""
    cfg = dict(DEFAULTS)
    if "DATABASE_URL" in os.environ:
        cfg["database_url"] = os.environ["DATABASE_URL"]
    if "CACHE_TTL" in os.environ:
        cfg["cache_ttl"] = int(os.environ["CACHE_TTL"])
    return cfg
''',
    "app/retry.py": '''"""A retry decorator with exponential back-off, for calls to flaky dependencies."""

import functools
import time


def retry(times=3, base=0.1):
    """Call the function up to `times` times, sleeping base, 2*base, ... between tries."""
    def wrap(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            for attempt in range(times):
                try:
                    return fn(*args, **kwargs)
                except Exception:
                    if attempt == times - 1:
                        raise
                    time.sleep(base * 2 ** attempt)
        return call
    return wrap
''',
    "app/cache.py": '''"""An in-process cache with a time to live (TODO: size limit)."""

import time


class Cache:
    """Values expire `ttl` seconds after they were set."""

    def __init__(self, ttl):
        self.ttl = ttl
        self.items = {}

    def get(self, key):
        value, expires = self.items.get(key, (None, 0))
        return value if expires > time.time() else None

    def set(self, key, value):
        self.items[key] = (value, time.time() + self.ttl)
'''
    * 2,
    "app/cli.py": '''"""Command line: `shop serve`."""

import argparse

from app.config import load_cfg


def main(argv=None):
    parser = argparse.ArgumentParser(prog="shop")
    parser.add_argument("command", choices=["serve"])
    args = parser.parse_args(argv)
    cfg = load_cfg()
    print(f"serving with {cfg['database_url']}")
''',
    "tests/test_app.py": """from app.server import handle


class Request:
    def __init__(self, path):
        self.path = path


def test_health():
    expected = 'OK'
    assert handle(Request("/health"))[1] == expected
""",
    "run_tests.sh": """if grep -q "expected = 'OK'" tests/test_app.py; then
  echo "FAILED tests/test_app.py::test_health - AssertionError: 'ok' != 'OK'"; echo "1 failed, 3 passed"; exit 1
fi
echo "4 passed"
""",
}


def tool(name: str, **input: Any) -> Reply:
    return Reply.tool(name, input)


def edit(path: str, old: str, new: str) -> Reply:
    return Reply.tool("Edit", {"file_path": path, "old_string": old, "new_string": new})


# (what the user types, the main agent's replies); the last reply of each turn is its answer.
TURNS: list[tuple[str, list[Reply]]] = [
    ("hello", [Reply.text("Hi! What are we working on today?")]),
    (
        "list files",
        [
            tool("Glob", pattern="**/*"),
            Reply.text("README.md, run_tests.sh, app/ (server, config, retry, cache, cli), tests/."),
        ],
    ),
    (
        "what does app/server.py do?",
        [
            tool("Read", file_path="app/server.py"),
            Reply.text("It routes /health and /orders; list_orders retries 3 times."),
        ],
    ),
    (
        "I prefer pytest fixtures over setUp methods; always write new tests that way",
        [Reply.text("Noted: new tests will use pytest fixtures.")],
    ),
    (
        "show me where the config is loaded",
        [
            tool("Grep", pattern="def load_cfg"),
            tool("Read", file_path="app/config.py"),
            Reply.text("app/config.py: load_cfg merges env vars over DEFAULTS."),
        ],
    ),
    (
        "add a --port flag to the CLI",
        [
            tool("Read", file_path="app/cli.py"),
            edit(
                "app/cli.py",
                '    parser.add_argument("command", choices=["serve"])\n',
                '    parser.add_argument("command", choices=["serve"])\n'
                '    parser.add_argument("--port", type=int, default=3000)\n',
            ),
            Reply.text("Added --port (default 3000)."),
        ],
    ),
    (
        "run the tests",
        [
            tool("Bash", command="sh run_tests.sh"),
            Reply.text("test_health fails: it expects 'OK' but the server answers 'ok'."),
        ],
    ),
    (
        "fix the failing test",
        [
            tool("Read", file_path="tests/test_app.py"),
            edit("tests/test_app.py", "expected = 'OK'", "expected = 'ok'"),
            tool("Bash", command="sh run_tests.sh"),
            Reply.text("Fixed: 4 passed."),
        ],
    ),
    (
        "no, that's wrong: the dev server listens on 8080, not 3000",
        [
            edit(
                "app/server.py",
                _seam(3000),
                _seam(8080),
            ),
            Reply.text("Changed the default port to 8080."),
        ],
    ),
    (
        "what does the retry decorator do?",
        [tool("Read", file_path="app/retry.py"), Reply.text("Up to 3 calls with exponential back-off from 0.1 s.")],
    ),
    ("thanks", [Reply.text("You're welcome.")]),
    (
        "where is the database url read?",
        [tool("Grep", pattern="DATABASE_URL"), Reply.text("In app/config.py, load_cfg; app/server.py uses it.")],
    ),
    (
        "the release freeze starts Friday, so the orders migration must be merged by Thursday",
        [Reply.text("Understood: merge by Thursday.")],
    ),
    (
        "rename load_cfg to load_config everywhere",
        [
            tool("Grep", pattern="load_cfg"),
            edit("app/config.py", "def load_cfg():", "def load_config():"),
            edit("app/cli.py", "from app.config import load_cfg\n", "from app.config import load_config\n"),
            edit("app/cli.py", "    cfg = load_cfg()\n", "    cfg = load_config()\n"),
            Reply.text("Renamed in app/config.py and app/cli.py."),
        ],
    ),
    ("run the tests again", [tool("Bash", command="sh run_tests.sh"), Reply.text("4 passed.")]),
    (
        "explain the cache module",
        [
            tool("Read", file_path="app/cache.py"),
            Reply.text("Cache keeps (value, expiry) pairs; get returns None after the TTL."),
        ],
    ),
    (
        "Dana owns the billing service; ask her before changing its API",
        [Reply.text("Got it: Dana reviews billing API changes.")],
    ),
    (
        "list the open TODOs",
        [tool("Grep", pattern="TODO"), Reply.text("Two: read the port from the config; a size limit for the cache.")],
    ),
    ("summarize what we changed today", [Reply.text("--port flag, test_health fixed, port 8080, load_config.")]),
    ("thanks, bye", [Reply.text("Bye!")]),
]


@dataclass(frozen=True)
class Fact:
    """A durable statement of the session, and the memory a good extraction saves for it."""

    said: str  # words of the user's turn that state it
    filename: str
    type: str
    description: str


FACTS = [
    Fact(
        "pytest fixtures over setUp",
        "feedback_test_style.md",
        "feedback",
        "write new tests with pytest fixtures, not setUp methods",
    ),
    Fact("listens on 8080, not 3000", "project_dev_port.md", "project", "the dev server listens on port 8080"),
    Fact(
        "release freeze starts Friday",
        "project_release_freeze.md",
        "project",
        "release freeze from Friday; the orders migration must be merged by Thursday",
    ),
    Fact(
        "Dana owns the billing service",
        "reference_billing_owner.md",
        "reference",
        "Dana owns the billing service: ask her before changing its API",
    ),
]
PROMPT_START = "You are now the memory extraction agent"


def extraction_reply(memdir: Path):
    """The fork's scripted model: a function of the request only (not of the mode)."""

    def reply(request: RecordedRequest) -> Reply:
        messages = request.body["messages"]
        last = messages[-1]["content"]
        if last[-1].get("type") == "tool_result":  # its writes are done
            return Reply.text("Saved.")
        prompt = last[-1]["text"]
        count = int(re.search(r"the last (\d+) messages", prompt).group(1))
        earlier = messages[:-1] if len(last) == 1 else messages  # the prompt may share a user message
        span = earlier[-count:]
        said = " ".join(
            block.get("text", "")
            for m in span
            if m["role"] == "user"
            for block in m["content"]
            if block.get("type") == "text" and not block["text"].startswith(PROMPT_START)
        )
        new = [f for f in FACTS if f.said in said and f.filename not in prompt]
        if not new:
            return Reply.text("Nothing to save.")
        return Reply.tools(
            [
                (
                    "Write",
                    {
                        "file_path": str(memdir / f.filename),
                        "content": format_memory(
                            name=f.filename[:-3], description=f.description, type=f.type, body=f.description + "."
                        ),
                    },
                )
                for f in new
            ]
        )

    return reply


def make_repo(root: Path) -> None:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)


@dataclass
class Outcome:
    """One mode's figures."""

    main_usd: float
    extract_usd: float
    runs: int
    requests: int
    saved: list[str]
    verdicts: list[str]

    @property
    def share(self) -> float:
        return self.extract_usd / self.main_usd if self.main_usd else 0.0


async def run_session(rt: Runtime, server: FakeAnthropic) -> list[str]:
    """The 20 turns, then the session's end as the UIs do it; what the extractor said per turn."""
    verdicts = []
    for text, replies in TURNS:
        for reply in replies:
            server.on(reply, purpose="main")
        async for _ in rt.agent.run(text):
            pass
        verdict = rt.extractor.last_verdict
        verdicts.append(
            f"{'run ' if verdict.ran else 'held'}  {text[:48]!r:<50} {verdict.reason}"
            if verdict
            else f"-     {text[:48]!r}"
        )
        await rt.extractor.wait(WAIT_SECONDS)
    ended = rt.extractor.schedule_final_run(rt.agent)
    verdicts.append(f"{'run ' if ended else 'none'}  (session end)")
    await rt.extractor.wait(WAIT_SECONDS)
    await rt.close()
    return verdicts


def measure(gate: bool) -> Outcome:
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropic() as server,
        mock.patch.dict(os.environ, {"CLAUDE_MINI_HOME": str(Path(tmp) / "home")}),
    ):
        repo = Path(tmp) / "repo"
        make_repo(repo)
        memdir = paths.memory_dir(repo)
        server.on(extraction_reply(memdir), purpose="extract", times=None)
        config = load_config(repo)
        config.settings = merge(config.settings, {"recall": {"strategy": "off"}, "memory": {"extractGate": gate}})
        rt = build_runtime(config, client=AnthropicClient(base_url=server.base_url, api_key="bench"))
        rt.policy.mode = "bypassPermissions"  # the scripted Bash and Edit calls run unasked
        verdicts = asyncio.run(run_session(rt, server))
        costs = rt.session.costs.by_purpose
        leftover = [
            r
            for r in server.requests_for("main")
            if r.reply is None or r.reply.kind == "text" and "(fake model)" in str(r.reply.blocks)
        ]
        if leftover:
            raise SystemExit(f"bench_extract: {len(leftover)} main requests got no scripted reply")
        saved = sorted(p.name for p in memdir.glob("*.md") if p.name != INDEX_FILENAME) if memdir.exists() else []
        return Outcome(
            costs["main"].cost_usd,
            costs["extract"].cost_usd if "extract" in costs else 0.0,
            rt.extractor.engine.runs,
            costs["extract"].requests if "extract" in costs else 0,
            saved,
            verdicts,
        )


def report(title: str, outcome: Outcome) -> None:
    print(f"\n{title}")
    print(f"  main cost        ${outcome.main_usd:.4f}")
    print(f"  extraction cost  ${outcome.extract_usd:.4f}  ({100 * outcome.share:.1f}% of main)")
    print(f"  extraction runs  {outcome.runs}  ({outcome.requests} requests)")
    print(f"  memories saved   {len(outcome.saved)}: {', '.join(outcome.saved) or '-'}")


def main() -> int:
    every = measure(gate=False)
    gated = measure(gate=True)
    print(
        f"Scripted session: {len(TURNS)} turns, {len(FACTS)} of them state something durable; "
        "prices: claude-sonnet-4-6, cache reads 0.1x, writes 1.25x"
    )
    report("(a) extraction after every turn (memory.extractGate: false)", every)
    report("(b) the gate and batching (defaults: memory.extractBatchTurns 5)", gated)
    print("\n(b) per turn: whether it started a run, and why")
    for line in gated.verdicts:
        print(f"  {line}")
    same = every.saved == gated.saved
    print(
        f"\nTarget: (b) extraction cost <= {100 * TARGET_SHARE:.0f}% of main cost: "
        f"{'met' if gated.share <= TARGET_SHARE else 'NOT met'} ({100 * gated.share:.1f}%)"
    )
    print(
        f"Target: the same memories saved in both modes: {'met' if same else 'NOT met'} "
        f"({len(gated.saved)} vs {len(every.saved)} files)"
    )
    return 0 if gated.share <= TARGET_SHARE and same and len(every.saved) == len(FACTS) else 1


if __name__ == "__main__":
    sys.exit(main())
