"""Read: show a text file with numbered lines, the way `cat -n` does.

The file is streamed line by line, so a 1 GB log costs no more memory than the
lines shown. Every Read records the file's mtime in `ctx.read_files`; Write and
Edit refuse to touch an existing file the model has not seen in its current state.
"""

from __future__ import annotations

import asyncio
import codecs
import difflib
import io
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from claude_mini.tools import ToolContext, ToolError, ToolResult, int_arg, opt_str_arg, str_arg
from claude_mini.tools.media import is_image_path, is_pdf_path, load_image, load_pdf

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
# About 25k tokens: beyond this one Read would crowd out the rest of the context.
MAX_OUTPUT_CHARS = 100_000
SNIFF_BYTES = 8192

# Formats that are binary by nature; checked before opening the file at all.
BINARY_EXTENSIONS = frozenset(
    (
        *("png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tif", "tiff", "psd", "heic", "avif"),
        *("pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp"),
        *("zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "tar", "jar", "war", "whl", "egg"),
        *("exe", "dll", "so", "dylib", "o", "a", "lib", "obj", "bin", "class", "pyc", "pyo", "wasm"),
        *("mp3", "mp4", "wav", "flac", "ogg", "m4a", "aac", "avi", "mov", "mkv", "webm"),
        *("ttf", "otf", "woff", "woff2", "eot", "iso", "dmg", "img"),
        *("sqlite", "sqlite3", "db", "parquet", "npy", "npz", "pkl", "pickle"),
        *("pt", "pth", "onnx", "gguf", "safetensors", "h5"),
    )
)

DESCRIPTION = """\
Reads a text file from the local filesystem and returns its lines numbered like `cat -n` \
(line number, a tab, then the line).

- file_path may be absolute or relative to the current working directory.
- By default up to 2000 lines are returned from the start of the file. For long files pass \
offset (the 1-based line number to start at) and limit (how many lines) to read one part.
- Lines longer than 2000 characters are cut, with a marker saying so.
- The line-number prefix is not part of the file: never include it in Edit's old_string.
- Images (png, jpg, gif, webp) are shown to you as images; large ones are scaled down.
- PDFs are shown page by page as documents. One of more than 10 pages must be read in parts: \
pass pages (e.g. "1-5"), at most 20 pages a call.
- Jupyter notebooks (.ipynb) are shown as their cells with their outputs; edit them with NotebookEdit.
- Other binary files (archives, compiled code) are refused; use Bash for them if needed.
- Directories are refused: use Glob to find files or Bash `ls` to list a directory.
- You must Read a file before you Write over it or Edit it. It is fine to read several \
files at once by calling Read in parallel."""


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path of the file to read (absolute, or relative to the working directory)",
            },
            "offset": {
                "type": "integer",
                "description": "1-based line number to start reading from (default 1)",
            },
            "limit": {
                "type": "integer",
                "description": "Maximum number of lines to read (default 2000)",
            },
            "pages": {
                "type": "string",
                "description": 'Page range of a PDF ("3", "1-5"); at most 20 pages. Only for PDF files.',
            },
        },
        "required": ["file_path"],
        "additionalProperties": False,
    }


