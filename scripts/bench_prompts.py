"""Benchmark the sandbox's usability win and its cost, each beside a same-run baseline.

    uv run python scripts/bench_prompts.py [--runs N]

1. Questions asked over scripted working sessions (tests, builds, git, file edits): every call
   goes through the session's real permission policy in default and acceptEdits modes, first
   without the sandbox (today's behaviour where bwrap is missing), then with it and
   autoAllowBashIfSandboxed. Two sessions: our own (below, written with the code in view) and
   `scripts/fixtures/prompt_session_heldout.json`, written by someone who never saw the code
   (report it, never tune on it).
2. The added wall time of a sandboxed Bash call (bwrap start-up, the layout, the proxy bridge)
   as a ratio to an unsandboxed call of the same command, alternating so load hits both.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from claude_mini.permissions import Allow, Ask, PermissionPolicy, PolicyChain  # noqa: E402
from claude_mini.sandbox import Sandbox, sandbox_settings  # noqa: E402
from claude_mini.sandbox.box import RuleSource, SandboxGuard  # noqa: E402
from claude_mini.tools.base import ToolContext  # noqa: E402
from claude_mini.tools.bash import BashTool  # noqa: E402

HELD_OUT = ROOT / "scripts" / "fixtures" / "prompt_session_heldout.json"


def _bash(*commands: str) -> list[dict]:
    return [{"tool": "Bash", "input": {"command": c}} for c in commands]


def _edit(path: str) -> dict:
    return {"tool": "Edit", "input": {"file_path": path, "old_string": "a", "new_string": "b"}}


OWN_SESSION = {
    "name": "own: fix a bug, add a feature, commit (Python)",
    "calls": [
        *_bash("git status", "git log --oneline -5", "ls -la", "cat pyproject.toml"),
        {"tool": "Read", "input": {"file_path": "src/app.py"}},
        *_bash("uv run pytest -x -q", "uv run pytest tests/test_app.py::test_parse -q"),
        {"tool": "Grep", "input": {"pattern": "def parse", "path": "src"}},
        _edit("src/app.py"),
        *_bash(
            "uv run pytest tests/test_app.py -q",
            "uv run ruff check src tests",
            "uv run ruff format src",
            "uv run mypy src",
        ),
        {"tool": "Write", "input": {"file_path": "tests/test_feature.py", "content": "def test_x(): pass\n"}},
        *_bash(
            "uv run pytest -q",
            "mkdir -p build && python -m build --outdir build 2>&1 | tail -3",
            "make docs",
            "npm test",
            "npm run lint -- --fix",
            "cargo test -q",
            "git diff --stat",
            "git add -A",
            "git commit -m 'Parse dates'",
            "git checkout -b feature/dates",
            "rm -rf build",
            "python scripts/gen.py > out.txt",
            "chmod +x scripts/run.sh",
            "sed -i 's/old/new/' setup.cfg",
            "curl -s https://pypi.org/pypi/httpx/json | head -c 200",
            "uv add httpx",
            "git push -u origin feature/dates",
        ),
        _edit("README.md"),
    ],
}


def decisions(calls: list[dict], root: Path, mode: str, sandbox: Sandbox | None) -> tuple[int, int]:
    """(questions, calls) for one session in one mode."""
    rules = PermissionPolicy(cwd=root, project_root=root, mode=mode)
    chain = PolicyChain(rules, [SandboxGuard(sandbox)] if sandbox else [], rules=rules)
    asked = 0
    for call in calls:
        decision = chain.can_use_tool(call["tool"], call["input"])
        asked += isinstance(decision, Ask)
        assert isinstance(decision, Allow | Ask), (call, decision)
    return asked, len(calls)


def make_sandbox(root: Path, auto_allow: bool, domains: tuple[str, ...] = ()) -> Sandbox:
    settings = sandbox_settings(
        {"sandbox": {"autoAllowBashIfSandboxed": auto_allow, "network": {"allowedDomains": list(domains)}}}
    )
    return Sandbox(settings, RuleSource(deny=lambda: (), allow=lambda: (), roots=lambda: (root,)), project_root=root)


async def call_times(
    root: Path, runs: int, command: str, domains: tuple[str, ...] = ()
) -> tuple[list[float], list[float]]:
    """Seconds per Bash call of `command`: (unsandboxed, sandboxed), alternating. With `domains`
    allowed, the proxy bridge runs inside too (as it always does in the REPL, which can ask)."""
    box = make_sandbox(root, True, domains)
    tool = BashTool()
    plain, boxed = [], []
    try:
        for _ in range(runs):
            for ctx, out in (
                (ToolContext(cwd=root, project_root=root), plain),
                (ToolContext(cwd=root, project_root=root, sandbox=box), boxed),
            ):
                start = time.perf_counter()
                result = await tool.call({"command": command}, ctx)
                out.append(time.perf_counter() - start)
                assert not result.is_error, result.content
    finally:
        await box.close()
    return plain, boxed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    sessions = [OWN_SESSION]
    if HELD_OUT.exists():
        sessions += [{**s, "name": f"held-out: {s['name']}"} for s in json.loads(HELD_OUT.read_text())["sessions"]]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        available = make_sandbox(root, True).availability
        print(f"bwrap: {available.version or available.problem}")
        print(
            "\nQuestions asked (calls that would stop for the user), sandbox off -> on with autoAllowBashIfSandboxed:"
        )
        for session in sessions:
            bash = sum(c["tool"] == "Bash" for c in session["calls"])
            for mode in ("default", "acceptEdits"):
                before, total = decisions(session["calls"], root, mode, None)
                after, _ = decisions(session["calls"], root, mode, make_sandbox(root, True))
                print(f"  {session['name'][:60]:60} {mode:11} {before:3} -> {after:3} of {total} calls ({bash} Bash)")
        if not available.works:
            print("\nNo timing: bwrap cannot run here.")
            return
        print(f"\nWall time per Bash call, median of {args.runs} (alternating):")
        for command, domains in (
            ("true", ()),
            ("ls -la > /dev/null && git --version > /dev/null", ()),
            ("true", ("pypi.org",)),
        ):
            plain, boxed = asyncio.run(call_times(root, args.runs, command, domains))
            p, b = statistics.median(plain) * 1000, statistics.median(boxed) * 1000
            label = command[:28] + (" (+ proxy bridge)" if domains else "")
            print(
                f"  {label:45} unsandboxed {p:6.1f} ms  sandboxed {b:6.1f} ms  ratio {b / p:4.2f}x  (+{b - p:.1f} ms)"
            )


if __name__ == "__main__":
    main()
