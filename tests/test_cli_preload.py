"""Print mode starts importing the SDK early (cli._preload_sdk) unless the model, from flags,
environment or settings, is the local one."""

from pathlib import Path

import pytest

from claude_mini import cli
from claude_mini.config import load_config


@pytest.mark.parametrize(
    ("settings", "flags", "expected"),
    [
        ("{}", {}, True),
        ('{"model": "local"}', {}, False),  # the model in settings counts too
        ("{}", {"model": "local:/models/m.gguf"}, False),
        ('{"model": "local"}', {"model": "claude-opus-4-5"}, True),
    ],
)
def test_the_sdk_is_preloaded_only_for_a_remote_model(repo: Path, monkeypatch, settings, flags, expected):
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(settings)
    monkeypatch.delenv("CLAUDE_MINI_MODEL", raising=False)
    calls = []
    monkeypatch.setattr(cli, "preload_sdk", lambda: calls.append(True))
    cli._preload_sdk(load_config(repo, flags, trust_folder=True))
    assert bool(calls) is expected
