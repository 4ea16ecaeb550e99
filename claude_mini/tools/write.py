"""Write: create a file or replace one the model has read, atomically.

Also home of what Write and Edit share: the read-before-write check, the atomic
replace and the unified diff the UI shows.
"""

from __future__ import annotations

import asyncio
import difflib
import os
from pathlib import Path
from typing import Any

from claude_mini.base.fileutil import atomic_write
from claude_mini.tools import ToolContext, ToolError, ToolResult, str_arg
from claude_mini.tools.base import DiskError
from claude_mini.tools.read import record_read

# difflib is quadratic in the worst case; past this size the UI gets no diff.
MAX_DIFF_CHARS = 1_000_000

DESCRIPTION = """\
Writes a file to the local filesystem, replacing it entirely if it exists.

- file_path may be absolute or relative to the current working directory; missing parent \
directories are created.
- If the file already exists you must Read it first in this session (and it must not have \
changed since), otherwise the call fails. This protects changes you have not seen.
- Prefer Edit for changing part of an existing file: it sends only the changed text.
- Only create new files when the task needs them; do not create documentation files \
(*.md, README) unless asked."""


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path of the file to write (absolute, or relative to the working directory)",
            },
            "content": {"type": "string", "description": "The complete new content of the file"},
        },
        "required": ["file_path", "content"],
        "additionalProperties": False,
    }


class WriteTool:
    """The Write tool: whole-file create or overwrite, guarded by read-before-write."""

    name = "Write"
    description = DESCRIPTION
    read_only = False

    def __init__(self) -> None:
        self.input_schema = _schema()

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """Overwriting a folder, or a file not read (or changed since), fails before anyone is asked."""
        path = ctx.resolve(str_arg(input, "file_path"))
        str_arg(input, "content", allow_empty=True)
        _check_overwrite(path, ctx.read_files.get(path))

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Write `content` to `file_path` and record the new mtime as read."""
        path = ctx.resolve(str_arg(input, "file_path"))
        content = str_arg(input, "content", allow_empty=True)
        seen = ctx.read_files.get(path)
        result, mtime = await asyncio.to_thread(_write, path, content, seen)
        record_read(ctx, path, mtime)
        return result


def _write(path: Path, content: str, seen_mtime: float | None) -> tuple[ToolResult, float]:
    existed, old = _existing_text(path, seen_mtime)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DiskError(f"Could not create the folder {path.parent}: {exc.strerror or exc}.") from None
    mtime = write_file(path, content.encode("utf-8"))
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    if existed:
        message = f"File written successfully: {path} ({lines} lines)"
    else:
        message = f"File created successfully at: {path} ({lines} lines)"
    diff = unified_diff(path, old, content, created=not existed) if old is not None else ""
    meta = {"path": str(path), "created": not existed, "diff": diff}
    return ToolResult(message, metadata=meta), mtime


def _existing_text(path: Path, seen_mtime: float | None) -> tuple[bool, str | None]:
    """Whether `path` exists and its current text (None when too big to diff), after the
    read-before-write check."""
    st = _check_overwrite(path, seen_mtime)
    if st is None:
        return False, ""
    if st.st_size > MAX_DIFF_CHARS:
        return True, None
    try:
        return True, path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise ToolError(f"Cannot read the current {path}: {exc.strerror or exc}.") from None


def _check_overwrite(path: Path, seen_mtime: float | None) -> os.stat_result | None:
    """The stat of the file a Write replaces (None: it creates one), or why it may not."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    if path.is_dir():
        raise ToolError(f"{path} is a directory; Write needs a file path.")
    require_fresh_read(path, st.st_mtime, seen_mtime)
    return st


def require_fresh_read(path: Path, mtime: float, seen_mtime: float | None) -> None:
    """Refuse to change a file the model has not read, or that changed after it read it."""
    if seen_mtime is None:
        raise ToolError(
            f"{path} already exists and has not been read in this session. "
            "Read it first, then retry; this prevents overwriting content you have not seen."
        )
    if mtime != seen_mtime:
        raise ToolError(
            f"{path} has been modified since you last read it (by the user or another program). "
            "Read it again to see the current content, then retry. Nothing was changed."
        )


def write_file(path: Path, data: bytes) -> float:
    """Replace `path` (a symlink's target) with `data` atomically; the new mtime. A failure is a DiskError."""
    try:
        return atomic_write(path, data, follow_symlinks=True)
    except OSError as exc:
        raise DiskError(f"Could not write {path}: {exc.strerror or exc}. The file was not changed.") from None


def unified_diff(path: Path, old: str, new: str, *, created: bool = False) -> str:
    """A unified diff from `old` to `new` for the UI ('' when too large to compute cheaply)."""
    if len(old) + len(new) > MAX_DIFF_CHARS:
        return ""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile="/dev/null" if created else str(path),
        tofile=str(path),
    )
    # difflib leaves a line without its newline glued to the next; mark it the way git does.
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
