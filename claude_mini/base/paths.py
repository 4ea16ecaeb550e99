"""Where claude_mini keeps its files (DESIGN.md section 4). Functions, never import-time constants."""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_mini.base.gitrun import run_git


def home_dir() -> Path:
    """The user-level folder: `$CLAUDE_MINI_HOME`, default `~/.claude-mini`."""
    env = os.environ.get("CLAUDE_MINI_HOME")
    return Path(env).expanduser() if env else Path.home() / ".claude-mini"


def claude_code_dir() -> Path:
    """Claude Code's user folder: `$CLAUDE_CONFIG_DIR` (as Claude Code reads it), default `~/.claude`."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def recall_cache_dir() -> Path:
    """Recall's on-disk indexes of memory folders (derived data: safe to delete at any time)."""
    return home_dir() / "cache" / "recall"


def managed_dir() -> Path:
    """The managed (enterprise) folder: `$CLAUDE_MINI_MANAGED_DIR`, default `/etc/claude-mini`."""
    return Path(os.environ.get("CLAUDE_MINI_MANAGED_DIR") or "/etc/claude-mini")


def _git_lines(cwd: Path, *args: str) -> list[str] | None:
    """The output lines of `git rev-parse <args>` in `cwd`, or None when git says no."""
    out = run_git(cwd, ["rev-parse", "--path-format=absolute", *args], timeout=5)
    if out is None:
        return None
    lines = os.fsdecode(out.stdout).splitlines()
    return lines if out.returncode == 0 and len(lines) == len(args) and all(lines) else None


