"""SIGTERM and SIGHUP: end the running tools' processes too, then exit with 128 + the signal.

Bash runs each command in its own process group (tools/bash.py), so the shell and
everything it started would outlive claude-mini ended by `kill`, `timeout`, a
closed terminal or a stopped service. Each running call registers its group here
(hooks and stdio MCP servers too); the same registry feeds the reaper (reaper.py),
which ends the groups left when claude-mini is killed with SIGKILL or crashes.

On the signal, every registered group is killed at once; the exit itself waits for
the event loop's next turn (when one is running), so no transcript line is being
written when the process ends. A tool call left without its result is answered
when the session is resumed (`Session.repair`), as after any crash. The terminal's
settings from start-up are put back, since the REPL may have changed them. The last
line says what is true of the transcript: the UI registers how to tell
(`report_last_words`, `session.transcript_state` of its current session), so this
module needs nothing of the session.

Imported at start-up by `__main__`, so it imports nothing heavy.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import termios
from collections.abc import Callable
from types import FrameType
from typing import Any

from claude_mini import reaper

EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_RESET_TERMINAL = "\x1b[0m\x1b[?25h\x1b[?2004l\r\n"  # attributes, cursor shown, bracketed paste off

_tool_groups: set[int] = set()
_saved_tty: list[Any] | None = None


def _no_session() -> str:
    # Before a UI reports its session there is none: what session.transcript_state says of none.
    return "Nothing of this session was saved"


_last_words: Callable[[], str] = _no_session


def report_last_words(describe: Callable[[], str]) -> None:
    """How the exit line says whether the transcript of the UI's session now is saved (the session
    changes with /clear and /resume, so it is asked at the exit)."""
    global _last_words
    _last_words = describe


def install_exit_handlers() -> None:
    """Handle SIGTERM and SIGHUP for the rest of the process (main thread only)."""
    global _saved_tty
    with contextlib.suppress(termios.error, OSError, ValueError):
        _saved_tty = termios.tcgetattr(sys.stdin.fileno())
    for sig in EXIT_SIGNALS:
        signal.signal(sig, _end_tools_and_exit)


def tool_group_started(pgid: int) -> None:
    """A process group of ours runs now (a Bash call's, a hook's, a stdio MCP server's): kill it
    if claude-mini is told to end, and have the reaper end it if claude-mini is killed."""
    _tool_groups.add(pgid)
    reaper.group_started(pgid, _tool_groups)


def tool_group_ended(pgid: int) -> None:
    """The call or server that owned this group is over (its background children are left alone)."""
    _tool_groups.discard(pgid)
    reaper.group_ended(pgid)


def _end_tools_and_exit(signum: int, frame: FrameType | None) -> None:
    for sig in EXIT_SIGNALS:  # a second signal ends the process at once
        signal.signal(sig, signal.SIG_DFL)
    groups = (_tool_groups | _child_groups()) - {reaper.reaper_pid()}  # it ends at our exit, by itself
    stopped = bool(groups)
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        _exit(signum, stopped)
    else:
        loop.call_soon_threadsafe(_exit, signum, stopped)


def _child_groups() -> set[int]:
    """The process groups our own children lead. A Bash call's shell starts one (a session of
    its own, tools/bash.py) and can run its command before the call has registered it: on a
    loaded machine the signal can fall in between."""
    me, groups = os.getpid(), set()
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            _state, ppid, pgid, *_ = stat[stat.rfind(")") + 2 :].split()
            if int(ppid) == me and int(pgid) == int(entry.name):
                groups.add(int(pgid))
    return groups


def _exit(signum: int, stopped: bool) -> None:
    """Put the terminal back, say why in one line, and end the process with 128 + signum."""
    name = signal.Signals(signum).name
    also = " with the command it was running" if stopped else ""
    if _saved_tty is not None:
        with contextlib.suppress(termios.error, OSError, ValueError):
            termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, _saved_tty)
            if sys.stdout.isatty():
                sys.stdout.write(_RESET_TERMINAL)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.write(f"claude-mini: ended by {name}{also}. {_transcript_line()}.\n")
        sys.stderr.flush()
    os._exit(128 + signum)


def _transcript_line() -> str:
    """What is true of the transcript; the exit must happen even if that cannot be known."""
    try:
        return _last_words()
    except Exception as exc:  # the process ends next: say what failed instead
        return f"Whether the transcript is saved is unknown ({type(exc).__name__})"
