"""Layer 1 discovery: the CLAUDE.md hierarchy, rules folders and @imports, read in load order.

    load_instructions(cwd) -> InstructionSet     one pass over managed, user and project files
    Loader.load_folder(folder)                   the per-folder set, also for nested folders later

The load order and the decisions behind it are in the package docstring.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from claude_mini.base.frontmatter import parse_frontmatter
from claude_mini.base.paths import checkout_root, home_dir, managed_dir
from claude_mini.base.safe_read import Unreadable, os_reason
from claude_mini.memory.instructions.entries import (
    CYCLE,
    DUPLICATE,
    EXCLUDED,
    UNTRUSTED,
    ConditionalRule,
    Entry,
    InstructionFile,
    InstructionSet,
    Skipped,
)
from claude_mini.memory.instructions.globs import split_globs
from claude_mini.memory.instructions.markdown import scan_markdown
from claude_mini.memory.instructions.reading import is_text_name, read_text
from claude_mini.memory.instructions.scope import LoadContext
from claude_mini.trust import RepositoryOnly

MAX_IMPORT_DEPTH = 5  # hops from the root file (DESIGN.md section 5)
CLAUDE_CODE_KIND = "user, Claude Code's"  # how ~/.claude/CLAUDE.md is named in the prompt and /context


def rule_globs(meta: dict[str, Any]) -> tuple[list[str] | None, str | None]:
    """The `paths:` globs of a rule (None: unconditional), or a problem with them."""
    value = meta.get("paths")
    if value is None:
        return None, None
    if isinstance(value, str):
        globs = split_globs(value)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        globs = [v.strip() for v in value if v.strip()]
    else:
        return None, "`paths` must be a string or a list of strings"
    return (None if not globs or "**" in globs else globs), None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """DirEntry.is_dir() that answers False for a symlink loop instead of raising."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _dirs_from_top(cwd: str) -> list[str]:
    """Folders from just below the filesystem root down to `cwd`, both ends included."""
    dirs, d = [], cwd
    while os.path.dirname(d) != d:  # the root itself is never searched
        dirs.append(d)
        d = os.path.dirname(d)
    return dirs[::-1]


