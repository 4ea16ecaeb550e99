"""Print the package-level import graph's cycles, counting imports inside functions too.

import-linter (`lint-imports`, .ci/run) checks the layers; this script answers the question it
does not: which packages import each other once every import in a function body is counted, the
arrows a reader of a module's top never sees. A "package" is a subpackage of claude_mini
(`memory`, `ui`, ...) or a top-level module (`config`, `runtime`, ...).

    python scripts/package_cycles.py            # the cycles (one import per arrow), the mutual pairs
    python scripts/package_cycles.py --edges    # every package arrow with its count of imports
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "claude_mini"

Edges = dict[str, dict[str, list[str]]]


def module_name(path: Path) -> str:
    """`claude_mini/memory/store/topic.py` -> `claude_mini.memory.store.topic`."""
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(module: str) -> str | None:
    """The package a module belongs to (its second dotted part), or None outside claude_mini."""
    parts = module.split(".")
    if parts[0] != "claude_mini" or len(parts) < 2:
        return None
    exists = (ROOT / parts[1]).is_dir() or (ROOT / f"{parts[1]}.py").is_file()
    return parts[1] if exists else None  # `from claude_mini import __version__` is no module


def imported_modules(path: Path, module: str) -> list[tuple[str, int]]:
    """Every project module `path` imports, wherever the import statement is, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            # `from claude_mini import trust` imports the module claude_mini.trust.
            names = [f"{source}.{alias.name}" for alias in node.names] if source == "claude_mini" else [source]
            found += [(name, node.lineno) for name in names]
    return [(name, line) for name, line in found if name.startswith("claude_mini")]


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def package_edges() -> Edges:
    """package -> package -> the `file:line` of each import that draws the arrow."""
    edges: Edges = defaultdict(lambda: defaultdict(list))
    for path in sorted(ROOT.rglob("*.py")):
        module = module_name(path)
        source = package_of(module)
        for name, line in imported_modules(path, module):
            target = package_of(name)
            if source and target and target != source:
                edges[source][target].append(f"{path.relative_to(ROOT.parent)}:{line}")
    return edges


def cycles(edges: Edges) -> list[list[str]]:
    """The strongly connected groups of more than one package (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(groups)


def main() -> int:
    """Print the cycles (or every arrow with --edges); exit 1 when there is a cycle."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="print every package arrow")
    args = parser.parse_args()
    sys.setrecursionlimit(10_000)
    edges = package_edges()
    if args.edges:
        for source in sorted(edges):
            for target in sorted(edges[source]):
                print(f"{source} -> {target}  ({len(edges[source][target])})")
    found = cycles(edges)
    for group in found:
        print(f"cycle: {' <-> '.join(group)}")
        for source in group:
            for target in group:
                if target in edges.get(source, {}):
                    print(f"    {source} -> {target}: {edges[source][target][0]}")
    pairs = mutual_pairs(edges)
    for a, b in pairs:
        print(f"pair: {a} <-> {b}: {edges[a][b][0]} / {edges[b][a][0]}")
    print(f"{len(found)} package cycle(s) (strongly connected groups), {len(pairs)} pair(s) importing each other")
    return 1 if found else 0


def mutual_pairs(edges: Edges) -> list[tuple[str, str]]:
    """The pairs of packages that import each other (the shortest cycles, each a place to cut)."""
    return sorted((a, b) for a in edges for b in edges[a] if a < b and a in edges.get(b, {}))


if __name__ == "__main__":
    raise SystemExit(main())
