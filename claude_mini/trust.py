"""Workspace trust: which project folders the user has said may configure claude-mini (DESIGN.md section 8).

A repository's `.claude/settings*.json` and its CLAUDE.md imports from outside
the repository take full effect only in a trusted folder (config/untrusted.py filters the
rest). The record is `trusted-folders.json` in the home folder, a file the user
may edit by hand:

    {"version": 1, "folders": {"/home/me/src/app": {"trustedAt": "2026-12-01T10:00:00Z"}}}

Keys are project roots: the top of the checkout holding the cwd
(`paths.checkout_root`, never a git dir that a `.git` file points to), else the
cwd, symlinks resolved. Trusting a folder trusts every folder below it, except a
checkout nested in another checkout (a vendored clone, a submodule, a linked worktree inside the
repository: a folder with its own `.git`, file or folder): its settings and hooks are another
project's, so it is asked about again (`nested_checkout`). A linked worktree elsewhere is a folder
of its own and is asked about too. To take trust back, delete the entry. A record that cannot be
read counts as "nothing trusted" and is reported in one line; it is never overwritten, so a hand
edit is not lost.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_mini.base import paths
from claude_mini.base.fileutil import LockTimeout, atomic_write, locked

RECORD_NAME = "trusted-folders.json"
RECORD_VERSION = 1


class RepositoryOnly(list[str]):
    """A list setting read from an untrusted repository: it may affect files inside that repository only.

    `config.untrusted.untrusted_part` wraps `claudeMdExcludes` in it, and the instruction loader
    applies such globs only to files found in the repository, so an untrusted repository
    cannot hide the user's or the organisation's instruction files.
    """


class TrustRecordError(Exception):
    """The trust record could not be written; the message says what was kept and what to do."""


@dataclass
class TrustRecord:
    """The trusted folders as read from the record file, and why it could not be used, if so."""

    path: Path
    folders: dict[str, dict[str, Any]] = field(default_factory=dict)
    problem: str | None = None  # one line: the file is broken and nothing counts as trusted

    def covering(self, root: Path | str) -> str | None:
        """The recorded folder that trusts `root` (itself or an ancestor), else None.

        An ancestor's trust stops at a nested checkout between it and `root` (`nested_checkout`).
        """
        real = os.path.realpath(root)
        for folder in self.folders:
            if real == folder or (_below(real, folder) and nested_checkout(folder, real) is None):
                return folder
        return None

    def stopped_at(self, root: Path | str) -> tuple[str, str] | None:
        """(a recorded folder above `root`, the nested checkout where its trust stops) when no
        recorded folder covers `root`, else None."""
        real = os.path.realpath(root)
        if self.covering(real) is not None:
            return None
        for folder in self.folders:
            if _below(real, folder) and (nested := nested_checkout(folder, real)):
                return folder, nested
        return None


def _below(real: str, folder: str) -> bool:
    """Whether the real path `real` is strictly inside `folder`."""
    return real.startswith(folder.rstrip(os.sep) + os.sep)


def nested_checkout(folder: str, real: str) -> str | None:
    """The first checkout nested in another on the way from the trusted `folder` down to `real`.

    A checkout is a folder holding a `.git` file or folder (a dangling link counts too). When
    `folder` is in a checkout (its own `.git` or one above it), every checkout below it is
    nested: a vendored clone, for one. A plain folder (`~/src`) trusts the checkouts
    directly in it, and stops at the checkouts inside those.
    """
    seen_outer = paths.nearest_git_entry(folder) is not None
    current = folder.rstrip(os.sep) or os.sep
    for part in Path(os.path.relpath(real, folder)).parts:
        current = os.path.join(current, part)
        if os.path.lexists(os.path.join(current, ".git")):
            if seen_outer:
                return current
            seen_outer = True
    return None


def record_path() -> Path:
    """Where the trust record lives: `<home>/trusted-folders.json`."""
    return paths.home_dir() / RECORD_NAME


def load_record() -> TrustRecord:
    """The trust record; missing is empty, broken is empty with a one-line `problem`."""
    path = record_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return TrustRecord(path)
    except (OSError, UnicodeDecodeError) as exc:
        return TrustRecord(path, problem=_broken(path, f"cannot be read ({exc.__class__.__name__})"))
    if not text.strip():
        return TrustRecord(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return TrustRecord(path, problem=_broken(path, f"is not valid JSON (line {exc.lineno}: {exc.msg})"))
    except (ValueError, RecursionError):  # a huge number, or nesting too deep for the parser
        return TrustRecord(path, problem=_broken(path, "is not usable JSON"))
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, dict):
        return TrustRecord(path, problem=_broken(path, 'has no "folders" object'))
    usable = {
        os.path.normpath(k): v if isinstance(v, dict) else {}
        for k, v in folders.items()
        if isinstance(k, str) and os.path.isabs(k)
    }
    return TrustRecord(path, usable)


def _broken(path: Path, what: str) -> str:
    """The one line shown for a trust record that cannot be used."""
    return (
        f"The trust record {path} {what}, so no folder counts as trusted; "
        "fix or delete the file, then trust folders again."
    )


def is_trusted(root: Path | str) -> bool:
    """Whether the record trusts the project folder `root` (or a folder above it)."""
    return load_record().covering(root) is not None


def too_broad_to_record(root: Path | str) -> bool:
    """True for `/` and the OS home folder: trusting them would trust every project below.

    A "yes" there trusts the folder for the session only, as Claude Code does for the home folder.
    """
    real = os.path.realpath(root)
    return os.path.dirname(real) == real or real == os.path.realpath(os.path.expanduser("~"))


def record_trust(root: Path | str, *, now: float | None = None) -> Path:
    """Add `root` (canonical) to the record, atomically and under a lock; TrustRecordError if not."""
    real = os.path.realpath(root)
    path = record_path()
    try:
        with locked(path):
            record = load_record()
            if record.problem:
                raise TrustRecordError(
                    f"Could not record trust: {record.problem} This folder is trusted for this session only."
                )
            data = _raw_record(path)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
            data["folders"][real] = {"trustedAt": stamp}
            atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
    except (OSError, LockTimeout) as exc:
        raise TrustRecordError(
            f"Could not record trust in {path}: {exc}. This folder is trusted for this session only."
        ) from None
    return path


def _raw_record(path: Path) -> dict[str, Any]:
    """The record file's JSON (entries the loader skips are kept), or a new record."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, RecursionError):
        data = {}
    if not isinstance(data, dict) or not isinstance(data.get("folders"), dict):
        data = {"folders": {}}
    data.setdefault("version", RECORD_VERSION)
    return data
