"""The memory folder's layout: topic files are `.md` and MEMORY.md, the index, stays a file. A
Write/Edit or a Bash line that would break it is refused in every mode; a line that names the
index after a `cd` asks."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from claude_mini.base.text import within
from claude_mini.permissions.decisions import Ask, Deny
from claude_mini.permissions.request import ToolRequest
from claude_mini.permissions.rules import EDIT_TOOLS
from claude_mini.shell.bash_reads import absolute_path
from claude_mini.shell.parse import SimpleCommand
from claude_mini.shell.read_only import read_only_problem

INDEX_NAME = "MEMORY.md"  # the memory folder's index (memory/store/folder.py), never a folder


def memory_layout_problem(real: str, memory_dir: str) -> str | None:
    """Why an agent may not write `real` (a resolved path inside `memory_dir`), or None.

    The folder holds `.md` topic files (in subfolders too: the store reads them there) and
    MEMORY.md, the index, which must stay a regular file: written as a folder
    (`MEMORY.md/x.md`) it would leave every later start without an index.
    """
    parts = Path(os.path.relpath(real, memory_dir)).parts
    if real == memory_dir or not parts:
        return f"{memory_dir} is the memory folder itself; write a topic file inside it"
    if any(part.lower() == INDEX_NAME.lower() for part in parts[:-1]):
        return (
            f"{INDEX_NAME} in {memory_dir} is the memory index, a file: nothing can be written "
            f"inside it. Write topic files next to it (e.g. {memory_dir}/topic.md)"
        )
    if not parts[-1].endswith(".md"):
        return (
            f"only .md topic files and {INDEX_NAME} may be written in the memory folder "
            f"{memory_dir}; {parts[-1]} is neither"
        )
    return None


def _index_command_problem(command: SimpleCommand, cwd: str, memory_dir: str) -> str | None:
    """Why a shell command would make MEMORY.md a folder: a path below it, or the index itself
    as an argument of anything but a read-only command (mkdir, mv, cp -r and ln -s all could)."""
    index = os.path.join(memory_dir, INDEX_NAME)
    changes = read_only_problem(command) is not None
    for word in command.words[1:]:
        value = word.partition("=")[2] if word.startswith("-") and "=" in word else word
        lexical = absolute_path(value, cwd)
        for path in {lexical, os.path.realpath(lexical)}:
            where = _index_match(path, index)
            if where == "below":
                return (
                    f"{index} is the memory index, a file: this command would make it a folder "
                    f"({word}). Write topic files next to it instead"
                )
            if where == "at" and changes:
                return (
                    f"{index} is the memory index, a file: a shell command may only read it, and "
                    f"this one could replace it or make it a folder ({word}). Change it with Write or Edit"
                )
    return None


def _index_match(path: str, index: str) -> str | None:
    """ "at" if `path` (wildcards allowed, case ignored) names `index`, "below" if a path inside it."""
    parts, want = Path(path.lower()).parts, Path(index.lower()).parts
    if len(parts) < len(want) or not all(fnmatch.fnmatchcase(w, p) for w, p in zip(want, parts, strict=False)):
        return None
    return "below" if len(parts) > len(want) else "at"


def _names_index(part: str) -> bool:
    """Whether a path part names MEMORY.md: its letters say "memory" (a bare `*` or `*.*` does not)
    and, wildcards allowed, it matches the name ("MEMORY.md", "memory.m?", "MEMORY*")."""
    literal = re.sub(r"\[[^\]]*\]|[*?]", "", part).lower()
    return "memory" in literal and fnmatch.fnmatchcase(INDEX_NAME.lower(), part.lower())


def _index_after_cd(candidates: list[SimpleCommand]) -> str | None:
    """Why a line that changes directory and then names MEMORY.md (relative) needs approval."""
    moved = False
    for command in candidates:
        program = os.path.basename(command.words[0]) if command.words else ""
        moved = moved or program in ("cd", "pushd", "popd")
        if not moved or read_only_problem(command) is None or program in ("cd", "pushd", "popd"):
            continue
        for word in command.words[1:]:
            if not os.path.isabs(os.path.expanduser(word)) and any(_names_index(part) for part in Path(word).parts):
                return (
                    f"this line changes directory and then names {word}: whether that is the memory "
                    f"index ({INDEX_NAME}, a file) cannot be known in advance"
                )
    return None


def memory_layout_decision(req: ToolRequest, edit_dirs: list[str]) -> Deny | Ask | None:
    """Deny a Write/Edit, or a Bash line, that would break the memory folder's layout; ask
    when a Bash line names the index after a `cd` (where it lands cannot be known)."""
    if req.tool in EDIT_TOOLS:
        found = (memory_layout_problem(p, d) for p in req.real_paths for d in edit_dirs if within(p, d))
    elif req.tool == "Bash" and req.command is not None:
        found = (_index_command_problem(c, req.cwd, d) for c in req.candidates for d in edit_dirs)
    else:
        return None
    if problem := next((problem for problem in found if problem), None):
        return Deny(problem)
    if req.tool == "Bash" and edit_dirs and (doubt := _index_after_cd(req.candidates)):
        return Ask(doubt, protected=True)
    return None
