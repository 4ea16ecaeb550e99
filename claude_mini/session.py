"""Session state and its transcript: one JSONL file per session, appended as messages complete.

Each line is one entry: `{"type": "user"|"assistant"|"system"|"compact_boundary"|"rewind",
"uuid", "timestamp", "session_id", ...}`; user and assistant entries carry the
API-shaped `message` (the user's own message that starts a turn has `"prompt": true`),
`system` entries with subtype `cost` one request's usage (so /cost after a resume shows
the whole session), a `rewind` entry (`"to"`: a prompt's uuid) says the conversation went
back to before that message (/rewind): nothing is ever deleted from the file, and reading
it replays the rewind. Lines are flushed as each
message completes, so a `kill -9` loses at most the message in flight; every
append starts on a fresh line, so a line cut by a crash never swallows the next.
A failed write (disk full) is said once and ends the saving: the file stays a
consistent prefix of the conversation. Resuming rebuilds the messages from the
last compact boundary, skips what it cannot read (saying so once) and repairs a
dangling tool_use.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from claude_mini.base import paths
from claude_mini.base.notices import NoticeChannel
from claude_mini.llm.messages import (
    Block,
    Message,
    TextBlock,
    ToolResultBlock,
    Usage,
    block_from_api,
    message_to_api,
)
from claude_mini.llm.pricing import cost_usd, price_for

# The result of a tool call that never returned one: the session or the turn ended first (the user's
# own cancel has its words in agent/loop.py).
UNFINISHED_TOOL = (
    "This call did not finish: the session or the turn ended before it returned a result. "
    "Its effect is unknown; check before relying on it."
)


class SessionNotFound(Exception):
    """`--resume ID` or `--continue` found nothing to resume."""


@dataclass
class CostLine:
    """Tokens and dollars spent for one purpose (main, recall, extract, compact, dream)."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    requests: int = 0
    unpriced: set[str] = field(default_factory=set)  # models with no known price served some: not in cost_usd


@dataclass
class CostLedger:
    """What this session has spent, split by purpose so users see what memory costs."""

    by_purpose: dict[str, CostLine] = field(default_factory=dict)
    on_add: Callable[[str, str, Usage], None] | None = None  # the session records it in the transcript

    def add(self, purpose: str, model: str, usage: Usage) -> None:
        line = self.by_purpose.setdefault(purpose, CostLine())
        line.usage = line.usage + usage
        line.cost_usd += cost_usd(model, usage)
        line.requests += 1
        if price_for(model) is None:
            line.unpriced.add(model)
        if self.on_add is not None:
            self.on_add(purpose, model, usage)

    @property
    def total_usage(self) -> Usage:
        total = Usage()
        for line in self.by_purpose.values():
            total = total + line.usage
        return total

    @property
    def total_cost(self) -> float:
        return sum(line.cost_usd for line in self.by_purpose.values())


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Transcript:
    """Append-only JSONL writer for one session; `warn` hears once that a write failed."""

    def __init__(self, path: Path, session_id: str, warn: Callable[[str], None] | None = None, cwd: str | None = None):
        self.path = path
        self.session_id = session_id
        self.cwd = cwd  # recorded in every entry: which project a transcript is of (paths.shares_key)
        self.error: OSError | None = None  # the write that failed; nothing is written after it
        self._warn = warn

    def append(self, entry_type: str, **fields: Any) -> str | None:
        """Write one entry on a line of its own and flush it to the OS at once; its uuid (None
        when it was not written).

        After a failed write nothing more is written: a later entry (a tool result
        whose call was lost) could make the saved conversation one the API refuses.
        """
        if self.error is not None:
            return None
        entry_id = str(uuid.uuid4())
        entry = {
            "type": entry_type,
            "uuid": entry_id,
            "timestamp": _now_iso(),
            "session_id": self.session_id,
            **({"cwd": self.cwd} if self.cwd else {}),
            **fields,
        }
        data = transcript_line(entry).encode("utf-8")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab+") as fh:
                if _ends_mid_line(fh):  # cut by a crash or a full disk: the fragment stays alone
                    data = b"\n" + data
                fh.write(data)
        except OSError as exc:
            self.error = exc
            if self._warn is not None:
                self._warn(
                    f"Could not write the transcript {self.path}: {exc.strerror or exc}. The session "
                    "goes on, but nothing more of it is saved (a resume gets it up to here)."
                )
            return None
        return entry_id


