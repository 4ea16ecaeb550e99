"""`atomic_write`: a link is replaced or followed as asked; the file being replaced keeps its mode."""

from __future__ import annotations

import os
from pathlib import Path

from claude_mini.base.fileutil import atomic_write


def test_a_symlink_is_replaced_unless_asked_to_follow_it(tmp_path: Path) -> None:
    target, link = tmp_path / "target.md", tmp_path / "link.md"
    target.write_text("old\n")
    link.symlink_to(target)
    atomic_write(link, "followed\n", follow_symlinks=True)
    assert link.is_symlink() and target.read_text() == "followed\n"
    atomic_write(link, "replaced\n")
    assert not link.is_symlink() and link.read_text() == "replaced\n" and target.read_text() == "followed\n"


def test_an_existing_file_keeps_its_mode_and_the_mtime_is_returned(tmp_path: Path) -> None:
    script = tmp_path / "deep" / "run.sh"
    atomic_write(script, b"#!/bin/sh\n")
    script.chmod(0o750)
    mtime = atomic_write(script, b"#!/bin/sh\necho hi\n")
    assert script.stat().st_mode & 0o7777 == 0o750 and script.stat().st_mtime == mtime
    assert [p.name for p in script.parent.iterdir()] == ["run.sh"]  # no temp file left


def test_a_new_file_gets_the_umask_mode_not_the_temp_file_one(tmp_path: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    atomic_write(tmp_path / "new.txt", "x")
    assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o666 & ~umask
