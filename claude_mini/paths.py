"""Where claude_mini keeps its files (DESIGN.md section 4). Functions, never import-time constants."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
from pathlib import Path


def home_dir() -> Path:
    """The user-level folder: `$CLAUDE_MINI_HOME`, default `~/.claude-mini`."""
    env = os.environ.get("CLAUDE_MINI_HOME")
    return Path(env).expanduser() if env else Path.home() / ".claude-mini"


def managed_dir() -> Path:
    """The managed (enterprise) folder: `$CLAUDE_MINI_MANAGED_DIR`, default `/etc/claude-mini`."""
    return Path(os.environ.get("CLAUDE_MINI_MANAGED_DIR") or "/etc/claude-mini")


@functools.lru_cache(maxsize=32)
def git_root(cwd: Path) -> Path | None:
    """The canonical root of the git repository containing `cwd` (shared by all worktrees).

    Cached: a session asks several times (settings, memory folder, prompt) and each
    answer costs a git process.
    """
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=cwd, capture_output=True, text=True, timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    common = Path(out.stdout.strip()).resolve()
    # The common dir of a normal repo or any of its worktrees is `<root>/.git`.
    return common.parent if common.name == ".git" else common


def path_key(path: Path) -> str:
    """`path` with every non-alphanumeric character replaced by `-`, cut with a hash past 200 chars."""
    key = re.sub(r"[^A-Za-z0-9]", "-", str(path))
    if len(key) > 200:
        key = key[:200] + "-" + hashlib.sha256(key.encode()).hexdigest()[:8]
    return key


def project_dir(cwd: Path) -> Path:
    """Per-directory folder for transcripts: `projects/<cwd-key>/`."""
    return home_dir() / "projects" / path_key(cwd.resolve())


def memory_dir(cwd: Path) -> Path:
    """The auto-memory folder of the project: keyed on the git root, else the cwd."""
    root = git_root(cwd) or cwd.resolve()
    return home_dir() / "projects" / path_key(root) / "memory"