def record_rewind(transcript: Transcript, prompt_id: str) -> None:
    """Record in the transcript that the conversation went back to before the prompt `prompt_id`;
    RewindError (nothing changed) when it cannot be written: a rewind not kept would be undone by
    the next resume."""
    if transcript.error is not None:
        raise RewindError(
            f"The transcript {transcript.path} could not be written earlier "
            f"({transcript.error.strerror or transcript.error}), so a rewind would not be "
            "kept; the conversation is unchanged."
        )
    if transcript.append("rewind", to=prompt_id) is None:
        raise RewindError(f"Could not record the rewind in {transcript.path}; the conversation is unchanged.")


def _ends_mid_line(fh: Any) -> bool:
    """Whether the file open in `fh` ends without a newline (its last line was cut)."""
    if fh.seek(0, os.SEEK_END) == 0:
        return False
    fh.seek(-1, os.SEEK_END)
    return bool(fh.read(1) != b"\n")


_SURROGATE = re.compile("[\ud800-\udfff]")


def transcript_line(entry: dict[str, Any]) -> str:
    """One JSONL line, readable text kept as is, that UTF-8 can always encode.

    A model reply may carry a lone surrogate (JSON's `"\\udc1b"` decodes to one), which
    `ensure_ascii=False` would leave raw and UTF-8 cannot encode: the append would fail
    and the turn with it. Surrogates can only sit inside JSON strings, so they are written
    as `\\uXXXX` escapes, which json.loads reads back to the same text.
    """
    dumped = json.dumps(entry, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped) + "\n"


class Session:
    """The conversation of one session: messages, transcript, costs."""

    def __init__(
        self,
        cwd: Path,
        session_id: str | None = None,
        messages: list[Message] | None = None,
        costs: CostLedger | None = None,
        transcript_path: Path | None = None,
    ):
        """`transcript_path`: the file a resumed session was read from; it goes on there, even when
        the claim below moves this directory's folder (a lookalike leaving a shared one)."""
        self.cwd = cwd
        self.id = session_id or str(uuid.uuid4())
        self.messages: list[Message] = messages or []
        self.notices = NoticeChannel()  # kept until the runtime forwards them (report_to)
        paths.claim_project_folders(cwd, lambda text: self.notices.say(text, "warning", once=True))
        self.transcript = Transcript(
            transcript_path or paths.project_dir(cwd) / f"{self.id}.jsonl",
            self.id,
            warn=lambda text: self.notices.say(text, "warning", once=True),
            cwd=str(cwd.resolve()),
        )
        self.costs = costs or CostLedger()
        self.costs.on_add = self._record_cost
        self.started = time.time()
        self.prompt_id: str | None = None  # the transcript uuid of the user's message that started this turn

    def report_to(self, notices: NoticeChannel) -> None:
        """Tell the user what this session has to say (an unreadable resume, a failed write) on `notices`."""
        self.notices.attach(lambda notice: notices.say(notice.text, notice.level))

    def _record_cost(self, purpose: str, model: str, usage: Usage) -> None:
        # Not before the first message (a dream at start-up): a file holding only costs would be
        # listed as a session, and `-c` would continue it.
        if self.messages:
            self.transcript.append("system", subtype="cost", purpose=purpose, model=model, usage=usage.to_dict())

    def add_message(self, message: Message, *, prompt: bool = False) -> None:
        """Append a completed message to the conversation and the transcript.

        Two user messages in a row (a turn that failed before any answer, or a
        resumed session) are merged, since the API wants roles to alternate.
        `prompt`: the user's own message that starts a turn, a point /rewind can go
        back to; its transcript uuid becomes `prompt_id`.
        """
        if self.messages and self.messages[-1].role == message.role == "user":
            self.messages[-1].content.extend(message.content)
        else:
            self.messages.append(message)
        entry_id = self.transcript.append(
            message.role, message=message_to_api(message), **({"prompt": True} if prompt else {})
        )
        if prompt:
            self.prompt_id = entry_id

    def rewind(self, target: RewindTarget) -> list[Message]:
        """Put the conversation back to before the prompt of `target` and record that in the
        transcript, so a resume sees the same; returns the conversation as it was.

        Refused (RewindError) when the transcript cannot be written: the rewind would be lost
        on the next resume, and the rewound-away part would come back.
        """
        old = list(self.messages)
        record_rewind(self.transcript, target.prompt.id)
        self.messages[:] = target.messages
        return old

    def record_system(self, subtype: str, **fields: Any) -> None:
        """A system entry in the transcript (notices, saved memories, errors)."""
        self.transcript.append("system", subtype=subtype, **fields)

    def repair(self) -> int:
        """Give every unanswered tool_use the UNFINISHED_TOOL result; returns how many."""
        repaired = dangling_tool_uses(self.messages)
        if repaired:
            results = [ToolResultBlock(tid, UNFINISHED_TOOL, is_error=True) for tid in repaired]
            self.add_message(Message("user", list(results)))
        return len(repaired)


