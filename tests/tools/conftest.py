"""Fixtures for the tool tests: a ToolContext rooted in a temp folder and a sync way to call tools."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from claude_mini.tools import Tool, ToolContext, ToolResult

RunTool = Callable[..., ToolResult]


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    """A fresh session context whose cwd and project root are the test's temp folder."""
    return ToolContext(cwd=tmp_path, project_root=tmp_path)


@pytest.fixture
def run(ctx: ToolContext) -> RunTool:
    """`run(tool, **input)`: call the tool with `ctx` to completion (no asyncio plugin here)."""

    def run_tool(tool: Tool, **input: Any) -> ToolResult:
        return asyncio.run(tool.call(input, ctx))

    return run_tool


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small project with ignored, hidden and binary files; mtimes a.py < b.py < notes.md < sub/c.py."""
    files = {
        ".gitignore": "*.log\nbuild/\n!keep.log\n",
        "a.py": "import os\nTODO: one\n",
        "b.py": "def f():\n    return 'todo'\n",
        "notes.md": "TODO in markdown\n",
        "app.log": "TODO ignored log\n",
        "keep.log": "TODO kept log\n",
        "build/out.py": "TODO ignored build\n",
        ".hidden.py": "TODO hidden\n",
        "sub/.gitignore": "secret.py\n",
        "sub/c.py": "x = 1\nTODO: three\ny = 2\n",
        "sub/secret.py": "TODO secret\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "blob.dat").write_bytes(b"TODO\x00binary")
    order = ["keep.log", "a.py", "b.py", "notes.md", "sub/c.py"]
    for rank, name in enumerate(order):
        stamp = 1_700_000_000 + rank * 100
        os.utime(tmp_path / name, (stamp, stamp))
    return tmp_path
