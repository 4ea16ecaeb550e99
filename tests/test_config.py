"""claude_mini.config: the precedence rules of DESIGN.md section 4, one test each, through `load_config`;
the memory layers' settings, each key through the one validator."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from claude_mini.base import paths
from claude_mini.config import load_config
from claude_mini.config.memory_settings import (
    DreamSettings,
    ForgetSettings,
    MemorySettings,
    RecallSettings,
    memory_settings,
)
from claude_mini.config.settings_env import apply_settings_env, settings_env, thinking_budget


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
    [
        (["user"], "user"),
        (["user", "project"], "project"),
        (["user", "project", "local"], "local"),
        (["project", "local", "managed"], "managed"),
        (["user", "managed"], "managed"),
    ],
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


def test_settings_env_is_merged_higher_files_winning_and_counts_as_the_environment(repo, files, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_MODEL", raising=False)
    write(files["user"], {"env": {"A": "user", "B": "user", "ANTHROPIC_MODEL": "model-from-env-key"}})
    write(files["local"], {"env": {"B": 2, "ON": True, "BAD": ["x"]}})
    config = load_config(repo, trust_folder=True)
    values, problems = settings_env(config.layers)
    assert values == {"A": "user", "B": "2", "ON": "true", "ANTHROPIC_MODEL": "model-from-env-key"}
    assert problems == [f"`env.BAD` in {files['local']} is not a text value; it was not set. Fix the file."]
    assert config.model == "model-from-env-key"  # Claude Code's variable, from a settings file's env
    environ: dict[str, str] = {}
    apply_settings_env(config.layers, environ)
    assert environ["B"] == "2"


def test_an_untrusted_projects_env_is_not_applied(repo, files) -> None:
    write(files["project"], {"env": {"FROM_REPO": "x", "MAX_THINKING_TOKENS": "9000"}})
    config = load_config(repo)
    assert settings_env(config.layers)[0] == {}
    assert any("env" in warning for warning in config.warnings)


@pytest.mark.parametrize(
    ("raw", "want"), [("", None), ("0", None), ("x", None), ("500", 1024), ("4000", 4000), ("99999", 31999)]
)
def test_max_thinking_tokens_becomes_a_thinking_budget(raw, want) -> None:
    got = thinking_budget(32000, {"MAX_THINKING_TOKENS": raw})
    assert (got or {}).get("budget_tokens") == want


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
    assert layers == [
        ("user", {"deny": ["Bash(rm:*)"]}),
        ("project", {"deny": ["Read(.env)"]}),
        ("flags", {"allow": ["Bash(ls:*)"]}),
        ("managed", {"deny": ["Bash(curl:*)"]}),
    ]


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


# --- the memory layers' settings: one validator, one message per bad value ---------------------


def nested(dotted: str, value) -> dict:
    """`{"recall": {"waitMs": 5}}` from `"recall.waitMs", 5`."""
    *groups, key = dotted.split(".")
    data = {key: value}
    for group in reversed(groups):
        data = {group: data}
    return data


def field_of(settings: MemorySettings, path: str):
    for part in path.split("."):
        settings = getattr(settings, part)
    return settings


# key, field, a good value and what it becomes, a bad value, its default, the one message.
MEMORY_KEYS = [
    (
        "recall.strategy",
        "recall.strategy",
        "lexical",
        "lexical",
        "smart",
        "model",
        "recall.strategy must be one of model, lexical, off (got 'smart'); using 'model'.",
    ),
    (
        "recall.waitMs",
        "recall.wait_ms",
        250.7,
        250,
        -1,
        0,
        "recall.waitMs must be a number of milliseconds >= 0 (got -1); using 0.",
    ),
    (
        "recall.timeoutMs",
        "recall.timeout_ms",
        0,
        0,
        "soon",
        10_000,
        "recall.timeoutMs must be a number of milliseconds >= 0 (got 'soon'); using 10000.",
    ),
    (
        "memory.mode",
        "log_mode",
        "log",
        True,
        "logs",
        False,
        "memory.mode must be 'log' or left out (got 'logs'); using topic files.",
    ),
    (
        "memory.extractEvery",
        "extraction.every",
        3,
        3,
        0,
        1,
        "memory.extractEvery must be a whole number >= 1 (got 0); using 1.",
    ),
    (
        "memory.extractGate",
        "extraction.gate",
        False,
        False,
        "off",
        True,
        "memory.extractGate must be true or false (got 'off'); using true.",
    ),
    (
        "memory.extractBatchTurns",
        "extraction.batch_turns",
        3,
        3,
        0,
        5,
        "memory.extractBatchTurns must be a whole number >= 1 (got 0); using 5.",
    ),
    (
        "memory.extractWaitSeconds",
        "extraction.wait_seconds",
        5,
        5.0,
        "soon",
        60.0,
        "memory.extractWaitSeconds must be a number >= 0 (got 'soon'); using 60.",
    ),
    (
        "memory.halfLifeDays",
        "forget.half_life_days",
        7,
        7.0,
        0,
        30.0,
        "memory.halfLifeDays must be a number of days > 0 (got 0); using 30.",
    ),
    (
        "memory.maxFiles",
        "forget.max_files",
        50,
        50,
        -3,
        200,
        "memory.maxFiles must be a number >= 1 (got -3); using 200.",
    ),
    (
        "memory.autoGc",
        "forget.auto_gc",
        False,
        False,
        "yes",
        True,
        "memory.autoGc must be true or false (got 'yes'); using true.",
    ),
    (
        "memory.autoDream",
        "dream.auto_dream",
        False,
        False,
        0,
        True,
        "memory.autoDream must be true or false (got 0); using true.",
    ),
    (
        "memory.dreamMaxTurns",
        "dream.max_turns",
        2,
        2,
        1,
        8,
        "memory.dreamMaxTurns must be a whole number >= 2 (got 1); using 8.",
    ),
    (
        "contextWindow",
        "compact.context_window",
        30_000,
        30_000,
        True,
        None,
        "contextWindow must be a whole number of tokens >= 1 (got True); using the model's window.",
    ),
    (
        "autoCompact",
        "compact.auto_compact",
        False,
        False,
        "no",
        True,
        "autoCompact must be true or false (got 'no'); using true.",
    ),
    (
        "autoCompactThreshold",
        "compact.threshold",
        60,
        0.6,
        150,
        None,
        "autoCompactThreshold must be a fraction of the window from 0 to 1, or a percentage up to "
        "100 (got 150); using the default threshold.",
    ),
]


@pytest.mark.parametrize(
    ("key", "path", "good", "typed", "bad", "default", "message"), MEMORY_KEYS, ids=[row[0] for row in MEMORY_KEYS]
)
def test_each_memory_setting_is_typed_and_a_bad_value_falls_back_with_one_message(
    key, path, good, typed, bad, default, message
) -> None:
    unset = memory_settings({}, environ={})
    assert unset.problems == () and field_of(unset, path) == default
    ok = memory_settings(nested(key, good), environ={})
    assert ok.problems == () and field_of(ok, path) == typed
    wrong = memory_settings(nested(key, bad), environ={})
    assert field_of(wrong, path) == default and wrong.problems == (message,)


def test_every_bad_value_is_named_once_and_the_good_ones_still_apply() -> None:
    data = {"recall": {"waitMs": -1, "timeoutMs": 500}, "memory": {"maxFiles": "many", "autoGc": False}}
    settings = memory_settings(data, environ={})
    assert (settings.recall.wait_ms, settings.recall.timeout_ms) == (0, 500)
    assert (settings.forget.max_files, settings.forget.auto_gc) == (200, False)
    assert [p.split(" ")[0] for p in settings.problems] == ["recall.waitMs", "memory.maxFiles"]


def test_a_group_that_is_not_an_object_counts_as_empty() -> None:
    settings = memory_settings({"recall": "off", "memory": ["log"]}, environ={})
    assert settings.recall == RecallSettings() and settings.log_mode is False
    assert settings.problems == (
        "recall must be an object (got 'off'); using the defaults.",
        "memory must be an object (got ['log']); using the defaults.",
    )


def test_non_finite_numbers_are_bad_values() -> None:
    settings = memory_settings({"recall": {"waitMs": math.inf}, "memory": {"halfLifeDays": math.nan}}, environ={})
    assert settings.recall.wait_ms == 0 and settings.forget.half_life_days == 30.0
    assert len(settings.problems) == 2


def test_the_local_model_defaults_recall_to_lexical_but_a_bad_strategy_is_model() -> None:
    assert memory_settings({}, "local").recall.strategy == "lexical"
    assert memory_settings({}, "claude-sonnet-4-6").recall.strategy == "model"
    assert memory_settings(nested("recall.strategy", "off"), "local").recall.strategy == "off"
    assert memory_settings(nested("recall.strategy", 3), "local").recall.strategy == "model"


def test_the_threshold_environment_variable_wins_and_is_never_reported() -> None:
    data = {"autoCompactThreshold": 0.5}
    assert memory_settings(data, environ={"CLAUDE_MINI_AUTOCOMPACT_PCT": "80"}).compact.threshold == 0.8
    unusable = memory_settings(data, environ={"CLAUDE_MINI_AUTOCOMPACT_PCT": "lots"})
    assert unusable.compact.threshold == 0.5 and unusable.problems == ()
    assert memory_settings({"autoCompactThreshold": "70"}, environ={}).compact.threshold == 0.7


def test_config_memory_follows_the_merged_settings_and_the_model(repo, files) -> None:
    write(files["user"], {"memory": {"extractEvery": 0}, "recall": {"timeoutMs": 500}})
    config = load_config(repo)
    assert config.memory.extraction.every == 1 and config.memory.recall.timeout_ms == 500
    assert config.memory.problems == ("memory.extractEvery must be a whole number >= 1 (got 0); using 1.",)
    config.model = "local"  # /model: recall's default strategy follows
    assert config.memory.recall.strategy == "lexical"
    assert ForgetSettings.from_config(None) == ForgetSettings() == config.memory.forget
    assert DreamSettings.from_config(config) == config.memory.dream == DreamSettings()


def test_removing_a_rule_keeps_the_model_the_session_switched_to(repo, files):
    """/permissions remove re-reads the settings, but /model local (or the offline fallback)
    stays: extraction, which is off for the offline model, must not come back on."""
    from claude_mini.config.edit import remove_permission_rule
    from claude_mini.memory.extract.part import Extractor
    from claude_mini.session import Session

    write(files["local"], {"model": "claude-haiku-4-5", "permissions": {"allow": ["Read", "Bash(ls)"]}})
    config = load_config(repo, trust_folder=True)
    config.model = "local"  # what /model local and runtime.make_client's fallback set
    extractor = Extractor.for_runtime(config, Session(repo), None, None, None)  # type: ignore[arg-type]
    assert remove_permission_rule(config, files["local"], "Bash(ls)") == ["allow"]
    assert config.model == "local"
    assert not extractor.enabled()
    assert config.get("permissions.allow") == ["Read"] and config.get("model") == "claude-haiku-4-5"


def test_the_config_package_exports_exactly_config_and_load_config() -> None:
    """The package's public surface (STYLE.md: a pinned surface); the rest is imported from its module."""
    import claude_mini.config as config

    assert sorted(config.__all__) == ["Config", "load_config"]
    assert all(hasattr(config, name) for name in config.__all__)


