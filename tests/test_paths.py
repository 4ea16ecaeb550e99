"""paths.py: the home and managed folders and the project key of DESIGN.md section 4."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mini import paths


@pytest.mark.parametrize(
    ("path", "key"),
    [("/home/ada/src/shop", "-home-ada-src-shop"), ("/tmp/a b/c.d_e", "-tmp-a-b-c-d-e"),
     ("/srv/café", "-srv-caf-"), ("/", "-")],
)
def test_path_key_replaces_every_non_alphanumeric_character(path: str, key: str) -> None:
    assert paths.path_key(Path(path)) == key


def test_long_keys_are_cut_with_a_hash_that_keeps_them_apart() -> None:
    first, second = (Path("/" + "a" * 250 + suffix) for suffix in ("x", "y"))
    key1, key2 = paths.path_key(first), paths.path_key(second)
    assert len(key1) == 200 + 1 + 8 and key1[:200] == key2[:200]
    assert key1 != key2


def test_home_and_managed_folders_follow_the_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CLAUDE_MINI_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("CLAUDE_MINI_MANAGED_DIR", str(tmp_path / "m"))
    assert paths.home_dir() == tmp_path / "h" and paths.managed_dir() == tmp_path / "m"
    monkeypatch.delenv("CLAUDE_MINI_HOME")
    monkeypatch.delenv("CLAUDE_MINI_MANAGED_DIR")
    assert paths.home_dir() == Path.home() / ".claude-mini"
    assert paths.managed_dir() == Path("/etc/claude-mini")


def test_memory_is_keyed_on_the_git_root_and_transcripts_on_the_cwd(repo: Path) -> None:
    sub = repo / "src"
    sub.mkdir()
    root_key = paths.path_key(repo.resolve())
    assert paths.memory_dir(sub) == paths.home_dir() / "projects" / root_key / "memory"
    assert paths.project_dir(sub) == paths.home_dir() / "projects" / paths.path_key(sub.resolve())


def test_outside_git_the_cwd_is_the_key(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    assert paths.memory_dir(folder) == paths.home_dir() / "projects" / paths.path_key(folder.resolve()) / "memory"
