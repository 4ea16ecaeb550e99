"""`.claude/settings.local.json` kept out of commits: the global git ignore file gets its pattern once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from claude_mini.config.git_ignore import LOCAL_SETTINGS_PATTERN, ignore_local_settings


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """git's global files under a fresh HOME (never the real one)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    return home


def local_settings(repo: Path) -> Path:
    path = repo / ".claude" / "settings.local.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text("{}\n")
    return path


def status(repo: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=repo, capture_output=True, text=True).stdout


def test_the_pattern_goes_to_the_global_ignore_once_and_git_stops_seeing_the_file(repo, home):
    settings = local_settings(repo)
    assert ".claude/settings.local.json" in status(repo)
    line = ignore_local_settings(settings)
    target = home / ".config" / "git" / "ignore"
    assert line is not None and str(target) in line
    assert target.read_text() == LOCAL_SETTINGS_PATTERN + "\n"
    assert ".claude/settings.local.json" not in status(repo)
    assert ignore_local_settings(settings) is None  # ignored already: nothing written again
    assert target.read_text() == LOCAL_SETTINGS_PATTERN + "\n"


def test_a_configured_excludes_file_is_used_and_its_lines_kept(repo, home):
    excludes = home / "my-ignores"
    excludes.write_text("*.swp")  # no final newline
    subprocess.run(["git", "config", "--global", "core.excludesFile", "~/my-ignores"], check=True)
    ignore_local_settings(local_settings(repo))
    assert excludes.read_text() == f"*.swp\n{LOCAL_SETTINGS_PATTERN}\n"


def test_nothing_is_written_outside_a_repository_or_when_the_project_ignores_it(tmp_path, repo, home):
    outside = tmp_path / "plain"
    outside.mkdir()
    assert ignore_local_settings(local_settings(outside)) is None
    (repo / ".gitignore").write_text(".claude/settings.local.json\n")
    assert ignore_local_settings(local_settings(repo)) is None
    assert not (home / ".config").exists()