def _contains(folder: str, path: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def nearest_git_entry(real_cwd: str) -> str | None:
    """The nearest folder at or above `real_cwd` that holds a `.git` file or folder."""
    folder = real_cwd
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


@functools.lru_cache(maxsize=32)
def checkout_root(cwd: Path) -> Path | None:
    """The top of the work tree holding `cwd` (a linked worktree is its own), symlinks resolved.

    Trust and the project's settings are keyed on this folder (DESIGN.md section 8, Trust). git's own answer
    is used only when it contains `cwd`: a `.git` file may name a git dir whose
    `core.worktree` is another folder (a trusted repository's), and that folder must not
    become this one's root. Then the folder holding the nearest `.git` is the root.
    """
    real = os.path.realpath(cwd)
    lines = _git_lines(cwd, "--show-toplevel")
    if lines is None:
        return None
    top = os.path.realpath(lines[0])
    if _contains(top, real):
        return Path(top)
    nearest = nearest_git_entry(real)
    return Path(nearest) if nearest else Path(real)


@functools.lru_cache(maxsize=32)
def git_root(cwd: Path) -> Path | None:
    """The canonical root of the repository holding `cwd`: the key of its memory folder.

    A linked worktree shares its main checkout's root, but only when that repository
    lists this worktree (its `worktrees/<name>/gitdir` points back at our `.git`): a
    `.git` file naming another repository's git dir gets a root (and memory) of its own.
    Submodules are keyed on their own checkout. Cached: a session asks several times and
    each answer costs git processes.
    """
    top = checkout_root(cwd)
    if top is None:
        return None
    lines = _git_lines(top, "--git-dir", "--git-common-dir")
    if lines is None:
        return top
    git_dir, common = (Path(os.path.realpath(line)) for line in lines)
    # The back link must sit inside the common dir: a git dir of the repository's own
    # making could name any `commondir` and point back at itself.
    registered = git_dir.parent == common / "worktrees" and _points_back(git_dir, top)
    return common.parent if registered and common.name == ".git" else top


def _points_back(git_dir: Path, top: Path) -> bool:
    """Whether a linked worktree's git dir records `top/.git` as its worktree (git's back link)."""
    try:
        recorded = (git_dir / "gitdir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return False
    return os.path.realpath(os.path.join(git_dir, recorded)) == os.path.realpath(top / ".git")


def path_key(path: Path) -> str:
    """`path` with every non-alphanumeric character replaced by `-`, cut with a hash past 200 chars."""
    key = re.sub(r"[^A-Za-z0-9]", "-", str(path))
    if len(key) > 200:
        key = key[:200] + "-" + hashlib.sha256(key.encode()).hexdigest()[:8]
    return key


def project_dir(cwd: Path) -> Path:
    """Per-directory folder for transcripts: `projects/<cwd-key>/`."""
    return project_folder(cwd.resolve())


def memory_dir(cwd: Path) -> Path:
    """The auto-memory folder of the project: keyed on the git root, else the cwd."""
    return project_folder(_memory_root(cwd)) / "memory"


def _memory_root(cwd: Path) -> Path:
    return git_root(cwd) or cwd.resolve()


# ---- one folder per real path ---------------------------------------------------------------
# The key alone is not unique: `my-app`, `my_app`, `my.app` and `my/app` give the same one.
# `projects/<key>/project.json` names the real path that owns the folder (DESIGN.md section 4's
# layout, kept for it); any other path with that key gets `projects/<key>-<hash of its path>/`.

PROJECT_RECORD = "project.json"
Notify = Callable[[str], None]


@dataclass(frozen=True)
class _Owner:
    """What `project.json` says: the real path that owns the folder, and the projects on disk
    that claude-mini ran in and that had shared it before it was claimed (each gets a copy of its memory)."""

    path: str
    shared_with: tuple[str, ...] = ()


def project_folder(real: Path) -> Path:
    """`projects/<key>/` of a real path: the plain key unless another path owns it.

    Only looks; `claim_project_folders` writes the records, and gives the same answer.
    """
    plain = home_dir() / "projects" / path_key(real)
    own = _own_folder(plain, real)
    if (own / PROJECT_RECORD).exists():
        return own
    owner = _read_owner(plain)
    # A path that shared the plain folder keeps it until its own folder holds the copied memory.
    pending = owner is not None and str(real) in owner.shared_with
    return plain if owner is None or owner.path == str(real) or pending else own


def claim_project_folders(cwd: Path, notify: Notify) -> None:
    """Record which real path owns the folders of `cwd` (transcripts) and its root (memory).

    Called once a session starts, before anything is written. A folder from before the
    record, whose key other folders on disk share, stays with the first project that runs;
    each of the others gets its own folder when it first runs, with a copy of the memory if a
    transcript shows that claude-mini ran there (`_ran_here`).
    Each says so in one line. A home folder that cannot be written is left as it is.
    """
    for real in dict.fromkeys((cwd.resolve(), _memory_root(cwd))):
        with contextlib.suppress(OSError):
            _claim(real, notify)


def _own_folder(plain: Path, real: Path) -> Path:
    digest = hashlib.sha256(os.fsencode(str(real))).hexdigest()[:8]
    return plain.with_name(f"{plain.name}-{digest}")


_FOREIGN = _Owner("")  # a record that exists but cannot be read: owned, by a path we cannot name


def _read_owner(folder: Path) -> _Owner | None:
    """The folder's owner; None when it has no record (or an empty one, left by a run cut short)."""
    try:
        text = (folder / PROJECT_RECORD).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError):
        return _FOREIGN
    if not text.strip():
        return None
    try:
        data = json.loads(text)
        return _Owner(str(data["path"]), tuple(str(p) for p in data.get("shared_with", ())))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return _FOREIGN


def _write_owner(folder: Path, owner: _Owner) -> bool:
    """Write the record unless one exists; False when another process wrote one first.

    Written whole to a temp file, then hard-linked into place: the link is atomic and fails
    if the record exists, so a reader never sees half a record and two first runs cannot
    both claim a folder. An empty record (an older claude-mini cut short) is replaced.
    """
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / PROJECT_RECORD
    data = {"path": owner.path, "shared_with": list(owner.shared_with)}
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".project.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=2) + "\n")
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(FileNotFoundError):
            if record.stat().st_size == 0:
                record.unlink()
        try:
            os.link(tmp, record)
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise
            _create_whole(record, data)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
    return True


# What os.link raises on a filesystem without hard links (vfat, exFAT, some SMB and FUSE mounts).
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV})


