"""Putting files back as they were before one of the user's messages.

Every file the assistant changed at or after that message (in time order, rewound-away turns
included) goes back to its content before the first of those changes; a file it created is
deleted. A file whose content is not what the assistant (or the last restore) left is "changed
outside" (by hand, a command, another program): it is not touched unless the user says so.
Bash commands are not undone: the plan lists those that may have changed files.

A file inside the project is restored only through real folders: when a folder between the
project root and the file has become a symbolic link since (a checkout, a command), or the file
now leads outside the project, writing or deleting it would act outside the repository, so it
is refused with one line, with or without --force. This is checked when planning and again
just before each file is touched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from claude_mini.base.fileutil import os_error_text
from claude_mini.base.text import one_line
from claude_mini.rewind.points import SessionCheckpoints
from claude_mini.rewind.store import Before, Change, Command, Restore, fingerprint
from claude_mini.session import PromptEntry
from claude_mini.tools.base import ToolError

Action = Literal["write", "delete", "none"]


@dataclass(frozen=True)
class FilePlan:
    """What restoring does to one file."""

    path: Path
    before: Before
    action: Action  # none: it already is as it was
    outside: bool  # changed outside the assistant since its last change
    problem: str = ""  # why it cannot be restored ('' when it can)


@dataclass(frozen=True)
class CodePlan:
    """Restoring the code to before `prompt`: one plan per file, and the commands not undone."""

    prompt: PromptEntry
    files: list[FilePlan]
    commands: list[str]
    root: Path  # the project root: nothing outside it is touched through a link

    @property
    def conflicts(self) -> list[FilePlan]:
        """Files that would be restored over a change made outside the assistant."""
        return [f for f in self.files if f.outside and not f.problem and f.action != "none"]


@dataclass
class CodeResult:
    """What a restore did, file by file."""

    written: list[Path] = field(default_factory=list)
    deleted: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    kept_outside: list[Path] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def changed(self) -> list[Path]:
        return self.written + self.deleted


def plan_code_restore(checkpoints: SessionCheckpoints, prompt: PromptEntry, *, root: Path) -> CodePlan:
    """What restoring the code to before `prompt` would do (reads the files, changes nothing);
    `root` is the project root, which no restore leaves through a symbolic link."""
    first: dict[str, Change] = {}
    commands: list[str] = []
    for record in checkpoints.since(prompt):
        if isinstance(record, Change):
            first.setdefault(record.path, record)
        elif isinstance(record, Command):
            commands.append(record.command)
    left = last_known_states(checkpoints)
    files = [_plan_file(checkpoints, Path(path), change.before, left[path], root) for path, change in first.items()]
    return CodePlan(prompt, files, list(dict.fromkeys(commands)), root)


def last_known_states(checkpoints: SessionCheckpoints) -> dict[str, str | None]:
    """Each file's content hash as the assistant's last change or the last restore left it."""
    left: dict[str, str | None] = {}
    for record in checkpoints.index.records:
        if isinstance(record, Change):
            left[record.path] = record.after
        elif isinstance(record, Restore):
            left.update(record.files)
    return left


def _plan_file(checkpoints: SessionCheckpoints, path: Path, before: Before, left: str | None, root: Path) -> FilePlan:
    escape = way_out(path, root)
    if escape:  # before reading it too: the content found through a link says nothing of ours
        return FilePlan(path, before, "none", False, escape)
    now = fingerprint(path)
    outside = now != left
    if before.state == "unrestorable":
        return FilePlan(path, before, "none", outside, before.why or "it is not restorable")
    wanted = before.sha if before.state == "kept" else None
    if now == wanted:
        return FilePlan(path, before, "none", False)
    if now == "folder":
        return FilePlan(path, before, "none", outside, "it is a folder now")
    if before.state == "kept" and checkpoints.history.blob(before.sha) is None:
        return FilePlan(
            path,
            before,
            "none",
            outside,
            f"its saved copy {checkpoints.history.blob_dir / before.sha} is missing or damaged",
        )
    return FilePlan(path, before, "delete" if wanted is None else "write", outside)


def apply_code_restore(checkpoints: SessionCheckpoints, plan: CodePlan, *, overwrite_outside: bool) -> CodeResult:
    """Restore the files of `plan` (those changed outside only with `overwrite_outside`) and record
    what they are now, so a later restore knows the assistant's state from a change by hand."""
    result = CodeResult()
    states: dict[str, str | None] = {}
    for item in plan.files:
        if item.problem:
            continue
        if item.action == "none":
            result.unchanged.append(item.path)
        elif item.outside and not overwrite_outside:
            result.kept_outside.append(item.path)
        else:
            error = way_out(item.path, plan.root) or _restore_file(checkpoints, item)
            if error:
                result.failed.append((item.path, error))
                continue
            (result.deleted if item.action == "delete" else result.written).append(item.path)
            states[str(item.path)] = fingerprint(item.path)
    if states:
        checkpoints.history.record_restore(plan.prompt.id, states)
    return result


