"""Glob: find files by name pattern, most recently modified first.

Also home of the file walk that honours .gitignore (used by Grep when ripgrep
is missing) and of the glob-to-regex translation both tools use. Python 3.11's
`fnmatch` has no `**` and no braces, so the translation is ours.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pathspec

from claude_mini.base.braces import expand_braces
from claude_mini.tools import ToolContext, ToolError, ToolResult, opt_str_arg, str_arg
from claude_mini.tools.base import ReadDenials

MAX_RESULTS = 100

DESCRIPTION = """\
Fast file-name pattern matching that works on any codebase size.

- Supports glob patterns such as "**/*.py", "src/**/*.{ts,tsx}" or "tests/test_*.py". \
`*` matches within one path segment, `**` across folders.
- path is the folder to search in (default: the current working directory); patterns are \
relative to it.
- Returns matching file paths sorted by modification time, most recent first, at most 100.
- Files ignored by .gitignore and the .git folder are skipped; hidden files and folders are \
only matched when the pattern names them (e.g. ".github/**/*.yml").
- Use Grep to search file contents. For open-ended searches that need several rounds of \
globbing and grepping, run the calls in parallel where you can."""


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The glob pattern to match files against"},
            "path": {
                "type": "string",
                "description": "Folder to search in (default: the current working directory)",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }


class GlobTool:
    """The Glob tool: files whose path matches a glob, newest first."""

    name = "Glob"
    description = DESCRIPTION
    read_only = True

    def __init__(self) -> None:
        self.input_schema = _schema()

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """Nothing to check ahead: a pattern that matches nothing is an answer, not a failure."""

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """List the matching files under `path`, capped at MAX_RESULTS."""
        pattern = str_arg(input, "pattern")
        base = ctx.resolve(opt_str_arg(input, "path") or ".")
        if not base.exists():
            raise ToolError(f"Path does not exist: {base}.")
        if not base.is_dir():
            raise ToolError(f"{base} is a file, not a folder; give a folder as path.")
        try:
            matches = await asyncio.to_thread(find_files, base, pattern)
        except ValueError as exc:  # too many brace alternatives; a NUL byte in the pattern
            raise ToolError(f"Invalid pattern: {exc}.") from None
        matches, denied = drop_denied(matches, ctx.read_denials)
        return _result(matches, denied)


def _result(matches: list[Path], denied: int) -> ToolResult:
    meta = {"num_files": len(matches), "truncated": len(matches) > MAX_RESULTS, "denied": denied}
    note = [denied_note(denied)] if denied else []
    if not matches:
        return ToolResult("\n".join(["No files found", *note]), metadata=meta)
    lines = [str(p) for p in matches[:MAX_RESULTS]]
    if len(matches) > MAX_RESULTS:
        lines.append(
            f"(Results are truncated: showing the {MAX_RESULTS} most recently modified of "
            f"{len(matches)} matches. Use a more specific pattern or path.)"
        )
    return ToolResult("\n".join([*lines, *note]), metadata=meta)


def drop_denied(paths: list[Path], denials: ReadDenials) -> tuple[list[Path], int]:
    """`paths` without those a Read deny rule covers, and how many were dropped."""
    if not denials.active:
        return paths, 0
    kept = [p for p in paths if not denials.covers(p)]
    return kept, len(paths) - len(kept)


def denied_note(count: int) -> str:
    """The line telling the model that deny rules hid files, without naming them."""
    files, them = ("file was", "it") if count == 1 else ("files were", "them")
    return f"({count} {files} skipped because Read deny rules cover {them}; their names and contents are not shown.)"


def find_files(base: Path, pattern: str) -> list[Path]:
    """Files under `base` matching the glob `pattern`, newest first."""
    root, rest = split_static_prefix(base, pattern)
    if not rest:
        return [root] if root.is_file() else []
    if not root.is_dir():
        return []
    regex = compile_glob(rest)
    hidden = any(seg.startswith(".") for seg in rest.split("/"))
    prefix = len(str(root).rstrip("/")) + 1
    found = [p for p in iter_files(root, include_hidden=hidden) if regex.fullmatch(str(p)[prefix:])]
    return newest_first(found)


def newest_first(paths: Iterable[Path]) -> list[Path]:
    """`paths` by modification time, most recent first; ties by path for a stable order."""

    def key(p: Path) -> tuple[float, str]:
        try:
            return (-p.stat().st_mtime, str(p))
        except OSError:
            return (0.0, str(p))

    return sorted(paths, key=key)


# --- glob patterns -----------------------------------------------------------

_MAGIC = re.compile(r"[*?\[{]")


def split_static_prefix(base: Path, pattern: str) -> tuple[Path, str]:
    """Split `pattern` into the folder its literal leading segments name and the rest.

    "src/app/**/*.ts" under /repo gives (/repo/src/app, "**/*.ts"), so only that
    folder is walked; an absolute pattern ignores `base`.
    """
    segments = pattern.split("/")
    root = Path("/") if pattern.startswith("/") else base
    literal: list[str] = []
    while segments and not _MAGIC.search(segments[0]):
        literal.append(segments.pop(0))
    root = Path(os.path.normpath(root.joinpath(*[s for s in literal if s])))
    return root, "/".join(segments)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex that fully matches the '/'-separated relative paths `pattern` selects."""
    alternatives = expand_braces(pattern)
    return re.compile("|".join(f"(?:{_translate(alt)})" for alt in alternatives))