class Loader:
    """One discovery-and-reading pass; `seen` (real paths) is shared by all passes of a session."""

    def __init__(self, ctx: LoadContext, seen: set[str]) -> None:
        self.ctx, self.seen = ctx, seen
        self.entries: list[Entry] = []
        self.warnings: list[str] = []
        self._real_dirs: dict[str, str] = {}

    def load_session(self) -> None:
        """Managed, then user, then every folder from the top of the filesystem down to the cwd."""
        ctx = self.ctx
        self.load_root(os.path.join(ctx.managed, "CLAUDE.md"), "managed", "managed")
        self.load_rules(os.path.join(ctx.managed, "rules"), ctx.project_root, "managed")
        if ctx.claude_code_home:  # Claude Code's user files, below claude-mini's own
            self.load_root(os.path.join(ctx.claude_code_home, "CLAUDE.md"), CLAUDE_CODE_KIND, "user")
            self.load_rules(os.path.join(ctx.claude_code_home, "rules"), ctx.project_root, "user")
        self.load_root(os.path.join(ctx.home, "CLAUDE.md"), "user", "user")
        self.load_rules(os.path.join(ctx.home, "rules"), ctx.project_root, "user")
        for folder in _dirs_from_top(ctx.cwd):
            self.load_folder(folder)
        for folder in ctx.added:  # --add-dir folders, when asked for (their CLAUDE.md, rules, local file)
            self.load_folder(folder)

    def load_folder(self, folder: str) -> None:
        """The per-folder set: CLAUDE.md (else AGENTS.md), .claude/CLAUDE.md, rules, CLAUDE.local.md."""
        main = os.path.join(folder, "CLAUDE.md")
        if not os.path.lexists(main):
            main = os.path.join(folder, "AGENTS.md")  # the cross-tool convention
        self.load_root(main, "project")
        dot_claude = os.path.join(folder, ".claude")
        if os.path.lexists(dot_claude):
            self.load_root(os.path.join(dot_claude, "CLAUDE.md"), "project")
            self.load_rules(os.path.join(dot_claude, "rules"), folder, "project")
        self.load_root(os.path.join(folder, "CLAUDE.local.md"), "local")

    def load_root(self, path: str, kind: str, level: str = "project") -> None:
        """Load one root file (if it exists at all) and its imports."""
        if not os.path.lexists(path):
            return
        entry = self._open(path, kind, level)
        if isinstance(entry, InstructionFile):
            self.add_root(entry)
        else:
            self.entries.append(entry)

    def add_root(self, file: InstructionFile, text: str | None = None) -> None:
        """Append a root file (its text cleaned from `text`, default its own), then its imports."""
        file.text, refs = scan_markdown(file.text if text is None else text)
        self.entries.append(file)
        self._expand_imports(file, refs, (file.path,))

    def load_rules(self, rules_dir: str, base: str, level: str) -> None:
        """Every .md under `rules_dir`, sorted by relative path; conditional ones are set aside."""
        if os.path.lexists(rules_dir):
            for path in self._rule_paths(rules_dir):
                self._load_rule(path, base, level)

    def _load_rule(self, path: str, base: str, level: str) -> None:
        entry = self._open(path, "rule", level)
        if isinstance(entry, Skipped):
            self.entries.append(entry)
            return
        meta, body, problem = parse_frontmatter(entry.text)
        globs = None
        if meta is not None:
            globs, problem = rule_globs(meta)
        if problem:
            body = entry.text  # unusable frontmatter stays visible: the model sees the whole file
            self._note(entry, f"{problem}; loaded as unconditional text")
        if globs:  # cleaned and its imports resolved only when attached
            self.entries.append(ConditionalRule(entry.path, globs, base, body, level))
            return
        self.add_root(entry, body)

    def _rule_paths(self, rules_dir: str) -> list[str]:
        found: list[tuple[str, str]] = []
        self._walk_rules(rules_dir, "", (), found)
        return [path for _, path in sorted(found)]

    def _walk_rules(self, folder: str, rel: str, chain: tuple[str, ...], found: list[tuple[str, str]]) -> None:
        """Collect (relative, path) of .md files; symlinked folders are followed, loops are not."""
        try:
            real = self._real_dir(folder)
            if real in chain:
                raise OSError(errno.ELOOP, "symlink loop")
            children = list(os.scandir(folder))
        except OSError as exc:
            self.entries.append(self._skip(folder, "rule", os_reason(exc)))
            return
        for child in children:
            child_rel = f"{rel}/{child.name}" if rel else child.name
            if _is_dir(child):  # follows symlinks, as Claude Code does for the rules folder
                self._walk_rules(child.path, child_rel, (*chain, real), found)
            elif child.name.lower().endswith(".md"):  # _open reports loops and broken links
                found.append((child_rel, child.path))

    def _expand_imports(self, file: InstructionFile, refs: list[str], chain: tuple[str, ...]) -> None:
        """Load what `file` imports (`refs`), each followed by its own imports: depth first."""
        for raw in refs:
            entry = self._import(raw, file, chain)
            if entry is None:
                continue
            file.imports.append(entry)
            self.entries.append(entry)
            if isinstance(entry, InstructionFile):
                entry.text, sub_refs = scan_markdown(entry.text)
                self._expand_imports(entry, sub_refs, (*chain, entry.path))

    def _import(self, raw: str, importer: InstructionFile, chain: tuple[str, ...]) -> Entry | None:
        if raw.startswith("~/"):
            path = os.path.join(self.ctx.user_home, raw[2:])
        else:  # absolute stays absolute; relative is relative to the importing file
            path = os.path.join(os.path.dirname(importer.path), raw)
        path = os.path.normpath(path)
        if not is_text_name(path) and not os.path.lexists(path):
            return None  # prose such as `@pytest.mark.skip` or `@types/node`, not an import
        if importer.depth >= MAX_IMPORT_DEPTH:
            reason = f"too deep (more than {MAX_IMPORT_DEPTH} import hops from {chain[0]})"
            return self._skip(path, "imported", reason, importer)
        return self._open(path, "imported", importer.level, importer, chain)

    def _open(
        self,
        path: str,
        kind: str,
        level: str,
        importer: InstructionFile | None = None,
        chain: tuple[str, ...] = (),
    ) -> InstructionFile | Skipped:
        """Read one file (text not yet cleaned), or say why not."""
        try:
            real, info = self._real(path)
        except OSError as exc:
            return self._skip(path, kind, os_reason(exc), importer)
        reason = self._refusal(path, real, level, importer is not None, chain)
        if reason is None:
            try:
                text, notes = read_text(real, info)
            except Unreadable as exc:
                reason = str(exc)
        linked_from = path if importer is None and real != path else None
        if reason is not None:
            return self._skip(real, kind, reason, importer, linked_from)
        self.seen.add(real)
        depth, by = (importer.depth + 1, importer.path) if importer else (0, None)
        file = InstructionFile(real, kind, text, level, depth, by, linked_from=linked_from)
        for note in notes:
            self._note(file, note)
        return file

    def _refusal(self, path: str, real: str, level: str, imported: bool, chain: tuple[str, ...]) -> str | None:
        refused = self.ctx.location_refusal(path, real)  # the reader every prompt file shares
        if refused:
            return refused
        if level != "managed" and self.ctx.is_excluded(path, real):
            return EXCLUDED
        if real in chain:
            return CYCLE
        if real in self.seen:
            return DUPLICATE
        if imported and not is_text_name(real):
            return "not a text file type"
        if imported and not self.ctx.may_import(real):
            return "outside the project root and home folders"
        if level == "project" and not self.ctx.trusted and self.ctx.leaves_repository(path, real, imported):
            return UNTRUSTED
        return None

    def _real(self, path: str) -> tuple[str, os.stat_result]:
        """Real path of `path` and the stat of what it points to; raises OSError.

        os.path.realpath lstat()s every component of every path, which cost more than
        reading the files; folders are resolved once here, so a file costs one lstat.
        """
        head, _, name = path.rpartition(os.sep)  # not os.path.split: this runs for every file
        real_parent = self._real_dir(head or os.sep)
        joined = real_parent + name if real_parent == os.sep else f"{real_parent}{os.sep}{name}"
        info = os.lstat(joined)
        if stat.S_ISLNK(info.st_mode):
            joined = os.path.realpath(joined, strict=True)
            info = os.stat(joined)
        return joined, info

    def _real_dir(self, folder: str) -> str:
        """Real path of a folder, built from its parent's (cached) real path."""
        real = self._real_dirs.get(folder)
        if real is None:
            name = folder.rpartition(os.sep)[2]
            if name in ("", ".", ".."):  # the filesystem root, or a path normpath did not settle
                real = os.path.realpath(folder, strict=True)
            else:
                real, info = self._real(folder)
                if not stat.S_ISDIR(info.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, "not a folder", folder)
            self._real_dirs[folder] = real
        return real

    def _skip(
        self,
        path: str,
        kind: str,
        reason: str,
        importer: InstructionFile | None = None,
        linked_from: str | None = None,
    ) -> Skipped:
        depth, by = (importer.depth + 1, importer.path) if importer else (0, None)
        skipped = Skipped(path, kind, reason, by, depth, linked_from)
        if not skipped.quiet:
            where = (
                f"@import in {by}"
                if by
                else f"instruction file, linked from {linked_from}"
                if linked_from
                else "instruction file"
            )
            self.warnings.append(f"{path} ({where}) was skipped: {reason}. The rest was loaded.")
        return skipped

    def _note(self, file: InstructionFile, note: str) -> None:
        file.notes.append(note)
        self.warnings.append(f"{file.path}: {note}.")


