"""The reaper (claude_mini/reaper.py): what it ends when its pipe closes, and what it leaves."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from claude_mini import reaper
from tests.processes import alive, ends_soon

# A process that registers two groups as claude-mini does, ends one, then dies by SIGKILL.
REGISTERS = """
import os, signal, subprocess
from claude_mini import reaper, signals
kept = subprocess.Popen(["sleep", "300"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
ended = subprocess.Popen(["sleep", "300"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
signals.tool_group_started(kept.pid)
signals.tool_group_started(ended.pid)
signals.tool_group_ended(ended.pid)
print(kept.pid, ended.pid, reaper._process.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_sigkill_ends_the_registered_groups_and_leaves_the_ended_one() -> None:
    run = subprocess.run([sys.executable, "-c", REGISTERS], capture_output=True, text=True, timeout=60)
    kept, ended, watcher = (int(pid) for pid in run.stdout.split())
    try:
        assert run.returncode == -9
        assert ends_soon(kept)
        assert ends_soon(watcher)  # the reaper has done all it will do
        assert alive(ended)  # its owner let it go (a background child outliving its call)
    finally:
        for pid in (kept, ended):
            subprocess.run(["kill", "-9", str(pid)], capture_output=True)


def test_a_group_that_ignores_sigterm_gets_sigkill() -> None:
    stubborn = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 300 & wait"], start_new_session=True)
    read_fd, write_fd = os.pipe()
    script = reaper.__file__
    watcher = subprocess.Popen([sys.executable, "-I", "-S", script], stdin=read_fd)
    os.close(read_fd)
    try:
        os.write(write_fd, f"+{stubborn.pid}\n+0\n+1\nnonsense\n".encode())
        os.close(write_fd)
        assert watcher.wait(timeout=30) == 0
        assert stubborn.wait(timeout=10) == -9
    finally:
        stubborn.kill()


def test_a_forked_child_does_not_hold_the_parents_reaper(tmp_path: Path) -> None:
    """A forked child (no exec) has the pipe's write end: it is closed there, or the parent's
    reaper would wait for that child before ending anything."""
    code = f"""
import os, subprocess, time
from pathlib import Path
from claude_mini import reaper, signals
group = subprocess.Popen(["sleep", "300"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
signals.tool_group_started(group.pid)
Path({str(tmp_path)!r}, "group").write_text(str(group.pid))
if os.fork() == 0:
    Path({str(tmp_path)!r}, "child").write_text(f"{{os.getpid()}} {{reaper._connected()}}")
    time.sleep(300)
"""
    subprocess.run([sys.executable, "-c", code], timeout=60, check=True)
    wait_for = tmp_path / "child"
    deadline = time.monotonic() + 30
    while not (wait_for.exists() and wait_for.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    child, connected = wait_for.read_text().split()
    group = (tmp_path / "group").read_text()
    try:
        assert connected == "False"
        assert ends_soon(int(group))  # the parent has exited; its forked child still sleeps
        assert alive(int(child))
    finally:
        subprocess.run(["kill", "-9", child, group], capture_output=True)
