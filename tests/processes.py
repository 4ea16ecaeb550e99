"""Whether a test's child processes are still running (the kernel's view, in /proc)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any


def alive(pid: int) -> bool:
    """Whether `pid` runs (zombies count as dead: a container's PID 1 may never reap them)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def gone(pid: int) -> bool:
    """No such process, or only its zombie."""
    return not alive(pid)


def ends_soon(pid: int, within: float = 30.0) -> bool:
    """Whether `pid` is gone within `within` seconds: a signalled process dies when the kernel
    next schedules it, which on a loaded 2-core machine is not always before the next line (the
    ceiling is generous: a process that does end returns at once)."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def pid_in(path: Path) -> int:
    """The process id a test's command wrote to `path`."""
    return int(path.read_text().strip())


async def cancel_when_written(work: Awaitable[object], pid_file: Path, *, tries: int = 1000) -> None:
    """Run `work`, cancel it once its command has written `pid_file` (up to `tries` × 20 ms: a
    loaded 2-core machine can take seconds to start a shell), and expect the cancellation back."""
    task = asyncio.ensure_future(work)
    for _ in range(tries):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        return
    raise AssertionError("the cancelled work finished instead of raising CancelledError")


def slow_connect(pid_file: Path) -> Callable[..., Awaitable[asyncio.subprocess.Process]]:
    """A `create_subprocess_exec` that, once the process has started, stays "connecting" until
    `pid_file` is written and a little after; cancelled meanwhile, it kills the process's pid
    alone, as asyncio does to a process it was still connecting (what a loaded machine hits)."""
    real_exec = asyncio.create_subprocess_exec

    async def slow_exec(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        proc = await real_exec(*args, **kwargs)
        try:  # still connecting: the command runs meanwhile, and Esc lands here
            while not (pid_file.exists() and pid_file.read_text().strip()):
                await asyncio.sleep(0.02)
            await asyncio.sleep(2)
        except asyncio.CancelledError:
            proc.kill()
            await proc.wait()
            raise
        return proc

    return slow_exec
