"""Grep: every output mode and filter, run on both engines (ripgrep and the Python fallback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mini.tools import ToolError
from claude_mini.tools.grep import GrepTool, find_ripgrep


@pytest.fixture(params=["ripgrep", "python"])
def grep(request: pytest.FixtureRequest) -> GrepTool:
    """The Grep tool on one engine; the ripgrep case requires the venv's rg."""
    if request.param == "ripgrep":
        assert find_ripgrep(), "the ripgrep package should put rg next to the interpreter"
        return GrepTool()
    return GrepTool(use_ripgrep=False)


def _engine(tool: GrepTool) -> str:
    return "ripgrep" if tool.use_ripgrep else "python"


def test_files_with_matches_newest_first_and_ignores_respected(tree: Path, run, grep) -> None:
    result = run(grep, pattern="TODO")
    assert result.metadata["engine"] == _engine(grep)
    assert result.content.splitlines() == [
        "Found 4 files",
        str(tree / "sub" / "c.py"),
        str(tree / "notes.md"),
        str(tree / "a.py"),
        str(tree / "keep.log"),  # re-included by `!keep.log`
    ]
    # Not listed: app.log and build/ (.gitignore), sub/secret.py (nested .gitignore),
    # .hidden.py (hidden) and blob.dat (binary).


def test_case_insensitive(tree: Path, run, grep) -> None:
    result = run(grep, pattern="todo", **{"-i": True})
    assert str(tree / "b.py") in result.content
    assert "Found 5 files" in result.content


def test_content_mode_with_line_numbers(tree: Path, run, grep) -> None:
    result = run(grep, pattern="TODO: ", output_mode="content")
    assert result.content.splitlines() == [
        f"{tree / 'a.py'}:2:TODO: one",
        f"{tree / 'sub' / 'c.py'}:2:TODO: three",
    ]


def test_content_mode_without_line_numbers(tree: Path, run, grep) -> None:
    result = run(grep, pattern="three", output_mode="content", **{"-n": False})
    assert result.content == f"{tree / 'sub' / 'c.py'}:TODO: three"


def test_content_mode_with_context(tree: Path, run, grep) -> None:
    result = run(grep, pattern="TODO: ", output_mode="content", **{"-C": 1})
    c = tree / "sub" / "c.py"
    a = tree / "a.py"
    assert result.content.splitlines() == [
        f"{a}-1-import os",
        f"{a}:2:TODO: one",
        "--",
        f"{c}-1-x = 1",
        f"{c}:2:TODO: three",
        f"{c}-3-y = 2",
    ]


def test_after_context_only(tree: Path, run, grep) -> None:
    result = run(grep, pattern="three", output_mode="content", **{"-A": 1})
    c = tree / "sub" / "c.py"
    assert result.content.splitlines() == [f"{c}:2:TODO: three", f"{c}-3-y = 2"]


def test_count_mode(tree: Path, run, grep) -> None:
    (tree / "sub" / "c.py").write_text("TODO\nTODO\nno\n")
    result = run(grep, pattern="TODO", output_mode="count", path="sub")
    assert result.content.splitlines() == [f"{tree / 'sub' / 'c.py'}:2", "", "Found 2 matching lines in 1 file."]


def test_glob_filter_with_braces(tree: Path, run, grep) -> None:
    result = run(grep, pattern="TODO", glob="*.{md,py}")
    assert sorted(result.content.splitlines()[1:]) == [
        str(tree / ".hidden.py"),
        str(tree / "a.py"),
        str(tree / "notes.md"),
        str(tree / "sub" / "c.py"),
        str(tree / "sub" / "secret.py"),
    ]


def test_glob_overrides_gitignore_like_ripgrep(tree: Path, run, grep) -> None:
    # rg: a file matching --glob is searched even if .gitignore or hiding would skip it,
    # but ignored folders (build/) are still not entered.
    result = run(grep, pattern="TODO", glob="*.log")
    assert sorted(result.content.splitlines()[1:]) == [str(tree / "app.log"), str(tree / "keep.log")]


