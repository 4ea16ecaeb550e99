"""Run the real `claude-mini` CLI against the fake server.

`run_cli` starts each run through a fork server (forkserver.py) that has imported the
SDK once: the same process as `python -m claude_mini`, without two seconds of imports per
run. A run whose environment the server cannot reproduce (a variable read at interpreter
start-up that differs, such as PYTHONPATH) is a real subprocess, and so is every test about
the process itself (signals, a terminal, concurrent processes), which spawns its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.forkserver import ForkServer

# Variables that are read only after start-up (by claude_mini, which the fork server has not
# imported, or by the SDK when a client is built): a run may set them differently from the
# server. Every other variable must be the server's, or the run is a real subprocess.
# PATH: the interpreter is started by its full path and finds its modules by sys.path, so PATH
# matters only to the programs claude-mini starts, which read the run's own environment.
RUNTIME_ONLY_ENV = {
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "NO_COLOR",
    "HOME",
    "XDG_CONFIG_HOME",
    "CLAUDE_CONFIG_DIR",  # Claude Code's user folder, read by load_config
    "GIT_CONFIG_GLOBAL",  # read by the git that claude-mini runs (conftest.py's isolated_env sets it)
    "PYTEST_CURRENT_TEST",
    "PATH",
}
RUNTIME_ONLY_PREFIX = "CLAUDE_MINI_"
# The environment the worker started with, before any test's monkeypatch.
_START_ENV = dict(os.environ)


def cli_env(home: Path, managed: Path, base_url: str, **extra: str) -> dict[str, str]:
    """A clean environment for one CLI run: our home folder, the fake server, a fake key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_MINI_"))}
    env.update(
        CLAUDE_MINI_HOME=str(home),
        CLAUDE_MINI_MANAGED_DIR=str(managed),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test-key",
        NO_COLOR="1",
    )
    env.update(extra)
    return {k: v for k, v in env.items() if v != ""}  # "" in `extra` unsets a variable


# How long a project's MCP servers may take to connect before the first request goes without
# their tools: the product's 10 s is too short for a Python server's start on a loaded machine.
MCP_CONNECT_WAIT_MS = 90_000


def wait_for_mcp_servers(repo: Path, settings: Path | None = None) -> None:
    """Set `mcp.connectTimeoutMs` to MCP_CONNECT_WAIT_MS in the project settings of `repo` (or in
    the settings file `settings`), merged into what is there."""
    settings = settings or repo / ".claude" / "settings.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    data.setdefault("mcp", {}).setdefault("connectTimeoutMs", MCP_CONNECT_WAIT_MS)
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps(data))


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


def _startup_env(env: dict[str, str]) -> dict[str, str]:
    """The part of `env` a process reads before claude_mini runs."""
    return {k: v for k, v in env.items() if k not in RUNTIME_ONLY_ENV and not k.startswith(RUNTIME_ONLY_PREFIX)}


@pytest.fixture(scope="session")
def fork_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    """One fork server per worker, with the environment every run starts from."""
    env = {k: v for k, v in _START_ENV.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_MINI_"))}
    server = ForkServer(tmp_path_factory.mktemp("fork-server"), env)
    yield server
    server.close()


@pytest.fixture
def run_cli(isolated_env, fake_server, repo, fork_server) -> Callable[..., subprocess.CompletedProcess]:
    """`run_cli("-p", "hi", input=None, env={...})` runs `python -m claude_mini` in the repo."""

    def run(
        *args: str,
        input: str | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess:
        full_env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, **(env or {}))
        if _startup_env(full_env) == _startup_env(fork_server.env):
            return fork_server.run(list(args), cwd=cwd or repo, env=full_env, input=input, timeout=timeout)
        return subprocess.run(
            [sys.executable, "-m", "claude_mini", *args],
            cwd=cwd or repo,
            env=full_env,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )

    return run


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def tool_results(fake_server) -> list[dict]:
    """Every tool_result block the main agent was sent, oldest first (its last request holds them all)."""
    last = fake_server.requests_for("main")[-1].body["messages"]
    return [
        block
        for message in last
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def text_of(block: dict) -> str:
    """A tool_result's text, whether its content is a string or a list of text blocks."""
    content = block["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def all_requests_text(fake_server) -> str:
    """Every request body the fake server received, as one JSON text (to look for a leak)."""
    return "\n".join(json.dumps(r.body) for r in fake_server.requests)
