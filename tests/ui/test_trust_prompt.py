"""The REPL's trust question: what each answer does to the config and the record."""

from __future__ import annotations

import json

from claude_mini import trust
from claude_mini.config import load_config
from claude_mini.ui.trust_prompt import answer_trust, trust_explanation


def hostile(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))


def test_yes_records_and_applies_no_changes_nothing(repo, isolated_env):
    hostile(repo)
    config = load_config(repo)
    assert any("permissions.allow Bash" in line for line in trust_explanation(config))
    assert answer_trust(config, False) is None
    assert not config.trusted and config.get("permissions.allow") is None
    assert not trust.record_path().exists()
    assert answer_trust(config, True) is None
    assert config.trusted and config.get("permissions.allow") == ["Bash"] and config.warnings == []
    assert trust.is_trusted(repo) and load_config(repo).trusted


def test_yes_in_the_home_folder_is_for_this_session_only(repo, monkeypatch):
    hostile(repo)
    monkeypatch.setenv("HOME", str(repo))
    config = load_config(repo)
    note = answer_trust(config, True)
    assert note and "this session only" in note
    assert config.trusted and not trust.record_path().exists()


def test_yes_with_a_broken_record_trusts_this_session_and_keeps_the_file(repo, isolated_env):
    hostile(repo)
    trust.record_path().write_text("{broken")
    config = load_config(repo)
    note = answer_trust(config, True)
    assert note and "Could not record trust" in note and "this session only" in note and "\n" not in note
    assert config.trusted and config.get("permissions.allow") == ["Bash"]
    assert trust.record_path().read_text() == "{broken"
    assert [w for w in config.warnings if "trust record" in w]  # the broken record is still reported