def way_out(path: Path, root: Path) -> str:
    """Why writing or deleting `path` would act outside the project root ('' if it would not):
    a folder between the root and the file is a symbolic link now, or the file leads outside.

    A file outside the project (one the user let the assistant change) is not judged: its
    folders are the user's own, and may well be links."""
    relative = _below(path, root) or _below(path, Path(os.path.realpath(root)))
    if relative is None:
        return ""
    folder = path.parents[len(relative.parts) - 1]
    for part in relative.parts[:-1]:
        folder = folder / part
        if folder.is_symlink():
            return (
                f"its folder {relative_name(folder, root)} is now a symbolic link (to {_link_target(folder)}); "
                "nothing was written or deleted through it. Put the folder back, or restore the file by hand"
            )
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    if os.path.commonpath([real, real_root]) != real_root:
        return (
            f"it now leads outside the project (to {real}); nothing was written or deleted there. "
            "Restore the file by hand"
        )
    return ""


def _below(path: Path, root: Path) -> Path | None:
    """`path` relative to `root` when it is below it (None otherwise)."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        return None
    return relative if relative.parts else None


def _link_target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError as exc:
        return os_error_text(exc)


def relative_name(path: Path, root: Path) -> str:
    """`path` as the user knows it inside the project."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _restore_file(checkpoints: SessionCheckpoints, item: FilePlan) -> str:
    """Put one file back ('' when done, else why not)."""
    from claude_mini.tools.write import write_file

    try:
        if item.action == "delete":
            item.path.unlink(missing_ok=True)
            return ""
        data = checkpoints.history.blob(item.before.sha)
        if data is None:
            return "its saved copy is missing or damaged"
        existed = item.path.exists()
        item.path.parent.mkdir(parents=True, exist_ok=True)
        write_file(item.path, data)
        if not existed:  # deleted since: it gets its mode back (an existing file keeps its own)
            os.chmod(item.path, item.before.mode)
    except ToolError as exc:
        return str(exc)
    except OSError as exc:
        return os_error_text(exc)
    return ""


# ---------------------------------------------------------------- what the user reads


def shown(path: Path, cwd: Path) -> str:
    """A path relative to the working folder when it is below it."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def plan_problems(plan: CodePlan, cwd: Path) -> list[str]:
    """One line per file that cannot be restored."""
    return [f"{shown(f.path, cwd)} cannot be restored: {f.problem}." for f in plan.files if f.problem]


def conflict_lines(plan: CodePlan, cwd: Path) -> list[str]:
    """One line per file changed outside the assistant since its last change."""
    return [
        f"{shown(f.path, cwd)} was changed outside the assistant since its last change (by hand, a command "
        "or another program); restoring it would lose that change."
        for f in plan.conflicts
    ]


def result_lines(result: CodeResult, plan: CodePlan, cwd: Path) -> list[str]:
    """What a restore did, then what it left alone and why."""

    def names(files: list[Path]) -> str:
        return ", ".join(shown(p, cwd) for p in files)

    lines = []
    if result.written:
        lines.append(
            f"Restored {len(result.written)} file(s) as they were before that message: {names(result.written)}."
        )
    if result.deleted:
        lines.append(f"Deleted {len(result.deleted)} file(s) the assistant created: {names(result.deleted)}.")
    if not result.changed:
        untouched = result.kept_outside or result.failed or plan_problems(plan, Path())
        lines.append(
            "No file was restored."
            if untouched
            else "No file needed restoring: they already are as they were before that message."
        )
    if result.kept_outside:
        lines.append(f"Kept as they are (changed outside the assistant): {names(result.kept_outside)}.")
    lines += [f"Could not restore {shown(p, cwd)}: {why}" for p, why in result.failed]
    lines += plan_problems(plan, cwd)
    if plan.commands:
        lines.append(commands_line(plan.commands))
    return lines


def commands_line(commands: list[str]) -> str:
    """The commands whose effects a restore did not undo (Bash changes are not tracked)."""
    listed = ", ".join(f"`{one_line(c, 60)}`" for c in commands[:3]) + (
        f" and {len(commands) - 3} more" if len(commands) > 3 else ""
    )
    return f"Not undone: commands run since then may have changed files, which checkpoints do not track ({listed})."
