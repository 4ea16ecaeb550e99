"""End to end: a retry or stall setting in the environment that is not a number of seconds is named once
on stderr, and the default is used."""

from __future__ import annotations

from tests.fake_anthropic import Reply


def test_a_bad_wait_setting_is_said_once_and_the_default_kept(run_cli, fake_server):
    fake_server.queue(Reply.text("ok"))
    result = run_cli(
        "-p", "hi", env={"CLAUDE_MINI_STREAM_IDLE_SECONDS": "soon", "CLAUDE_MINI_RETRY_MAX_WAIT_SECONDS": "-1"}
    )
    assert result.returncode == 0 and result.stdout == "ok\n"
    lines = result.stderr.splitlines()
    assert lines == [
        "claude-mini: CLAUDE_MINI_RETRY_MAX_WAIT_SECONDS='-1' is not a number of seconds (0 or more); "
        "using 60. Unset it or give seconds, e.g. 30.",
        "claude-mini: CLAUDE_MINI_STREAM_IDLE_SECONDS='soon' is not a number of seconds (more than 0); "
        "using 90. Unset it or give seconds, e.g. 30.",
    ], result.stderr
