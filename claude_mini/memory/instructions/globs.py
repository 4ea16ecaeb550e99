"""Gitignore-style globs for path-scoped rules: brace expansion, fast matching, repository walks.

pathspec implements gitignore semantics but not brace sets (`src/**/*.{ts,tsx}`),
which real rule files use, so globs are expanded here first. Matching must be
cheap because every Read/Edit/Write checks every conditional rule (the target is
1,000 paths under 50 ms, measured by scripts/bench_context.py), hence the combined
regexes below.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import pathspec

from claude_mini.base.braces import expand_braces, split_outside_braces

T = TypeVar("T")

# pathspec names a group in every pattern regex; names must be unique in one
# regex, so they are turned into plain groups before patterns are joined.
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_]\w*>")


def split_globs(value: str) -> list[str]:
    """Split a comma-separated `paths:` string, keeping commas inside brace sets (`*.{ts,tsx}`)."""
    return [p.strip() for p in split_outside_braces(value) if p.strip()]


def _fast_regex(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    """One regex equivalent to `spec` when it has no negations (then any match includes); else None."""
    parts = []
    for pattern in spec.patterns:
        if pattern.include is None:
            continue  # blank or comment line
        source = getattr(getattr(pattern, "regex", None), "pattern", None)
        # A negation needs gitignore's last-match-wins logic, and an unanchored
        # regex would need search(): leave both to pathspec itself.
        if not pattern.include or not isinstance(source, str) or not source.startswith("^"):
            return None
        parts.append("(?:" + _NAMED_GROUP.sub("(?:", source) + ")")
    try:
        return re.compile("|".join(parts) if parts else "(?!)")
    except re.error:
        return None


@dataclass
class GlobSet:
    """Gitignore-style globs, brace sets expanded, matched against `/`-separated relative paths."""

    globs: list[str]
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        patterns: list[str] = []
        for glob in self.globs:
            try:
                patterns.extend(p.removeprefix("./") for p in expand_braces(glob.strip()))
            except ValueError as exc:
                self.errors.append(f"invalid glob {glob!r}: {exc}")
        try:
            self.spec = pathspec.GitIgnoreSpec.from_lines(patterns)
        except ValueError:  # pathspec's pattern errors subclass ValueError
            # Rare, so only now pay for compiling one by one to name the culprit.
            self.spec = pathspec.GitIgnoreSpec.from_lines(self._valid_only(patterns))
        self.regex = _fast_regex(self.spec)

    def _valid_only(self, patterns: list[str]) -> list[str]:
        valid = []
        for pattern in patterns:
            try:
                pathspec.GitIgnoreSpec.from_lines([pattern])
                valid.append(pattern)
            except ValueError as exc:
                self.errors.append(f"invalid glob {pattern!r}: {exc}")
        return valid

    @property
    def empty(self) -> bool:
        """True when no usable pattern is left (every glob was invalid or blank)."""
        return not any(p.include is not None for p in self.spec.patterns)

    def matches(self, relative: str) -> bool:
        """Whether the relative path (`a/b.ts`, no leading `./`) is matched."""
        if self.regex is not None:
            return self.regex.match(relative) is not None
        return self.spec.match_file(relative)


def relative_to(path: str, base: str) -> str | None:
    """`path` relative to `base` with `/` separators, or None if it is not strictly inside."""
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix) or len(path) == len(prefix):
        return None
    rel = path[len(prefix) :]
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


@dataclass
class _BaseGroup(Generic[T]):
    """The glob sets sharing one base folder, with a joint regex that rejects most paths at once."""

    base: str
    members: list[tuple[GlobSet, T]] = field(default_factory=list)
    any_regex: re.Pattern[str] | None = None
    stale: bool = True

    def compile(self) -> None:
        """Join the members' regexes; a member without one (negations) disables the shortcut."""
        regexes = [g.regex for g, _ in self.members]
        present = [r for r in regexes if r is not None]
        self.any_regex = None
        if len(present) == len(regexes):
            try:
                self.any_regex = re.compile("|".join(f"(?:{r.pattern})" for r in present))
            except re.error:
                self.any_regex = None
        self.stale = False

    def matching(self, relative: str) -> list[T]:
        """Members matching `relative`; most paths are rejected by the joint regex alone."""
        if self.stale:
            self.compile()
        if self.any_regex is not None and self.any_regex.match(relative) is None:
            return []
        return [item for globs, item in self.members if globs.matches(relative)]


class RuleIndex(Generic[T]):
    """Glob sets grouped by base folder, answering "which items match this absolute path"."""

    def __init__(self) -> None:
        self._groups: dict[str, _BaseGroup[T]] = {}

    def add(self, base: str, globs: GlobSet, item: T) -> None:
        """Register `item`, matched by `globs` relative to the folder `base`."""
        group = self._groups.setdefault(base, _BaseGroup(base))
        group.members.append((globs, item))
        group.stale = True

    def matching(self, paths: Sequence[str]) -> list[T]:
        """Items matched by any of `paths` (spellings of one file), each once, in insertion order."""
        found: dict[int, T] = {}  # by identity: items need not be hashable or cheap to compare
        for group in self._groups.values():
            for path in paths:
                relative = relative_to(path, group.base)
                if relative is not None:
                    found.update((id(i), i) for i in group.matching(relative))
        return list(found.values())


def _is_ignored(path: str, is_dir: bool, specs: Sequence[tuple[str, pathspec.GitIgnoreSpec]]) -> bool:
    """Gitignore verdict for `path`: the innermost .gitignore with an opinion wins."""
    verdict = False
    for base, spec in specs:
        relative = relative_to(path, base)
        if relative is None:
            continue
        include = spec.check_file(relative + "/" if is_dir else relative).include
        if include is not None:
            verdict = include
    return verdict


def _read_gitignore(folder: str) -> pathspec.GitIgnoreSpec | None:
    """The .gitignore of `folder` as a spec, or None when there is none or it cannot be read."""
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as f:
            return pathspec.GitIgnoreSpec.from_lines(f.read().splitlines())
    except (OSError, ValueError):
        return None


def iter_repository_files(root: str) -> Iterator[str]:
    """Absolute paths of the files under `root` that git would not ignore (`.git` skipped)."""
    stack: list[tuple[str, list[tuple[str, pathspec.GitIgnoreSpec]]]] = [(root, [])]
    while stack:
        folder, specs = stack.pop()
        spec = _read_gitignore(folder)
        if spec is not None:
            specs = [*specs, (folder, spec)]
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name == ".git":
                continue
            # Symlinked folders are not followed: they may loop, and git does not follow them.
            is_dir = entry.is_dir(follow_symlinks=False)
            if _is_ignored(entry.path, is_dir, specs):
                continue
            if is_dir:
                stack.append((entry.path, specs))
            elif entry.is_file():
                yield entry.path
