"""Bash: output, exit codes, persistent cwd, truncation, timeouts and interrupts killing the group."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from claude_mini.tools import ToolContext
from claude_mini.tools.bash import BashTool
from tests.processes import cancel_when_written, ends_soon, pid_in, slow_connect


def test_returns_stdout_and_stderr(run) -> None:
    result = run(BashTool(), command="echo out; echo err >&2")
    assert result.content == "out\nerr"
    assert not result.is_error
    assert result.metadata["exit_code"] == 0


def test_nonzero_exit_is_an_error_with_code(run) -> None:
    result = run(BashTool(), command="echo failing; exit 3")
    assert result.is_error
    assert result.content == "failing\n\nExit code 3"
    assert result.metadata["exit_code"] == 3


def test_exit_status_of_last_command_survives_the_cwd_trap(run) -> None:
    result = run(BashTool(), command="false")
    assert result.is_error
    assert result.metadata["exit_code"] == 1


def test_no_output_is_said(run) -> None:
    assert run(BashTool(), command="true").content == "(no output)"


def test_killed_by_signal_is_named(run) -> None:
    result = run(BashTool(), command="kill -9 $$")
    assert result.is_error
    assert "SIGKILL" in result.content


def test_stdin_is_devnull(run) -> None:
    result = run(BashTool(), command="cat; echo done", timeout=10_000)
    assert result.content == "done"


def test_runs_in_ctx_cwd(tmp_path: Path, run) -> None:
    assert run(BashTool(), command="pwd").content == str(tmp_path)


def test_cd_persists_between_calls(tmp_path: Path, run, ctx: ToolContext) -> None:
    tool = BashTool()
    run(tool, command="mkdir sub && cd sub")
    assert ctx.cwd == tmp_path / "sub"
    assert run(tool, command="pwd").content == str(tmp_path / "sub")
    assert run(tool, command="cd .. && pwd").content == str(tmp_path)


def test_cd_persists_through_exit_and_set_e(tmp_path: Path, run, ctx: ToolContext) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    run(BashTool(), command="cd a; exit 4")
    assert ctx.cwd == tmp_path / "a"
    run(BashTool(), command="set -e; cd ../b; false; echo unreachable")
    assert ctx.cwd == tmp_path / "b"


def test_trailing_comment_does_not_break_cwd_tracking(tmp_path: Path, run, ctx: ToolContext) -> None:
    (tmp_path / "c").mkdir()
    run(BashTool(), command="cd c # go there")
    assert ctx.cwd == tmp_path / "c"


def test_vanished_cwd_falls_back_to_project_root(tmp_path: Path, run, ctx: ToolContext) -> None:
    ctx.cwd = tmp_path / "gone"
    result = run(BashTool(), command="pwd")
    assert str(tmp_path) in result.content
    assert "no longer exists" in result.content
    assert ctx.cwd == tmp_path


def test_long_output_keeps_head_and_tail(run) -> None:
    result = run(BashTool(), command="seq 1 100000")
    text = result.content
    assert text.startswith("1\n2\n3\n")
    assert text.endswith("99999\n100000")
    assert "characters of output omitted" in text
    assert len(text) < 30_200
    # seq 1 100000 prints 588,895 characters; 30,000 are kept.
    assert "[558,895 characters of output omitted]" in text


def test_timeout_kills_the_whole_process_group(tmp_path: Path, run) -> None:
    command = "echo started; sleep 60 & echo $! > child.pid; sleep 60"
    result = run(BashTool(kill_grace=1.0), command=command, timeout=500)
    assert result.is_error
    assert result.metadata["timed_out"] is True
    assert "timed out after 0.5 s" in result.content
    assert "started" in result.content  # partial output is kept
    assert ends_soon(pid_in(tmp_path / "child.pid"))


def test_timeout_escalates_to_sigkill(tmp_path: Path, run) -> None:
    # Ignored signals are inherited, so the child sleep ignores SIGTERM too.
    command = "trap '' TERM; sleep 60 & echo $! > child.pid; wait"
    result = run(BashTool(kill_grace=0.3), command=command, timeout=300)
    assert result.metadata["timed_out"] is True
    assert ends_soon(pid_in(tmp_path / "child.pid"))


def test_cancellation_kills_the_process_group(tmp_path: Path, ctx: ToolContext) -> None:
    pid_file = tmp_path / "child.pid"

    call = BashTool(kill_grace=1.0).call({"command": "sleep 60 & echo $! > child.pid; wait"}, ctx)
    asyncio.run(cancel_when_written(call, pid_file))
    assert ends_soon(pid_in(pid_file))


def test_background_child_does_not_hold_the_call(tmp_path: Path, run) -> None:
    result = run(BashTool(), command="sleep 30 & echo $! > bg.pid; echo done", timeout=10_000)
    try:
        assert not result.metadata["timed_out"]
        assert result.content.startswith("done")
    finally:
        os.kill(pid_in(tmp_path / "bg.pid"), signal.SIGKILL)


def test_timeout_is_capped_at_ten_minutes(run) -> None:
    assert not run(BashTool(), command="true", timeout=10**9).is_error


def test_cancellation_while_asyncio_connects_the_shell_still_kills_the_command(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Esc can land while asyncio is still connecting a shell that has started its command (a
    loaded machine: about 1 run in 6 beside other tests); asyncio then kills the shell alone, so
    what the command started must be ended by the call."""
    from claude_mini.tools import bash as bash_module

    pid_file = tmp_path / "child.pid"
    monkeypatch.setattr(bash_module.asyncio, "create_subprocess_exec", slow_connect(pid_file))

    call = BashTool(kill_grace=1.0).call({"command": "sleep 60 & echo $! > child.pid; wait"}, ctx)
    asyncio.run(cancel_when_written(call, pid_file))
    assert ends_soon(pid_in(pid_file))


def test_cancellation_while_the_output_pipe_is_attached_still_kills_the_command(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Esc can land after the shell started but before its pipe is attached (a loaded machine):
    what it started must not outlive the call."""
    from claude_mini.tools import bash as bash_module

    pid_file = tmp_path / "child.pid"
    real_open = bash_module._Pipe.open

    async def slow_open(read_fd, output):  # the command runs meanwhile
        while not (pid_file.exists() and pid_file.read_text().strip()):
            await asyncio.sleep(0.02)
        await asyncio.sleep(60)
        return await real_open(read_fd, output)

    monkeypatch.setattr(bash_module._Pipe, "open", classmethod(lambda cls, fd, out: slow_open(fd, out)))

    call = BashTool(kill_grace=1.0).call({"command": "sleep 60 & echo $! > child.pid; wait"}, ctx)
    asyncio.run(cancel_when_written(call, pid_file))
    assert ends_soon(pid_in(pid_file))


def test_the_default_timeout_comes_from_bash_default_timeout_ms(run, monkeypatch) -> None:
    monkeypatch.setenv("BASH_DEFAULT_TIMEOUT_MS", "300")
    result = run(BashTool(kill_grace=0.3), command="sleep 5")
    assert result.is_error and "timed out after 0.3 s" in result.content
    monkeypatch.setenv("BASH_MAX_TIMEOUT_MS", "200")  # the most the model may ask for
    result = run(BashTool(kill_grace=0.3), command="sleep 5", timeout=60_000)
    assert result.is_error and "timed out after 0.2 s" in result.content