def dangling_tool_uses(messages: list[Message]) -> list[str]:
    """Ids of tool_use blocks in the last assistant message that have no tool_result after it."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role != "assistant":
            continue
        answered = {b.tool_use_id for m in messages[i + 1 :] for b in m.content if isinstance(b, ToolResultBlock)}
        return [b.id for b in messages[i].tool_uses if b.id not in answered]
    return []


class RewindError(Exception):
    """A rewind that cannot be done; the message says why, what was kept and what to do."""


@dataclass(frozen=True)
class PromptEntry:
    """One of the user's own messages in a transcript (a turn's start): a point /rewind goes back to."""

    id: str  # the transcript entry's uuid
    text: str  # the user's words, without the files their @mentions attached
    timestamp: str
    position: int  # its place among every prompt of the file, rewound-away ones too (time order)


@dataclass
class _Mark:
    """Where a prompt joined the conversation being read: enough to cut the conversation back to
    before it. The list is the one it joined (a compaction starts a new one, so an old mark still
    sees the conversation before it)."""

    messages: list[Message]
    index: int  # the message the prompt started or was merged into
    blocks: int  # how many blocks that message had before (0: the prompt started it)
    prompts: int  # how many prompts the conversation had before
    compactions: int


@dataclass
class TranscriptContents:
    """What a transcript holds: the conversation from its last compact boundary (with its rewinds
    replayed), its prompts, its costs, and what could not be read."""

    messages: list[Message] = field(default_factory=list)
    first_request: str = ""  # the first user text of the whole file, compactions included
    costs: CostLedger = field(default_factory=CostLedger)
    prompts: list[PromptEntry] = field(default_factory=list)  # the current conversation's, oldest first
    positions: dict[str, int] = field(default_factory=dict)  # every prompt's uuid -> its place in time
    compactions: int = 0  # compactions in the current conversation (a rewind before one undoes it)
    skipped_lines: int = 0  # cut by a crash, not JSON objects
    skipped_blocks: int = 0  # content blocks of a type this version does not know
    skipped_rewinds: int = 0  # rewinds to a message the file does not hold (a hand-edited transcript)
    _marks: dict[str, _Mark] = field(default_factory=dict, repr=False)

    def take(self, entry: dict[str, Any]) -> None:
        """Add one transcript entry."""
        kind = entry.get("type")
        if kind == "compact_boundary" and isinstance(entry.get("messages"), list):
            self.messages = []
            self.compactions += 1
            for raw in entry["messages"]:
                self._add(raw, count_request=False)
        elif kind in ("user", "assistant") and isinstance(entry.get("message"), dict):
            self._add(entry["message"], count_request=True, entry=entry)
        elif kind == "system" and entry.get("subtype") == "cost" and isinstance(entry.get("usage"), dict):
            self.costs.add(
                str(entry.get("purpose", "main")), str(entry.get("model", "")), Usage.from_dict(entry["usage"])
            )
        elif kind == "rewind":
            self._rewind(entry.get("to"))
        elif kind in ("user", "assistant", "compact_boundary"):
            self.skipped_lines += 1

    def _add(self, raw: Any, *, count_request: bool, entry: dict[str, Any] | None = None) -> None:
        message = self._message(raw)
        if message is None:
            return
        if count_request and not self.first_request and message.role == "user":
            self.first_request = first_user_text([message])
        if entry is not None and is_prompt_entry(entry):
            self._mark_prompt(entry, message)
        if self.messages and self.messages[-1].role == message.role == "user":
            self.messages[-1].content.extend(message.content)
        else:
            self.messages.append(message)

    def _mark_prompt(self, entry: dict[str, Any], message: Message) -> None:
        """Remember where the prompt `entry` joins the conversation, and list it."""
        prompt_id = entry.get("uuid")
        if not isinstance(prompt_id, str) or prompt_id in self.positions:
            return  # no id (a hand-edited line) or a copied one: nothing can point at it
        merged = bool(self.messages) and self.messages[-1].role == "user"
        index = len(self.messages) - 1 if merged else len(self.messages)
        blocks = len(self.messages[-1].content) if merged else 0
        self._marks[prompt_id] = _Mark(self.messages, index, blocks, len(self.prompts), self.compactions)
        self.positions[prompt_id] = len(self.positions)
        self.prompts.append(
            PromptEntry(prompt_id, request_text(message), str(entry.get("timestamp", "")), self.positions[prompt_id])
        )

    def _rewind(self, to: Any) -> None:
        """The conversation goes back to before the prompt `to`, as it was then."""
        mark = self._marks.get(to) if isinstance(to, str) else None
        if mark is None:
            self.skipped_rewinds += 1
            return
        kept = mark.messages[: mark.index]
        if mark.blocks:
            merged_into = mark.messages[mark.index]
            kept.append(Message(merged_into.role, merged_into.content[: mark.blocks]))
        elif kept:  # a copy: a message merged into it later must not change what the mark sees
            kept[-1] = Message(kept[-1].role, list(kept[-1].content))
        self.messages = kept
        self.prompts = self.prompts[: mark.prompts]
        self.compactions = mark.compactions

    def _message(self, raw: Any) -> Message | None:
        """A message of the transcript; None (counted) when nothing of it can be read."""
        role = raw.get("role") if isinstance(raw, dict) else None
        if role not in ("user", "assistant"):
            self.skipped_lines += 1
            return None
        content = raw.get("content", [])
        if isinstance(content, str):
            return Message(role, [TextBlock(content)])
        blocks = [b for b in map(self._block, content if isinstance(content, list) else []) if b is not None]
        return Message(role, blocks) if blocks else None

    def _block(self, raw: Any) -> Block | None:
        try:
            return block_from_api(raw)
        except (ValueError, KeyError, TypeError, AttributeError):
            self.skipped_blocks += 1
            return None

    def skipped_notice(self, path: Path) -> str | None:
        """The one line saying what a resume could not read and what it kept; None when all was read."""
        parts = [
            f"{n} {what}{'s' if n != 1 else ''}"
            for n, what in (
                (self.skipped_lines, "unreadable line"),
                (self.skipped_blocks, "unknown content block"),
                (self.skipped_rewinds, "rewind to a message the file does not hold"),
            )
            if n
        ]
        if not parts:
            return None
        kept = len(self.messages)
        return (
            f"Skipped {' and '.join(parts)} of the transcript {path}; "
            f"resumed the {kept} message{'s' if kept != 1 else ''} that could be read."
        )


def is_prompt_entry(entry: dict[str, Any]) -> bool:
    """Whether a transcript entry is the user's own message that starts a turn.

    Marked `"prompt": true` since /rewind exists; in an older transcript, a user entry holding
    the user's own text (no tool results, not a harness reminder, not an interruption marker).
    """
    if entry.get("type") != "user":
        return False
    if "prompt" in entry:
        return entry["prompt"] is True
    content = entry.get("message", {}).get("content") if isinstance(entry.get("message"), dict) else None
    if isinstance(content, str):
        return bool(content.strip())
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    if any(b.get("type") == "tool_result" for b in blocks):
        return False
    texts = [str(b["text"]) for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    return any(
        t.strip()
        and not t.lstrip().startswith("<system-reminder>")
        and not t.startswith("[Request interrupted by user")
        for t in texts
    )


def request_text(message: Message) -> str:
    """The user's own words in a message (not tool results, not attached files or reminders)."""
    texts = [
        b.text
        for b in message.content
        if isinstance(b, TextBlock) and not b.text.lstrip().startswith("<system-reminder>")
    ]
    return "\n".join(texts).split("\n\n<attached-")[0].strip()


