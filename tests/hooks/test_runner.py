"""run_hook_commands: real /bin/sh hooks with stdin JSON, environment, parallel runs, timeouts
and cancellation killing their process groups, capped output."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from claude_mini.hooks import runner
from claude_mini.hooks.config import HookCommand
from claude_mini.hooks.runner import HookRun, run_hook_commands
from tests.processes import alive, cancel_when_written, ends_soon, pid_in, slow_connect


def hook(command: str, timeout: float = 10.0) -> HookCommand:
    return HookCommand("PreToolUse", "", command, timeout, "project", ".claude/settings.json")


def run(
    tmp_path: Path, *hooks: HookCommand, payload: dict[str, Any] | None = None, env: dict[str, str] | None = None
) -> list[HookRun]:
    return asyncio.run(
        run_hook_commands(
            hooks, payload or {"hook_event_name": "PreToolUse"}, cwd=tmp_path, project_dir=tmp_path, env=env
        )
    )


def test_the_payload_arrives_on_stdin_as_one_json_object(tmp_path: Path) -> None:
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls café"}}
    [result] = run(tmp_path, hook("cat > got.json"), payload=payload)
    assert result.exit_code == 0
    got = (tmp_path / "got.json").read_bytes()
    assert got.endswith(b"}\n") and got.count(b"\n") == 1
    assert json.loads(got) == payload


def test_stdout_stderr_and_exit_code_are_kept_apart(tmp_path: Path) -> None:
    [result] = run(tmp_path, hook("echo out; echo err >&2; exit 3"))
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.timed_out and not result.error


def test_the_command_runs_in_sh_in_cwd_with_the_project_variables(tmp_path: Path) -> None:
    project, cwd = tmp_path / "project", tmp_path / "project" / "sub"
    cwd.mkdir(parents=True)
    command = 'echo "$0"; pwd; echo "$CLAUDE_PROJECT_DIR"; echo "$CLAUDE_MINI_PROJECT_DIR"; echo "$EXTRA"'
    [result] = asyncio.run(run_hook_commands([hook(command)], {}, cwd=cwd, project_dir=project, env={"EXTRA": "given"}))
    assert result.stdout.splitlines() == ["/bin/sh", str(cwd), str(project), str(project), "given"]


def test_hooks_run_at_the_same_time_and_come_back_in_order(tmp_path: Path) -> None:
    # Each waits (up to 5 s) for the other's marker: run one after the other, the first says "alone".
    wait_for = (
        "touch {me}; for i in $(seq 500); do [ -e {other} ] && {{ echo {me} saw {other}; exit 0; }}; sleep 0.01; done;"
        " echo alone"
    )
    first, second = run(tmp_path, hook(wait_for.format(me="a", other="b")), hook(wait_for.format(me="b", other="a")))
    assert (first.stdout, second.stdout) == ("a saw b\n", "b saw a\n")


def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    [result] = run(
        tmp_path, hook("echo $$ > shell.pid; sleep 30 & echo $! > child.pid; echo started; sleep 30", timeout=0.5)
    )
    assert result.timed_out and result.exit_code is None
    assert result.stdout == "started\n"
    assert ends_soon(pid_in(tmp_path / "child.pid")) and ends_soon(pid_in(tmp_path / "shell.pid"))


def test_a_timeout_escalates_to_sigkill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "KILL_GRACE", 0.2)
    # Ignored signals are inherited: the child sleep ignores SIGTERM too.
    [result] = run(tmp_path, hook("trap '' TERM; sleep 30 & echo $! > child.pid; wait", timeout=0.5))
    assert result.timed_out
    assert ends_soon(pid_in(tmp_path / "child.pid"))


def test_cancelling_the_caller_kills_the_groups_then_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []
    ended: list[int] = []
    monkeypatch.setattr(runner, "tool_group_started", started.append)
    monkeypatch.setattr(runner, "tool_group_ended", ended.append)
    pid_file = tmp_path / "child.pid"

    run = run_hook_commands(
        [hook("echo $$ > shell.pid; sleep 30 & echo $! > child.pid; wait"), hook("sleep 30")],
        {},
        cwd=tmp_path,
        project_dir=tmp_path,
    )

    async def cancel_once_both_run() -> None:
        """Cancel once both groups are registered (a cancel while asyncio still connects a shell
        ends it unregistered: the next test) and the first hook's child is running."""
        task = asyncio.ensure_future(run)
        for _ in range(1000):  # up to 20 s: a loaded machine can take seconds to start a shell
            if len(started) == 2 and pid_file.exists() and pid_file.read_text().strip():
                break
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_once_both_run())
    assert ends_soon(pid_in(pid_file))
    assert pid_in(tmp_path / "shell.pid") in started
    assert len(started) == 2 and sorted(ended) == sorted(started)  # SIGTERM to us would have killed them


