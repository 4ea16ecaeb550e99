"""Crash-safe file writes and cross-process locks.

`atomic_write` never leaves half a file: it writes a temp file in the same
folder, fsyncs it and renames it over the target. The memory layers, settings,
the trust record and checkpoints use it as is; Write, Edit and /rewind follow a
symlink to replace its target. `locked` serialises read-modify-write cycles on a
shared file (MEMORY.md, usage.json, daily logs, the trust record) between
processes with `fcntl.flock` on a hidden sidecar `.<name>.lock`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

LOCK_TIMEOUT_S = 10.0
_POLL_FIRST_S = 0.001
_POLL_MAX_S = 0.05

# Lock files held by this thread, with a nesting depth. flock locks belong to
# an open file description, so re-locking from the same thread through a second
# descriptor would deadlock; nesting is counted instead.
_held = threading.local()


def _forget_held_locks() -> None:
    # A forked child does not own its parent's locks (its flock calls use new descriptions).
    _held.__dict__.clear()


os.register_at_fork(after_in_child=_forget_held_locks)


class LockTimeout(TimeoutError):
    """Another process held a lock for longer than the timeout."""


def os_error_text(exc: BaseException) -> str:
    """An OSError as a person reads it (`No space left on device: /x/MEMORY.md`), anything else as is."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return str(exc) or type(exc).__name__


def lock_path_for(path: Path) -> Path:
    """The sidecar lock file guarding `path` (hidden, next to it, never deleted)."""
    return path.with_name(f".{path.name}.lock")


def atomic_write(path: Path, text: str | bytes, *, encoding: str = "utf-8", follow_symlinks: bool = False) -> float:
    """Replace `path` with `text` so readers see the old or the new file, never a mix; the new mtime.

    An existing file keeps its permission bits (mkstemp creates 0600); a new one gets what
    `open` would give it. `follow_symlinks`: a link's target is replaced, so an edit never
    turns a link into a copy (Write, Edit, /rewind); otherwise the link itself is replaced.
    """
    target = Path(os.path.realpath(path)) if follow_symlinks else Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode(encoding) if isinstance(text, str) else text
    # Keep the temp name well under NAME_MAX even for long file names.
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:100]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)
    return target.stat().st_mtime


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~_umask()


@functools.cache
def _umask() -> int:
    # os.umask can only be read by setting it: do it once, and restore it at once.
    current = os.umask(0o022)
    os.umask(current)
    return current


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable; some filesystems refuse, which is harmless.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive cross-process lock on `path` (re-entrant within one thread)."""
    lock_file = lock_path_for(Path(path))
    key = os.path.abspath(lock_file)
    depth: dict[str, int] = _held.__dict__.setdefault("depth", {})
    if depth.get(key):
        depth[key] += 1
        try:
            yield
        finally:
            depth[key] -= 1
        return
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, lock_file, timeout)
        depth[key] = 1
        try:
            yield
        finally:
            depth[key] = 0
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, lock_file: Path, timeout: float) -> None:
    # Poll with a non-blocking flock so a hung holder cannot hang us forever.
    deadline = time.monotonic() + timeout
    pause = _POLL_FIRST_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
        if time.monotonic() >= deadline:
            raise LockTimeout(
                f"could not lock {lock_file} within {timeout:g} s: another claude-mini "
                "process is holding it; nothing was changed, try again"
            )
        time.sleep(pause)
        pause = min(pause * 2, _POLL_MAX_S)
