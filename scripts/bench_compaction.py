"""Benchmark compaction: what the model still knows in the first request after a
compaction, with the deterministic checkpoint beside the summary and without it.

Runs a scripted session of 40 turns in-process against the fake Anthropic server (real SDK,
real SSE): the fake model answers with Bash, Read, Write and Edit calls that really run in a
temporary git repository, so exit statuses and outputs are real. Known facts are planted at known
turns: the user's explicit instructions, identifiers (in the user's words and in a command's
output), commands that succeed, commands that fail and are never fixed ("failed approaches"),
commands that fail and later succeed (which must not be reported as failed), and files created,
edited and deleted. The conversation is compacted (`/compact`'s code path) after turn 20 and
after turn 40; one more turn follows each, and its first request is searched for every fact
planted before that compaction.

The fake model's summary is one fixed text that names none of the planted facts: the figures
are what survives without trusting a summary written by a model (one published study
found 0.2% of commands in such summaries). The same session runs twice, each with a fresh home,
repository and server: with the checkpoint, and with the checkpoint switched off (its hook
attaches nothing), so the two compare. Other things kept by a compaction count in both runs:
the user's latest request verbatim, the most recently read files, the active rules.

Prints, per compaction and per kind, how many of the facts were present, the checkpoint's size
(characters and estimated tokens) and the request's input tokens. Targets: 100% of
instructions and failed approaches, >= 90% of commands (the most recent N where cut), every
edited file.

    uv run python scripts/bench_compaction.py
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_anthropic import FakeAnthropic, Reply  # noqa: E402

from claude_mini.base.text import estimate_tokens  # noqa: E402
from claude_mini.config import load_config  # noqa: E402
from claude_mini.config.layers import merge  # noqa: E402
from claude_mini.llm.anthropic_client import AnthropicClient  # noqa: E402
from claude_mini.runtime import build_runtime  # noqa: E402

CHECKPOINT_HEADER = "Working state before this summary (taken from the conversation, not written by a model):"
SUMMARY = (
    "<summary>1. Primary request: the user is fixing the FX rates cache of a payments service and "
    "asked for tests and notes along the way. 5. Problem solving: the cache's expiry was fixed and "
    "tested; more work on the cache followed. 8. Current work: wrapping up the changes. "
    "9. Next step: continue with what the user asks next.</summary>"
)
COMPACT_AFTER = (20, 40)

# -- the repository the commands run in

RATES = '''\
"""FX rates with an in-process cache."""

import os
import time

# TODO: bound the cache size
_CACHE: dict[str, tuple[float, float]] = {}
TTL = int(os.environ.get("RATES_TTL", "60"))


def fetch_rates(pair, now=None):
    now = time.time() if now is None else now
    hit = _CACHE.get(pair)
    if hit:
        return hit[1]
    value = _load(pair)
    _CACHE[pair] = (now, value)
    return value


def _load(pair):
    return {"EURUSD": 1.08, "GBPUSD": 1.27}.get(pair, 1.0)
'''
CHECK_RATES = """\
import sys
sys.path.insert(0, ".")
import rates
rates._CACHE["EURUSD"] = (0.0, 0.5)
if rates.fetch_rates("EURUSD", now=10_000.0) != 1.08:
    sys.exit("check_rates: FAILED: a stale rate was served after its TTL")
print("check_rates: 1 passed")
"""
TEST_EXPIRY = """\
import sys
sys.path.insert(0, ".")
import rates
rates._CACHE.clear()
rates.fetch_rates("GBPUSD", now=0.0)
assert rates.fetch_rates("GBPUSD", now=1.0) == 1.27
print("test_expiry: 1 passed")
"""
TEST_SIZE = """\
import sys
sys.path.insert(0, ".")
import rates
rates._CACHE.clear()
for i in range(rates.CACHE_SIZE + 10):
    rates.fetch_rates(f"P{i}", now=0.0)
if len(rates._CACHE) > rates.CACHE_SIZE:
    sys.exit(f"test_size: FAILED: {len(rates._CACHE)} entries, limit {rates.CACHE_SIZE}")
