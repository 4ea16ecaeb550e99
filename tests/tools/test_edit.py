"""Edit: exact replacement, its refusals and hints, encodings and line endings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claude_mini.tools import ToolError
from claude_mini.tools.edit import EditTool
from claude_mini.tools.read import ReadTool


@pytest.fixture
def source(tmp_path: Path, run) -> Path:
    """A small Python file that has been Read in this session."""
    path = tmp_path / "app.py"
    path.write_text("def f():\n    return 1\n\n\ndef g():\n    return 1\n")
    run(ReadTool(), file_path="app.py")
    return path


def test_replaces_a_unique_string(source: Path, run, ctx) -> None:
    result = run(
        EditTool(), file_path="app.py", old_string="def f():\n    return 1", new_string="def f():\n    return 2"
    )
    assert source.read_text() == "def f():\n    return 2\n\n\ndef g():\n    return 1\n"
    assert result.metadata["path"] == str(source)
    assert "-    return 1\n+    return 2\n" in result.metadata["diff"]
    assert "     2\t    return 2" in result.content  # the numbered snippet
    assert ctx.read_files[source] == source.stat().st_mtime


def test_ambiguous_match_says_how_many_and_where(source: Path, run) -> None:
    with pytest.raises(ToolError, match=r"matches 2 places.*lines 2, 6.*replace_all"):
        run(EditTool(), file_path="app.py", old_string="return 1", new_string="return 3")
    assert "return 3" not in source.read_text()


def test_replace_all_changes_every_occurrence(source: Path, run) -> None:
    result = run(EditTool(), file_path="app.py", old_string="return 1", new_string="return 3", replace_all=True)
    assert source.read_text().count("return 3") == 2
    assert result.metadata["replacements"] == 2


def test_absent_string_is_an_error(source: Path, run) -> None:
    with pytest.raises(ToolError, match="not found"):
        run(EditTool(), file_path="app.py", old_string="def h():", new_string="def k():")


def test_absent_string_hints_at_indentation(source: Path, run) -> None:
    with pytest.raises(ToolError, match="whitespace or indentation.*line 1"):
        run(EditTool(), file_path="app.py", old_string="def f():\n  return 1", new_string="x")


def test_absent_string_hints_at_line_number_prefix(source: Path, run) -> None:
    with pytest.raises(ToolError, match="line-number prefixes"):
        run(EditTool(), file_path="app.py", old_string="     1\tdef f():", new_string="def k():")


def test_identical_strings_are_refused(source: Path, run) -> None:
    with pytest.raises(ToolError, match="identical"):
        run(EditTool(), file_path="app.py", old_string="def f", new_string="def f")


def test_unread_file_is_refused(tmp_path: Path, run) -> None:
    (tmp_path / "other.py").write_text("x = 1\n")
    with pytest.raises(ToolError, match="Read it first"):
        run(EditTool(), file_path="other.py", old_string="x = 1", new_string="x = 2")
    assert (tmp_path / "other.py").read_text() == "x = 1\n"


def test_file_changed_since_read_is_refused(source: Path, run) -> None:
    source.write_text("changed outside\n")
    os.utime(source, (1, 1))
    with pytest.raises(ToolError, match="modified since you last read"):
        run(EditTool(), file_path="app.py", old_string="changed", new_string="x")


def test_empty_old_string_on_existing_file_is_refused(source: Path, run) -> None:
    with pytest.raises(ToolError, match="old_string is empty"):
        run(EditTool(), file_path="app.py", old_string="", new_string="# header\n")


def test_empty_old_string_creates_missing_file(tmp_path: Path, run, ctx) -> None:
    result = run(EditTool(), file_path="pkg/new.py", old_string="", new_string="x = 1\n")
    assert (tmp_path / "pkg" / "new.py").read_text() == "x = 1\n"
    assert result.metadata["created"] is True
    assert tmp_path / "pkg" / "new.py" in ctx.read_files


def test_missing_file_with_old_string_is_an_error(run) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        run(EditTool(), file_path="ghost.py", old_string="a", new_string="b")


def test_crlf_file_keeps_crlf(tmp_path: Path, run) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    run(ReadTool(), file_path="win.txt")
    run(EditTool(), file_path="win.txt", old_string="alpha\nbeta", new_string="alpha\nBETA\nextra")
    assert path.read_bytes() == b"alpha\r\nBETA\r\nextra\r\ngamma\r\n"


def test_latin1_file_keeps_its_other_bytes(tmp_path: Path, run) -> None:
    path = tmp_path / "old.txt"
    path.write_bytes("café = 1\nname = x\n".encode("latin-1"))
    run(ReadTool(), file_path="old.txt")
    run(EditTool(), file_path="old.txt", old_string="name = x", new_string="name = y")
    assert path.read_bytes() == "café = 1\nname = y\n".encode("latin-1")


def test_utf8_bom_is_preserved(tmp_path: Path, run) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfkey=1\n")
    run(ReadTool(), file_path="bom.txt")
    run(EditTool(), file_path="bom.txt", old_string="key=1", new_string="key=2")
    assert path.read_bytes() == b"\xef\xbb\xbfkey=2\n"


def test_binary_file_is_refused(tmp_path: Path, run, ctx) -> None:
    path = tmp_path / "blob.dat"
    path.write_bytes(b"a\x00b")
    ctx.read_files[path] = path.stat().st_mtime
    with pytest.raises(ToolError, match="binary"):
        run(EditTool(), file_path="blob.dat", old_string="a", new_string="c")


def test_a_missing_file_names_its_neighbours_only_once_the_edit_runs(tmp_path: Path, run, ctx) -> None:
    (tmp_path / "config.yaml").write_text("a: 1\n")
    edit = {"file_path": "config.yml", "old_string": "a", "new_string": "b"}
    with pytest.raises(ToolError, match="does not exist") as before:
        EditTool().validate(edit, ctx)  # asked before the permission prompt
    assert "config.yaml" not in str(before.value)
    with pytest.raises(ToolError, match="Did you mean.*config.yaml"):
        run(EditTool(), **edit)
