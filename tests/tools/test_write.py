"""Write: creation, read-before-write, staleness, atomicity, diff metadata."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from claude_mini.tools import ToolError
from claude_mini.tools.read import ReadTool
from claude_mini.tools.write import WriteTool


def test_creates_file_and_parent_folders(tmp_path: Path, run, ctx) -> None:
    result = run(WriteTool(), file_path="a/b/new.py", content="print(1)\n")
    target = tmp_path / "a" / "b" / "new.py"
    assert target.read_text() == "print(1)\n"
    assert result.metadata["created"] is True
    assert result.metadata["path"] == str(target)
    assert "+print(1)" in result.metadata["diff"]
    assert ctx.read_files[target] == target.stat().st_mtime


def test_new_file_gets_umask_permissions_not_tempfile_ones(tmp_path: Path, run) -> None:
    run(WriteTool(), file_path="perm.txt", content="x")
    mode = stat.S_IMODE((tmp_path / "perm.txt").stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_refuses_to_overwrite_unread_file(tmp_path: Path, run) -> None:
    (tmp_path / "keep.txt").write_text("precious\n")
    with pytest.raises(ToolError, match="Read it first"):
        run(WriteTool(), file_path="keep.txt", content="oops")
    assert (tmp_path / "keep.txt").read_text() == "precious\n"


def test_overwrites_after_read_with_diff(tmp_path: Path, run) -> None:
    (tmp_path / "f.txt").write_text("old\n")
    run(ReadTool(), file_path="f.txt")
    result = run(WriteTool(), file_path="f.txt", content="new\n")
    assert (tmp_path / "f.txt").read_text() == "new\n"
    assert result.metadata["created"] is False
    assert "-old\n+new\n" in result.metadata["diff"]


def test_refuses_when_file_changed_since_read(tmp_path: Path, run) -> None:
    target = tmp_path / "f.txt"
    target.write_text("v1\n")
    run(ReadTool(), file_path="f.txt")
    target.write_text("v2 by the user\n")
    os.utime(target, (1, 1))  # a different mtime, whatever the clock resolution
    with pytest.raises(ToolError, match="modified since you last read"):
        run(WriteTool(), file_path="f.txt", content="mine")
    assert target.read_text() == "v2 by the user\n"


def test_second_write_without_reread_is_allowed(tmp_path: Path, run) -> None:
    run(WriteTool(), file_path="f.txt", content="one")
    run(WriteTool(), file_path="f.txt", content="two")
    assert (tmp_path / "f.txt").read_text() == "two"


def test_keeps_executable_bit_and_leaves_no_temp_files(tmp_path: Path, run) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    run(ReadTool(), file_path="run.sh")
    run(WriteTool(), file_path="run.sh", content="#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]


def test_writes_through_symlink(tmp_path: Path, run) -> None:
    real = tmp_path / "real.txt"
    real.write_text("a\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    run(ReadTool(), file_path="link.txt")
    run(WriteTool(), file_path="link.txt", content="b\n")
    assert link.is_symlink()
    assert real.read_text() == "b\n"


def test_directory_is_refused(tmp_path: Path, run) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="directory"):
        run(WriteTool(), file_path="d", content="x")


def test_diff_marks_missing_final_newline(tmp_path: Path, run) -> None:
    result = run(WriteTool(), file_path="n.txt", content="no newline")
    assert "\\ No newline at end of file" in result.metadata["diff"]
