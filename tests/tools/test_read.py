"""Read: numbering, windows, long lines, binary and non-UTF-8 files, errors, read tracking."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claude_mini.tools import ToolError
from claude_mini.tools.read import ReadTool


def test_numbers_lines_like_cat_n(tmp_path: Path, run, ctx) -> None:
    (tmp_path / "a.py").write_text("import os\n\nprint(1)\n")
    result = run(ReadTool(), file_path="a.py")
    assert result.content == "     1\timport os\n     2\t\n     3\tprint(1)"
    assert result.metadata["path"] == str(tmp_path / "a.py")
    assert not result.is_error


def test_records_mtime_of_read_file(tmp_path: Path, run, ctx) -> None:
    target = tmp_path / "a.txt"
    target.write_text("x\n")
    run(ReadTool(), file_path=str(target))
    assert ctx.read_files[target] == target.stat().st_mtime


def test_most_recent_read_is_last(tmp_path: Path, run, ctx) -> None:
    for name in ("a", "b"):
        (tmp_path / name).write_text("x\n")
    run(ReadTool(), file_path="a")
    run(ReadTool(), file_path="b")
    run(ReadTool(), file_path="a")
    assert list(ctx.read_files) == [tmp_path / "b", tmp_path / "a"]


def test_offset_and_limit_select_a_window(tmp_path: Path, run) -> None:
    (tmp_path / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = run(ReadTool(), file_path="n.txt", offset=4, limit=3)
    lines = result.content.splitlines()
    assert lines[:3] == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert "use offset=7" in result.content.lower()


def test_default_limit_is_2000_lines(tmp_path: Path, run) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    result = run(ReadTool(), file_path="big.txt")
    numbered = [line for line in result.content.splitlines() if "\t" in line]
    assert len(numbered) == 2000
    assert numbered[-1] == "  2000\t2000"
    assert "offset=2001" in result.content


def test_offset_past_end_says_how_long_the_file_is(tmp_path: Path, run) -> None:
    (tmp_path / "s.txt").write_text("a\nb\n")
    result = run(ReadTool(), file_path="s.txt", offset=10)
    assert "only 2 lines" in result.content


def test_long_line_is_cut_with_marker(tmp_path: Path, run) -> None:
    (tmp_path / "min.js").write_text("x" * 5000 + "\nnext\n")
    lines = run(ReadTool(), file_path="min.js").content.splitlines()
    assert lines[0].startswith("     1\t" + "x" * 2000 + "…")
    assert "line truncated: 5,000 characters" in lines[0]
    assert "x" * 2001 not in lines[0]
    assert lines[1] == "     2\tnext"


def test_crlf_line_endings_are_not_shown(tmp_path: Path, run) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    assert run(ReadTool(), file_path="w.txt").content == "     1\tone\n     2\ttwo"


def test_refuses_binary_by_content(tmp_path: Path, run) -> None:
    (tmp_path / "data.dat").write_bytes(b"abc\x00def" * 10)
    with pytest.raises(ToolError, match="binary"):
        run(ReadTool(), file_path="data.dat")


def test_refuses_binary_by_extension(tmp_path: Path, run) -> None:
    (tmp_path / "pic.zip").write_bytes(b"not really a png")
    with pytest.raises(ToolError, match="binary"):
        run(ReadTool(), file_path="pic.zip")


def test_non_utf8_is_decoded_with_replacement_and_says_so(tmp_path: Path, run) -> None:
    (tmp_path / "latin.txt").write_bytes("café\n".encode("latin-1"))
    result = run(ReadTool(), file_path="latin.txt")
    assert "caf\ufffd" in result.content
    assert "not valid UTF-8" in result.content


def test_valid_utf8_gets_no_encoding_note(tmp_path: Path, run) -> None:
    (tmp_path / "u.txt").write_text("café \ufffd\n", encoding="utf-8")
    assert "UTF-8" not in run(ReadTool(), file_path="u.txt").content


def test_utf16_with_bom_is_text(tmp_path: Path, run) -> None:
    (tmp_path / "w16.txt").write_text("hello\nworld\n", encoding="utf-16")
    result = run(ReadTool(), file_path="w16.txt")
    assert "     1\thello" in result.content


def test_directory_suggests_glob_or_ls(tmp_path: Path, run) -> None:
    (tmp_path / "pkg").mkdir()
    with pytest.raises(ToolError, match="directory.*Glob.*ls"):
        run(ReadTool(), file_path="pkg")


def test_missing_file_suggests_close_names(tmp_path: Path, run) -> None:
    (tmp_path / "config.yaml").write_text("a: 1\n")
    with pytest.raises(ToolError, match="Did you mean.*config.yaml"):
        run(ReadTool(), file_path="config.yml")


def test_missing_file_in_missing_folder(tmp_path: Path, run) -> None:
    with pytest.raises(ToolError, match="does not exist either"):
        run(ReadTool(), file_path="nope/x.txt")


def test_empty_file_gets_a_note(tmp_path: Path, run, ctx) -> None:
    (tmp_path / "empty.txt").write_text("")
    result = run(ReadTool(), file_path="empty.txt")
    assert "empty" in result.content
    assert tmp_path / "empty.txt" in ctx.read_files


def test_output_is_capped_for_huge_lines(tmp_path: Path, run) -> None:
    (tmp_path / "wide.txt").write_text(("y" * 1900 + "\n") * 1000)
    result = run(ReadTool(), file_path="wide.txt")
    assert len(result.content) < 110_000
    assert "Output stopped at line" in result.content


def test_file_without_newlines_is_streamed(tmp_path: Path, run) -> None:
    # 20 MB on one line: only the first 2,000 characters may come back.
    (tmp_path / "blob.txt").write_bytes(b"z" * 20_000_000)
    result = run(ReadTool(), file_path="blob.txt")
    assert "20,000,000 characters" in result.content
    assert len(result.content) < 3000


def test_device_or_fifo_is_refused(tmp_path: Path, run) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ToolError, match="not a regular file"):
        run(ReadTool(), file_path=str(fifo))
