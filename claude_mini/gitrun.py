"""One git command's output, or None: for the parts that read git but must work without it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git_output(cwd: Path, args: list[str], timeout: float) -> str | None:
    """stdout of `git args` in `cwd`, or None (no git, not a repository, an error, too slow).

    Paths come unquoted (core.quotepath off), messages in English, no lock is taken and no
    prompt asked; output that is not UTF-8 is decoded with replacement characters.
    """
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=cwd, env=env,
                              capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None