print("test_size: 1 passed")
"""
SLOW_SUITE = 'import sys\nprint("slow_suite: 3 failed, 41 passed")\nsys.exit(1)\n'
REPO_FILES = {
    "rates.py": RATES,
    "tests/check_rates.py": CHECK_RATES,
    "tests/slow_suite.py": SLOW_SUITE,
    "migrations/0001_init.sql": "CREATE TABLE rates (pair TEXT PRIMARY KEY, value REAL);\n",
    "README.md": "# fx-service\n\nServes FX rates to the payments API.\n",
    "VERSION": "2.14.0-rc3\n",
    "notes.txt": "scratch\n",
}


def make_repo(root: Path) -> None:
    """A git repository with the service, its checks and one commit."""
    for name, text in REPO_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for args in (
        ["init", "-q"],
        ["config", "user.email", "bench@example.com"],
        ["config", "user.name", "bench"],
        ["add", "-A"],
        ["commit", "-q", "-m", "initial"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True)


# -- the scripted session


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return "Bash", {"command": command, "description": command.split()[0]}


def edit(path: str, old: str, new: str) -> tuple[str, dict[str, Any]]:
    return "Edit", {"file_path": path, "old_string": old, "new_string": new}


def write(path: str, content: str) -> tuple[str, dict[str, Any]]:
    return "Write", {"file_path": path, "content": content}


def read(path: str) -> tuple[str, dict[str, Any]]:
    return "Read", {"file_path": path}


@dataclass
class Turn:
    """One user message, the tool calls the fake model answers it with, and its last text."""

    prompt: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    answer: str = "Done."
    instructions: tuple[str, ...] = ()  # explicit instructions in the prompt (checked verbatim)
    identifiers: tuple[str, ...] = ()  # identifiers in the prompt or in a command's output


CHECK = "python3 tests/check_rates.py -x"
JSON_CHECK = "python3 -c 'import json; json.load(open(\"config.json\"))'"
TURNS: list[Turn] = [
    Turn(
        "We are on ticket PAY-4412: the FX rates cache in rates.py serves stale values. Look around first.",
        [bash("ls tests"), bash("git status --short")],
        "A small service: rates.py, tests/, migrations/.",
        identifiers=("PAY-4412",),
    ),
    Turn(
        "Always run tests with -x. Run the rates check now.",
        [bash(CHECK)],
        "It fails: a stale rate is served after its TTL.",
        instructions=("Always run tests with -x",),
    ),
    Turn(
        "Read rates.py and tell me what fetch_rates does.",
        [read("rates.py")],
        "It returns a cached value forever once it is cached.",
    ),
    Turn(
        "Never touch migrations/, whatever the fix needs.", [], "Understood.", instructions=("Never touch migrations/",)
    ),
    Turn(
        "Try clearing the cache with the helper script first.",
        [bash("python3 scripts/clear_cache.py")],
        "There is no such script.",
    ),
    Turn(
        "Fix the TTL check; the setting is called RATES_TTL_SECONDS.",
        [
            edit("rates.py", '"RATES_TTL"', '"RATES_TTL_SECONDS"'),
            edit("rates.py", "    if hit:\n", "    if hit and now - hit[0] < TTL:\n"),
            bash(CHECK),
        ],
        "Fixed; the check passes now.",
        identifiers=("RATES_TTL_SECONDS",),
    ),
    Turn(
        "Add a test for expiry.",
        [write("tests/test_expiry.py", TEST_EXPIRY), bash("python3 tests/test_expiry.py -x")],
        "Added; it passes.",
    ),
    Turn("Check the style of rates.py.", [bash("python3 -m flake8 rates.py")], "flake8 is not installed."),
    Turn(
        "Use the branch fx-rates-cache for this work.",
        [bash("git checkout -q -b fx-rates-cache")],
        "On fx-rates-cache now.",
        identifiers=("fx-rates-cache",),
    ),
    Turn("Commit what we have.", [bash("git add -A && git commit -q -m 'PAY-4412: honour the TTL'")], "Committed."),
    Turn("How long is the module now?", [bash("wc -l rates.py")], "About 25 lines."),
    Turn("Try the old benchmark runner.", [bash("python3 bench/run.py --fast")], "bench/run.py does not exist."),
    Turn(
        "Start a CHANGELOG.",
        [write("CHANGELOG.md", "# Changelog\n\n## Unreleased\n- The rates cache expires.\n")],
        "Written.",
    ),
    Turn(
        "Give fetch_rates a docstring.",
        [
            edit(
                "rates.py",
                "def fetch_rates(pair, now=None):\n",
                'def fetch_rates(pair, now=None):\n    """The rate for `pair`, from the cache while fresh."""\n',
            )
        ],
        "Done.",
    ),
    Turn("Run the tests again.", [bash(CHECK), bash("python3 tests/test_expiry.py -x")], "Both pass."),
    Turn(
        "The reviewer is @mkowalski; mention the ENABLE_FX_CACHE flag in the README.",
        [
            read("README.md"),
            edit("README.md", "payments API.\n", "payments API.\n\nSet ENABLE_FX_CACHE=1 to turn the cache on.\n"),
        ],
        "The README mentions it.",
        identifiers=("@mkowalski", "ENABLE_FX_CACHE"),
    ),
    Turn(
        "Does the JSON config parse?",
        [bash(JSON_CHECK), write("config.json", '{"ttl_seconds": 60}\n'), bash(JSON_CHECK)],
        "There was none; I wrote config.json and it parses.",
    ),
    Turn("Look for TODOs in the code.", [bash("grep -rn TODO --include=*.py .")], "One, about the cache size."),
    Turn("Try running the integration suite.", [bash("python3 tests/integration.py")], "There is no such suite."),
    Turn("Where are we? A short answer.", [], "The expiry is fixed and tested; the cache size is next."),
    # -- compaction 1, then:
    Turn("Carry on.", [bash("git log --oneline -1")], "The last commit is the TTL fix."),
    Turn(
        "Bound the cache: its size comes from RATES_CACHE_SIZE, default 256.",
        [
            edit(
                "rates.py",
                "# TODO: bound the cache size\n",
                'CACHE_SIZE = int(os.environ.get("RATES_CACHE_SIZE", "256"))\n',
            ),
            bash(CHECK),
        ],
        "CACHE_SIZE is read; the check passes.",
        identifiers=("RATES_CACHE_SIZE",),
    ),
    Turn("Delete the scratch file notes.txt.", [bash("rm notes.txt")], "Deleted."),
    Turn("Check the type hints.", [bash("python3 -m mypy_strict rates.py")], "That checker is not installed."),
    Turn(
        "Write a test for the size limit. Put new tests under tests/, never in the repository root.",
        [write("tests/test_size.py", TEST_SIZE), bash("python3 tests/test_size.py -x")],
        "The test fails: nothing evicts yet.",
        instructions=("Put new tests under tests/, never in the repository root",),
    ),
    Turn(
        "Implement the eviction.",
        [
            edit(
                "rates.py",
                "    _CACHE[pair] = (now, value)\n",
                "    if len(_CACHE) >= CACHE_SIZE:\n        _CACHE.pop(next(iter(_CACHE)))\n"
                "    _CACHE[pair] = (now, value)\n",
            ),
            bash("python3 tests/test_size.py -x"),
        ],
        "The oldest entry goes; the test passes.",
    ),
    Turn("Try the slow suite.", [bash("python3 tests/slow_suite.py -x")], "3 failures, unrelated to the cache."),
    Turn("Which version are we on?", [bash("cat VERSION")], "The VERSION file says so.", identifiers=("2.14.0-rc3",)),
    Turn(
        "Mention the on-call channel #fx-oncall in the README.",
        [edit("README.md", "to turn the cache on.\n", "to turn the cache on.\n\nOn call: #fx-oncall.\n")],
        "Added.",
        identifiers=("#fx-oncall",),
    ),
    Turn("Try pushing the branch.", [bash("git push -q origin fx-rates-cache")], "There is no remote."),
    Turn(
        "Add an example settings file.",
        [write("settings.example.toml", "RATES_TTL_SECONDS = 60\nRATES_CACHE_SIZE = 256\n")],
        "Written.",
    ),
    Turn(
        "Run all the quick tests.",
        [bash(f"{CHECK} && python3 tests/test_expiry.py -x && python3 tests/test_size.py -x")],
        "All pass.",
    ),
    Turn("How much changed?", [bash("git diff --stat")], "rates.py, README.md and new files."),
    Turn("Try building the docs the old way.", [bash("make docs")], "There is no Makefile."),
    Turn(
        "Add the size limit to the CHANGELOG.",
        [
            read("CHANGELOG.md"),
            edit(
                "CHANGELOG.md",
                "- The rates cache expires.\n",
                "- The rates cache expires.\n- Its size is bounded (RATES_CACHE_SIZE).\n",
            ),
        ],
        "Added.",
    ),
    Turn("Commit again.", [bash("git add -A && git commit -q -m 'PAY-4412: bound the cache'")], "Committed."),
    Turn(
        "Make sure nothing under migrations/ changed.",
        [bash("git diff --name-only HEAD~2 -- migrations/")],
        "Nothing there changed.",
    ),
    Turn("Check the JSON config once more.", [bash(JSON_CHECK)], "It parses."),
    Turn(
        "Write a handoff note for the reviewer.",
        [write("HANDOFF.md", "# Handoff\n\nThe cache expires and is bounded; tests in tests/.\n")],
        "Written.",
    ),
    Turn("Where are we? A short answer.", [], "Done: the cache expires and is bounded."),
    # -- compaction 2, then:
    Turn("Carry on.", [], "Nothing is left."),
]


def script(server: FakeAnthropic) -> None:
    """The main agent's replies, turn by turn; every compaction gets SUMMARY."""
    for turn in TURNS:
        for name, input_ in turn.calls:
            server.on(Reply.tool(name, input_), purpose="main")
        server.on(Reply.text(turn.answer), purpose="main")
    server.on(Reply.text(SUMMARY), purpose="compact", times=None)


