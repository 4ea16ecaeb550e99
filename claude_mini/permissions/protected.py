"""Files whose edit asks in every mode but bypass, whatever the allow rules say: git's folders (and
the parts of a bare repository), claude-mini's settings, and what runs or steers the agent later
(hooks, agents, skills, commands, .mcp.json, .envrc, the scripts hook commands name)."""

from __future__ import annotations

import os
from pathlib import Path

from claude_mini.base import paths
from claude_mini.base.text import within

_SETTINGS_NAMES = ("settings.json", "settings.local.json")
# `.claude/<folder>/...` whose files run or steer the agent later (hooks, agent types, skills, commands).
_PROTECTED_CLAUDE_FOLDERS = frozenset({"hooks", "agents", "skills", "commands"})
# Files by name that start programs: MCP servers (.mcp.json) and direnv (.envrc, run on `cd`).
_PROTECTED_NAMES = frozenset({".mcp.json", ".envrc"})
# Where git looks for a repository inside a folder: writing the last of these makes it one.
_GIT_DIR_PARTS = ("HEAD", "objects", "refs", "config")


def completes_git_dir(path: str) -> bool:
    """Whether writing `path` helps make a folder that git would take for a bare repository.

    Git treats a folder holding `HEAD`, `objects/` and `refs/` as a repository and
    runs what its `config` names (core.fsmonitor on `git status`). Writing one of
    those parts where `HEAD` would then sit beside another part is protected, so
    the last piece of such a layout cannot be written without asking.
    """
    folder = os.path.dirname(path)
    name = os.path.basename(path)
    for _ in range(4):  # objects/ab/cdef..., refs/heads/main: the folder is at most a few levels up
        if name in _GIT_DIR_PARTS:
            present = {part for part in _GIT_DIR_PARTS if os.path.lexists(os.path.join(folder, part))}
            present.add(name)
            if "HEAD" in present and len(present) >= 2:
                return True
        folder, name = os.path.dirname(folder), os.path.basename(folder)
        if not name:
            break
    return False


def default_protected() -> list[Path]:
    """What an edit asks for unless the caller names its own list: claude-mini's user settings, the
    trusted folders, the managed folder and the user's hooks, agents, skills and commands."""
    home = paths.home_dir()
    return [
        home / "settings.json",
        home / "trusted-folders.json",
        paths.managed_dir(),
        *(home / folder for folder in sorted(_PROTECTED_CLAUDE_FOLDERS)),
    ]


def is_protected(all_paths: tuple[str, ...], protected: set[str]) -> bool:
    """Files whose edit could switch checks off or run code later (.git/config hooks, settings,
    the parts of a bare repository whose config git would obey)."""
    for path in all_paths:
        parts = path.split(os.sep)
        if ".git" in parts or (parts[-2:-1] == [".claude"] and parts[-1] in _SETTINGS_NAMES):
            return True
        if parts[-1] in _PROTECTED_NAMES or any(
            a == ".claude" and b in _PROTECTED_CLAUDE_FOLDERS for a, b in zip(parts, parts[1:], strict=False)
        ):
            return True
        if any(within(path, p) for p in protected) or completes_git_dir(path):
            return True
    return False
