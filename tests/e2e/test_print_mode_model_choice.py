"""End to end: with no credentials, a model asked for by name fails; only an unnamed one falls
back to the offline model."""

from __future__ import annotations

import json

import pytest

from claude_mini.base import paths
from tests.e2e.conftest import trust_folder

NO_API = {"ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": ""}


@pytest.mark.parametrize("how", ["flag", "env", "settings"])
def test_a_named_model_without_credentials_exits_1_with_one_line(run_cli, repo, how):
    args, env = ["-p", "hi"], dict(NO_API)
    if how == "flag":
        args += ["--model", "claude-opus-4-5"]
    elif how == "env":
        env["CLAUDE_MINI_MODEL"] = "claude-opus-4-5"
    else:
        (repo / ".claude").mkdir()
        (repo / ".claude" / "settings.json").write_text(json.dumps({"model": "claude-opus-4-5"}))
        trust_folder(paths.home_dir(), repo)  # untrusted, the model is ignored
    result = run_cli(*args, env=env)
    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("claude-mini: The model claude-opus-4-5 needs") and "ANTHROPIC_API_KEY" in line
    assert "using the offline model" not in line


def test_make_client_refuses_a_named_model_for_the_repl_too(repo, isolated_env, monkeypatch):
    """The REPL builds its client with the same function (ui/startup.py -> build_runtime)."""
    from claude_mini.base.notices import NoticeChannel
    from claude_mini.config import load_config
    from claude_mini.runtime import SetupError, make_client

    monkeypatch.setenv("CLAUDE_MINI_MODEL", "claude-opus-4-5")
    with pytest.raises(SetupError, match="claude-opus-4-5 needs the Anthropic API"):
        make_client(load_config(repo), NoticeChannel())
