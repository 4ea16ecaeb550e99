"""Session state and its transcript: one JSONL file per session, appended as messages complete.

Each line is one entry: `{"type": "user"|"assistant"|"system"|"compact_boundary",
"uuid", "timestamp", "session_id", ...}`; user and assistant entries carry the
API-shaped `message`. Lines are flushed as each message completes, so a
`kill -9` loses at most the message in flight. Resuming rebuilds the messages
from the last compact boundary and repairs a dangling tool_use.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from claude_mini import paths
from claude_mini.llm.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    Usage,
    message_from_api,
    message_to_api,
)
from claude_mini.llm.pricing import cost_usd

INTERRUPTED = "Interrupted: the session ended before this tool finished. Its effect is unknown; check before relying on it."


class SessionNotFound(Exception):
    """`--resume ID` or `--continue` found nothing to resume."""


@dataclass
class CostLine:
    """Tokens and dollars spent for one purpose (main, recall, extract, compact, dream)."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    requests: int = 0


@dataclass
class CostLedger:
    """What this session has spent, split by purpose so users see what memory costs."""

    by_purpose: dict[str, CostLine] = field(default_factory=dict)

    def add(self, purpose: str, model: str, usage: Usage) -> None:
        line = self.by_purpose.setdefault(purpose, CostLine())
        line.usage = line.usage + usage
        line.cost_usd += cost_usd(model, usage)
        line.requests += 1

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
    """Append-only JSONL writer for one session."""

    def __init__(self, path: Path, session_id: str):
        self.path = path
        self.session_id = session_id

    def append(self, entry_type: str, **fields: Any) -> None:
        """Write one entry and flush it to the OS at once."""
        entry = {"type": entry_type, "uuid": str(uuid.uuid4()), "timestamp": _now_iso(),
                 "session_id": self.session_id, **fields}
        line = transcript_line(entry)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()


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

    def __init__(self, cwd: Path, session_id: str | None = None, messages: list[Message] | None = None):
        self.cwd = cwd
        self.id = session_id or str(uuid.uuid4())
        self.messages: list[Message] = messages or []
        self.transcript = Transcript(paths.project_dir(cwd) / f"{self.id}.jsonl", self.id)
        self.costs = CostLedger()
        self.started = time.time()

    def add_message(self, message: Message) -> None:
        """Append a completed message to the conversation and the transcript.

        Two user messages in a row (a turn that failed before any answer, or a
        resumed session) are merged, since the API wants roles to alternate.
        """
        if self.messages and self.messages[-1].role == message.role == "user":
            self.messages[-1].content.extend(message.content)
        else:
            self.messages.append(message)
        self.transcript.append(message.role, message=message_to_api(message))

    def record_system(self, subtype: str, **fields: Any) -> None:
        """A system entry in the transcript (notices, saved memories, errors)."""
        self.transcript.append("system", subtype=subtype, **fields)

    def repair(self) -> int:
        """Give every unanswered tool_use an 'interrupted' result; returns how many."""
        repaired = dangling_tool_uses(self.messages)
        if repaired:
            results = [ToolResultBlock(tid, INTERRUPTED, is_error=True) for tid in repaired]
            self.add_message(Message("user", list(results)))
        return len(repaired)


def dangling_tool_uses(messages: list[Message]) -> list[str]:
    """Ids of tool_use blocks in the last assistant message that have no tool_result after it."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role != "assistant":
            continue
        answered = {
            b.tool_use_id for m in messages[i + 1:] for b in m.content
            if isinstance(b, ToolResultBlock)
        }
        return [b.id for b in messages[i].tool_uses if b.id not in answered]
    return []


def load_messages(path: Path) -> list[Message]:
    """Messages of a transcript from its last compact boundary on; broken lines are skipped."""
    messages: list[Message] = []
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a crash: the message in flight is lost, nothing else
            kind = entry.get("type")
            if kind == "compact_boundary":
                messages = [message_from_api(m) for m in entry.get("messages", [])]
            elif kind in ("user", "assistant") and isinstance(entry.get("message"), dict):
                message = message_from_api(entry["message"])
                if messages and messages[-1].role == message.role == "user":
                    messages[-1].content.extend(message.content)
                else:
                    messages.append(message)
    return messages


def list_sessions(cwd: Path) -> list[Path]:
    """Transcripts of this directory, newest first."""
    folder = paths.project_dir(cwd)
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)


def resume_session(cwd: Path, session_id: str | None) -> Session:
    """The session `session_id` (or the latest of this directory), repaired and ready to go on."""
    if session_id:
        path = paths.project_dir(cwd) / f"{session_id}.jsonl"
        if not path.is_file():
            raise SessionNotFound(
                f"No session {session_id} in this directory. Run `claude-mini -c` for the latest one."
            )
    else:
        found = list_sessions(cwd)
        if not found:
            raise SessionNotFound("No earlier session in this directory to continue.")
        path = found[0]
    session = Session(cwd, path.stem, load_messages(path))
    session.repair()
    return session


def first_user_text(messages: list[Message]) -> str:
    """The first plain user text of a conversation (for session lists)."""
    for m in messages:
        if m.role == "user":
            for b in m.content:
                if isinstance(b, TextBlock) and b.text.strip():
                    return b.text.strip()
    return ""