def read_transcript(path: Path, *, until: str | None = None) -> TranscriptContents:
    """Everything a resume or a session list needs from one transcript file; with `until` (an
    entry's uuid), what it held just before that entry."""
    contents = TranscriptContents()
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                entry = None  # a line cut by a crash: the message in flight is lost, nothing else
            if isinstance(entry, dict):
                if until is not None and entry.get("uuid") == until:
                    break
                contents.take(entry)
            else:
                contents.skipped_lines += 1
    return contents


@dataclass(frozen=True)
class RewindTarget:
    """The conversation as it was before one of its prompts: what a rewind puts in place."""

    prompt: PromptEntry
    messages: list[Message]
    rebuilt: bool  # the prompt lay before a compaction: the conversation is rebuilt from the transcript


def rewind_target(path: Path, message_id: str) -> RewindTarget:
    """The conversation of the transcript `path` as it was before its prompt `message_id` (a
    unique prefix of one will do); RewindError when the current conversation has no such prompt."""
    try:
        now = read_transcript(path)
        prompt = find_prompt(now.prompts, message_id)
        before = read_transcript(path, until=prompt.id)
    except OSError as exc:
        raise RewindError(f"Cannot read the transcript {path}: {exc.strerror or exc}. Nothing was changed.") from None
    return RewindTarget(prompt, before.messages, rebuilt=now.compactions > before.compactions)


