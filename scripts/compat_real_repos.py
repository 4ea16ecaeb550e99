"""How many of a real repository's commands, skills and agents reach the model as Claude Code lists them.

    python scripts/compat_real_repos.py --claude CLI_WRAPPER --mini-path PATH[,PATH...] FOLDER...

Not part of CI. Each FOLDER is a copy of a repository's `.claude/` (and `.mcp.json`) at its root.
For each, Claude Code (node CLI_WRAPPER) and claude-mini (each PYTHONPATH given, so a branch and
main can be compared) answer one print-mode prompt against a loopback fake server, trusted, with
SLASH_COMMAND_TOOL_CHAR_BUDGET large so no description is cut for the budget; every `- name: ...`
line the repository adds to what the model is sent (skills, commands, agent types) is an item, and
an item is identical when both tools send the same line (an agent's tool list, which each writes
its own way, left out). Prints the figures per folder and in total.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.compat_cases import TITLE_RULE, USER_SETTINGS, Run  # noqa: E402
from tests.fake_anthropic import FakeAnthropic  # noqa: E402

_ITEM = re.compile(r"^- ([^\s:][^\s]*?): ?(.*)$|^- ([^\s:][^\s]*)$", re.M)
_TOOLS_SUFFIX = re.compile(r"\s*\((?:Tools|tools|all tools)\b.*\)\s*$")


def _items(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _ITEM.finditer(text):
        name = m.group(1) or m.group(3)
        desc = " ".join(_TOOLS_SUFFIX.sub("", m.group(2) or "").split())
        out.setdefault(name, desc)
    return out


def _run(tool: str, folder: Path | None, claude: Path, mini_path: str) -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix="real-") as tmp:
        repo, home = Path(tmp) / "repo", Path(tmp) / "home"
        if folder is not None:
            shutil.copytree(folder, repo, symlinks=True)
        else:
            repo.mkdir()
        home.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
        env.update(HOME=str(home), ANTHROPIC_API_KEY="k", NO_COLOR="1", SLASH_COMMAND_TOOL_CHAR_BUDGET="2000000")
        if tool == "mini":
            mini = home / ".claude-mini"
            mini.mkdir()
            record = {"version": 1, "folders": {os.path.realpath(repo): {"trustedAt": "2026-12-06T00:00:00Z"}}}
            (mini / "trusted-folders.json").write_text(json.dumps(record))
            (mini / "settings.json").write_text(json.dumps(USER_SETTINGS))
            env.update(CLAUDE_MINI_HOME=str(mini), CLAUDE_MINI_DISABLE_AUTO_MEMORY="1", PYTHONPATH=mini_path)
            command = [sys.executable, "-m", "claude_mini", "-p", "hello"]
        else:
            state = {
                "hasCompletedOnboarding": True,
                "projects": {os.path.realpath(repo): {"hasTrustDialogAccepted": True}},
            }
            (home / ".claude.json").write_text(json.dumps(state))
            command = ["node", str(claude), "-p", "hello"]
        with FakeAnthropic() as server:
            server.load_script({"replies": [{"text": "ok"}], "rules": [TITLE_RULE]})
            env["ANTHROPIC_BASE_URL"] = server.base_url
            subprocess.run(
                command, cwd=repo, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
            )
            bodies = [
                r.body
                for r in server.requests
                if r.path == "/v1/messages" and "Write the title" not in json.dumps(r.body)
            ]
        return _items(Run(repo, bodies[:1]).texts()) if bodies else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", type=Path, required=True)
    parser.add_argument("--mini-path", action="append", required=True, help="a PYTHONPATH for claude-mini (repeat)")
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args(argv)
    base_code = _run("code", None, args.claude, "")
    totals = {path: [0, 0] for path in args.mini_path}
    for folder in args.folders:
        code = {k: v for k, v in _run("code", folder, args.claude, "").items() if k not in base_code}
        for path in args.mini_path:
            base_mini = _run("mini", None, args.claude, path)
            mini = {k: v for k, v in _run("mini", folder, args.claude, path).items() if k not in base_mini}
            names = sorted(set(code) | set(mini))
            same = [n for n in names if n in code and n in mini and code[n] == mini[n]]
            totals[path][0] += len(same)
            totals[path][1] += len(names)
            print(f"{folder.name} [{path}]: {len(same)}/{len(names)} identical")
            for n in [n for n in names if n not in same][:8]:
                print(f"    {n}: Claude Code {code.get(n)!r:.90} | claude-mini {mini.get(n)!r:.90}")
    for path, (same_n, all_n) in totals.items():
        print(f"TOTAL [{path}]: {same_n}/{all_n} = {same_n / max(all_n, 1):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
