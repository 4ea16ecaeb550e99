"""Process groups of the commands claude-mini starts (Bash calls, hooks, MCP servers): signal
one, and tell whether any live process is left in it (zombies nobody reaps do not count)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path


async def group_gone(pgid: int) -> None:
    """Return once no live process is left in the group."""
    while group_alive(pgid):
        await asyncio.sleep(0.02)


def group_alive(pgid: int) -> bool:
    """Whether any non-zombie process remains in the group.

    A zombie still counts for killpg(pgid, 0), and orphans are not always reaped
    promptly (e.g. in containers whose PID 1 does not reap), so on Linux we look
    at /proc to ignore zombies.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc_root = Path("/proc")
    if not proc_root.is_dir():
        return True
    return any(_live_member(entry, pgid) for entry in proc_root.iterdir() if entry.name.isdigit())


def _live_member(proc_dir: Path, pgid: int) -> bool:
    try:
        stat = (proc_dir / "stat").read_text()
    except OSError:
        return False
    # Fields after the parenthesised command name: state, ppid, pgrp, ...
    fields = stat[stat.rfind(")") + 2 :].split()
    return len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X")


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send `sig` to the group; one that is gone already is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