def find_prompt(prompts: list[PromptEntry], key: str) -> PromptEntry:
    """The prompt whose id is `key`, or the only one whose id starts with it; RewindError otherwise."""
    key = key.strip()
    found = [p for p in prompts if p.id == key] or [p for p in prompts if key and p.id.startswith(key)]
    if len(found) == 1:
        return found[0]
    if found:
        raise RewindError(f"{key!r} fits {len(found)} messages of this session; give more of the id.")
    raise RewindError(
        f"No message {key!r} in the current conversation of this session (it may have "
        "been rewound away already); `claude-mini checkpoints list` shows the message ids. "
        "Nothing was changed."
    )


def transcript_entries(path: Path) -> list[dict[str, Any]]:
    """The entries of a transcript that can be read, in order: none when the file cannot be read,
    a cut or foreign line skipped (what compaction's checkpoint and a resume's read times need)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    entries = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def load_messages(path: Path) -> list[Message]:
    """Messages of a transcript from its last compact boundary on; unreadable parts are skipped."""
    return read_transcript(path).messages


def list_sessions(cwd: Path) -> list[Path]:
    """Transcripts of this directory, newest first."""
    folder = paths.project_dir(cwd)
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)


def recorded_cwd(path: Path) -> str | None:
    """The cwd a transcript recorded in its first entry; None for one from before cwd was recorded."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            cwd = json.loads(fh.readline()).get("cwd")
    except (OSError, ValueError, AttributeError):
        return None
    return cwd if isinstance(cwd, str) else None