def test_cancelling_while_asyncio_connects_the_shell_still_kills_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Esc can land while asyncio is still connecting a shell that has started the hook; asyncio
    then kills the shell alone, so the runner must end what the hook started."""
    pid_file = tmp_path / "child.pid"
    monkeypatch.setattr(runner.asyncio, "create_subprocess_exec", slow_connect(pid_file))
    run = run_hook_commands([hook("sleep 30 & echo $! > child.pid; wait")], {}, cwd=tmp_path, project_dir=tmp_path)
    asyncio.run(cancel_when_written(run, pid_file))
    assert ends_soon(pid_in(pid_file))


def test_a_hook_that_does_not_read_stdin_neither_hangs_nor_errs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    payload = {"tool_input": {"content": "x" * 1_000_000}}  # far more than a pipe holds
    with caplog.at_level(logging.DEBUG, logger="asyncio"):
        quick, slow = run(tmp_path, hook("exit 0"), hook("sleep 0.2; echo ok"), payload=payload)
    assert (quick.exit_code, slow.exit_code, slow.stdout) == (0, 0, "ok\n")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_background_child_holding_stdout_does_not_hold_the_run(tmp_path: Path) -> None:
    [result] = run(tmp_path, hook("sleep 60 & echo $! > bg.pid; echo done", timeout=20))
    try:
        # Not timed out, and the child still holding the pipe is alive: the run ended before it.
        assert (result.exit_code, result.stdout, result.timed_out) == (0, "done\n", False)
        assert alive(pid_in(tmp_path / "bg.pid"))
    finally:
        os.kill(pid_in(tmp_path / "bg.pid"), signal.SIGKILL)


def test_huge_output_is_capped_and_says_so(tmp_path: Path) -> None:
    [result] = run(tmp_path, hook("head -c 1000000 /dev/zero | tr '\\0' a; printf 'caf\\351' >&2"))
    kept, note = result.stdout.rsplit("\n", 1)
    assert kept == "a" * runner.OUTPUT_CAP
    assert note == f"[claude-mini: {1_000_000 - runner.OUTPUT_CAP:,} more bytes of stdout were not kept]"
    assert result.stderr == "caf\ufffd"  # not UTF-8: replaced, not an error


def test_a_command_that_cannot_start_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "SHELL", str(tmp_path / "no-such-shell"))
    [result] = run(tmp_path, hook("true"))
    assert result.exit_code is None and not result.timed_out
    assert result.error == f"No such file or directory: {tmp_path / 'no-such-shell'}"


def test_a_missing_program_is_an_ordinary_failure(tmp_path: Path) -> None:
    [result] = run(tmp_path, hook("no-such-program-here"))
    assert result.exit_code == 127 and "not found" in result.stderr


def test_a_hook_that_cannot_start_leaves_its_siblings_alone(tmp_path: Path) -> None:
    bad, good = run(tmp_path, hook("exit 2 \x00"), hook("echo ok"))
    assert (bad.exit_code, bad.error) == (None, "embedded null byte")
    assert (good.exit_code, good.stdout) == (0, "ok\n")


class _OsWithoutFds:
    """runner's `os`, whose second pipe() fails as when the process has no descriptors left."""

    def __init__(self) -> None:
        self.pipes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def pipe(self) -> tuple[int, int]:
        self.pipes += 1
        if self.pipes == 2:
            raise OSError(24, "Too many open files")
        return os.pipe()


def test_no_file_descriptors_left_is_that_hooks_error_and_leaks_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(tmp_path, hook("true"))  # what lives as long as the process (the reaper's pipe) is opened first
    monkeypatch.setattr(runner, "os", _OsWithoutFds())
    before = len(os.listdir("/proc/self/fd"))
    first, second = run(tmp_path, hook("echo one"), hook("echo two"))
    assert (first.exit_code, first.error) == (None, "Too many open files")
    assert (second.exit_code, second.stdout) == (0, "two\n")
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_failure_after_the_start_is_that_hooks_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = runner._Feeder.send

    async def send(self: runner._Feeder, data: bytes) -> None:
        if b"boom" in data:
            raise RuntimeError("the pipe broke")
        await real(self, data)

    monkeypatch.setattr(runner._Feeder, "send", send)
    [result] = run(tmp_path, hook("sleep 30"), payload={"x": "boom"})
    assert (result.exit_code, result.error) == (None, "the pipe broke")