def test_glob_with_slash_is_relative_to_search_root(tree: Path, run, grep) -> None:
    result = run(grep, pattern="TODO", glob="sub/*.py")
    assert sorted(result.content.splitlines()[1:]) == [str(tree / "sub" / "c.py"), str(tree / "sub" / "secret.py")]


def test_negated_glob_excludes_a_folder(tree: Path, run, grep) -> None:
    result = run(grep, pattern="TODO", glob="!sub")
    assert "c.py" not in result.content
    assert "Found 3 files" in result.content


def test_type_filter(tree: Path, run, grep) -> None:
    result = run(grep, pattern="TODO", type="py")
    # As in rg, a type match takes hidden files too, but not gitignored ones (sub/secret.py).
    assert sorted(result.content.splitlines()[1:]) == [
        str(tree / ".hidden.py"),
        str(tree / "a.py"),
        str(tree / "sub" / "c.py"),
    ]


def test_explicit_file_is_searched_even_if_ignored(tree: Path, run, grep) -> None:
    result = run(grep, pattern="ignored", path="app.log", output_mode="content")
    assert result.content == f"{tree / 'app.log'}:1:TODO ignored log"


def test_multiline(tree: Path, run, grep) -> None:
    result = run(grep, pattern=r"import os\nTODO", multiline=True, output_mode="content")
    assert result.content.splitlines() == [f"{tree / 'a.py'}:1:import os", f"{tree / 'a.py'}:2:TODO: one"]


def test_last_line_without_newline_and_crlf(tmp_path: Path, run, grep) -> None:
    (tmp_path / "eof.txt").write_bytes(b"first\r\nend here")
    (tmp_path / "crlf.txt").write_bytes(b"alpha end\r\nbeta\r\n")
    result = run(grep, pattern="^end|end$", output_mode="content")
    assert result.content.splitlines() == [f"{tmp_path / 'crlf.txt'}:1:alpha end", f"{tmp_path / 'eof.txt'}:2:end here"]


def test_explicit_folder_inside_ignored_folder(tmp_path: Path, run, grep) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("/vendor\n*.log\n")
    lib = tmp_path / "vendor" / "lib"
    lib.mkdir(parents=True)
    (lib / "mod.py").write_text("needle\n")
    (lib / "debug.log").write_text("needle\n")
    assert run(grep, pattern="needle", path="vendor/lib").content.splitlines() == ["Found 1 file", str(lib / "mod.py")]
    assert run(grep, pattern="needle").content == "No matches found"


def test_no_match(tree: Path, run, grep) -> None:
    for mode in ("content", "files_with_matches", "count"):
        assert run(grep, pattern="NOPE_NOT_HERE", output_mode=mode).content == "No matches found"


def test_head_limit(tree: Path, run, grep) -> None:
    result = run(grep, pattern="TODO", head_limit=2)
    lines = result.content.splitlines()
    assert lines[1:3] == [str(tree / "sub" / "c.py"), str(tree / "notes.md")]
    assert "Showing 2 of 4" in result.content
    assert result.metadata["truncated"] is True


def test_invalid_regex(tree: Path, run, grep) -> None:
    with pytest.raises(ToolError):
        run(grep, pattern="unclosed(group")


def test_missing_path(tree: Path, run, grep) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        run(grep, pattern="x", path="nowhere")


def test_long_lines_are_cut(tmp_path: Path, run, grep) -> None:
    (tmp_path / "min.js").write_text("needle" + "x" * 5000 + "\n")
    result = run(grep, pattern="needle", output_mode="content")
    assert "more characters]" in result.content
    assert len(result.content) < 1000


def test_falls_back_when_rg_is_missing(tree: Path, run) -> None:
    result = run(GrepTool(rg_path=str(tree / "no-such-rg")), pattern="TODO")
    assert result.metadata["engine"] == "python"
    assert "Found 4 files" in result.content


def test_unknown_type_in_fallback(tree: Path, run) -> None:
    with pytest.raises(ToolError, match="Unknown file type"):
        run(GrepTool(use_ripgrep=False), pattern="x", type="klingon")


def test_bad_output_mode(tree: Path, run) -> None:
    with pytest.raises(ToolError, match="output_mode"):
        run(GrepTool(), pattern="x", output_mode="lines")