def _create_whole(record: Path, data: dict[str, Any]) -> None:
    """Create the record only if it does not exist (FileExistsError), in one write: where there are no
    hard links. A write that fails takes the record away again: a half record is never left."""
    fd = os.open(record, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        os.write(fd, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
        os.fsync(fd)
    except OSError:
        os.close(fd)
        record.unlink()
        raise
    os.close(fd)


def _claim(real: Path, notify: Notify) -> None:
    plain = home_dir() / "projects" / path_key(real)
    own = _own_folder(plain, real)
    if (own / PROJECT_RECORD).exists():
        return
    owner = _read_owner(plain)
    if owner is None:
        owner = _claim_plain(plain, real, notify)
    if owner is not None and owner.path != str(real):
        _start_own_folder(plain, own, real, owner, notify)


def _claim_plain(plain: Path, real: Path, notify: Notify) -> _Owner | None:
    """Make `real` the owner of the plain-key folder (new, or from before the record)."""
    others = (
        tuple(p for p in _folders_with_key(plain.name) if p != str(real) and _ran_here(p)) if plain.is_dir() else ()
    )
    if _write_owner(plain, _Owner(str(real), others)):
        if others:
            notify(
                f"{plain} may also hold the memory and sessions of {', '.join(others)} (paths that "
                "differ only in punctuation shared one folder): it stays with this project; the "
                "other gets its own folder, with a copy of the memory, when claude-mini runs there."
            )
        return None
    return _read_owner(plain)  # another process claimed it first


def _start_own_folder(plain: Path, own: Path, real: Path, owner: _Owner, notify: Notify) -> None:
    """The folder of a path whose key another path owns; it had shared that folder before: copy the memory."""
    copied = str(real) in owner.shared_with and (plain / "memory").is_dir() and not (own / "memory").exists()
    if copied:  # into a temp folder first: a copy cut short is never taken for the memory
        own.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=own, prefix=".memory."))
        try:
            shutil.copytree(plain / "memory", tmp, dirs_exist_ok=True, symlinks=True)
            os.rename(tmp, own / "memory")
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            # No record: this path keeps the shared folder (project_folder) and the next run copies again.
            notify(
                f"Could not copy this project's memory from {plain / 'memory'} to {own / 'memory'} "
                f"({exc.strerror or exc}): it keeps using the shared folder {plain} for now; "
                "claude-mini tries again when it next starts here."
            )
            return
    if not _write_owner(own, _Owner(str(real))):
        return
    if copied:
        notify(
            f"This project shared {plain} with {owner.path} (paths that differ only in "
            f"punctuation): its memory was copied to {own / 'memory'}; the sessions from before "
            "stay in the shared folder."
        )
    elif _memory_from_before(plain):  # no transcript showed claude-mini ran here: it may have all the same
        notify(
            f"If claude-mini ran here before, this project's memory may be in {plain / 'memory'}, which "
            f"stays with {owner.path} (paths that differ only in punctuation shared one folder): to "
            f"take a copy, run `cp -r {plain / 'memory'} {own / 'memory'}`."
        )


def _memory_from_before(plain: Path) -> bool:
    """Whether the plain folder's memory holds a file older than its record: one written while it was shared."""
    try:
        claimed = (plain / PROJECT_RECORD).stat().st_mtime
        return any(f.stat().st_mtime < claimed for f in (plain / "memory").rglob("*") if f.is_file())
    except OSError:
        return False


def shares_key(cwd: Path) -> bool:
    """Whether the transcript folder of `cwd` is one that other projects shared before the record:
    there a transcript that recorded no cwd (from before) may be another project's. Before the
    first claim, says what the claim will record."""
    folder = project_dir(cwd)
    owner = _read_owner(folder)
    if owner is None:
        real = str(cwd.resolve())
        return folder.is_dir() and any(p != real and _ran_here(p) for p in _folders_with_key(folder.name))
    return bool(owner.shared_with)


def keeps_folder(cwd: Path) -> bool:
    """Whether the transcript folder `project_dir(cwd)` gives now stays this directory's once claimed
    (not a shared folder it leaves on its first run): then /resume there lists its sessions from before."""
    owner = _read_owner(project_dir(cwd))
    return owner is None or owner.path == str(cwd.resolve())


def _ran_here(path: str) -> bool:
    """Whether a transcript names `path` (as its recorded cwd, or a file below it): the sign that
    claude-mini ran there, so the folder it shared holds its memory. Only such paths get a copy."""
    key = path_key(Path(path))
    named = re.compile(re.escape(json.dumps(path, ensure_ascii=False)[1:-1]) + r'(?=["/])')
    for folder in (home_dir() / "projects").glob(key + "*"):  # the path's folder and those below it
        if folder.name == key or folder.name.startswith(key + "-"):
            for transcript in folder.glob("*.jsonl"):
                with contextlib.suppress(OSError):
                    if named.search(transcript.read_text(encoding="utf-8", errors="replace")):
                        return True
    return False


def _folders_with_key(key: str) -> list[str]:
    """Folders on disk (no symlinks on the way) whose real path has this key: the projects that
    may have shared one folder before the record. Walks only the entries that fit the key."""
    found: list[str] = []

    def walk(folder: str, rest: str) -> None:  # rest: the key after `folder`'s part
        if not rest:
            found.append(folder)
            return
        try:
            entries = [e for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
        except OSError:
            return
        for entry in entries:
            part = "-" + re.sub(r"[^A-Za-z0-9]", "-", entry.name)
            if rest == part or rest.startswith(part + "-"):
                walk(entry.path, rest[len(part) :])

    if key == "-":
        return [os.sep]
    if key.startswith("-") and len(key) <= 200:  # a cut key is not walked (nor shared, in practice)
        walk(os.sep, key)
    return found