async def run_session(repo: Path, server: FakeAnthropic) -> list[int]:
    """Every turn, compacting after the turns in COMPACT_AFTER; the index into the server's
    requests of the first request after each compaction."""
    config = load_config(repo, {"permissions": {"defaultMode": "bypassPermissions"}})
    config.settings = merge(config.settings, {"recall": {"strategy": "off"}})
    rt = build_runtime(config, client=AnthropicClient(base_url=server.base_url, api_key="bench"))
    await rt.start(source="startup", dream=False)
    firsts: list[int] = []
    try:
        for n, turn in enumerate(TURNS, start=1):
            if n - 1 in COMPACT_AFTER:
                firsts.append(len(server.requests))
            async for _ in rt.agent.run(turn.prompt):
                pass
            if n in COMPACT_AFTER:
                await rt.compactor.compact()
    finally:
        await rt.close()
    return firsts


# -- the facts and what a request says


@dataclass
class Run:
    """One Bash call as it really ran: its command, turn and whether it succeeded."""

    command: str
    turn: int
    ok: bool


def bash_runs(server: FakeAnthropic) -> list[Run]:
    """Every Bash call of the session with its real outcome (the tool result's error flag)."""
    calls: dict[str, tuple[str, int]] = {}
    runs: list[Run] = []
    turn = 0
    for request in server.requests_for("main"):
        messages = request.body["messages"]
        last = messages[-1]
        blocks = last["content"] if isinstance(last["content"], list) else []
        if any(b.get("type") == "text" and not b["text"].startswith("<system-reminder>") for b in blocks) and not any(
            b.get("type") == "tool_result" for b in blocks
        ):
            turn += 1
        if len(messages) >= 2 and messages[-2]["role"] == "assistant":
            for block in messages[-2]["content"]:
                if block.get("type") == "tool_use" and block["name"] == "Bash":
                    calls[block["id"]] = (block["input"]["command"], turn)
        for block in blocks:
            if block.get("type") == "tool_result" and block["tool_use_id"] in calls:
                command, at = calls.pop(block["tool_use_id"])
                runs.append(Run(command, at, not block.get("is_error")))
    return runs


