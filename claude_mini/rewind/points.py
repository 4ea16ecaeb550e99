"""The points /rewind and `claude-mini checkpoints` go back to: the user's messages of the current
conversation (from the transcript), each with the files its turn changed and the commands it ran
(from the checkpoint store), newest first.

A message rewound away earlier is no point any more, but its turn's changes still count when the
code goes back to before an earlier message: what happened on disk happened in time order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from claude_mini.rewind.store import Change, Command, FileHistory, Index, Restore, StoreError
from claude_mini.session import PromptEntry, TranscriptContents, read_transcript

MIN_ID_PREFIX = 4  # characters of a message id that name it, as with git's short hashes


@dataclass(frozen=True)
class FileChange:
    """A file a turn changed: created or changed, and why it cannot be put back (None: it can)."""

    path: str
    created: bool
    not_restorable: str | None


@dataclass(frozen=True)
class RewindPoint:
    """One of the user's messages, with what its turn did to files."""

    prompt: PromptEntry
    number: int  # 1: the newest
    files: list[FileChange]
    commands: list[str]  # Bash commands that may have changed files (not tracked)


@dataclass
class SessionCheckpoints:
    """One session's transcript and checkpoint store, read together."""

    transcript: Path
    history: FileHistory
    contents: TranscriptContents
    index: Index
    problems: list[str] = field(default_factory=list)  # what could not be read (each said once)
    damaged: bool = False  # the index could not be read at all: no file can be restored

    @property
    def points(self) -> list[RewindPoint]:
        """The current conversation's messages, newest first."""
        prompts = self.contents.prompts
        return [self._point(prompt, len(prompts) - i) for i, prompt in enumerate(prompts)][::-1]

    def _point(self, prompt: PromptEntry, number: int) -> RewindPoint:
        files = [
            FileChange(c.path, c.before.state == "absent", _not_restorable(c))
            for c in self.index.changes
            if c.message == prompt.id
        ]
        commands = [r.command for r in self.index.records if isinstance(r, Command) and r.message == prompt.id]
        return RewindPoint(prompt, number, files, list(dict.fromkeys(commands)))

    def find(self, key: str, *, numbers: bool = False) -> RewindPoint | None:
        """The point whose message id is or starts with `key` (4 characters at least); with
        `numbers`, `key` may be a point's number in the list (1: the newest)."""
        points = self.points
        if numbers and key.isdigit() and 1 <= int(key) <= len(points):
            return points[int(key) - 1]
        exact = [p for p in points if p.prompt.id == key]
        # A start of an id needs 4 characters, as git's short hashes: "/rewind 7" past the end of
        # the list must not land on a message whose random id happens to start with 7.
        found = exact or [p for p in points if len(key) >= MIN_ID_PREFIX and p.prompt.id.startswith(key)]
        return found[0] if len(found) == 1 else None

    def since(self, prompt: PromptEntry) -> Iterator[Change | Command | Restore]:
        """The store's records from the turn of `prompt` on, in time order, restores included.

        A record whose message the transcript does not know (one whose entry could not be
        written) goes with the record before it: the store is written in time order too.
        """
        positions = self.contents.positions
        included = False
        for record in self.index.records:
            if isinstance(record, Restore):
                yield record
                continue
            where = positions.get(record.message)
            if where is not None:
                included = where >= prompt.position
            if included:
                yield record

    def changes_since(self, prompt: PromptEntry) -> bool:
        """Whether any file was changed by the assistant at or after `prompt`."""
        return any(isinstance(r, Change) for r in self.since(prompt))


def _not_restorable(change: Change) -> str | None:
    if change.before.state != "unrestorable":
        return None
    return change.before.why or "it is not restorable"


def read_checkpoints(transcript: Path, history: FileHistory) -> SessionCheckpoints:
    """A session's points; a store that cannot be read leaves them without files (said in `problems`),
    a transcript that cannot be read is StoreError (nothing can be listed)."""
    try:
        contents = read_transcript(transcript)
    except FileNotFoundError:  # nothing said yet in this session
        contents = TranscriptContents()
    except OSError as exc:
        raise StoreError(f"Cannot read the transcript {transcript}: {exc.strerror or exc}.") from None
    problems, damaged = [], False
    try:
        index = history.load()
    except StoreError as exc:
        index, problems, damaged = Index(), [str(exc)], True
    if index.skipped:
        problems.append(
            f"Skipped {index.skipped} unreadable record(s) of {history.index_path}; the changes "
            "they held cannot be restored."
        )
    return SessionCheckpoints(transcript, history, contents, index, problems, damaged)