def test_adding_a_rule_creates_the_file_keeps_other_keys_and_the_session_follows(repo, files):
    from claude_mini.config.edit import add_permission_rule

    config = load_config(repo, trust_folder=True)
    assert add_permission_rule(config, "local", files["local"], "allow", "Bash(npm test)") is True
    assert json.loads(files["local"].read_text()) == {"permissions": {"allow": ["Bash(npm test)"]}}
    assert config.get("permissions.allow") == ["Bash(npm test)"]
    write(files["local"], {"model": "claude-haiku-4-5", "permissions": {"allow": ["Read"], "deny": ["Edit"]}})
    config = load_config(repo, trust_folder=True)
    assert add_permission_rule(config, "local", files["local"], "allow", "Bash(npm test)") is False
    add_permission_rule(config, "local", files["local"], "allow", "Bash(npm test)")  # not twice
    assert json.loads(files["local"].read_text()) == {
        "model": "claude-haiku-4-5",
        "permissions": {"allow": ["Read", "Bash(npm test)"], "deny": ["Edit"]},
    }


def test_adding_a_rule_to_a_broken_file_changes_nothing(repo, files):
    from claude_mini.config.edit import SettingsEditError, add_permission_rule

    files["local"].parent.mkdir(parents=True, exist_ok=True)
    files["local"].write_text('{"permissions": {"allow": "Read"}}')
    config = load_config(repo, trust_folder=True)
    with pytest.raises(SettingsEditError, match="not a list"):
        add_permission_rule(config, "local", files["local"], "allow", "Bash(ls)")
    assert files["local"].read_text() == '{"permissions": {"allow": "Read"}}'
