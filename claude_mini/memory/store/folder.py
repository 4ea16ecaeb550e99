"""The memory folder on disk: what its files are called, which are memories, how one is read.

Reading never raises for a bad file: binary, non-UTF-8 and unreadable files,
and symlinks that leave the folder, are skipped with a reason a person can act on.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from claude_mini.base.safe_read import Unreadable, read_file
from claude_mini.memory.store.errors import InvalidMemory

INDEX_FILENAME = "MEMORY.md"
USAGE_FILENAME = "usage.json"
ARCHIVE_DIR = "archive"
ARCHIVE_INDEX_FILENAME = "ARCHIVE.md"  # inside archive/: what was archived, so it can be restored
LOGS_DIR = "logs"
LIST_READ_BYTES = 64 * 1024  # list() only needs the frontmatter and the first body line
READ_MAX_BYTES = 1024 * 1024  # read() of a runaway file stops here (recall cuts to 4 KiB anyway)

_SAFE_FILENAME = re.compile(r"^[^\W_][\w.-]*$")  # letters/digits first; no separators or spaces
HEAD_LINES = 30  # DESIGN.md section 5: first 30 lines of each candidate
HEAD_READ_BYTES = 16 * 1024  # enough for 30 normal lines; a huge first line is cut here


@dataclass
class SkippedFile:
    """A file in the memory folder that is not a readable memory, and why."""

    path: Path
    reason: str


# --- filenames -------------------------------------------------------------------------
def slugify(text: str, max_len: int = 48) -> str:
    """A safe filename stem for `text`: lowercase words joined by '-' (e.g. for `memory add`)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(slug) > max_len:
        slug = slug[:max_len].rsplit("-", 1)[0] or slug[:max_len]
    return slug or "memory"


def safe_filename(filename: str) -> str:
    """`filename` checked to be a plain file in the memory folder, with `.md` appended if missing."""
    name = filename.strip()
    if not name.lower().endswith(".md"):
        name += ".md"
    if not _SAFE_FILENAME.match(name) or ".." in name:
        raise InvalidMemory(
            f"invalid memory filename {filename!r}: use letters, digits, '-', '_' or '.', "
            "no folders, no spaces, not starting with '.' (e.g. 'deploy-steps.md')"
        )
    if name.lower() == INDEX_FILENAME.lower():
        raise InvalidMemory(f"{INDEX_FILENAME} is the index, not a memory; pick another name")
    return name


# --- reading one file ------------------------------------------------------------------
def not_a_file(path: Path) -> str | None:
    """What `path` is when it is there but is no regular file (symlinks followed), else None.

    MEMORY.md made a directory, a FIFO (opening it would hang) or a symlink to nothing
    must read as missing, not fail or block every start.
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "a symlink to a missing file" if os.path.islink(path) else None
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    return "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket or device file"


def read_text_head(path: Path, limit: int) -> tuple[str | None, str | None]:
    """The first `limit` bytes of `path` as text, or (None, why it was skipped).

    Through safe_read: never a FIFO or device (a non-blocking open), /proc, /dev, /sys or a
    credential location, and never more than `limit` + 1 bytes read.
    """
    try:
        data = read_file(path, limit, cut=True)
    except OSError as e:
        return None, f"unreadable ({e.strerror or e})"
    except Unreadable as e:
        return None, str(e)
    truncated = len(data) > limit
    return _decode(data[:limit], truncated)


def _decode(data: bytes, truncated: bool) -> tuple[str | None, str | None]:
    """(text, None) or (None, reason the bytes are not a text memory)."""
    if b"\x00" in data[:8192]:
        return None, "binary file (contains NUL bytes)"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        # A read cut mid-character is fine; a bad byte anywhere else is not.
        if truncated and e.start >= len(data) - 3:
            return data[: e.start].decode("utf-8", errors="replace"), None
        return None, f"not UTF-8 (invalid byte at offset {e.start})"


# --- walking the folder ----------------------------------------------------------------
def iter_memory_entries(
    root: Path,
    skipped: list[SkippedFile] | None = None,
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(filename, DirEntry) of every memory file: `.md` except MEMORY.md, archive/, logs/, hidden.

    Directory symlinks are not followed (no loops); file symlinks must point
    inside the folder. Missing folder: nothing.
    """
    yield from _walk(str(root), "", skipped, os.path.realpath(root))


def _walk(
    folder: str,
    prefix: str,
    skipped: list[SkippedFile] | None,
    real_root: str,
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            if not prefix and name in (ARCHIVE_DIR, LOGS_DIR, INDEX_FILENAME):
                continue  # a MEMORY.md/ folder holds no memories: doctor --fix moves it aside
            yield from _walk(entry.path, f"{prefix}{name}/", skipped, real_root)
        elif name.endswith(".md") and not (not prefix and name == INDEX_FILENAME):
            if entry.is_symlink() and not resolves_inside(entry.path, real_root):
                if skipped is not None:
                    skipped.append(SkippedFile(Path(entry.path), "symlink pointing outside the memory folder"))
                continue
            if entry.is_file():  # not a FIFO or device: opening those could hang
                yield prefix + name, entry


def resolves_inside(path: str, real_root: str) -> bool:
    """Whether `path`, symlinks resolved, is a file strictly inside the folder `real_root`."""
    real = os.path.realpath(path)
    return real.startswith(real_root + os.sep) and os.path.isfile(real)
