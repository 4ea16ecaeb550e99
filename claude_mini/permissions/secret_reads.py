"""Whether a call reads credentials (base/credentials.py: `~/.ssh`, `~/.aws`, `/proc/<pid>/environ`):
a Read, Grep or Glob of one or of a folder holding one, or a Bash line that names or searches one.
Such a call asks over any allow rule, and only the user answers (the extraction fork refuses it)."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import replace

from claude_mini.base.credentials import (
    credential_folders,
    secret_locations_inside,
    secret_read_location,
)
from claude_mini.permissions.decisions import Ask
from claude_mini.permissions.request import ToolRequest, real_path
from claude_mini.permissions.rules import READ_TOOLS
from claude_mini.shell.bash_reads import absolute_path, read_targets


def secret_read(req: ToolRequest) -> Ask | None:
    """Ask before a read of credentials (credentials.py: `~/.ssh`, `~/.aws`, `/proc/<pid>/environ`...):
    a Read of one, a Grep or Glob of one or of a folder holding one, a Bash line whose arguments name
    one or search a folder holding one. Only the user answers it (a hook's allow does not)."""
    if req.tool in READ_TOOLS:
        # Grep and Glob skip hidden files below their folder (every home credential location is
        # hidden), so only a search of, or inside, a location counts; /proc has no hidden files.
        deep = req.is_dir and any(p == "/proc" or p.startswith("/proc/") for p in req.all_paths)
        folders = credential_folders()
        where = next((w for p in req.all_paths if (w := _secret_in(p, deep, folders))), None)
        shown = req.input.get("file_path") or req.input.get("path") or req.input.get("pattern")
    elif req.tool == "Bash" and req.command is not None:
        where, shown = _bash_secret(req, credential_folders())
    else:
        return None
    if where is None:
        return None
    return Ask(
        f"{shown} reads {where}, which holds credentials; they would be sent to the model. "
        "Confirm only if you mean to share them",
        protected=True,
    )


def _secret_in(path: str, recursive: bool, folders: list[str]) -> str | None:
    """The credential location `path` is in or (searched recursively) holds, or None."""
    if where := secret_read_location(path, folders):
        return where
    if recursive and (inside := secret_locations_inside(path, folders)):
        return inside[0]
    return None


def _bash_secret(req: ToolRequest, folders: list[str]) -> tuple[str | None, str]:
    """The first credential location a Bash line reads by name (`cat ~/.ssh/id_ed25519`, `grep -r x ~`)."""
    home = os.path.expanduser("~")
    # `$HOME/.aws` is the home folder to the shell; the parser leaves the variable as written.
    commands = [
        replace(c, words=tuple(re.sub(r"^\$(?:HOME\b|\{HOME\})", lambda _: home, w) for w in c.words))
        for c in req.candidates
    ]
    for target in read_targets(commands, req.cwd, req.cwd):
        for path in (target.path, real_path(target.path)):
            if where := _secret_in(path, target.recursive, folders):
                return where, target.shown
    # Redirection targets (`tr x y < /proc/1/environ`) are not arguments: every word of the line counts.
    for word in _line_words(req.command or ""):
        word = re.sub(r"^\$(?:HOME\b|\{HOME\})", lambda _: home, word)
        if "/" not in word and not word.startswith("~"):
            continue
        path = absolute_path(word, req.cwd)
        if where := _secret_in(path, False, folders) or _secret_in(real_path(path), False, folders):
            return where, word
    return None, ""


def _line_words(command: str) -> list[str]:
    """The words of a whole Bash line, operators and redirections split off (quotes removed)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: the plain words still name the file
        return command.split()