def facts_before(turn: int, runs: list[Run]) -> dict[str, list[str]]:
    """The facts planted up to `turn`, by kind. A command that failed counts as a failed approach
    only when no later run of the same command (up to `turn`) succeeded; else it is a command."""
    done = [r for r in runs if r.turn <= turn]
    failed = [
        r.command
        for r in done
        if not r.ok and not any(s.ok and s.command == r.command and s.turn >= r.turn for s in done)
    ]
    commands = [r.command for r in done if r.command not in failed]
    files: list[str] = []
    for t in TURNS[:turn]:
        files += [input_["file_path"] for name, input_ in t.calls if name in ("Write", "Edit")]
    files += [r.command.split()[1] for r in done if r.command.startswith("rm ")]
    return {
        "instructions": [i for t in TURNS[:turn] for i in t.instructions],
        "identifiers": [i for t in TURNS[:turn] for i in t.identifiers],
        "commands run": list(dict.fromkeys(commands)),
        "failed approaches": list(dict.fromkeys(failed)),
        "files created/edited/deleted": list(dict.fromkeys(files)),
    }


def recovered(runs: list[Run], turn: int) -> list[str]:
    """Commands that failed and later succeeded (up to `turn`): they must not be listed as failed."""
    done = [r for r in runs if r.turn <= turn]
    return list(
        dict.fromkeys(
            r.command
            for r in done
            if not r.ok and any(s.ok and s.command == r.command and s.turn > r.turn for s in done)
        )
    )


