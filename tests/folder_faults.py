"""A folder that cannot be written, for fault tests: chmod, and `chattr +i` when running as root."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[None]:
    """`folder` read-only while the block runs: no file can be created, renamed or removed in it.

    chmod is enough for a normal user; root ignores it, so there the folder is also made
    immutable (ext4 and most Linux file systems). Skips the test when neither works.
    """
    folder.chmod(0o555)
    immutable = _writable(folder) and _chattr("+i", folder)
    try:
        if _writable(folder):
            pytest.skip("cannot make a folder read-only here (root without chattr)")
        yield
    finally:
        if immutable:
            _chattr("-i", folder)
        folder.chmod(0o755)


def _writable(folder: Path) -> bool:
    probe = folder / ".write-probe"
    try:
        probe.touch()
    except OSError:
        return False
    probe.unlink()
    return True


def _chattr(flag: str, folder: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", flag, str(folder)], capture_output=True).returncode == 0
