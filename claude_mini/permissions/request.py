"""One tool call as the permission rules see it: the paths it names (as written and with symlinks
resolved) and, for Bash, the command line and every command it might run (computed once)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_mini.shell.bash_reads import absolute_path, literal_prefix
from claude_mini.shell.candidates import command_candidates
from claude_mini.shell.parse import SimpleCommand


@dataclass
class ToolRequest:
    """One tool call, with the paths and commands rules are matched against."""

    tool: str
    input: dict[str, Any]
    cwd: str
    paths: tuple[str, ...] = ()  # absolute, as written (normalised)
    real_paths: tuple[str, ...] = ()  # the same with symlinks resolved
    is_dir: bool = False
    command: str | None = None
    _candidates: list[SimpleCommand] | None = None

    @property
    def all_paths(self) -> tuple[str, ...]:
        """The paths both as written and resolved: deny rules match either, allow rules need both."""
        return self.paths + self.real_paths

    @property
    def candidates(self) -> list[SimpleCommand]:
        """Every command the Bash line might run (computed once)."""
        if self._candidates is None:
            self._candidates = command_candidates(self.command or "")
        return self._candidates


def build_request(tool: str, input: Any, cwd: str) -> ToolRequest:
    """The paths or the command line of a call, resolved against `cwd`, for the rules to match."""
    input = input if isinstance(input, dict) else {}
    req = ToolRequest(tool, input, cwd)
    if tool == "Bash":
        command = input.get("command")
        req.command = command if isinstance(command, str) else None
    elif tool in ("Grep", "Glob"):
        folder = input.get("path") or "."
        if isinstance(folder, str):
            target = absolute_path(folder, cwd)
            if tool == "Glob" and isinstance(input.get("pattern"), str):
                target = _glob_base(target, input["pattern"])
            req.paths, req.is_dir = (target,), True
    elif isinstance(path := input.get("file_path") or input.get("notebook_path"), str) and path:
        req.paths = (absolute_path(path, cwd),)
    req.real_paths = tuple(real_path(p) for p in req.paths)
    return req


def real_path(path: str) -> str:
    """`path` with symlinks resolved; as written where a link cannot be read (`/proc/1/root`)."""
    try:
        return os.path.realpath(path)
    except OSError:
        return path


def _glob_base(folder: str, pattern: str) -> str:
    """The folder a Glob really searches: the literal part of the pattern (it may be absolute or use ..)."""
    literal = literal_prefix(pattern)
    if pattern.startswith("/"):
        return os.path.normpath(literal or "/")
    return absolute_path(literal, folder) if literal else folder


def cwd_of(source: Path | str | Callable[[], Path]) -> str:
    """The absolute working folder of a policy whose cwd may be a callable (the Bash tool's `cd`)."""
    return os.path.abspath(source() if callable(source) else source)
