"""Background shells: `Bash` with `run_in_background`, read with BashOutput, ended with KillShell.

One `BackgroundShells` per session (on the main agent's `ToolContext`, shared with its forks and
subagents) holds every shell started in the background, named `bash_1`, `bash_2`, ... in order.
Each shell runs in its own process group, registered with signals.py from start to end, so
SIGTERM/SIGHUP and the reaper (kill -9 of claude-mini) end it like a foreground call; the session's
end (`close`) ends the rest.

Output (stdout and stderr interleaved) goes through a pipe we read on the event loop into a spool
file in a temp folder of the session's own, never into memory: when a spool passes
MAX_SPOOL_BYTES its older half is dropped, so a chatty dev server costs a bounded amount of disk
and the newest output is always there. A read returns what is new since the last one; what the cap
dropped in between is counted in a note.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from claude_mini.base.process_groups import group_alive, group_gone, signal_group
from claude_mini.signals import tool_group_ended, tool_group_started

MAX_SPOOL_BYTES = 8 * 1024 * 1024  # per shell on disk; past it the older half goes
MAX_READ_CHARS = 30_000  # one BashOutput result: the first and last halves of what is new
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL

Status = Literal["running", "completed", "failed", "killed"]


class Spool:
    """A file holding the newest output of one shell: bytes [start, total) of its stream."""

    def __init__(self, path: Path, cap: int = MAX_SPOOL_BYTES) -> None:
        self.path = path
        self.cap = cap
        self.start = 0  # stream offset of the file's first byte
        self.total = 0  # bytes the stream has produced
        self.problem = ""  # why the spool stopped writing, for the model
        self._file = open(path, "wb")  # noqa: SIM115 (open for the shell's life; closed in close())

    def write(self, data: bytes) -> None:
        """Append `data`; past the cap keep only the newest half of it. A disk that refuses it
        (full, gone) stops the spool, not the command: the pipe is still read, the rest dropped."""
        if self._file.closed or self.problem:
            return
        try:
            self._file.write(data)
            self._file.flush()
            self.total += len(data)
            if self.total - self.start > self.cap:
                self._drop_older()
        except OSError as exc:
            self.problem = (
                f"[Later output was dropped: it could not be written to {self.path} ({exc.strerror or exc}).]"
            )

    def _drop_older(self) -> None:
        keep = self.cap // 2
        size = self.total - self.start
        fresh = self.path.with_suffix(".new")
        with open(self.path, "rb") as old, open(fresh, "wb") as new:
            old.seek(size - keep)
            shutil.copyfileobj(old, new)
        os.replace(fresh, self.path)
        self._file.close()
        self._file = open(self.path, "ab")  # noqa: SIM115
        self.start = self.total - keep

    def read(self, offset: int, limit: int) -> tuple[bytes, int]:
        """The bytes from stream `offset` on (at most `limit`: the first and last halves, with a
        marker between) and how many bytes before them the cap dropped."""
        dropped = max(0, self.start - offset)
        offset = max(offset, self.start)
        size = self.total - offset
        with open(self.path, "rb") as fh:
            fh.seek(offset - self.start)
            if size <= limit:
                return fh.read(size), dropped
            head = fh.read(limit // 2)
            fh.seek(self.total - self.start - (limit - limit // 2))
            tail = fh.read()
        marker = f"\n\n... [{size - len(head) - len(tail):,} bytes of output omitted] ...\n\n".encode()
        return head + marker + tail, dropped

    def close(self) -> None:
        """Stop writing (the file stays until the session's folder goes)."""
        self._file.close()


@dataclass
class BackgroundShell:
    """One command running (or run) in the background, as BashOutput, KillShell and /bashes see it."""

    id: str
    command: str
    description: str
    pgid: int
    spool: Spool
    started: float = field(default_factory=time.monotonic)
    status: Status = "running"
    exit_code: int | None = None
    read_to: int = 0  # stream offset BashOutput has returned up to
    told: bool = False  # the model was told it ended (or it asked, or it was killed)
    note: str = ""  # what the sandbox removed after it, for the model
    ended: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def running(self) -> bool:
        return self.status == "running"

    def state(self) -> str:
        """`running`, `completed (exit code 0)`, `failed (exit code 2)` or `killed`."""
        if self.status in ("completed", "failed"):
            return f"{self.status} (exit code {self.exit_code})"
        return self.status

    def age(self) -> str:
        """How long ago it started, in whole seconds or minutes."""
        seconds = int(time.monotonic() - self.started)
        return f"{seconds}s" if seconds < 120 else f"{seconds // 60}m"

    def read_new(self, pattern: re.Pattern[str] | None) -> tuple[str, int]:
        """What is new since the last read (only lines matching `pattern`, if given; the others are
        consumed too), and how many bytes the disk cap dropped unread. While the shell runs, an
        unfinished last line waits for the next read when filtering, and a cut UTF-8 character always."""
        data, dropped = self.spool.read(self.read_to, MAX_READ_CHARS)
        end = self.spool.total
        if self.running:
            keep = _incomplete_tail(data) if pattern is None else len(data) - (data.rfind(b"\n") + 1)
            if keep and len(data) == end - max(self.read_to, self.spool.start):
                data, end = data[: len(data) - keep], end - keep
        self.read_to = end
        text = data.decode("utf-8", errors="replace")
        if pattern is not None:
            text = "\n".join(line for line in text.splitlines() if pattern.search(line))
        return text, dropped


def _incomplete_tail(data: bytes) -> int:
    """How many bytes at the end of `data` are an unfinished UTF-8 character."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # a lead byte (or ASCII): is its sequence complete?
            need = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 1
            return back if need > back else 0
    return 0


class UnknownShell(LookupError):
    """No shell of this session has the id asked for; the message says which there are."""


Spawn = Callable[[int], Awaitable[asyncio.subprocess.Process]]


class BackgroundShells:
    """The session's background shells: start, read, kill, list, and end them all."""

    def __init__(self, *, kill_grace: float = KILL_GRACE, cap: int = MAX_SPOOL_BYTES) -> None:
        self.kill_grace = kill_grace
        self.cap = cap
        self._shells: dict[str, BackgroundShell] = {}
        self._folder: str | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._count = 0
        self.on_end: Callable[[BackgroundShell], None] | None = None  # a shell ended on its own

    # ---- starting

    async def start(
        self, command: str, description: str, spawn: Spawn, after_exit: Callable[[], str] | None = None
    ) -> BackgroundShell:
        """Run the process `spawn(write_fd)` starts (a group leader writing to `write_fd`) in the
        background; `after_exit` runs when it exits and returns a note for the model."""
        self._count += 1
        shell_id = f"bash_{self._count}"
        spool = Spool(Path(self.folder()) / f"{shell_id}.out", self.cap)
        read_fd, write_fd = os.pipe()
        spawning = asyncio.ensure_future(spawn(write_fd))
        try:
            # Shielded: cancelled (Esc) while asyncio connects a shell that has started, the shell
            # would be killed alone and what its command started left running.
            proc = await asyncio.shield(spawning)
        except BaseException:
            os.close(read_fd)
            spool.close()
            with contextlib.suppress(BaseException):
                signal_group((await spawning).pid, signal.SIGKILL)
            raise
        finally:
            os.close(write_fd)
        tool_group_started(proc.pid)  # SIGTERM/SIGHUP and the reaper end it (signals.py, reaper.py)
        shell = BackgroundShell(shell_id, command, description, proc.pid, spool)
        self._shells[shell_id] = shell
        pipe_closed = await _read_into(read_fd, spool)
        self._watch(self._wait(shell, proc, pipe_closed, after_exit))
        return shell

    def folder(self) -> str:
        """The session's folder of spool files, made at the first background shell."""
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="claude-mini-shells-")
        return self._folder

    def _watch(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _wait(
        self,
        shell: BackgroundShell,
        proc: asyncio.subprocess.Process,
        pipe_closed: asyncio.Future[None],
        after_exit: Callable[[], str] | None,
    ) -> None:
        code = await proc.wait()
        # Let the last output land: the pipe closes when every writer is gone, soon after the shell
        # unless something it put in the background still holds it.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(pipe_closed), 0.5)
        if shell.status == "running":
            shell.status, shell.exit_code = ("completed" if code == 0 else "failed"), code
        if after_exit is not None:
            with contextlib.suppress(Exception):
                shell.note = after_exit()
        if not group_alive(shell.pgid):
            tool_group_ended(shell.pgid)
        shell.ended.set()
        if self.on_end is not None and shell.status != "killed":
            with contextlib.suppress(Exception):
                self.on_end(shell)

    # ---- reading

    def get(self, shell_id: str) -> BackgroundShell:
        """The shell called `shell_id`; UnknownShell names the ids there are."""
        shell = self._shells.get(shell_id.strip())
        if shell is not None:
            return shell
        known = ", ".join(self._shells) or "none yet"
        raise UnknownShell(f"No background shell {shell_id!r} in this session (shells: {known}).")

    def shells(self) -> list[BackgroundShell]:
        """Every shell of the session, oldest first."""
        return list(self._shells.values())

    def running(self) -> list[BackgroundShell]:
        """The shells still running."""
        return [s for s in self._shells.values() if s.running]

    def untold(self) -> list[BackgroundShell]:
        """Shells that ended since the model last heard of them; each is reported once."""
        ended = [s for s in self._shells.values() if not s.running and not s.told]
        for shell in ended:
            shell.told = True
        return ended

    # ---- ending

    async def kill(self, shell_id: str) -> BackgroundShell:
        """End the shell and everything it started (SIGTERM, then SIGKILL after the grace)."""
        shell = self.get(shell_id)
        if shell.running:
            shell.status, shell.told = "killed", True
        await self._end_group(shell)
        return shell

    async def _end_group(self, shell: BackgroundShell) -> None:
        signal_group(shell.pgid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(group_gone(shell.pgid), self.kill_grace)
        signal_group(shell.pgid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(shell.ended.wait(), self.kill_grace + 1.0)
        tool_group_ended(shell.pgid)

    async def close(self) -> None:
        """End every shell and whatever its commands left running, then remove the spool files."""
        for shell in self._shells.values():
            if shell.running:
                shell.status = "killed"
        live = [s for s in self._shells.values() if not s.ended.is_set() or group_alive(s.pgid)]
        await asyncio.gather(*(self._end_group(s) for s in live), return_exceptions=True)
        for task in list(self._tasks):
            task.cancel()
        for shell in self._shells.values():
            shell.spool.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


class _SpoolPipe(asyncio.Protocol):
    """The read end of a shell's output pipe, written to its spool as data arrives."""

    def __init__(self, spool: Spool) -> None:
        self.spool = spool
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.spool.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def _read_into(read_fd: int, spool: Spool) -> asyncio.Future[None]:
    """Start reading `read_fd` into `spool`; the future is done when the pipe closes."""
    pipe = _SpoolPipe(spool)
    file = os.fdopen(read_fd, "rb", buffering=0)
    await asyncio.get_running_loop().connect_read_pipe(lambda: pipe, file)
    return pipe.closed