def _translate(pattern: str) -> str:
    segments = pattern.strip("/").split("/")
    out = []
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == "**":
            # `**` is zero or more whole folders; at the end, anything below.
            out.append(".*" if last else "(?:[^/]*/)*")
        else:
            out.append(_translate_segment(seg) + ("" if last else "/"))
    return "".join(out)


def _translate_segment(seg: str) -> str:
    out, i = [], 0
    while i < len(seg):
        char = seg[i]
        if char == "\\" and i + 1 < len(seg):  # an escaped character matches itself
            i += 1
            out.append(re.escape(seg[i]))
        elif char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := seg.find("]", i + 2)) != -1:
            body = seg[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


# --- the .gitignore-aware walk -------------------------------------------------


# A filter's verdict on one entry: True to take it, False to skip it, None for no opinion.
Verdict = bool | None
EntryFilter = Callable[[str, bool], Verdict]  # (root-relative path, is_dir) -> verdict


class IgnoreRules:
    """The .gitignore specs in force in one folder, nearest folder last (it wins)."""

    def __init__(self, specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()) -> None:
        self.specs = specs

    def entering(self, folder: Path) -> IgnoreRules:
        """The rules for `folder`: these plus its own .gitignore, if any."""
        spec = _load_spec(folder / ".gitignore")
        return self if spec is None else IgnoreRules((*self.specs, (str(folder), spec)))

    def verdict(self, path: str, is_dir: bool) -> Verdict:
        """False if `path` (absolute) is ignored, True if re-included by `!`, else None.

        As in git, the last matching pattern of the nearest .gitignore decides.
        """
        for base, spec in reversed(self.specs):
            relative = path[len(base) :].lstrip("/") + ("/" if is_dir else "")
            ignored = spec.check_file(relative).include
            if ignored is not None:
                return not ignored
        return None


def _load_spec(file: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def rules_above(root: Path) -> IgnoreRules:
    """The rules that .git/info/exclude and the .gitignore files above `root` (up to the
    repository's top) impose on entries below `root`.

    A folder given explicitly is searched even if ignored, as rg does: patterns that
    match `root` itself are dropped, or they would (through pathspec's "and everything
    below" matching) hide the whole tree.
    """
    repo = next((d for d in (root, *root.parents) if (d / ".git").exists()), None)
    if repo is None:
        return IgnoreRules()
    sources = [(repo, repo / ".git" / "info" / "exclude")]
    sources += [(d, d / ".gitignore") for d in reversed(root.parents) if d == repo or repo in d.parents]
    specs = []
    for base, file in sources:
        spec = _load_spec(file)
        if spec is not None and base != root:
            spec = _without_patterns_matching(spec, root.relative_to(base).as_posix() + "/")
        if spec is not None:
            specs.append((str(base), spec))
    return IgnoreRules(tuple(specs))


def _without_patterns_matching(spec: pathspec.GitIgnoreSpec, folder: str) -> pathspec.GitIgnoreSpec:
    kept = [p for p in spec.patterns if not (p.include and p.match_file(folder) is not None)]
    return pathspec.GitIgnoreSpec(kept)


def iter_files(
    root: Path,
    *,
    include_hidden: bool = False,
    overrides: EntryFilter | None = None,
    types: EntryFilter | None = None,
) -> Iterator[Path]:
    """Files below `root` that git would not ignore; skips .git and does not follow folder links.

    `overrides` and `types` are Grep's glob and type filters; see `_wanted` for precedence.
    """
    prefix = len(str(root).rstrip("/")) + 1
    stack = [(root, rules_above(root))]
    while stack:
        folder, rules = stack.pop()
        rules = rules.entering(folder)
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            continue  # unreadable folder: skip it, as rg does
        subfolders = []
        for entry in entries:
            if entry.name == ".git":
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            relative = entry.path[prefix:]
            if not _wanted(entry, relative, is_dir, rules, overrides, types, include_hidden):
                continue
            if is_dir:
                subfolders.append((Path(entry.path), rules))
            elif entry.is_file():
                yield Path(entry.path)
        stack.extend(reversed(subfolders))


def _wanted(
    entry: os.DirEntry[str],
    relative: str,
    is_dir: bool,
    rules: IgnoreRules,
    overrides: EntryFilter | None,
    types: EntryFilter | None,
    include_hidden: bool,
) -> bool:
    """ripgrep's precedence: an override decides outright; then an ignore rule or a type
    can only exclude; an entry that nothing took explicitly is dropped if hidden."""
    if overrides and (verdict := overrides(relative, is_dir)) is not None:
        return verdict
    verdicts = (rules.verdict(entry.path, is_dir), types(relative, is_dir) if types else None)
    if False in verdicts:
        return False
    return True in verdicts or include_hidden or not entry.name.startswith(".")
