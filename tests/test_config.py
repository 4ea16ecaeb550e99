"""config.py: the precedence rules of DESIGN.md section 4, one test each, through `load_config`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_mini import paths
from claude_mini.config import load_config


def write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@pytest.fixture
def files(repo: Path, isolated_env):
    """The four settings files of a session in `repo`, by source name."""
    return {
        "user": paths.home_dir() / "settings.json",
        "project": repo / ".claude" / "settings.json",
        "local": repo / ".claude" / "settings.local.json",
        "managed": paths.managed_dir() / "settings.json",
    }


@pytest.mark.parametrize(
    ("present", "winner"),
    [(["user"], "user"), (["user", "project"], "project"), (["user", "project", "local"], "local"),
     (["project", "local", "managed"], "managed"), (["user", "managed"], "managed")],
)
def test_each_layer_beats_the_ones_below(repo, files, present, winner) -> None:
    for source in present:
        write(files[source], {"model": f"model-from-{source}", "smallModel": f"small-from-{source}"})
    config = load_config(repo, trust_folder=True)
    assert config.model == f"model-from-{winner}"
    assert config.small_model == f"small-from-{winner}"
    assert config.origins["model"] == str(files[winner])


def test_flags_beat_files_and_managed_beats_flags(repo, files) -> None:
    write(files["local"], {"model": "model-from-local"})
    assert load_config(repo, {"model": "model-from-flag"}).model == "model-from-flag"
    write(files["managed"], {"model": "model-from-managed"})
    assert load_config(repo, {"model": "model-from-flag"}).model == "model-from-managed"


def test_the_environment_sits_between_flags_and_files(repo, files, monkeypatch) -> None:
    write(files["local"], {"model": "model-from-local"})
    monkeypatch.setenv("CLAUDE_MINI_MODEL", "model-from-env")
    assert load_config(repo).model == "model-from-env"
    assert load_config(repo, {"model": "model-from-flag"}).model == "model-from-flag"


def test_nested_settings_merge_and_lists_are_replaced(repo, files) -> None:
    write(files["user"], {"recall": {"strategy": "lexical", "waitMs": 10}, "claudeMdExcludes": ["a"]})
    write(files["project"], {"recall": {"strategy": "model"}, "claudeMdExcludes": ["b"]})
    config = load_config(repo, trust_folder=True)
    assert config.get("recall.strategy") == "model" and config.get("recall.waitMs") == 10
    assert config.get("claudeMdExcludes") == ["b"]
    assert config.get("recall.missing", "default") == "default"


def test_permission_layers_are_kept_apart_lowest_first(repo, files) -> None:
    write(files["user"], {"permissions": {"deny": ["Bash(rm:*)"]}})
    write(files["project"], {"permissions": {"deny": ["Read(.env)"]}})
    write(files["managed"], {"permissions": {"deny": ["Bash(curl:*)"]}})
    config = load_config(repo, {"permissions": {"allow": ["Bash(ls:*)"]}})
    layers = [(source, perms) for source, perms, _ in config.permission_layers()]
    assert layers == [("user", {"deny": ["Bash(rm:*)"]}), ("project", {"deny": ["Read(.env)"]}),
                      ("flags", {"allow": ["Bash(ls:*)"]}), ("managed", {"deny": ["Bash(curl:*)"]})]


def test_a_broken_file_is_skipped_with_one_line_and_the_others_still_apply(repo, files) -> None:
    write(files["user"], {"model": "model-from-user"})
    files["project"].parent.mkdir(parents=True, exist_ok=True)
    files["project"].write_text("{not json")
    config = load_config(repo, trust_folder=True)
    assert config.model == "model-from-user"
    lines = [w for w in config.warnings if str(files["project"]) in w]
    assert len(lines) == 1 and "not valid JSON" in lines[0] and "Other settings still apply" in lines[0]


def test_the_project_root_is_the_git_root_from_a_subfolder(repo, files) -> None:
    (repo / "src" / "deep").mkdir(parents=True)
    write(files["project"], {"model": "model-from-project"})
    config = load_config(repo / "src" / "deep", trust_folder=True)
    assert config.project_root == repo.resolve()
    assert config.model == "model-from-project"
