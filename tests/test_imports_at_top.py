"""The project's own modules are imported at module top, where readers and lint-imports see the arrows.

An import inside a function hides a dependency, and two of them on a cycle once deadlocked the
REPL's background runtime build against the main thread on the import lock. The exceptions are
marked on the import's lines: `# startup: <why>` keeps a module off a start-up path that
scripts/bench_startup.py measures (`--version`, `--help`, `-p`, the REPL's first paint), and
`# cycle: <which>` names an import cycle not yet broken.
"""

from __future__ import annotations

import ast
from pathlib import Path

import claude_mini

PACKAGE = Path(claude_mini.__file__).parent
MARKS = ("# startup:", "# cycle:")


def _is_project_import(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == "claude_mini" for alias in node.names)
    return node.level > 0 or (node.module or "").split(".")[0] == "claude_mini"


def unmarked_function_imports(source: str) -> list[int]:
    """Line numbers of project imports inside a function whose lines carry no start-up or cycle mark."""
    lines = source.splitlines()
    found: list[int] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import | ast.ImportFrom) and _is_project_import(child):
                text = "\n".join(lines[child.lineno - 1 : child.end_lineno])
                if not any(mark in text for mark in MARKS):
                    found.append(child.lineno)
            walk(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    walk(ast.parse(source), False)
    return found


def test_project_imports_are_at_module_top_unless_marked():
    offenders = [
        f"{path.relative_to(PACKAGE.parent).as_posix()}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in unmarked_function_imports(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "import these at module top, or mark them `# startup: <why>`:\n" + "\n".join(offenders)


def test_the_check_sees_function_imports_and_their_marks():
    source = """\
from claude_mini import base
if TYPE_CHECKING:
    from claude_mini.runtime import Runtime
def f():
    from claude_mini.session import Session
    from claude_mini.runtime import (  # startup: built after the first paint
        build_runtime,
    )
    import json
class C:
    async def g(self):
        from . import sibling
        from claude_mini.config import (
            load_config,  # cycle: config -> memory
        )
"""
    assert unmarked_function_imports(source) == [5, 12]
