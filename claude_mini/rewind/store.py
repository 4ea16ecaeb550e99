"""One session's file checkpoints: what each Write and Edit replaced, kept so /rewind can put it back.

(Not memory/compact/working_state.py, which is compaction's working state: a summary's companion.)

    $CLAUDE_MINI_HOME/file-history/<session-id>/
        index.json        every record, in the order it happened (temp file + os.replace, locked)
        blobs/<sha256>    a file's content before a change, once per distinct content

Records, by `kind`:

    change    the first Write or Edit of a file in a turn: `message` (the transcript uuid of the
              user's message that started the turn), `path`, `before` (absent | kept: sha256,
              size, mode | unrestorable: why) and `after` (the sha256 the turn's last change left;
              None: no file). A later change of the same file in the same turn only moves `after`.
    command   a Bash command of the turn that may have changed files: not tracked, only said
    restore   a code restore, with the state it left each file in

Only what a restore needs is kept whole: each file's content before a turn first changed it. The
state after a change is a hash, enough to tell that a file was changed outside the assistant
since. The blobs of one session stay under a cap (`checkpoints.maxSessionMB`, default 50): past
it the oldest contents are dropped first and their records say so. A file over MAX_FILE_BYTES or
binary (a NUL byte in its first 8 KiB) is recorded as not restorable, and not kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from claude_mini.base import paths
from claude_mini.base.fileutil import atomic_write, locked, os_error_text
from claude_mini.config.checkpoint_settings import CheckpointSettings

MAX_FILE_BYTES = 1024 * 1024  # a bigger file is noted as not restorable: checkpoints must stay cheap
BINARY_SNIFF_BYTES = 8192
VERSION = 1
FOLDER = "file-history"

BeforeState = Literal["absent", "kept", "unrestorable"]


class StoreError(Exception):
    """The store could not be read or written; the message says what was kept and what to do."""


class IndexDamaged(StoreError):
    """index.json is there but is not an index (a hand edit, a disk fault)."""


@dataclass(frozen=True)
class Before:
    """What a file was before a turn changed it: absent, kept (its content is a blob), or not
    restorable (why)."""

    state: BeforeState
    sha: str = ""
    size: int = 0
    mode: int = 0o644
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        if self.state == "kept":
            return {"state": "kept", "sha": self.sha, "size": self.size, "mode": self.mode}
        return {"state": self.state, **({"why": self.why} if self.why else {})}

    @classmethod
    def from_dict(cls, raw: Any) -> Before:
        """A record's `before`; ValueError when it is not one."""
        state = raw.get("state") if isinstance(raw, dict) else None
        if state == "kept":
            sha, size, mode = raw.get("sha"), raw.get("size"), raw.get("mode", 0o644)
            if not (_is_sha(sha) and isinstance(size, int) and isinstance(mode, int)):
                raise ValueError("a kept content without its hash and size")
            return cls("kept", sha, size, mode & 0o7777)
        if state in ("absent", "unrestorable"):
            return cls(state, why=str(raw.get("why", "")))
        raise ValueError(f"unknown state {state!r}")


@dataclass
class Change:
    """The first change of a file in a turn, and the state the turn's last change left it in."""

    seq: int
    message: str
    path: str
    tool: str
    before: Before
    after: str | None
    time: str
    by: str = "main"  # or the subagent type that made it

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "change",
            "seq": self.seq,
            "message": self.message,
            "path": self.path,
            "tool": self.tool,
            "by": self.by,
            "before": self.before.to_dict(),
            "after": self.after,
            "time": self.time,
        }


@dataclass
class Command:
    """A Bash command of a turn that may have changed files (its changes are not tracked)."""

    seq: int
    message: str
    command: str
    time: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "command", "seq": self.seq, "message": self.message, "command": self.command, "time": self.time}


@dataclass
class Restore:
    """A code restore: the state it left each file in (None: it deleted the file)."""

    seq: int
    to: str
    files: dict[str, str | None]
    time: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "restore", "seq": self.seq, "to": self.to, "files": self.files, "time": self.time}


Record = Change | Command | Restore


@dataclass
class Index:
    """The records of one session's store, oldest first, and what could not be read of them."""

    records: list[Record] = field(default_factory=list)
    skipped: int = 0  # records that could not be read (a hand-edited or damaged index)

    @property
    def changes(self) -> list[Change]:
        return [r for r in self.records if isinstance(r, Change)]

    def next_seq(self) -> int:
        return max((r.seq for r in self.records), default=0) + 1

    def to_json(self, session_id: str) -> str:
        return json.dumps(
            {"version": VERSION, "session_id": session_id, "records": [r.to_dict() for r in self.records]},
            ensure_ascii=False,
            indent=1,
        )