def maybe_another_projects(cwd: Path, path: Path) -> bool:
    """Whether a transcript of this directory may be another project's: it recorded no cwd and
    lies in a folder that projects whose paths differ only in punctuation shared before."""
    return recorded_cwd(path) != str(cwd.resolve()) and paths.shares_key(cwd)


def matching_sessions(cwd: Path, key: str) -> list[Path]:
    """Transcripts of this directory whose id is `key`, else those whose id starts with it."""
    found = list_sessions(cwd)
    return [p for p in found if p.stem == key] or [p for p in found if p.stem.startswith(key)]


def ambiguous_message(key: str, matches: list[Path]) -> str:
    """The one line for an id prefix that fits several sessions: which ones."""
    ids = ", ".join(p.stem for p in matches[:10]) + (f" and {len(matches) - 10} more" if len(matches) > 10 else "")
    return f"{key!r} matches {len(matches)} sessions ({ids}); give more of the id."


def resume_session(cwd: Path, session_id: str | None) -> Session:
    """The session `session_id` or the one whose id starts with it (else the latest of this
    directory), repaired and ready to go on."""
    return open_transcript(cwd, find_transcript(cwd, session_id))


def find_transcript(cwd: Path, session_id: str | None) -> Path:
    """The transcript `-r session_id` (an id or a unique prefix of one) or `-c` (None) would
    resume; SessionNotFound says why there is none."""
    if session_id:
        found = matching_sessions(cwd, session_id)
        if not found:
            raise SessionNotFound(
                f"No session {session_id} in this directory. Type /resume in claude-mini to list its "
                "sessions, or run `claude-mini -c` for the latest one."
            )
        if len(found) > 1:
            raise SessionNotFound(ambiguous_message(session_id, found))
    else:
        everything = list_sessions(cwd)
        here = str(cwd.resolve())
        found = [p for p in everything if recorded_cwd(p) == here] if paths.shares_key(cwd) else everything
        if not found:
            raise SessionNotFound(
                "No earlier session in this directory to continue."
                + (
                    " The sessions from before may be another project's (paths that differ only in "
                    "punctuation shared one folder): type /resume in claude-mini to pick one."
                    if everything and paths.keeps_folder(cwd)
                    else ""
                )
            )
    return found[0]


def open_transcript(cwd: Path, path: Path) -> Session:
    """The session saved in `path`, with its costs, repaired; what could not be read is said once."""
    contents = read_transcript(path)
    session = Session(cwd, path.stem, contents.messages, costs=contents.costs, transcript_path=path)
    notice = contents.skipped_notice(path)
    if notice:
        session.notices.say(notice, "warning")
    session.repair()
    return session


def transcript_state(session: Session | None) -> str:
    """After an interruption or a crash, what is true of the transcript: saved, cut short or absent."""
    if session is None:
        return "Nothing of this session was saved"
    transcript = session.transcript
    if transcript.error is not None:
        return (
            f"The transcript could not be saved completely ({transcript.error.strerror or transcript.error}); "
            f"{transcript.path} holds what came before the failed write"
        )
    if not transcript.path.is_file():
        return "Nothing of this session was saved"
    if transcript.path.parent != paths.project_dir(session.cwd):  # resumed from a folder this one left
        return f"The transcript is saved in {transcript.path}"
    # Not `-c`: in a folder shared before, -c skips a session whose first line recorded no cwd.
    return f"The transcript is saved; `claude-mini -r {session.id}` continues"


def first_user_text(messages: list[Message]) -> str:
    """The first plain user text of a conversation (for session lists)."""
    for m in messages:
        if m.role == "user":
            for b in m.content:
                if isinstance(b, TextBlock) and b.text.strip():
                    return b.text.strip()
    return ""
