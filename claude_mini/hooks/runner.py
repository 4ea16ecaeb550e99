"""Run the hook commands of one event occurrence: all at once, the payload on stdin.

Each command runs as Claude Code runs it: `/bin/sh -c <command>` (seen on Linux with
Claude Code 2.1.332, though its documentation names bash; a hook written for Claude Code
ran under sh), in the session's working directory, with the process environment plus
`CLAUDE_PROJECT_DIR` and `CLAUDE_MINI_PROJECT_DIR`, and the payload as one JSON object
and a newline on stdin, which is then closed.

Each command leads a process group of its own, registered with claude_mini.signals so a
SIGTERM to claude-mini ends it too. On its timeout the group gets SIGTERM, then SIGKILL
after `KILL_GRACE` seconds; when the caller is cancelled (Esc) every group is killed the
same way before the CancelledError goes on. Background children that keep stdout open
hold us `DRAIN_SECONDS` at most after the shell exits, never past the timeout.

tools/bash.py does much the same for the Bash tool; its helpers are private to it and
interleave stdout with stderr, while a hook's stdout (its JSON) and stderr (its reason)
must stay apart, so this module keeps its own small copies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.base.process_groups import signal_group
from claude_mini.signals import tool_group_ended, tool_group_started

if TYPE_CHECKING:
    from claude_mini.hooks.config import HookCommand

SHELL = "/bin/sh"
OUTPUT_CAP = 256 * 1024  # bytes kept of each of stdout and stderr; the rest is read and dropped
KILL_GRACE = 1.0  # seconds between SIGTERM and SIGKILL
DRAIN_SECONDS = 0.5  # after the shell exits, how long its children may keep our pipes open


@dataclass
class HookRun:
    """What one hook command did."""

    hook: HookCommand
    exit_code: int | None  # None when it timed out or could not start
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""  # could not start: one line
    seconds: float = 0.0


async def run_hook_commands(
    hooks: Sequence[HookCommand],
    payload: Mapping[str, Any],
    *,
    cwd: Path,
    project_dir: Path,
    env: Mapping[str, str] | None = None,
) -> list[HookRun]:
    """Run every hook at once, one HookRun per hook in the same order.

    `env` adds variables for these commands only (e.g. Claude Code's CLAUDE_ENV_FILE for
    SessionStart). Cancelling the caller kills every group, then raises CancelledError;
    nothing else is raised: a hook that cannot start or fails is its own HookRun's `error`.
    """
    data = (json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    environment = {
        **os.environ,
        "PWD": str(cwd),
        "CLAUDE_PROJECT_DIR": str(project_dir),
        "CLAUDE_MINI_PROJECT_DIR": str(project_dir),
        **(env or {}),
    }
    # Not a TaskGroup: one hook's failure must neither cancel the others nor reach the caller.
    results = await asyncio.gather(*(_run_one(hook, data, cwd, environment) for hook in hooks), return_exceptions=True)
    return [_as_run(hook, result) for hook, result in zip(hooks, results, strict=True)]


def _as_run(hook: HookCommand, result: HookRun | BaseException) -> HookRun:
    if isinstance(result, HookRun):
        return result
    if not isinstance(result, Exception):  # KeyboardInterrupt, SystemExit: not ours to keep
        raise result
    return HookRun(hook, None, "", "", error=_one_line(result))


async def _run_one(hook: HookCommand, stdin: bytes, cwd: Path, env: dict[str, str]) -> HookRun:
    started = time.monotonic()
    try:
        proc, (in_write, out_read, err_read) = await _start(hook.command, cwd, env)
    except Exception as exc:  # a NUL in the command, no file descriptors left, a deleted cwd...
        return HookRun(hook, None, "", "", error=_one_line(exc), seconds=time.monotonic() - started)
    tool_group_started(proc.pid)  # SIGTERM/SIGHUP to claude-mini kill it too (signals.py)
    feeder = _Feeder(in_write)
    out, err = _CappedPipe(out_read), _CappedPipe(err_read)
    timed_out = False
    try:
        await feeder.send(stdin)
        await out.connect()
        await err.connect()
        await asyncio.wait_for(proc.wait(), hook.timeout)
    except TimeoutError:
        timed_out = True
        await _stop_group(proc)
    except BaseException:  # cancelled (Esc) or failed: leave nothing running behind us
        out.close()
        err.close()
        await _stop_group(proc)
        raise
    finally:
        tool_group_ended(proc.pid)
        feeder.drop()
    left = hook.timeout - (time.monotonic() - started)
    await _drain((out, err), max(0.0, min(DRAIN_SECONDS, left)))
    return HookRun(
        hook,
        None if timed_out else proc.returncode,
        out.text("stdout"),
        err.text("stderr"),
        timed_out=timed_out,
        seconds=time.monotonic() - started,
    )


async def _start(
    command: str, cwd: Path, env: dict[str, str]
) -> tuple[asyncio.subprocess.Process, tuple[int, int, int]]:
    """The shell running `command`, and our ends of its stdin, stdout and stderr pipes."""
    fds: list[int] = []
    try:
        for _ in range(3):
            fds += os.pipe()
        in_read, in_write, out_read, out_write, err_read, err_write = fds
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                SHELL,
                "-c",
                command,
                stdin=in_read,
                stdout=out_write,
                stderr=err_write,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        )
        try:
            # Shielded: cancelled while connecting a shell that has started, asyncio would kill the
            # shell alone and leave what the hook started running (Esc on a loaded machine).
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            with contextlib.suppress(OSError):
                await _stop_group(await spawn)
            raise
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    for fd in (in_read, out_write, err_write):
        os.close(fd)
    return proc, (in_write, out_read, err_read)


class _Feeder:
    """The write end of the hook's stdin: the payload is sent, then stdin is closed once it
    is flushed, without waiting. A hook that never reads its stdin neither blocks us nor
    causes an error (asyncio's pipe transport is silent on a broken pipe)."""

    def __init__(self, write_fd: int) -> None:
        self.file = os.fdopen(write_fd, "wb", buffering=0)
        self.transport: asyncio.WriteTransport | None = None

    async def send(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        self.transport, _ = await loop.connect_write_pipe(asyncio.BaseProtocol, self.file)
        self.transport.write(data)
        self.transport.close()  # once the buffer is flushed

    def drop(self) -> None:
        """Throw away what the hook did not read (and close the pipe)."""
        if self.transport is None:
            self.file.close()
        elif self.transport.get_write_buffer_size():
            self.transport.abort()


async def _stop_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the whole group, allow KILL_GRACE seconds for its shell to go, then SIGKILL."""
    pgid = proc.pid  # start_new_session made the shell the group leader
    signal_group(pgid, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.shield(proc.wait()), KILL_GRACE)
    except TimeoutError:
        pass
    finally:
        signal_group(pgid, signal.SIGKILL)  # children that outlived the shell, or ignored TERM
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), 1.0)


async def _drain(pipes: Sequence[_CappedPipe], seconds: float) -> None:
    """Wait for the last output, then let go of pipes that background children keep open."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(asyncio.shield(p.closed) for p in pipes)), seconds)
    for pipe in pipes:
        pipe.close()


class _CappedPipe(asyncio.Protocol):
    """The read end of one of the hook's pipes, keeping its first OUTPUT_CAP bytes.

    Our own pipe rather than asyncio's PIPE, so that the shell's exit and the pipe's
    closing are separate events (see tools/bash.py's _Pipe).
    """

    def __init__(self, read_fd: int) -> None:
        self.file = os.fdopen(read_fd, "rb", buffering=0)
        self.kept = bytearray()
        self.dropped = 0
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.ReadTransport | None = None

    async def connect(self) -> None:
        self.transport, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: self, self.file)

    def data_received(self, data: bytes) -> None:
        room = OUTPUT_CAP - len(self.kept)
        self.kept += data[:room]
        self.dropped += max(0, len(data) - room)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        else:
            self.file.close()
            if not self.closed.done():
                self.closed.set_result(None)

    def text(self, name: str) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[claude-mini: {self.dropped:,} more bytes of {name} were not kept]"
        return text


def _one_line(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror + (f": {exc.filename}" if exc.filename else "")
    return " ".join(str(exc).split()) or type(exc).__name__