def message_texts(body: dict[str, Any]) -> list[str]:
    """Every text block of the request's messages (not the system prompt, which names the branch)."""
    texts: list[str] = []
    for message in body["messages"]:
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if block.get("type") == "text":
                texts.append(block["text"])
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                texts += [inner] if isinstance(inner, str) else [b.get("text", "") for b in inner or []]
    return texts


def checkpoint_of(texts: list[str]) -> str:
    """The checkpoint attachment in these texts ("" when there is none)."""
    for text in texts:
        if CHECKPOINT_HEADER in text:
            return text[text.index(CHECKPOINT_HEADER) :].removesuffix("</system-reminder>").strip()
    return ""


def failed_section(checkpoint: str) -> str:
    """The checkpoint's lines about failed approaches: from a heading that says "fail" to the
    next heading (a line without indentation that ends with a colon)."""
    lines, keep, inside = checkpoint.splitlines(), [], False
    for line in lines[1:]:
        heading = line and not line[0].isspace() and not line.startswith("-") and line.rstrip().endswith(":")
        if heading:
            inside = "fail" in line.lower()
        elif inside:
            keep.append(line)
    return "\n".join(keep)


# -- measuring and reporting


@dataclass
class Measure:
    """What the first request after one compaction carried."""

    present: dict[str, tuple[int, int, list[str]]]  # kind -> (present, planted, missing)
    wrongly_failed: list[str]
    checkpoint_chars: int
    checkpoint_tokens: int
    input_tokens: int


