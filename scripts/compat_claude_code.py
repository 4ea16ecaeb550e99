"""Run the drop-in fidelity cases through claude-mini and through Claude Code from npm; print the differences.

    python scripts/compat_claude_code.py [--claude PATH] [--case NAME ...]

Not part of CI: it needs node and the network (once). Without --claude it installs
`@anthropic-ai/claude-code` into a temporary folder with npm and runs its `cli-wrapper.cjs` (node 20
works, with a warning). Both tools run each case of tests/e2e/compat_cases.py in print mode, in a
fresh copy of the fixture repository, trusted, against their own loopback fake server with the
same scripted replies; the values each case observes are compared and the differences printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.compat_cases import CASES, TITLE_RULE, USER_SETTINGS, Case, Run, write_repository  # noqa: E402
from tests.fake_anthropic import FakeAnthropic  # noqa: E402

TIMEOUT = 180


def install_claude_code(folder: Path) -> Path:
    """`npm install @anthropic-ai/claude-code` into `folder`; the path of its node launcher."""
    subprocess.run(["npm", "install", "--silent", "@anthropic-ai/claude-code"], cwd=folder, check=True)
    package = folder / "node_modules" / "@anthropic-ai" / "claude-code"
    version = json.loads((package / "package.json").read_text())["version"]
    print(f"Claude Code {version} from npm ({package})")
    return package / "cli-wrapper.cjs"


def _environment(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update(HOME=str(home), ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="compat-key", NO_COLOR="1", **extra)
    return env


def _command(tool: str, claude: Path, prompt: str) -> list[str]:
    if tool == "claude-mini":
        return [sys.executable, "-m", "claude_mini", "-p", prompt]
    return ["node", str(claude), "-p", prompt] if claude.suffix in (".cjs", ".js") else [str(claude), "-p", prompt]


def _prepare(tool: str, scratch: Path) -> tuple[Path, Path, dict[str, str]]:
    """A fresh repository and home folder, the repository trusted as each tool records it."""
    repo, home = scratch / "repo", scratch / "home"
    repo.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    write_repository(repo)
    extra: dict[str, str] = {}
    if tool == "claude-mini":
        mini = home / ".claude-mini"
        mini.mkdir()
        record = {"version": 1, "folders": {os.path.realpath(repo): {"trustedAt": "2026-12-06T00:00:00Z"}}}
        (mini / "trusted-folders.json").write_text(json.dumps(record))
        (mini / "settings.json").write_text(json.dumps(USER_SETTINGS))
        extra = {"CLAUDE_MINI_HOME": str(mini), "CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1", "PYTHONPATH": str(ROOT)}
    else:
        state = {"hasCompletedOnboarding": True, "projects": {os.path.realpath(repo): {"hasTrustDialogAccepted": True}}}
        (home / ".claude.json").write_text(json.dumps(state))
    return repo, home, extra


def run_case(tool: str, claude: Path, case: Case) -> tuple[Any, str]:
    """(what the case observes, the run's stderr tail) for one tool."""
    with tempfile.TemporaryDirectory(prefix=f"compat-{tool}-") as tmp:
        repo, home, extra = _prepare(tool, Path(tmp))
        with FakeAnthropic() as server:
            server.load_script({"replies": case.replies, "rules": [TITLE_RULE]})
            done = subprocess.run(
                _command(tool, claude, case.prompt),
                cwd=repo,
                env=_environment(home, server.base_url, **extra),
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
            bodies = [
                r.body
                for r in server.requests
                if r.path == "/v1/messages" and "Write the title" not in json.dumps(r.body)
            ]
        run = Run(repo, bodies, done.stdout, done.stderr)
        try:
            value = case.observe(run)
        except Exception as exc:  # a case that cannot read a tool's run is a difference, not a crash
            value = f"(could not observe: {type(exc).__name__}: {exc})"
        return value, done.stderr.strip()[-300:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", type=Path, help="Claude Code's cli-wrapper.cjs or binary (default: npm install)")
    parser.add_argument("--case", action="append", help="run only these cases (by name)")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if not args.case or c.name in args.case]
    with tempfile.TemporaryDirectory(prefix="compat-npm-") as npm:
        claude = args.claude or install_claude_code(Path(npm))
        same = 0
        for case in cases:
            mini, mini_err = run_case("claude-mini", claude, case)
            code, code_err = run_case("claude-code", claude, case)
            if mini == code:
                same += 1
                print(f"same       {case.name} ({case.kind}): {json.dumps(mini)}")
                continue
            print(f"DIFFERENT  {case.name} ({case.kind})")
            print(f"  claude-mini: {json.dumps(mini)}")
            print(f"  Claude Code: {json.dumps(code)}")
            for who, err in (("claude-mini", mini_err), ("Claude Code", code_err)):
                if err and "warn" not in err.lower():
                    print(f"  {who} stderr: {err}")
    print(f"\n{same} of {len(cases)} cases identical.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
