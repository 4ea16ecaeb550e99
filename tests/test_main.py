"""`claude_mini.__main__`: the guess that starts the SDK import early in print mode."""

import pytest

from claude_mini.__main__ import _prints


@pytest.mark.parametrize(("args", "expected"), [
    (["-p", "hi"], True),
    (["--print", "--model", "claude-opus-4-1", "hi"], True),
    (["hi"], False),  # the REPL, which imports the SDK itself while you type
    (["-p", "--help"], False),
    (["-p", "hi", "--model", "local"], False),
    (["-p", "hi", "--model=local:/models/m.gguf"], False),
])
def test_print_mode_guess(args, expected, monkeypatch):
    monkeypatch.delenv("CLAUDE_MINI_MODEL", raising=False)
    assert _prints(args) is expected


def test_a_local_model_from_the_environment_needs_no_sdk(monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_MODEL", "local")
    assert _prints(["-p", "hi"]) is False