def read_index(text: str) -> Index:
    """An index file's records; StoreError when it is not an index at all."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StoreError(f"it is not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise StoreError("it has no list of records")
    index = Index()
    for raw in data["records"]:
        try:
            index.records.append(_record(raw))
        except (ValueError, TypeError, KeyError, AttributeError):
            index.skipped += 1
    return index


def _record(raw: dict[str, Any]) -> Record:
    kind, seq = raw["kind"], raw["seq"]
    if not isinstance(seq, int):
        raise ValueError("no sequence number")
    if kind == "change":
        after = raw.get("after")
        if after is not None and not isinstance(after, str):
            raise ValueError("a bad state after")
        return Change(
            seq,
            _text(raw["message"]),
            _text(raw["path"]),
            str(raw.get("tool", "")),
            Before.from_dict(raw["before"]),
            after,
            str(raw.get("time", "")),
            str(raw.get("by", "main")),
        )
    if kind == "command":
        return Command(seq, _text(raw["message"]), _text(raw["command"]), str(raw.get("time", "")))
    if kind == "restore":
        files = raw["files"]
        if not isinstance(files, dict) or not all(v is None or isinstance(v, str) for v in files.values()):
            raise ValueError("bad files")
        return Restore(seq, _text(raw["to"]), {str(k): v for k, v in files.items()}, str(raw.get("time", "")))
    raise ValueError(f"unknown kind {kind!r}")


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("not a text")
    return value


def _is_sha(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


# ---------------------------------------------------------------- files on disk


def capture(path: Path) -> tuple[Before, bytes | None]:
    """What `path` is now, with its content when it can be kept (read before a Write or Edit)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Before("absent"), None
    except OSError as exc:
        return Before("unrestorable", why=f"it could not be read ({os_error_text(exc)})"), None
    if not stat.S_ISREG(st.st_mode):
        return Before("unrestorable", why="it is not a regular file"), None
    if st.st_size > MAX_FILE_BYTES:
        return Before(
            "unrestorable",
            size=st.st_size,
            why=f"it is larger than {MAX_FILE_BYTES // 1024 // 1024} MB ({st.st_size:,} bytes)",
        ), None
    try:
        data = path.read_bytes()
    except OSError as exc:
        return Before("unrestorable", why=f"it could not be read ({os_error_text(exc)})"), None
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return Before("unrestorable", size=len(data), why="it is a binary file"), None
    return Before("kept", hashlib.sha256(data).hexdigest(), len(data), st.st_mode & 0o7777), data


def fingerprint(path: Path) -> str | None:
    """The sha256 of the file at `path` (None: there is none); a folder or an unreadable file gets a
    word instead, which no recorded state equals."""
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return "folder"
    except OSError as exc:
        return f"unreadable: {os_error_text(exc)}"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ---------------------------------------------------------------- the store


