"""Run the real `claude-mini` CLI as a subprocess against the fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest


def cli_env(home: Path, managed: Path, base_url: str, **extra: str) -> dict[str, str]:
    """A clean environment for one CLI run: our home folder, the fake server, a fake key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_MINI_"))}
    env.update(CLAUDE_MINI_HOME=str(home), CLAUDE_MINI_MANAGED_DIR=str(managed),
               ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="test-key", NO_COLOR="1")
    env.update(extra)
    return {k: v for k, v in env.items() if v != ""}  # "" in `extra` unsets a variable


def trust_folder(home: Path, folder: Path) -> None:
    """Record `folder` as trusted in the trust record of the home folder `home` (as a "yes" would)."""
    record = home / "trusted-folders.json"
    data = json.loads(record.read_text()) if record.exists() else {"version": 1, "folders": {}}
    data["folders"][os.path.realpath(folder)] = {"trustedAt": "2026-12-01T00:00:00Z"}
    record.write_text(json.dumps(data))


@pytest.fixture
def repo(repo: Path) -> Path:
    """The shared small git repository, with a README."""
    (repo / "README.md").write_text("# demo\n")
    return repo


@pytest.fixture
def run_cli(isolated_env, fake_server, repo) -> Callable[..., subprocess.CompletedProcess]:
    """`run_cli("-p", "hi", input=None, env={...})` runs `python -m claude_mini` in the repo."""

    def run(*args: str, input: str | None = None, cwd: Path | None = None,
            env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
        full_env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, **(env or {}))
        return subprocess.run(
            [sys.executable, "-m", "claude_mini", *args], cwd=cwd or repo, env=full_env,
            input=input, capture_output=True, text=True, timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )

    return run


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]
