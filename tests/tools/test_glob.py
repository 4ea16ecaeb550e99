"""Glob: pattern semantics, newest-first order, .gitignore, hidden files, the result cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claude_mini.tools import ToolError
from claude_mini.tools.glob import GlobTool, compile_glob


def _paths(content: str) -> list[str]:
    return content.splitlines()


def test_recursive_pattern_newest_first_without_ignored(tree: Path, run) -> None:
    result = run(GlobTool(), pattern="**/*.py")
    # build/out.py (.gitignore), sub/secret.py (nested .gitignore), .hidden.py (hidden) are left out.
    assert _paths(result.content) == [str(tree / "sub" / "c.py"), str(tree / "b.py"), str(tree / "a.py")]
    assert result.metadata["num_files"] == 3


def test_single_star_stays_in_one_folder(tree: Path, run) -> None:
    assert _paths(run(GlobTool(), pattern="*.py").content) == [str(tree / "b.py"), str(tree / "a.py")]


def test_folder_prefix(tree: Path, run) -> None:
    assert _paths(run(GlobTool(), pattern="sub/*.py").content) == [str(tree / "sub" / "c.py")]


def test_path_parameter(tree: Path, run) -> None:
    assert _paths(run(GlobTool(), pattern="*.py", path="sub").content) == [str(tree / "sub" / "c.py")]


def test_braces(tree: Path, run) -> None:
    result = run(GlobTool(), pattern="**/*.{md,log}")
    assert _paths(result.content) == [str(tree / "notes.md"), str(tree / "keep.log")]


def test_hidden_files_only_when_named(tree: Path, run) -> None:
    assert _paths(run(GlobTool(), pattern=".hidden.py").content) == [str(tree / ".hidden.py")]
    assert _paths(run(GlobTool(), pattern="**/.*.py").content) == [str(tree / ".hidden.py")]


def test_git_folder_is_skipped(tree: Path, run) -> None:
    (tree / ".git").mkdir()
    (tree / ".git" / "config").write_text("[core]\n")
    assert ".git" not in run(GlobTool(), pattern="**/*").content
    assert ".git" not in run(GlobTool(), pattern="**/.*").content.replace(".gitignore", "")


def test_absolute_pattern(tree: Path, run) -> None:
    result = run(GlobTool(), pattern=f"{tree}/sub/*.py")
    assert _paths(result.content) == [str(tree / "sub" / "c.py")]


def test_no_match(tree: Path, run) -> None:
    result = run(GlobTool(), pattern="**/*.rs")
    assert result.content == "No files found"


def test_results_capped_at_100_newest(tmp_path: Path, run) -> None:
    for i in range(150):
        path = tmp_path / f"f{i:03}.txt"
        path.write_text("x")
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))
    result = run(GlobTool(), pattern="*.txt")
    lines = _paths(result.content)
    assert lines[0] == str(tmp_path / "f149.txt")
    assert lines[99] == str(tmp_path / "f050.txt")
    assert "showing the 100 most recently modified of 150" in lines[100]
    assert result.metadata["truncated"] is True


def test_gitignore_in_repo_above_search_root_applies(tmp_path: Path, run) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.gen.py\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("")
    (tmp_path / "pkg" / "a.gen.py").write_text("")
    result = run(GlobTool(), pattern="*.py", path="pkg")
    assert _paths(result.content) == [str(tmp_path / "pkg" / "a.py")]


def test_explicit_path_inside_ignored_folder_is_searched(tmp_path: Path, run) -> None:
    # rg searches a folder it is pointed at even if .gitignore excludes it; so do we,
    # while the repository's other patterns (*.log) still apply inside it.
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("/vendor\n*.log\n")
    lib = tmp_path / "vendor" / "lib"
    lib.mkdir(parents=True)
    (lib / "mod.py").write_text("")
    (lib / "debug.log").write_text("")
    assert _paths(run(GlobTool(), pattern="*", path="vendor/lib").content) == [str(lib / "mod.py")]
    assert run(GlobTool(), pattern="**/*.py").content == "No files found"


def test_missing_path_is_an_error(tmp_path: Path, run) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        run(GlobTool(), pattern="*", path="nope")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("*.py", "x/a.py", False),
        ("src/**", "src/a/b.ts", True),
        ("src/*.ts", "src/a/b.ts", False),
        ("test_?.py", "test_1.py", True),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "b.txt", False),
        ("a.{ts,tsx}", "a.tsx", True),
        ("a+b(1).txt", "a+b(1).txt", True),
    ],
)
def test_compile_glob(pattern: str, path: str, matches: bool) -> None:
    assert (compile_glob(pattern).fullmatch(path) is not None) is matches


def test_a_backslash_escapes_a_brace(tmp_path: Path, run) -> None:
    (tmp_path / "{a,b}.txt").write_text("x")
    (tmp_path / "a.txt").write_text("x")
    assert _paths(run(GlobTool(), pattern=r"\{a,b\}.txt").content) == [str(tmp_path / "{a,b}.txt")]


def test_a_pattern_with_too_many_brace_alternatives_is_an_error(tmp_path: Path, run) -> None:
    with pytest.raises(ToolError, match="expands to more than 256 patterns; use fewer brace sets"):
        run(GlobTool(), pattern="{a,b}" * 9)
