"""The scope of one load: where instruction files come from and which paths may be read.

Imports may reach the project root, the cwd, the OS home, $CLAUDE_MINI_HOME and
the managed folder; a project file that leads outside the repository needs a
trusted folder; `claudeMdExcludes` hides files (an untrusted repository's own
globs only its own files); known credential locations and /proc, /dev, /sys are never read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from claude_mini.base.credentials import credential_folders
from claude_mini.base.safe_read import location_refusal
from claude_mini.memory.instructions.globs import GlobSet


@dataclass
class LoadContext:
    """Where instruction files come from and which paths imports may reach."""

    cwd: str
    project_root: str
    home: str  # $CLAUDE_MINI_HOME
    managed: str  # $CLAUDE_MINI_MANAGED_DIR
    user_home: str  # what `@~/` means
    excludes: tuple[str, ...] = ()
    trusted: bool = False  # may a project file import from outside the repository (the OS home)
    repo_excludes: tuple[str, ...] = ()  # an untrusted repository's claudeMdExcludes: its own files only
    claude_code_home: str | None = None  # Claude Code's ~/.claude, read before claude-mini's home (None: off)
    added: tuple[str, ...] = ()  # --add-dir folders whose instruction files are read (real paths)

    def __post_init__(self) -> None:
        # GlobSet, not a bare PathSpec: brace sets work, and it is ~10x faster per file.
        self._exclude = GlobSet(list(self.excludes)) if self.excludes else None
        self._repo_exclude = GlobSet(list(self.repo_excludes)) if self.repo_excludes else None
        inside = {
            self.project_root,
            self.cwd,
            self.home,
            self.managed,
            *filter(None, [self.claude_code_home]),
            *self.added,
        }
        # An OS home of `/` (some containers) must not open the whole disk to imports.
        self._inside = tuple(r for r in inside if os.path.dirname(r) != r)
        self._roots = tuple(r for r in {*inside, self.user_home} if os.path.dirname(r) != r)
        self._credential_folders = credential_folders()

    @property
    def exclude_errors(self) -> list[str]:
        """claudeMdExcludes globs that could not be compiled."""
        return [e for g in (self._exclude, self._repo_exclude) if g is not None for e in g.errors]

    def is_excluded(self, path: str, real: str) -> bool:
        """Whether `claudeMdExcludes` matches the path as found or its real path.

        Globs from an untrusted repository apply only to files found inside it, so they
        cannot hide the user's or the organisation's instruction files.
        """
        spellings = (path, real)
        for globs in (self._exclude, self._repo_exclude if self.in_repository(path) else None):
            if globs is not None and any(globs.matches(p.lstrip("/")) for p in spellings):
                return True
        return False

    def may_import(self, real: str) -> bool:
        """Whether an import may read `real` (inside one of the allowed roots)."""
        return any(real == r or real.startswith(r + os.sep) for r in self._roots)

    def is_outside(self, real: str) -> bool:
        """Whether `real` is outside the repository, the cwd, the claude-mini home and managed folder."""
        return not any(real == r or real.startswith(r + os.sep) for r in self._inside)

    def leaves_repository(self, path: str, real: str, imported: bool) -> bool:
        """Whether a project-level file reaches outside: an import whose real path is outside,
        or a file found inside (a CLAUDE.md, rule, nested file) that is a link to outside.

        Files found in folders above the repository are the user's, not the repository's.
        """
        return self.is_outside(real) and (imported or self.in_repository(path))

    def in_repository(self, path: str) -> bool:
        """Whether `path` (as found, not resolved) lies in the repository or the cwd."""
        return any(
            path == r or path.startswith(r + os.sep) for r in (self.project_root, self.cwd) if os.path.dirname(r) != r
        )

    def location_refusal(self, *spellings: str) -> str | None:
        """Why a path may never be read (a credential location, /proc, /dev, /sys), else None."""
        return location_refusal(*spellings, folders=self._credential_folders)
