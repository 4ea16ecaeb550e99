"""The reaper: a small process that ends the process groups claude-mini started once claude-mini
has died, however it died.

signals.py ends the running groups on SIGTERM and SIGHUP, and each caller ends its own group on
a timeout or Esc; none of that runs on SIGKILL, an out-of-memory kill or a crash. So the first
time a group is registered (signals.tool_group_started: Bash calls, hooks, stdio MCP servers),
claude-mini starts this file as a script of its own, with the read end of a pipe as its stdin,
and writes `+PGID` / `-PGID` lines as groups start and end. The kernel closes the write end when
claude-mini ends; at that end of file the reaper sends SIGTERM to every group still registered,
allows GRACE seconds, sends SIGKILL to what is left, and exits. A normal exit leaves nothing
registered, so the reaper just exits.

Why not PR_SET_PDEATHSIG: it reaches only the direct child, not the rest of its group (a
`sleep 300 &` of the shell), and it fires when the spawning *thread* ends.

The script side imports only os, signal, sys and time and runs with `-I -S` (no site, no
environment), so it starts in a few milliseconds; it lives in its own session, away from the
terminal's Ctrl-C, with stdout and stderr on /dev/null so it never holds a pipe of whoever
started claude-mini (a caller waiting for claude-mini's output would otherwise wait for it too).
"""

from __future__ import annotations

import os
import signal
import sys
import time

GRACE = 1.0  # seconds between SIGTERM and SIGKILL
POLL = 0.05

_write_fd: int | None = None  # our end of the pipe; None until the first group, or after a failure
_owner = 0  # the pid that opened it: a forked child must not write into its parent's reaper
_process: object = None  # the Popen, kept so it is not garbage-collected with a warning


# ---------------------------------------------------------------- claude-mini's side


def group_started(pgid: int, registered: set[int]) -> None:
    """Tell the reaper a group runs now (`registered`: every group of ours, this one included,
    sent whole when a reaper has to be started first)."""
    if _connected() and _send(f"+{pgid}\n"):
        return
    if _start():
        _send("".join(f"+{group}\n" for group in sorted(registered)))


def group_ended(pgid: int) -> None:
    """The group's owner ended it (or let it go): the reaper forgets it."""
    if _connected():
        _send(f"-{pgid}\n")


def reaper_pid() -> int | None:
    """This process's reaper (it leads a group of its own, but it is not a command of ours)."""
    pid = getattr(_process, "pid", None)
    return pid if _connected() and isinstance(pid, int) else None


def _connected() -> bool:
    return _write_fd is not None and _owner == os.getpid()


def _start() -> bool:
    """Start a reaper reading a new pipe; False (and nothing started) when it cannot be."""
    global _write_fd, _owner, _process
    import subprocess  # claude-mini's side only: the script must start fast

    _forget()
    read_fd, write_fd = os.pipe()  # neither end is inherited by the commands we start (PEP 446)
    try:
        _process = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__)],
            stdin=read_fd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
        )
    except (OSError, ValueError):
        os.close(write_fd)
        return False
    finally:
        os.close(read_fd)
    _write_fd, _owner = write_fd, os.getpid()
    return True


def _send(lines: str) -> bool:
    """Write to the reaper; on failure (it was killed) forget it, so the next group starts another."""
    if _write_fd is None:
        return False
    try:
        os.write(_write_fd, lines.encode())  # a few bytes: one atomic write, well under PIPE_BUF
    except OSError:
        _forget()
        return False
    return True


def _forget() -> None:
    """Close our end of a reaper's pipe (in a forked child: the parent's, which must not stay open
    here, or the parent's reaper would wait for this child too)."""
    global _write_fd
    if _write_fd is not None:
        try:  # noqa: SIM105 (contextlib costs the script 16 ms of imports)
            os.close(_write_fd)
        except OSError:
            pass
    _write_fd = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


# ---------------------------------------------------------------- the reaper's side


def main() -> None:
    """Keep the registered groups until stdin ends, then end those left."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    groups: set[int] = set()
    pending = b""
    while chunk := os.read(0, 4096):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            _apply(groups, line)
    end_groups(groups)


def _apply(groups: set[int], line: bytes) -> None:
    sign, number = line[:1], line[1:]
    if not number.isdigit() or int(number) <= 1:  # never group 0 (our own) nor 1
        return
    if sign == b"+":
        groups.add(int(number))
    elif sign == b"-":
        groups.discard(int(number))


def end_groups(groups: set[int]) -> None:
    """SIGTERM every group, allow GRACE seconds for them to go, then SIGKILL those still there."""
    _signal_all(groups, signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    while (left := {g for g in groups if _alive(g)}) and time.monotonic() < deadline:
        time.sleep(POLL)
    _signal_all(left, signal.SIGKILL)


def _signal_all(groups: set[int], sig: signal.Signals) -> None:
    for pgid in groups:
        try:  # noqa: SIM105
            os.killpg(pgid, sig)
        except OSError:  # gone already
            pass


def _alive(pgid: int) -> bool:
    """Whether a live (not zombie) process is left in the group: orphans are reaped by PID 1,
    which in a container may never happen."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    return any(name.isdigit() and _member_state(name, pgid) not in ("", "Z", "X") for name in names)


def _member_state(pid: str, pgid: int) -> str:
    """The state letter of process `pid` when it is in group `pgid` ('' otherwise)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[0] if len(fields) > 2 and fields[2] == str(pgid) else ""


if __name__ == "__main__":
    main()