class ReadTool:
    """The Read tool: numbered lines of a text file, with an offset/limit window."""

    name = "Read"
    description = DESCRIPTION
    read_only = True

    def __init__(self) -> None:
        self.input_schema = _schema()

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """Nothing to check ahead: whether a path exists, and its neighbours' names, are what
        a prompt before a Read guards."""

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Read the requested window of the file and remember its mtime."""
        path = ctx.resolve(str_arg(input, "file_path"))
        offset = int_arg(input, "offset", 1, minimum=0) or 1  # 0 means "from the start"
        limit = int_arg(input, "limit", DEFAULT_LIMIT, minimum=1) or DEFAULT_LIMIT
        pages = opt_str_arg(input, "pages")
        result, mtime = await asyncio.to_thread(read_any, path, offset, limit, pages)
        record_read(ctx, path, mtime)
        return result


def read_any(path: Path, offset: int, limit: int, pages: str | None) -> tuple[ToolResult, float]:
    """Read's result by kind of file: an image or PDF as a block, a notebook's cells, else text."""
    from claude_mini.tools.notebook import read_notebook  # cycle: notebook.py uses this module's helpers

    st = _stat_regular_file(path)
    if pages is not None and not is_pdf_path(path):
        raise ToolError("`pages` is only for PDF files; use offset and limit for text.")
    if is_image_path(path) or is_pdf_path(path):
        loaded = load_image(path, path.name) if is_image_path(path) else load_pdf(path, path.name, pages)
        summary = (
            f"Read {path} ({loaded.summary}); it follows as {'an image' if is_image_path(path) else 'a document'}."
        )
        meta = {"path": str(path), "media": loaded.summary}
        return ToolResult(summary, metadata=meta, media=[loaded.block]), st.st_mtime
    if path.suffix.lower() == ".ipynb":
        return read_notebook(path)
    return read_numbered(path, offset, limit)


def record_read(ctx: ToolContext, path: Path, mtime: float) -> None:
    """Note that the model has seen `path` as of `mtime`; most recent last (for post-compact restore)."""
    ctx.read_files.pop(path, None)
    ctx.read_files[path] = mtime


def read_numbered(path: Path, offset: int, limit: int) -> tuple[ToolResult, float]:
    """The Read result for `path` and the mtime it reflects; ToolError if it cannot be shown."""
    st = _stat_regular_file(path)
    if path.suffix.lower().lstrip(".") in BINARY_EXTENSIONS:
        raise ToolError(
            f"{path} is a binary file ({path.suffix} format), which Read cannot show as text. "
            "Use Bash with a suitable tool (e.g. `file`, `xxd | head`) if you need to inspect it."
        )
    try:
        with open(path, "rb") as raw:
            window = _read_window(raw, path, offset, limit)
    except PermissionError:
        raise ToolError(f"Permission denied reading {path}.") from None
    content = window.render(path, offset)
    meta = {"path": str(path), "start_line": offset, "num_lines": len(window.lines)}
    return ToolResult(content, metadata=meta), st.st_mtime


def _stat_regular_file(path: Path) -> os.stat_result:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ToolError(missing_file_message(path)) from None
    except PermissionError:
        raise ToolError(f"Permission denied: cannot access {path}.") from None
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file. Use Glob to find files in it, or Bash `ls` to list it.")
    if not stat.S_ISREG(st.st_mode):
        # Reading a FIFO or a device could block forever or never end.
        raise ToolError(f"{path} is not a regular file (it is a pipe, socket or device); Read refuses it.")
    return st


def missing_file_message(path: Path, suggest: bool = True) -> str:
    """'File does not exist' plus, if `suggest`, close matches from the same folder when cheap to find."""
    message = f"File does not exist: {path}."
    parent = path.parent
    if not parent.is_dir():
        return message + f" Its directory {parent} does not exist either."
    if not suggest:
        return message
    try:
        with os.scandir(parent) as entries:
            # A huge directory is not worth scanning just for a hint.
            names = [e.name for _, e in zip(range(5000), entries, strict=False)]
    except OSError:
        return message
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    if close:
        message += " Did you mean: " + ", ".join(str(parent / n) for n in close) + "?"
    return message


@dataclass
class _Window:
    """The lines picked from a file plus what the reader should be told about them."""

    lines: list[str] = field(default_factory=list)
    total_seen: int = 0
    more_after: bool = False
    stopped_for_size: bool = False
    replaced_bytes: bool = False
    encoding: str = "utf-8"

    def render(self, path: Path, offset: int) -> str:
        if self.total_seen == 0:
            return f"(The file {path} exists but is empty.)"
        if not self.lines:
            return (
                f"(The file has only {self.total_seen} lines; offset {offset} is past its end. Use a smaller offset.)"
            )
        body = "\n".join(f"{offset + i:>6}\t{text}" for i, text in enumerate(self.lines))
        return body + "".join(f"\n\n{note}" for note in self._notes(offset))

    def _notes(self, offset: int) -> list[str]:
        notes = []
        last = offset + len(self.lines) - 1
        if self.stopped_for_size:
            notes.append(
                f"[Output stopped at line {last} to stay under {MAX_OUTPUT_CHARS:,} characters; "
                f"use offset={last + 1} to read on.]"
            )
        elif self.more_after:
            notes.append(f"[Showing lines {offset}-{last}; the file has more. Use offset={last + 1} to read on.]")
        if self.replaced_bytes:
            notes.append(
                "[Note: this file is not valid UTF-8. Undecodable bytes are shown as U+FFFD (\ufffd); "
                "Edit cannot match those characters.]"
            )
        elif self.encoding != "utf-8":
            notes.append(f"[Note: decoded as {self.encoding}.]")
        return notes


def _read_window(raw: IO[bytes], path: Path, offset: int, limit: int) -> _Window:
    head = raw.read(SNIFF_BYTES)
    encoding = sniff_encoding(head)
    if encoding is None:
        raise ToolError(
            f"{path} looks like a binary file (it contains NUL bytes), so Read cannot show it as text. "
            "Use Bash (e.g. `file`, `xxd | head`) if you need to inspect it."
        )
    raw.seek(0)
    # surrogateescape keeps invalid bytes recognisable so we can say that the file is not UTF-8.
    errors = "surrogateescape" if encoding.startswith("utf-8") else "replace"
    # Universal newlines: CRLF and CR become "\n" while decoding, so a CRLF pair is never split.
    with io.TextIOWrapper(raw, encoding=encoding, errors=errors, newline=None) as text:
        return _collect(text, offset, limit, encoding)


def _collect(text: IO[str], offset: int, limit: int, encoding: str) -> _Window:
    window = _Window(encoding=encoding)
    size = 0
    for number, line in enumerate(_iter_lines(text), start=1):
        window.total_seen = number
        if number < offset:
            continue
        if len(window.lines) >= limit or size >= MAX_OUTPUT_CHARS:
            window.more_after = True
            window.stopped_for_size = size >= MAX_OUTPUT_CHARS
            break
        line, replaced = _clean(line)
        window.replaced_bytes |= replaced
        window.lines.append(line)
        size += len(line) + 8
    return window


_SURROGATES = re.compile("[\udc80-\udcff]")


def _clean(line: str) -> tuple[str, bool]:
    """`line` with escaped undecodable bytes shown as U+FFFD, and whether there were any."""
    cleaned, count = _SURROGATES.subn("\ufffd", line)
    return cleaned, count > 0


def _iter_lines(text: IO[str]) -> Iterator[str]:
    """Yield lines without their endings; a line over MAX_LINE_CHARS is cut and marked.

    Reads in bounded pieces so that a file without newlines never sits in memory whole.
    """
    while True:
        line = text.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
            rest = _skip_rest_of_line(text)
            total = len(line) + rest
            yield f"{line[:MAX_LINE_CHARS]}… [line truncated: {total:,} characters in all]"
            continue
        yield line.removesuffix("\n")


def _skip_rest_of_line(text: IO[str]) -> int:
    """Consume the rest of an over-long line and return how many characters it had."""
    skipped = 0
    while True:
        piece = text.readline(65536)
        if not piece:
            return skipped
        if piece.endswith("\n"):
            return skipped + len(piece) - 1
        skipped += len(piece)


def sniff_encoding(head: bytes) -> str | None:
    """The codec for a file starting with `head`, or None if it looks binary.

    A BOM decides; otherwise NUL bytes mean binary (UTF-16 without a BOM is rare
    enough to treat as binary), and anything else is read as UTF-8.
    """
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if b"\x00" in head:
        return None
    return "utf-8"
