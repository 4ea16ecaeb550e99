"""Reading one instruction file safely: regular text files of a bounded size, nothing else.

Files over MAX_FILE_BYTES are skipped; NUL bytes mean binary (skipped);
invalid UTF-8 is loaded with U+FFFD replacements and a note. Imports must
name a text file type, which keeps `@id_rsa` or `@build/app.bin` out of the prompt.
"""

from __future__ import annotations

import errno
import os
import stat

MAX_FILE_BYTES = 200_000  # larger files are skipped: they would swamp the context

# Imports must name a text file; this keeps `@id_rsa` or `@build/app.bin` out of the prompt.
TEXT_EXTENSIONS = frozenset({
    ".md", ".markdown", ".mdx", ".txt", ".text", ".rst", ".adoc", ".org", ".json", ".jsonc",
    ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".xml", ".csv", ".tsv", ".html", ".htm",
    ".css", ".scss", ".sql", ".graphql", ".proto", ".py", ".pyi", ".js", ".jsx", ".mjs",
    ".cjs", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".kts", ".scala", ".swift", ".c",
    ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".pl", ".lua", ".r", ".dart", ".ex",
    ".exs", ".erl", ".hs", ".ml", ".clj", ".sh", ".bash", ".zsh", ".fish", ".ps1", ".vue",
    ".svelte", ".tf", ".gradle", ".cmake", ".mk",
})
TEXT_NAMES = frozenset({"Makefile", "Dockerfile", "Justfile", "LICENSE", "README", "CODEOWNERS"})


class Unreadable(Exception):
    """A file that exists but cannot be used; the message is the reason shown."""


def os_reason(exc: OSError) -> str:
    """The skip reason shown for an OSError: symlink loop, not found, permission denied, ..."""
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return "not found"
    if exc.errno == errno.EACCES:
        return "permission denied"
    return f"unreadable ({exc.strerror or exc})"


def _read_bytes(real: str, size: int) -> bytes:
    """Up to MAX_FILE_BYTES + 1 bytes of a file whose size was `size` when stat'ed.

    Raw os.read, sized from the stat: open() builds buffered objects, and read(n)
    allocates n bytes up front; both cost more than the read itself for small files.
    """
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        data = os.read(fd, size + 1)
        while size < len(data) <= MAX_FILE_BYTES:  # it grew since stat: read on, to the limit
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return data


def read_text(real: str, info: os.stat_result) -> tuple[str, list[str]]:
    """Decoded text of a regular file (`info` is its stat) and notes about it; raises Unreadable."""
    if not stat.S_ISREG(info.st_mode):  # a FIFO would block, a folder is no file
        raise Unreadable("not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise Unreadable(f"too large ({info.st_size:,} bytes; limit {MAX_FILE_BYTES:,})")
    try:
        data = _read_bytes(real, info.st_size)
    except OSError as exc:
        raise Unreadable(os_reason(exc)) from exc
    if len(data) > MAX_FILE_BYTES:  # it grew since stat
        raise Unreadable(f"too large (over {MAX_FILE_BYTES:,} bytes)")
    if b"\0" in data:
        raise Unreadable("binary file")
    try:
        return data.decode("utf-8").removeprefix("\ufeff"), []
    except UnicodeDecodeError:
        note = "not valid UTF-8: undecodable bytes shown as U+FFFD"
        return data.decode("utf-8", errors="replace").removeprefix("\ufeff"), [note]


def is_text_name(path: str) -> bool:
    """Whether the file name says text (an extension in TEXT_EXTENSIONS or a name in TEXT_NAMES)."""
    name = os.path.basename(path)
    return name in TEXT_NAMES or os.path.splitext(name)[1].lower() in TEXT_EXTENSIONS
