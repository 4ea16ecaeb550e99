"""Fixtures shared by every test: an isolated environment and the fake Anthropic server."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from fake_anthropic import FakeAnthropic

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
    """Point CLAUDE_MINI_HOME and CLAUDE_MINI_MANAGED_DIR at fresh folders; drop API credentials."""
    home = tmp_path_factory.mktemp("claude-mini-home")
    managed = tmp_path_factory.mktemp("claude-mini-managed")
    monkeypatch.setenv("CLAUDE_MINI_HOME", str(home))
    monkeypatch.setenv("CLAUDE_MINI_MANAGED_DIR", str(managed))
    for name in SCRUBBED_ENV:
        monkeypatch.delenv(name, raising=False)
    return SimpleNamespace(home=home, managed=managed)


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
