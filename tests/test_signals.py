"""The SIGTERM/SIGHUP handler (claude_mini/signals.py), run in a process of its own."""

from __future__ import annotations

import subprocess
import sys

from tests.processes import ends_soon

# A process that starts a tool's shell as tools/bash.py does (a session of its own) and gets
# the signal before the call has registered the group.
UNREGISTERED = """
import signal, subprocess, sys
from claude_mini import signals
child = subprocess.Popen(["sleep", "300"], start_new_session=True)
print(child.pid, flush=True)
signals._end_tools_and_exit(signal.SIGTERM, None)
"""


def test_a_tool_group_not_registered_yet_is_killed_too():
    """The signal can fall between the shell's start and its call registering the group (a
    fresh-clone CI run left a `sleep 300` behind): the groups our children lead are killed."""
    run = subprocess.run([sys.executable, "-c", UNREGISTERED], capture_output=True, text=True, timeout=60)
    pid = int(run.stdout.split()[0])
    try:
        assert run.returncode == 143, run.stderr
        assert "ended by SIGTERM with the command it was running" in run.stderr
        assert ends_soon(pid)
    finally:
        subprocess.run(["kill", "-9", str(pid)], capture_output=True)


# A call ran and ended (so the reaper runs, a child of ours leading its own group), then SIGTERM.
IDLE_AFTER_A_CALL = """
import signal, subprocess
from claude_mini import signals
shell = subprocess.Popen(["true"], start_new_session=True)
signals.tool_group_started(shell.pid)
shell.wait()
signals.tool_group_ended(shell.pid)
signals._end_tools_and_exit(signal.SIGTERM, None)
"""


def test_the_reaper_is_not_a_command_that_was_running():
    run = subprocess.run([sys.executable, "-c", IDLE_AFTER_A_CALL], capture_output=True, text=True, timeout=60)
    assert run.returncode == 143, run.stderr
    assert "claude-mini: ended by SIGTERM." in run.stderr and "with the command" not in run.stderr
