"""Fixtures shared by every test: an isolated environment and the fake Anthropic server."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.fake_anthropic import FakeAnthropic

# llama.cpp's OpenMP threads spin at every barrier by default; with more busy threads than
# cores (xdist workers beside llama.cpp's own threads) the spinning burns a third of the
# local-model tests' CPU. Waiting passively changes when a thread sleeps, not what the model
# computes. Set before any test loads llama.cpp, and inherited by every CLI process started.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

# The longest tests first (longest-processing-time-first scheduling): with `--dist worksteal`
# (pyproject.toml) the first worker starts on them at once, and a worker that runs out of
# tests takes half of what another has not started, so the short tests fill in around the
# long ones instead of a long one starting last and running alone. Stable: within a group
# the collection order is kept.
SLOW_FIRST = ("tests/e2e/test_local_e2e.py", "tests/llm/test_local_servers.py", "tests/e2e/")

# Every test in this folder runs the real CLI (a subprocess or a pty): marked `e2e`, so that
# `-m "not e2e"` is the inner loop. A test elsewhere that starts the CLI carries the mark itself.
E2E_FOLDER = "tests/e2e/"

# Variables that would point a test at a real account, a real model or the user's files.
SCRUBBED_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_MINI_MODEL",
    "CLAUDE_MINI_SMALL_MODEL",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """Point CLAUDE_MINI_HOME and CLAUDE_MINI_MANAGED_DIR at fresh folders, and Claude Code's
    user folder (CLAUDE_CONFIG_DIR) at one that does not exist yet; drop API credentials."""
    home = tmp_path_factory.mktemp("claude-mini-home")
    managed = tmp_path_factory.mktemp("claude-mini-managed")
    claude_code = tmp_path_factory.mktemp("claude-code-user") / ".claude"
    monkeypatch.setenv("CLAUDE_MINI_HOME", str(home))
    monkeypatch.setenv("CLAUDE_MINI_MANAGED_DIR", str(managed))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_code))
    # git's global ignore file in a fresh folder (claude-mini adds settings.local.json to it), the
    # rest of the user's global git config still read.
    git_global = tmp_path_factory.mktemp("git-global")
    git_ignore = git_global / "ignore"
    (git_global / "config").write_text(f"[include]\n\tpath = ~/.gitconfig\n[core]\n\texcludesFile = {git_ignore}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(git_global / "config"))
    for name in SCRUBBED_ENV:
        monkeypatch.delenv(name, raising=False)
    return SimpleNamespace(home=home, managed=managed, claude_code=claude_code, git_ignore=git_ignore)


def sandbox_off(home: Path) -> None:
    """Turn the Bash sandbox off in the user settings of `home` (merged into what is there)."""
    settings = home / "settings.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    data.setdefault("sandbox", {})["enabled"] = False
    settings.write_text(json.dumps(data))


@pytest.fixture
def no_sandbox(isolated_env: SimpleNamespace) -> None:
    """The Bash sandbox off: for tests of what the permission rules and the Bash-line analysis
    decide alone (with it on, a sandboxed command runs without a question), or of host pids."""
    sandbox_off(isolated_env.home)


@pytest.fixture
def fake_server() -> Iterator[FakeAnthropic]:
    """A started loopback fake Anthropic API; script it with `.queue()` / `.on()`."""
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small git repository to work in, with one Python file."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "app.py").write_text('def greet():\n    return "hello"\n')
    return root


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of E2E_FOLDER `e2e`; order the run by SLOW_FIRST (the same order on every
    worker, as xdist requires)."""
    for item in items:
        if item.nodeid.startswith(E2E_FOLDER):
            item.add_marker(pytest.mark.e2e)

    def group(item: pytest.Item) -> int:
        path = item.nodeid.split("::")[0]
        return next((i for i, prefix in enumerate(SLOW_FIRST) if path.startswith(prefix)), len(SLOW_FIRST))

    items.sort(key=group)
