"""What git knows that the team tier needs: who saves (provenance), who else works here
(the personal-data check), and the history of one memory file (`memory blame`).

Every call is bounded by a timeout and answers "unknown" (None, empty) rather than raising:
a missing git, a folder that is no repository, a slow disk cost a feature, never a command.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from pathlib import Path

from claude_mini.base.gitrun import git_output

GIT_TIMEOUT_S = 10.0
AUTHORS_SCANNED = 2000  # commits whose authors count as "people of this repository"


def _git(repo: Path, *args: str) -> str | None:
    return git_output(repo, list(args), GIT_TIMEOUT_S)


def user_name(repo: Path) -> str:
    """Who is saving: `git config user.name`, else the login name."""
    name = (_git(repo, "config", "user.name") or "").strip()
    if name:
        return name
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def user_email(repo: Path) -> str:
    """`git config user.email` ('' when unset)."""
    return (_git(repo, "config", "user.email") or "").strip()


def contributors(repo: Path) -> tuple[set[str], set[str]]:
    """(names, e-mail addresses) of the authors and committers of the last commits."""
    out = _git(repo, "log", f"-{AUTHORS_SCANNED}", "--format=%an%x00%ae%x00%cn%x00%ce") or ""
    names: set[str] = set()
    emails: set[str] = set()
    for line in out.splitlines():
        parts = line.split("\0")
        if len(parts) == 4:
            names.update(p.strip() for p in (parts[0], parts[2]) if p.strip())
            emails.update(p.strip().lower() for p in (parts[1], parts[3]) if p.strip())
    return names, emails


@dataclass(frozen=True)
class Commit:
    """One commit that touched a memory file."""

    short: str
    date: str  # YYYY-MM-DD
    author: str
    subject: str


def file_history(repo: Path, path: Path) -> list[Commit] | None:
    """The commits that changed `path`, newest first (renames followed); None outside git."""
    out = _git(repo, "log", "--follow", "--format=%h%x00%ad%x00%an%x00%s", "--date=short", "--", str(path))
    if out is None:  # no repository, or one without a commit yet
        return [] if _git(repo, "rev-parse", "--is-inside-work-tree") else None
    commits = []
    for line in out.splitlines():
        parts = line.split("\0")
        if len(parts) == 4:
            commits.append(Commit(*parts))
    return commits


def folder_status(repo: Path, folder: Path) -> dict[str, str] | None:
    """`git status` of the files under `folder` that are not committed as they are:
    repository-relative path -> two-letter code (`??` new, ` M` changed, ...); None outside git."""
    out = _git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", str(folder))
    if out is None:
        return None
    found = {}
    for entry in out.split("\0"):
        if len(entry) > 3:
            found[entry[3:]] = entry[:2]
    return found
