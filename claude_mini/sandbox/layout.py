"""Which paths a sandboxed command may write, must not write, and must not see.

Built from the session's state for each command (rules and folders may change mid-session):
the project root and additional directories, the session's temp folder, `Edit(...)` allow rules
and `sandbox.filesystem.allowWrite` are writable; the files that steer git and claude-mini are
read-only inside them, and so is what `Edit(...)`/`Write(...)` deny rules and `denyWrite` cover;
credential folders, the claude-mini home and what `Read(...)` deny rules and `denyRead` cover
are masked. A glob is expanded against the disk (bounded walk): a file created later under a
glob is not masked until the next command, which is why the Bash-line check stays as well.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from claude_mini.base import paths
from claude_mini.base.credentials import FILE_NAMES, credential_folders, homes
from claude_mini.base.text import within
from claude_mini.permissions import PathPattern, Rule
from claude_mini.sandbox.bwrap import Layout
from claude_mini.sandbox.settings import SandboxSettings
from claude_mini.shell.bash_reads import literal_prefix

# Inside a writable root: files and folders whose change would run code later or widen the
# rules (git's config and hooks, claude-mini's and Claude Code's settings, hooks, MCP servers).
PROTECTED = (
    ".git/config",
    ".git/hooks",
    ".git/info/attributes",
    ".mcp.json",
    ".envrc",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/hooks",
    ".claude/commands",
    ".claude/agents",
    ".claude/skills",
)
# Sockets that lead out of any sandbox (a container engine, the user's session bus, ssh-agent).
SOCKETS = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/user",
    "/run/dbus",
    "/var/run/dbus",
)
MAX_WALK_ENTRIES = 20_000
_GLOB = frozenset("*?[{")


@dataclass
class LayoutReport:
    """The layout and what it could not express, for /sandbox and --debug."""

    layout: Layout
    notes: list[str] = field(default_factory=list)


def build_layout(
    *,
    project_root: Path,
    roots: Iterable[Path],
    temp_dir: str,
    settings: SandboxSettings,
    deny_rules: Sequence[Rule],
    allow_rules: Sequence[Rule],
    memory_dir: Path | None,
    empty_file: str,
) -> LayoutReport:
    """The layout for one command (see the module docstring for the order of precedence)."""
    root = os.path.realpath(project_root)
    report = LayoutReport(Layout(empty_file=empty_file))
    layout = report.layout
    layout.writable += [root, *(os.path.realpath(r) for r in roots), temp_dir]
    layout.writable += _edit_grants(allow_rules, root)
    layout.writable += [_resolve(p, root) for p in settings.allow_write]
    layout.read_only += protected_paths([root, *roots])
    write_denied = [p for r in deny_rules if r.tool in ("Edit", "Write") and (p := r.path) is not None]
    write_denied += [_pattern(p, root) for p in settings.deny_write]
    files, dirs = _expand(write_denied, report)
    layout.read_only += files + dirs
    _mask(layout, _private_places(root, settings))
    read_denied = [p for r in deny_rules if r.tool == "Read" and (p := r.path) is not None]
    read_denied += [_pattern(p, root) for p in settings.deny_read]
    if any(r.tool == "Read" and r.specifier is None for r in deny_rules):
        report.notes.append(
            "a deny rule on all of Read cannot be a mask (the whole disk): the Bash-line check alone applies it"
        )
    allowed = [_resolve(p, root) for p in settings.allow_read]
    files, dirs = _expand(read_denied, report)
    _mask(layout, [p for p in files + dirs if not any(within(p, a) for a in allowed)])
    if memory_dir is not None:  # the extraction fork writes its memories there
        os.makedirs(memory_dir, exist_ok=True)
        layout.extra_writable.append(os.path.realpath(memory_dir))
    return report


def protected_paths(roots: Iterable[Path | str]) -> list[str]:
    """PROTECTED under each writable root (real paths, each once), whether or not they exist."""
    bases = dict.fromkeys(os.path.realpath(r) for r in roots)
    return [os.path.join(base, p) for base in bases for p in PROTECTED]


def _private_places(project_root: str, settings: SandboxSettings) -> list[str]:
    """Credential folders and files, the claude-mini home, and sockets that lead out."""
    out = list(credential_folders())
    out += [
        os.path.join(home, name) for home in homes() for name in sorted(FILE_NAMES) if not name.startswith(".env")
    ]  # a project's .env is the project's own
    out.append(str(paths.home_dir()))
    if not settings.all_unix_sockets:
        out += list(SOCKETS)
        agent = os.environ.get("SSH_AUTH_SOCK")
        if agent and os.path.isabs(agent):
            out.append(agent)
    # Never one that holds the project the user works in (it would hide the project).
    return [os.path.realpath(p) for p in out if not within(project_root, os.path.realpath(p))]


def _mask(layout: Layout, found: Iterable[str]) -> None:
    for path in found:
        if os.path.isdir(path):
            layout.masked_dirs.append(path)
        elif os.path.lexists(path):
            layout.masked_files.append(path)


def _edit_grants(allow_rules: Sequence[Rule], root: str) -> list[str]:
    """The existing folders `Edit(...)` allow rules name (their part before the first wildcard);
    a folder that is not there yet grants nothing (its parent would be far wider)."""
    out = []
    for rule in allow_rules:
        if rule.tool != "Edit" or rule.path is None:
            continue
        folder = os.path.realpath(os.path.join(rule.path.base, literal_prefix(rule.path.pattern.strip("/"))))
        if os.path.isdir(folder) and folder not in ("/", os.path.realpath(os.path.expanduser("~"))):
            out.append(folder)
    return out


def _pattern(text: str, root: str) -> PathPattern:
    return PathPattern.parse(text, Path(root))


def _resolve(text: str, root: str) -> str:
    """A settings path (`//abs`, `~/x`, `./x`, `x`) -> an absolute real path."""
    pattern = _pattern(text, root)
    return os.path.realpath(os.path.join(pattern.base, pattern.pattern.strip("/").removesuffix("**")))


def _expand(patterns: Sequence[PathPattern], report: LayoutReport) -> tuple[list[str], list[str]]:
    """The existing files and folders the patterns cover (a folder whose contents all match: the
    folder), walking at most MAX_WALK_ENTRIES entries in all."""
    files: list[str] = []
    dirs: list[str] = []
    budget = [MAX_WALK_ENTRIES]
    for pattern in patterns:
        for path, is_dir in _matches(pattern, budget):
            (dirs if is_dir else files).append(os.path.realpath(path))
        if budget[0] <= 0:
            report.notes.append(
                f"more than {MAX_WALK_ENTRIES:,} files under {pattern.base}: files "
                f"matching {pattern.pattern} beyond that are not masked"
            )
            break
    return files, dirs


def _matches(pattern: PathPattern, budget: list[int]) -> Iterator[tuple[str, bool]]:
    body = pattern.pattern.strip("/")
    # Anchored (`/x`, `a/b`): below its literal folders; else, as in .gitignore, at any depth.
    anchored = pattern.pattern.startswith("/") or "/" in pattern.pattern.rstrip("/")
    start = os.path.join(pattern.base, literal_prefix(body)) if anchored else pattern.base
    if anchored and not any(ch in _GLOB for ch in body):  # one literal path
        if os.path.lexists(start):
            yield start, os.path.isdir(start)
        return
    if not os.path.isdir(start):
        return
    if _whole(pattern, start):
        yield start, True
        return
    for here, folders, names in os.walk(start):
        kept = []
        for name in folders:
            budget[0] -= 1
            path = os.path.join(here, name)
            if _whole(pattern, path):
                yield path, True
            elif name != ".git":
                kept.append(name)
        folders[:] = kept if budget[0] > 0 else []
        for name in names:
            budget[0] -= 1
            path = os.path.join(here, name)
            if pattern.matches(path):
                yield path, False


def _whole(pattern: PathPattern, folder: str) -> bool:
    """Whether the pattern covers the folder itself, or anything at all inside it."""
    return (
        pattern.matches(folder)
        or pattern.matches(folder, is_dir=True)
        and pattern.matches(os.path.join(folder, "x.any"))
    )