def load_instructions(
    cwd: Path,
    *,
    project_root: Path | None = None,
    excludes: Sequence[str] = (),
    home: Path | None = None,
    managed: Path | None = None,
    trusted: bool = False,
    claude_code_home: Path | None = None,
    added: Sequence[Path] = (),
) -> InstructionSet:
    """Discover and read every instruction file that applies to a session started in `cwd`.

    `project_root` defaults to the git checkout holding `cwd` (else `cwd`); it bounds
    imports and anchors the globs of managed and user rules. `excludes` is the
    `claudeMdExcludes` setting (a `trust.RepositoryOnly` list, from an untrusted repository,
    excludes only files inside it). `home`/`managed` default to paths.home_dir()/managed_dir().
    `trusted` (Config.trusted) lets project files import from elsewhere in the OS home.
    `claude_code_home` (Config.claude_code_home): Claude Code's user CLAUDE.md and rules, read
    before claude-mini's user files (lower precedence).
    `added`: folders added to the session (--add-dir) whose own instruction files are read too.
    """
    real_cwd = os.path.realpath(cwd)
    root = project_root if project_root is not None else checkout_root(Path(real_cwd))
    ctx = LoadContext(
        cwd=real_cwd,
        project_root=os.path.realpath(root or real_cwd),
        home=os.path.realpath(home if home is not None else home_dir()),
        managed=os.path.realpath(managed if managed is not None else managed_dir()),
        user_home=os.path.realpath(os.path.expanduser("~")),
        excludes=() if isinstance(excludes, RepositoryOnly) else tuple(excludes),
        repo_excludes=tuple(excludes) if isinstance(excludes, RepositoryOnly) else (),
        trusted=trusted,
        claude_code_home=os.path.realpath(claude_code_home) if claude_code_home else None,
        added=tuple(os.path.realpath(folder) for folder in added),
    )
    loader = Loader(ctx, set())
    loader.warnings.extend(f"claudeMdExcludes: {error}; it is ignored" for error in ctx.exclude_errors)
    loader.load_session()
    return InstructionSet(loader.entries, loader.warnings, ctx)
