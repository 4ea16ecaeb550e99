"""Every entry path routes the package's log before anything runs: internal warnings never
reach the screen (logging's last resort printed them into the REPL); --debug shows them."""

from __future__ import annotations

import logging

import pytest

from claude_mini import __main__ as entry
from claude_mini.ui import repl


@pytest.fixture
def warning_in_the_repl(monkeypatch, isolated_env, tmp_path):
    """The REPL, replaced by one internal warning (as fork.py's cache-prefix mismatch logs)."""
    monkeypatch.chdir(tmp_path)
    logger = logging.getLogger("claude_mini")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "level", logging.NOTSET)

    def run_repl(config, *args, **kwargs):
        monkeypatch.setattr(logging.getLogger(), "handlers", [])  # as in a process without pytest's capture
        logging.getLogger("claude_mini.agent.fork").warning("cache-prefix mismatch (extract fork)")
        return 0

    monkeypatch.setattr(repl, "run_repl", run_repl)
    monkeypatch.setattr("claude_mini.signals.install_exit_handlers", lambda: None)


@pytest.mark.parametrize("args", [[], ["--model", "claude-sonnet-4-6"]])
def test_an_internal_warning_never_reaches_the_screen(warning_in_the_repl, capfd, args):
    with pytest.raises(SystemExit):
        entry.main(args)
    out, err = capfd.readouterr()
    assert "cache-prefix" not in out + err


def test_debug_shows_an_internal_warning_as_a_debug_line(warning_in_the_repl, capfd):
    with pytest.raises(SystemExit):
        entry.main(["--debug"])
    assert "claude-mini: debug: cache-prefix mismatch (extract fork)\n" in capfd.readouterr().err
