"""The one door for files that reach a prompt or steer a session: the same checks everywhere.

Instruction files, MEMORY.md (private, team, an agent type's), topic files, the memory policy
file, command and skill files, `@file` attachments, the files compaction restores, settings and
`.mcp.json` are all read here:

- never a known credential location (credentials.py) or anything under /proc, /dev or /sys,
  as written or resolved, whether the folder is trusted or not;
- never a FIFO, socket, device or folder: the open is non-blocking and the file's type is
  checked with fstat on what was opened, so a FIFO swapped in after a check cannot hang us;
- at most `limit` + 1 bytes are read, so a huge (or endless) file is never loaded whole;
- `inside`: a link whose target leaves that folder is refused (MEMORY.md must stay in its memory
  folder, the memory policy in the project). Instruction, command and skill files keep their own
  walkers' rule for an untrusted repository's links (memory/instructions/scope.py, skills/catalog.py).

Missing files raise FileNotFoundError (or NotADirectoryError), so callers can keep treating
"not there" as "empty"; every other problem is `Unreadable`, whose message is the reason shown.
It is in the base layer (it imports nothing of claude_mini outside it), so any layer may use it.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from collections.abc import Iterable

from claude_mini.base.credentials import FILE_NAMES, credential_folders, credential_location
from claude_mini.base.text import within

SYSTEM_ROOTS = ("/proc", "/dev", "/sys")  # live kernel state: environ, memory, endless devices
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


class Unreadable(Exception):
    """A file that exists but cannot or may not be used; the message is the reason shown."""


def os_reason(exc: OSError) -> str:
    """The skip reason shown for an OSError: symlink loop, not found, permission denied, ..."""
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return "not found"
    if exc.errno == errno.EACCES:
        return "permission denied"
    return f"unreadable ({exc.strerror or exc})"


def system_location(*spellings: str) -> str | None:
    """Which of /proc, /dev, /sys any spelling of a path lies in, else None."""
    for path in spellings:
        path = os.path.normpath(path)
        for root in SYSTEM_ROOTS:
            if path == root or path.startswith(root + os.sep):
                return root
    return None


def location_refusal(*spellings: str, folders: Iterable[str] | None = None) -> str | None:
    """Why no spelling of this path may ever be read into a prompt (credential or system
    location), trusted or not; None when it may. `folders`: the credential folders, if cached."""
    if folders is None:
        folders, prefixes = _credential_folders(os.environ.get("HOME"), os.environ.get("XDG_CONFIG_HOME"))
        # A cheap first look: credential_location (names, folders, the message) only on a hit.
        maybe = any(p in folders or p.startswith(prefixes) or _credential_name(p) for p in spellings)
    else:
        maybe = True
    credential = credential_location(*spellings, folders=folders) if maybe else None
    if credential:
        return f"it is {credential}, a credential location claude-mini never reads into a prompt"
    system = system_location(*spellings)
    if system:
        return f"it is under {system}, a system location claude-mini never reads"
    return None


def _credential_name(path: str) -> bool:
    name = os.path.basename(path)
    return name in FILE_NAMES or name.startswith(".env.")


@functools.lru_cache(maxsize=4)
def _credential_folders(home: str | None, xdg: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """credential_folders() for one HOME and XDG_CONFIG_HOME (the arguments key the cache), and
    each with a separator after it: resolving the home folder per file cost more than the read."""
    folders = tuple(credential_folders())
    return folders, tuple(f + os.sep for f in folders)


def kind_refusal(mode: int) -> str | None:
    """Why a file of this mode is no file to read (a FIFO would hang, a device never ends), else None."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file, not a regular file"
    return "not a regular file"


def read_capped(real: str, limit: int, *, cut: bool = False) -> bytes:
    """The bytes of the regular file at the resolved path `real`, reading at most `limit` + 1.

    For a caller that resolved and checked the path itself (the instruction loader, which caches
    its folders' real paths). `cut=False`: over `limit` raises Unreadable ("too large").
    `cut=True`: up to `limit` + 1 bytes come back, so the caller sees it was cut (more than
    `limit`) and keeps the head.
    """
    fd = _open(real)
    try:
        return _read_opened(fd, limit, cut)
    finally:
        os.close(fd)


def read_file(
    path: str | os.PathLike[str], limit: int, *, cut: bool = False, inside: str | os.PathLike[str] | None = None
) -> bytes:
    """The bytes of `path` through every check of this module (`limit`, `cut`: see read_capped).

    The order keeps each check cheap and every open harmless: the type first (a device is never
    opened, so opening has no side effect), then the open, then the path as written and the
    real path of what was opened (one readlink of /proc/self/fd, not a walk of every folder).
    """
    spelled = os.path.abspath(path)
    try:
        mode = os.stat(spelled).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as exc:
        raise Unreadable(os_reason(exc)) from exc
    problem = kind_refusal(mode)
    if problem:
        real = os.path.realpath(spelled)  # say where a link leads: `a device file ... /dev/zero`
        raise Unreadable(problem if real == spelled else f"{problem} (a link to {real})")
    fd = _open(spelled)
    try:
        _check_real(spelled, _opened_path(fd, spelled), inside)
        return _read_opened(fd, limit, cut)
    finally:
        os.close(fd)


def read_text_file(path: str | os.PathLike[str], limit: int, *, inside: str | os.PathLike[str] | None = None) -> str:
    """A whole UTF-8 text file (a leading BOM dropped) through `read_file`; invalid UTF-8 is Unreadable."""
    data = read_file(path, limit, inside=inside)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"not UTF-8 text (invalid byte at offset {exc.start})") from None


def _open(path: str) -> int:
    """A non-blocking read-only descriptor (a FIFO swapped in since the checks cannot hang it)."""
    try:
        return os.open(path, _OPEN_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as exc:
        raise Unreadable(os_reason(exc)) from exc


def _opened_path(fd: int, spelled: str) -> str:
    """The real path of the file open as `fd` (Linux names it in /proc); realpath elsewhere."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(spelled)


def _check_real(spelled: str, real: str, inside: str | os.PathLike[str] | None) -> None:
    """Refuse a path (as written or real) that is a credential or system location, or whose
    real path leaves `inside`."""
    refused = location_refusal(spelled, real)
    if refused:
        raise Unreadable(refused)
    if inside is not None:
        folder = os.path.realpath(inside)
        if not within(real, folder):
            raise Unreadable(f"it links to {real}, outside {folder}")


def _read_opened(fd: int, limit: int, cut: bool) -> bytes:
    """At most `limit` + 1 bytes of the regular file open as `fd` (see read_capped)."""
    try:
        info = os.fstat(fd)
        problem = kind_refusal(info.st_mode)
        if problem:
            raise Unreadable(problem)
        if not cut and info.st_size > limit:
            raise Unreadable(f"too large ({info.st_size:,} bytes; limit {limit:,})")
        data = _read_up_to(fd, info.st_size, limit + 1)
    except OSError as exc:
        raise Unreadable(os_reason(exc)) from exc
    if not cut and len(data) > limit:  # it grew since fstat, or its size was not told
        raise Unreadable(f"too large (over {limit:,} bytes)")
    return data


def _read_up_to(fd: int, size: int, most: int) -> bytes:
    """At most `most` bytes from `fd`: one read sized from fstat, more only if the file gave more.

    Raw os.read: a buffered file object costs more than the read itself for small files.
    """
    data = os.read(fd, min(size + 1, most))
    while size < len(data) < most:  # it grew, or reported no size: read on, to the cap
        chunk = os.read(fd, min(_CHUNK, most - len(data)))
        if not chunk:
            break
        data += chunk
    return data
