"""Edit: exact string replacement in a file the model has read.

The file keeps its encoding (UTF-8, UTF-8 with BOM, UTF-16 with BOM, or bytes
that are not UTF-8 via Latin-1, which round-trips every byte) and its line
endings: a file written with CRLF throughout is matched and written back with
CRLF, though the model sends "\\n".
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_mini.tools import ToolContext, ToolError, ToolResult, bool_arg, str_arg
from claude_mini.tools.base import DiskError
from claude_mini.tools.read import missing_file_message, record_read, sniff_encoding
from claude_mini.tools.write import require_fresh_read, unified_diff, write_file

SNIPPET_CONTEXT = 4
SNIPPET_MAX_LINES = 40

DESCRIPTION = """\
Performs an exact string replacement in a file.

- You must Read the file in this session before editing it, and it must not have changed since.
- old_string must match the file's text exactly, including indentation and blank lines. \
Copy it from the Read output WITHOUT the line-number prefix (everything up to and including \
the tab).
- old_string must occur exactly once, otherwise the edit fails: add surrounding lines to make \
it unique, or set replace_all to true to change every occurrence (useful for renames).
- new_string must differ from old_string.
- To create a new file, use Write (or Edit with an empty old_string on a path that does not \
exist yet).
- Prefer editing existing files to creating new ones."""


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path of the file to modify (absolute, or relative to the working directory)",
            },
            "old_string": {"type": "string", "description": "The exact text to replace"},
            "new_string": {
                "type": "string",
                "description": "The text to replace it with (must differ from old_string)",
            },
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace every occurrence of old_string (default false)",
            },
        },
        "required": ["file_path", "old_string", "new_string"],
        "additionalProperties": False,
    }


class EditTool:
    """The Edit tool: replace one (or every) exact occurrence of a string in a file."""

    name = "Edit"
    description = DESCRIPTION
    read_only = False

    def __init__(self) -> None:
        self.input_schema = _schema()

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """A file not read, or an old_string not found or not unique, fails before anyone is asked
        (a missing file without its neighbours' names: those are told once the Edit is allowed)."""
        path, old, new, replace_all = _arguments(input, ctx)
        _plan(path, old, new, replace_all, ctx.read_files.get(path), suggest=False)

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Apply the replacement atomically and record the new mtime as read."""
        path, old, new, replace_all = _arguments(input, ctx)
        seen = ctx.read_files.get(path)
        result, mtime = await asyncio.to_thread(_edit, path, old, new, replace_all, seen)
        record_read(ctx, path, mtime)
        return result


def _arguments(input: dict[str, Any], ctx: ToolContext) -> tuple[Path, str, str, bool]:
    """The file, old_string, new_string and replace_all of a call, checked."""
    path = ctx.resolve(str_arg(input, "file_path"))
    old = str_arg(input, "old_string", allow_empty=True)
    new = str_arg(input, "new_string", allow_empty=True)
    if old == new:
        raise ToolError("old_string and new_string are identical, so there is nothing to change.")
    return path, old, new, bool_arg(input, "replace_all")


@dataclass
class DecodedFile:
    """A file's text with what is needed to write it back the same way."""

    text: str
    encoding: str
    crlf: bool

    def encode(self, text: str, path: Path) -> bytes:
        if self.crlf:
            text = text.replace("\n", "\r\n")
        try:
            return text.encode(self.encoding)
        except UnicodeEncodeError:
            raise ToolError(
                f"{path} is stored as {self.encoding}, which cannot hold some characters of "
                "new_string. Use only characters that encoding supports, or rewrite the file with Write."
            ) from None


def _edit(path: Path, old: str, new: str, replace_all: bool, seen: float | None) -> tuple[ToolResult, float]:
    plan = _plan(path, old, new, replace_all, seen)
    if plan is None:
        return _create(path, new)
    decoded, updated = plan.decoded, plan.updated
    mtime = write_file(path, decoded.encode(updated, path))
    meta = {"path": str(path), "diff": unified_diff(path, decoded.text, updated), "replacements": plan.count}
    summary = _summary(path, updated, decoded.text.find(plan.old), plan.new, plan.count)
    return ToolResult(summary, metadata=meta), mtime


def _plan(
    path: Path,
    old: str,
    new: str,
    replace_all: bool,
    seen: float | None,
    *,
    suggest: bool = True,
) -> EditPlan | None:
    """What the Edit will do to the existing file (None: it creates the file), or why it cannot."""
    try:
        st = path.stat()
    except FileNotFoundError:
        if old:
            raise ToolError(missing_file_message(path, suggest) + " To create a file, use Write.") from None
        return None
    if path.is_dir():
        raise ToolError(f"{path} is a directory; Edit needs a file path.")
    require_fresh_read(path, st.st_mtime, seen)
    return plan_edit(path, old, new, replace_all)


@dataclass
class EditPlan:
    """What an Edit of an existing file will do: the decoded file, the strings as matched, the result."""

    decoded: DecodedFile
    old: str
    new: str
    updated: str
    count: int


def plan_edit(path: Path, old: str, new: str, replace_all: bool) -> EditPlan:
    """The text an existing file will hold after this Edit, or the ToolError the Edit would raise.

    The one place that decodes and replaces, shared with the memory secret guard so
    that what it scans is exactly what the Edit writes.
    """
    decoded = decode_file(path)
    if decoded.crlf:
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    updated, count = replace_text(decoded.text, old, new, replace_all, path)
    return EditPlan(decoded, old, new, updated, count)


def _create(path: Path, new: str) -> tuple[ToolResult, float]:
    """Edit with an empty old_string on a missing file creates it, as Claude Code allows."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DiskError(f"Could not create the folder {path.parent}: {exc.strerror or exc}.") from None
    mtime = write_file(path, new.encode("utf-8"))
    meta = {"path": str(path), "diff": unified_diff(path, "", new, created=True), "created": True}
    return ToolResult(f"Created {path}.", metadata=meta), mtime


def decode_file(path: Path) -> DecodedFile:
    """The file's text as Edit matches it (CRLF folded only when every line ends in CRLF)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ToolError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    encoding = sniff_encoding(data[:8192])
    if encoding is None:
        raise ToolError(f"{path} looks like a binary file (it contains NUL bytes); Edit works on text files only.")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        # Latin-1 maps every byte to one character and back, so untouched bytes survive intact.
        encoding, text = "latin-1", data.decode("latin-1")
    lf_only = text.count("\n") - text.count("\r\n")
    crlf = "\r\n" in text and lf_only == 0
    return DecodedFile(text.replace("\r\n", "\n") if crlf else text, encoding, crlf)


def replace_text(text: str, old: str, new: str, replace_all: bool, path: Path) -> tuple[str, int]:
    """`text` with `old` replaced, and the number of replacements; ToolError when not exactly one."""
    if not old:
        if text:
            raise ToolError(
                f"old_string is empty but {path} already exists and is not empty. "
                "Give the exact text to replace, or use Write to replace the whole file."
            )
        return new, 1
    count = text.count(old)
    if count == 0:
        raise ToolError(not_found_message(text, old, path))
    if count > 1 and not replace_all:
        lines = _match_lines(text, old)
        raise ToolError(
            f"old_string matches {count} places in {path} (at lines {lines}). Include more "
            "surrounding lines in old_string so it matches exactly once, or set replace_all "
            "to true to change every occurrence."
        )
    return (text.replace(old, new) if replace_all else text.replace(old, new, 1)), count


def _match_lines(text: str, old: str, shown: int = 10) -> str:
    starts = [m.start() for m in re.finditer(re.escape(old), text)]
    numbers = [str(text.count("\n", 0, s) + 1) for s in starts[:shown]]
    return ", ".join(numbers) + (", …" if len(starts) > shown else "")


_LINE_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def not_found_message(text: str, old: str, path: Path) -> str:
    """Why old_string did not match, with a hint when a near match explains it."""
    base = f"old_string was not found in {path}."
    if _LINE_PREFIX.search(old) and _LINE_PREFIX.sub("", old) in text:
        return base + (
            " It seems to include the line-number prefixes from the Read output; "
            "remove them (everything up to and including the tab) and retry."
        )
    line = _whitespace_insensitive_line(text, old)
    if line is not None:
        return base + (
            f" A match that differs only in whitespace or indentation starts at line {line}. "
            "Copy the exact text from a fresh Read, keeping its indentation (tabs vs spaces)."
        )
    if old.translate(_QUOTES) in text.translate(_QUOTES):
        return base + " A match exists with different quote characters (curly vs straight quotes)."
    if old.lower() in text.lower():
        return base + " A match exists that differs only in upper/lower case."
    return base + " Read the file again to get its current exact text, then retry."


def _whitespace_insensitive_line(text: str, old: str) -> int | None:
    """The first line where `old` matches if runs of whitespace are ignored, else None."""
    wanted = [_squash(line) for line in old.strip("\n").split("\n")]
    if not any(wanted):
        return None
    lines = [_squash(line) for line in text.split("\n")]
    for i in range(len(lines) - len(wanted) + 1):
        if lines[i : i + len(wanted)] == wanted:
            return i + 1
    return None


def _squash(line: str) -> str:
    return " ".join(line.split())


def _summary(path: Path, updated: str, position: int, new: str, count: int) -> str:
    """A confirmation plus a numbered snippet around the (first) change, for the model to check."""
    head = f"The file {path} has been updated ({count} replacement{'s' if count != 1 else ''})."
    if position < 0:
        return head
    lines = updated.split("\n")
    first = updated.count("\n", 0, position)
    last = first + new.count("\n")
    start = max(0, first - SNIPPET_CONTEXT)
    end = min(len(lines), last + SNIPPET_CONTEXT + 1, start + SNIPPET_MAX_LINES)
    snippet = "\n".join(f"{n + 1:>6}\t{lines[n]}" for n in range(start, end))
    return f"{head} A snippet of the result (cat -n style):\n{snippet}"