class FileHistory:
    """One session's checkpoint store (`$CLAUDE_MINI_HOME/file-history/<session-id>/`).

    Every update is a locked read-modify-write of index.json, so the REPL and a
    `claude-mini checkpoints restore` of the same session never lose each other's records.
    """

    def __init__(self, root: Path, session_id: str, settings: CheckpointSettings | None = None) -> None:
        self.root = root
        self.session_id = session_id
        self.cap = (settings or CheckpointSettings()).max_session_bytes
        self.index_path = root / "index.json"
        self.blob_dir = root / "blobs"

    @classmethod
    def of_session(cls, session_id: str, settings: CheckpointSettings | None = None) -> FileHistory:
        """The store of the session `session_id` under the home folder."""
        return cls(paths.home_dir() / FOLDER / session_id, session_id, settings)

    # -- reading

    def load(self) -> Index:
        """The records (none when nothing was recorded yet); StoreError when the index is damaged."""
        try:
            text = self.index_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Index()
        except OSError as exc:
            raise StoreError(
                f"Cannot read the checkpoint index {self.index_path} ({os_error_text(exc)}); nothing was changed."
            ) from None
        try:
            return read_index(text)
        except StoreError as exc:
            raise IndexDamaged(
                f"The checkpoint index {self.index_path} is damaged ({exc}): the file changes "
                "of this session cannot be listed or restored. It was left as it is; move it "
                "away to start a new one."
            ) from None

    def blob(self, sha: str) -> bytes | None:
        """The kept content with this hash; None when it is missing or damaged."""
        try:
            data = (self.blob_dir / sha).read_bytes()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == sha else None

    def stored_bytes(self) -> int:
        """What the kept contents take on disk (the index aside)."""
        try:
            return sum(p.stat().st_size for p in self.blob_dir.iterdir() if p.is_file())
        except OSError:
            return 0

    # -- recording

    def record_change(
        self,
        message: str,
        path: Path,
        before: Before,
        data: bytes | None,
        after: str | None,
        tool: str,
        by: str = "main",
    ) -> str | None:
        """Record a Write or Edit of `path` in the turn of `message`; a line for the user when
        something was given up on the way (a damaged index set aside, old contents dropped)."""
        notes: list[str] = []

        def add(index: Index) -> str | None:
            earlier = next((c for c in index.changes if c.message == message and c.path == str(path)), None)
            if earlier is not None:  # the turn changed it before: its state before the turn is kept
                earlier.after = after
                return None
            kept = before
            if before.state == "kept" and self.cap <= 0:
                kept = Before("unrestorable", why="file checkpoints are off (checkpoints.maxSessionMB is 0)")
            elif before.state == "kept" and data is not None:
                self._write_blob(before.sha, data)
            index.records.append(Change(index.next_seq(), message, str(path), tool, kept, after, _now(), by))
            return self._keep_under_cap(index)

        dropped = self._update(add, notes)
        if dropped:
            notes.append(dropped)
        return " ".join(notes) or None

    def record_command(self, message: str, command: str) -> str | None:
        """Record a command of the turn of `message` that may have changed files."""
        notes: list[str] = []
        self._update(lambda index: index.records.append(Command(index.next_seq(), message, command, _now())), notes)
        return " ".join(notes) or None

    def record_restore(self, to: str, files: dict[str, str | None]) -> None:
        """Record what a code restore left each file as (a later restore compares with it)."""
        self._update(lambda index: index.records.append(Restore(index.next_seq(), to, files, _now())), [])

    def _update(self, change: Callable[[Index], Any], notes: list[str]) -> Any:
        """Lock, read, change, write back atomically, then delete the contents nothing refers to."""
        try:
            with locked(self.index_path):
                index = self._load_for_update(notes)
                result = change(index)
                atomic_write(self.index_path, index.to_json(self.session_id))
                self._sweep(index)
        except OSError as exc:  # LockTimeout included
            raise StoreError(
                f"Could not update the checkpoint index {self.index_path} ({os_error_text(exc)})"
            ) from None
        return result

    def _load_for_update(self, notes: list[str]) -> Index:
        """The index to add to; a damaged one is set aside (renamed, nothing deleted) and a new one begun."""
        try:
            return self.load()
        except IndexDamaged:
            aside = self.index_path.with_name(f"index.json.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
            os.replace(self.index_path, aside)
            notes.append(
                f"The checkpoint index was damaged; it was kept as {aside} and a new one was begun: "
                "file changes before this one cannot be restored."
            )
            return Index()

    def _write_blob(self, sha: str, data: bytes) -> None:
        target = self.blob_dir / sha
        if not target.exists():
            atomic_write(target, data)

    def _keep_under_cap(self, index: Index) -> str | None:
        """Drop the oldest kept contents until the rest fit the cap; the line saying so, if any."""
        sizes = {c.before.sha: c.before.size for c in index.changes if c.before.state == "kept"}
        total = sum(sizes.values())
        dropped = 0
        for change in index.changes:
            if total <= self.cap:
                break
            if change.before.state != "kept":
                continue
            sha = change.before.sha
            change.before = Before(
                "unrestorable",
                why=f"its checkpoint was dropped to keep this session's checkpoints under {size_text(self.cap)}",
            )
            dropped += 1
            if not any(c.before.state == "kept" and c.before.sha == sha for c in index.changes):
                total -= sizes[sha]
        if not dropped:
            return None
        copies = "copy was" if dropped == 1 else "copies were"
        return (
            f"File checkpoints of this session reached their cap of {size_text(self.cap)} "
            f"(checkpoints.maxSessionMB): {dropped} saved file {copies} dropped, oldest first; /rewind "
            "cannot put those files back as they were before those changes."
        )

    def _sweep(self, index: Index) -> None:
        """Delete the contents no record keeps (dropped over the cap, or left by a failed update)."""
        wanted = {c.before.sha for c in index.changes if c.before.state == "kept"}
        with contextlib.suppress(OSError):
            for blob in self.blob_dir.iterdir():
                if blob.name not in wanted and _is_sha(blob.name):
                    blob.unlink(missing_ok=True)


def size_text(size: int) -> str:
    """`50 MB`, `4 KB`, `312 bytes`."""
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"