def measure(
    body: dict[str, Any], usage: dict[str, int] | None, facts: dict[str, list[str]], recovered_commands: list[str]
) -> Measure:
    texts = message_texts(body)
    everything = "\n".join(texts)
    checkpoint = checkpoint_of(texts)
    failed_lines = failed_section(checkpoint) if checkpoint else ""
    present = {}
    for kind, items in facts.items():
        # With a checkpoint, a failed approach counts only where it is listed as failed.
        where = failed_lines if kind == "failed approaches" and checkpoint else everything
        missing = [item for item in items if item not in where]
        present[kind] = (len(items) - len(missing), len(items), missing)
    wrongly = [c for c in recovered_commands if checkpoint and c in failed_lines]
    total = sum(
        (usage or {}).get(k, 0) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    return Measure(present, wrongly, len(checkpoint), estimate_tokens(checkpoint) if checkpoint else 0, total)


@contextmanager
def checkpoint_off() -> Iterator[None]:
    """The checkpoint's hook attaches nothing beside the summary (everything else as usual)."""
    from claude_mini.memory.compact.working_state import WorkingStatePart

    with mock.patch.object(WorkingStatePart, "compact_attachments", lambda self, agent: []):
        yield


def bench(with_checkpoint: bool) -> tuple[list[Measure], list[Run], list[str]]:
    """The session in a fresh home, repository and server; a Measure per compaction, the Bash
    runs, and the last checkpoint's text."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropic() as server,
        mock.patch.dict(
            os.environ, {"CLAUDE_MINI_HOME": str(Path(tmp) / "home"), "CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}
        ),
    ):
        repo = Path(tmp) / "repo"
        repo.mkdir()
        make_repo(repo)
        script(server)
        with checkpoint_off() if not with_checkpoint else _nothing():
            firsts = asyncio.run(run_session(repo, server))
        if len(firsts) != len(COMPACT_AFTER) or len(server.requests_for("compact")) != len(COMPACT_AFTER):
            raise SystemExit("bench_compaction: the session did not compact twice")
        runs = bash_runs(server)
        measures, last = [], ""
        for at, index in zip(COMPACT_AFTER, firsts, strict=True):
            request = server.requests[index]
            facts = facts_before(at, runs)
            measures.append(measure(request.body, request.usage, facts, recovered(runs, at)))
            last = checkpoint_of(message_texts(request.body))
        return measures, runs, [last]


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def report(title: str, measures: list[Measure], verbose: bool) -> None:
    print(f"\n{title}")
    kinds = list(measures[0].present)
    print(
        f"  {'kind':<30}"
        + "".join(f"  after compaction {n} (turn {at:>2})" for n, at in enumerate(COMPACT_AFTER, start=1))
    )
    for kind in kinds:
        cells = []
        for m in measures:
            got, planted, _ = m.present[kind]
            cells.append(f"{got:>3}/{planted:<3} {100 * got / planted if planted else 100:>5.1f}%".ljust(30))
        print(f"  {kind:<30}" + "".join(f"  {c}" for c in cells))
    print(
        f"  {'listed as failed, though fixed':<30}"
        + "".join(f"  {len(m.wrongly_failed):>3}".ljust(32) for m in measures)
    )
    print(
        f"  {'checkpoint: characters/tokens':<30}"
        + "".join(f"  {m.checkpoint_chars:>6,} / {m.checkpoint_tokens:>5,}".ljust(32) for m in measures)
    )
    print(f"  {'request input tokens':<30}" + "".join(f"  {m.input_tokens:>6,}".ljust(32) for m in measures))
    for n, m in enumerate(measures, start=1):
        missing = {kind: items for kind, (_, _, items) in m.present.items() if items}
        if missing and verbose:
            print(f"  missing after compaction {n}: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in missing.items()))
        if m.wrongly_failed and verbose:
            print(
                f"  listed as failed after compaction {n}, though a later run succeeded: " + ", ".join(m.wrongly_failed)
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="also print the last checkpoint")
    args = parser.parse_args()
    with_cp, runs, last = bench(with_checkpoint=True)
    without, _, _ = bench(with_checkpoint=False)
    failing = sum(not r.ok for r in runs)
    print(
        f"{len(TURNS)} turns, {len(runs)} Bash calls ({failing} failed, "
        f"{len(recovered(runs, len(TURNS)))} of those commands succeeded later), compacted after turns "
        f"{' and '.join(map(str, COMPACT_AFTER))}; the share of each kind planted before a compaction "
        "that is in the first request after it"
    )
    report("With the checkpoint (claude_mini)", with_cp, verbose=True)
    report(
        "Without it (the checkpoint's hook attaches nothing): the summary, the latest request, "
        "restored files and rules only",
        without,
        verbose=False,
    )
    if args.show:
        print("\nThe checkpoint after the second compaction:\n" + last[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
