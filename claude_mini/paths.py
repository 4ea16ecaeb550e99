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


def _git_lines(cwd: Path, *args: str) -> list[str] | None:
    """The output lines of `git rev-parse <args>` in `cwd`, or None when git says no."""
    try:
        out = subprocess.run(["git", "rev-parse", "--path-format=absolute", *args],
                             cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.splitlines()
    return lines if out.returncode == 0 and len(lines) == len(args) and all(lines) else None


def _contains(folder: str, path: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _nearest_git_entry(real_cwd: str) -> str | None:
    """The nearest folder at or above `real_cwd` that holds a `.git` file or folder."""
    folder = real_cwd
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


@functools.lru_cache(maxsize=32)
def checkout_root(cwd: Path) -> Path | None:
    """The top of the work tree holding `cwd` (a linked worktree is its own), symlinks resolved.

    Trust and the project's settings are keyed on this folder (DESIGN.md section 8, Trust). git's own answer
    is used only when it contains `cwd`: a `.git` file may name a git dir whose
    `core.worktree` is another folder (a trusted repository's), and that folder must not
    become this one's root. Then the folder holding the nearest `.git` is the root.
    """
    real = os.path.realpath(cwd)
    lines = _git_lines(cwd, "--show-toplevel")
    if lines is None:
        return None
    top = os.path.realpath(lines[0])
    if _contains(top, real):
        return Path(top)
    nearest = _nearest_git_entry(real)
    return Path(nearest) if nearest else Path(real)


@functools.lru_cache(maxsize=32)
def git_root(cwd: Path) -> Path | None:
    """The canonical root of the repository holding `cwd`: the key of its memory folder.

    A linked worktree shares its main checkout's root, but only when that repository
    lists this worktree (its `worktrees/<name>/gitdir` points back at our `.git`): a
    `.git` file naming another repository's git dir gets a root (and memory) of its own.
    Submodules are keyed on their own checkout. Cached: a session asks several times and
    each answer costs git processes.
    """
    top = checkout_root(cwd)
    if top is None:
        return None
    lines = _git_lines(top, "--git-dir", "--git-common-dir")
    if lines is None:
        return top
    git_dir, common = (Path(os.path.realpath(line)) for line in lines)
    # The back link must sit inside the common dir: a git dir of the repository's own
    # making could name any `commondir` and point back at itself.
    registered = git_dir.parent == common / "worktrees" and _points_back(git_dir, top)
    return common.parent if registered and common.name == ".git" else top


def _points_back(git_dir: Path, top: Path) -> bool:
    """Whether a linked worktree's git dir records `top/.git` as its worktree (git's back link)."""
    try:
        recorded = (git_dir / "gitdir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return False
    return os.path.realpath(os.path.join(git_dir, recorded)) == os.path.realpath(top / ".git")


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
