"""Where the team tier lives: a folder in the repository, and whether it is on.

    <repository>/.claude/memory/        (setting `memory.teamDir`, relative to the root)
      MEMORY.md                         the team index: one line per memory, sorted by filename
      <topic>.md                        one memory, the private tier's format, plus `author`
      .gitattributes                    `MEMORY.md merge=union`, written when the folder is made
      .gitignore                        `.*.lock`: MEMORY.md's lock file stays out of git

Off unless the folder exists or `memory.teamDir` enables it (`false` turns it off even when
the folder exists). An untrusted repository's own settings cannot move it (config/untrusted.py ignores
their `teamDir`), and wherever it is set it must stay inside the repository, symlinks
resolved. Reading it needs no trust, as CLAUDE.md needs none; writing does
(`TeamTier.write_problem`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.base.fileutil import atomic_write
from claude_mini.memory.store import INDEX_FILENAME, MemoryStore

if TYPE_CHECKING:
    from collections.abc import Callable

    from claude_mini.config import Config

DEFAULT_TEAM_DIR = ".claude/memory"
TEAM_PREFIX = "team/"  # how recall names a team memory beside the private ones
PROPOSED_DIR = "proposed"  # inside the private folder: proposals waiting for `memory promote`
GITATTRIBUTES = ".gitattributes"
# git's built-in union driver keeps both sides' lines where two branches changed the same
# place of MEMORY.md, so even two additions next to each other merge without a conflict.
GITATTRIBUTES_TEXT = f"{INDEX_FILENAME} merge=union\n"
GITIGNORE = ".gitignore"
GITIGNORE_TEXT = ".*.lock\n"  # the cross-process locks of MEMORY.md (base/fileutil.py)


def is_team_name(name: str) -> bool:
    """True for the `team/<file>` names recall gives team memories."""
    return name.startswith(TEAM_PREFIX)


@dataclass(frozen=True)
class TeamTier:
    """The team folder of one repository, as the settings and the trust record leave it."""

    root: Path  # the team folder (may not exist yet)
    repo: Path  # the repository root (the project root)
    trusted: bool
    proposals: str = "team"  # `memory.teamProposals`: team | private

    @property
    def index_path(self) -> Path:
        """The team's MEMORY.md."""
        return self.root / INDEX_FILENAME

    @property
    def shown(self) -> str:
        """The folder as the user knows it: relative to the repository (`.claude/memory`)."""
        try:
            return self.root.relative_to(self.repo).as_posix()
        except ValueError:
            return str(self.root)

    def store(self, warn: Callable[[str], None] | None = None) -> MemoryStore:
        """The team folder as a MemoryStore whose index keeps its lines sorted."""
        return MemoryStore(self.root, warn=warn, sorted_index=True)

    def write_problem(self) -> str | None:
        """Why nothing may be written to the team folder now (an untrusted folder), else None."""
        if self.trusted:
            return None
        return (
            f"this folder is not trusted, so nothing is written to its team memory "
            f"({self.shown}); run claude-mini here once and answer yes to trust it, then try again"
        )

    def prepare(self) -> None:
        """Before a write: the folder, with `.gitattributes` (union merges of MEMORY.md) when it
        is new, and `.gitignore` (the lock files) whenever it is missing. A team that removed
        the union driver keeps it removed."""
        new = not self.root.exists()
        self.root.mkdir(parents=True, exist_ok=True)
        if new:
            atomic_write(self.root / GITATTRIBUTES, GITATTRIBUTES_TEXT)
        if not os.path.lexists(self.root / GITIGNORE):
            atomic_write(self.root / GITIGNORE, GITIGNORE_TEXT)


def team_tier(config: Config) -> TeamTier | None:
    """The repository's team tier, or None when it is off (no folder and no setting, or
    `memory.teamDir: false`) or would leave the repository (said in `team_problem`)."""
    found, _ = _locate(config)
    return found


def team_problem(config: Config) -> str | None:
    """Why a team folder that the settings name cannot be used, for a one-line warning."""
    _, problem = _locate(config)
    return problem


def _locate(config: Config) -> tuple[TeamTier | None, str | None]:
    settings = config.memory.team
    if settings.dir is False:
        return None, None
    relative = settings.dir if isinstance(settings.dir, str) else DEFAULT_TEAM_DIR
    repo = Path(config.project_root)
    root = Path(os.path.normpath(repo / relative.strip()))
    real_repo, real_root = os.path.realpath(repo), os.path.realpath(root)
    if not real_root.startswith(real_repo.rstrip(os.sep) + os.sep):
        return None, (
            f"memory.teamDir {relative!r} resolves to {real_root}, outside the "
            f"repository {real_repo}; the team memory is off"
        )
    if settings.dir is None and not root.is_dir():
        return None, None
    return TeamTier(root, repo, config.trusted, settings.proposals), None
