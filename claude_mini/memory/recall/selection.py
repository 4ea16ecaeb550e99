"""Recall's selection, pure: the side model's request and answer, the lexical picks rendered as
attachments with their age, and the records of what one turn chose (no I/O but reading the
chosen files)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.base.text import clip
from claude_mini.llm.messages import Message, ModelRequest, TextBlock, ToolUseBlock
from claude_mini.memory.recall.archive import is_archived_name
from claude_mini.memory.recall.lexical import (
    Candidate,
    cjk_characters,
)
from claude_mini.memory.recall.staleness import header_line, stale_memories
from claude_mini.memory.store import read_text_head
from claude_mini.memory.team.folder import is_team_name

if TYPE_CHECKING:
    pass


MAX_SELECTED = 5
LOCAL_MAX_SELECTED = 3  # of them, what the local pass may send before the side model answers
RECALL_MAX_TOKENS = 256
FILE_MAX_BYTES = 4096
FILE_MAX_LINES = 200
SESSION_BUDGET_BYTES = 60 * 1024
MIN_USEFUL_BUDGET = 1024  # below this a prefetch could not inject anything worth its cost
STALE_AFTER_DAYS = 30
CJK_SENTENCE_CHARS = 4  # a request written without spaces: this many characters or more
QUERY_MAX_CHARS = 4_000  # a pasted log is cut before it goes into the recall prompt
RECENT_TOOL_MESSAGES = 10  # how far back "recently used tools" looks


def _list_of_strings(key: str) -> dict[str, Any]:
    """The JSON schema of `{key: [str, ...]}`, the side model's structured answers."""
    return {
        "type": "object",
        "properties": {key: {"type": "array", "items": {"type": "string"}}},
        "required": [key],
        "additionalProperties": False,
    }


RECALL_SCHEMA = _list_of_strings("selected_memories")
KEYWORDS_SCHEMA = _list_of_strings("keywords")
KEYWORDS_MAX_TOKENS = 128


# Above this many files (live and archived) the manifest of 200 shows less than half of the
# folder: a request in another script is then worth one keyword request before the selection.
BRIDGE_FOLDER_FILES = 400
HEADER_PREFIX = "Recalled memory: "
_REMINDER_OPEN = "<system-reminder>\n"
_REMINDER_CLOSE = "\n</system-reminder>"
_HEADER = re.compile(r"^Recalled memory: (?P<file>.+?) — saved ")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
RECALL_SYSTEM = """\
You choose which saved memory files a coding assistant should read before it answers \
the user's request. Each memory file is listed on one line as \
`- [type] filename (when saved): description`.

Select at most 5 files that will clearly help with this request, judged by their names \
and descriptions. Be selective: a loosely related file costs attention and helps nothing, \
and when no file clearly helps, select none.

If the assistant used a tool recently, skip reference material or usage notes about that \
tool (it is already using it), but do select warnings, gotchas and known pitfalls about it.

Files marked `archived` were put away because nobody used them for a while; select one \
only when it clearly answers this request.

Answer with JSON only, no prose: {"selected_memories": ["file.md", ...]}, copying each \
filename exactly as listed."""


KEYWORDS_SYSTEM = """\
You help search a developer's saved notes, which are written in English. Turn the request \
below into the English words those notes would use: up to 12 keywords (technical terms, \
names, identifiers, and plain English words for the request's subject), no sentences.

Answer with JSON only: {"keywords": ["...", ...]}."""


class RecallFailed(Exception):
    """The side model gave no usable selection (error, deadline, or an answer that is not JSON)."""


@dataclass
class RecalledMemory:
    """One selected file, rendered as the attachment the model will see."""

    filename: str
    path: Path
    text: str

    @property
    def size(self) -> int:
        """Bytes this attachment takes in the context (what the session budget counts)."""
        return len(self.text.encode("utf-8"))


@dataclass
class Selection:
    """What one prefetch chose, and how."""

    memories: list[RecalledMemory]
    strategy: str  # model | lexical | lexical (fallback)
    offered: int  # files in the manifest
    fallback_reason: str | None = None
    restored: list[str] = field(default_factory=list)  # brought back from the archive (a use)


@dataclass
class RecallEvent:
    """One turn's recall, for /context: what was chosen and what reached the model, and how.

    `via` names the path that brought each injected file: `local` (the lexical pass, in the
    user's message), `model` (the side model: in the user's message when it was ready in time,
    else at a tool result), with `, while typing` when the REPL started it before Enter.
    """

    query: str
    strategy: str
    started: float
    selected: list[str] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)
    outcome: str = "running"  # running | injected | nothing selected | dropped | over budget
    note: str = ""
    via: dict[str, str] = field(default_factory=dict)


@dataclass
class Prefetch:
    """One query's recall in flight: the local pass resolves `local` within milliseconds, then
    `task` ends with the side model's selection (or the local one under strategy `lexical`)."""

    key: str  # the query, whitespace-normalised: what a turn must match to adopt it
    event: RecallEvent
    local: asyncio.Future[list[RecalledMemory]]
    task: asyncio.Task[Selection]
    typed: bool = False  # started by the REPL while the user was typing
    adopted: bool = False  # a turn took it (a typed one is dropped otherwise)
    local_taken: bool = False
    held: bool = False  # the turn already waited for it at a tool result
    injected: int = 0  # files this turn has received so far (at most MAX_SELECTED)


@dataclass
class RecallSummary:
    """What recall did this session: for /context and tests."""

    strategy: str
    enabled: bool
    running: bool
    budget: int
    in_context: dict[str, int]
    events: list[RecallEvent]

    @property
    def used(self) -> int:
        """Bytes of recalled memories in the context now."""
        return sum(self.in_context.values())

    def lines(self) -> list[str]:
        """A plain-text report: the recalled files in the context and the last turns."""
        state = f"strategy {self.strategy}" if self.enabled else "off"
        head = (
            f"Recalled memories ({state}): {len(self.in_context)} in the context, "
            f"{self.used:,} of {self.budget:,} bytes" + (" · selecting…" if self.running else "")
        )
        lines = [head]
        lines += [f"  {name}  {size:,} bytes" for name, size in self.in_context.items()]
        for event in self.events[-5:]:
            picked = (
                ", ".join(
                    [f"{name} ({event.via[name]})" if name in event.via else name for name in event.injected]
                    or event.selected
                )
                or "-"
            )
            note = f" ({event.note})" if event.note else ""
            lines.append(f'  turn "{clip(event.query, 40)}": {event.strategy} → {event.outcome}: {picked}{note}')
        return lines


def should_recall(text: str) -> bool:
    """Recall runs for real requests, not slash commands or one-word inputs ("thanks"); a
    sentence in a script without spaces counts by its characters ("谢谢" no, "怎么部署" yes)."""
    stripped = text.strip()
    if stripped.startswith("/"):
        return False
    return len(stripped.split()) > 1 or cjk_characters(stripped) >= CJK_SENTENCE_CHARS


def recent_tools(messages: Sequence[Message], window: int = RECENT_TOOL_MESSAGES) -> list[str]:
    """Names of the tools called in the last `window` messages, most recent first."""
    names: list[str] = []
    for message in reversed(messages[-window:]):
        for block in reversed(message.content):
            if isinstance(block, ToolUseBlock) and block.name not in names:
                names.append(block.name)
    return names


def age_phrase(mtime: float, now: float) -> str:
    """ "saved 12 days ago"; past 30 days it adds that the memory may be outdated."""
    days = int(max(0.0, now - mtime) // 86_400)
    phrase = {0: "saved today", 1: "saved yesterday"}.get(days, f"saved {days} days ago")
    if days > STALE_AFTER_DAYS:
        phrase += "; may be outdated, check before relying on it"
    return phrase


def build_recall_request(model: str, query: str, manifest: Sequence[str], tools: Sequence[str]) -> ModelRequest:
    """The side-model request that selects memories from the manifest."""
    prompt = (
        f"Request:\n<request>\n{clip(query.strip(), QUERY_MAX_CHARS)}\n</request>\n\n"
        f"Recently used tools: {', '.join(tools) if tools else 'none'}\n\n"
        "Memory files:\n" + "\n".join(manifest)
    )
    return ModelRequest(
        model=model,
        system=[RECALL_SYSTEM],
        messages=[Message.user(prompt)],
        max_tokens=RECALL_MAX_TOKENS,
        purpose="recall",
        output_schema=RECALL_SCHEMA,
        cache=False,
    )


def build_keywords_request(model: str, query: str) -> ModelRequest:
    """The side-model request that turns a request with no strong local match into English keywords."""
    prompt = f"Request:\n<request>\n{clip(query.strip(), QUERY_MAX_CHARS)}\n</request>"
    return ModelRequest(
        model=model,
        system=[KEYWORDS_SYSTEM],
        messages=[Message.user(prompt)],
        max_tokens=KEYWORDS_MAX_TOKENS,
        purpose="recall",
        output_schema=KEYWORDS_SCHEMA,
        cache=False,
    )


def parse_keywords(text: str) -> list[str]:
    """The keywords of the side model's answer (at most 12 short ones); [] if there are none."""
    data = _find_json_object(text, "keywords")
    words = data.get("keywords") if data is not None else None
    if not isinstance(words, list):
        return []
    return [w.strip()[:40] for w in words if isinstance(w, str) and w.strip()][:12]


def parse_selection(text: str, allowed: Iterable[str]) -> list[str]:
    """The filenames the side model chose that are in the manifest, at most 5, in its order.

    Raises RecallFailed when the answer holds no `{"selected_memories": [...]}` object
    (as text from an endpoint without structured output, fences and prose are tolerated).
    """
    data = _find_json_object(text, "selected_memories")
    chosen = data.get("selected_memories") if data is not None else None
    if not isinstance(chosen, list):
        raise RecallFailed(f"the answer is not the expected JSON: {clip(' '.join(text.split()), 80)!r}")
    allowed_set = set(allowed)
    out: list[str] = []
    for item in chosen:
        name = item.strip().removeprefix("./") if isinstance(item, str) else ""
        if name and not name.endswith(".md") and f"{name}.md" in allowed_set:
            name += ".md"
        if name in allowed_set and name not in out:
            out.append(name)
    return out[:MAX_SELECTED]


def _find_json_object(text: str, key: str) -> dict[str, Any] | None:
    """The first JSON object with `key` in `text` (the whole answer, a fenced block, or an object
    inside prose), or None."""
    for candidate in (text.strip(), *_FENCE.findall(text)):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict) and key in value:
            return value
    return None


def render_memory(candidate: Candidate, now: float) -> RecalledMemory | None:
    """The attachment for one file: header with its age, then at most 4 KiB / 200 lines."""
    path = candidate.path
    if path is None:
        return None
    text, _reason = read_text_head(path, FILE_MAX_BYTES)
    try:
        st = os.stat(path)
    except OSError:
        return None
    if text is None:
        return None
    body, note = _cut(text, st.st_size, path)
    header = (
        f"{HEADER_PREFIX}{candidate.filename} — {age_phrase(st.st_mtime, now)}\n"
        f"(file {path}; chosen by recall for this request, not written by the user)"
    )
    return RecalledMemory(candidate.filename, path, f"{header}\n\n{body.rstrip()}{note}")


def add_stale_lines(memories: Sequence[RecalledMemory], repo: Sequence[Path]) -> None:
    """Put `Possibly stale: it mentions src/x.py, which no longer exists...` under the header
    of each memory that names what is gone or was rewritten since in `repo` (the repository
    root, then the working folder). One batch for all (memory/recall/staleness.py: no model call,
    at most two git calls)."""
    texts = {}
    for memory in memories:
        try:
            texts[memory.filename] = (memory.text.partition("\n\n")[2], memory.path.stat().st_mtime)
        except OSError:
            continue
    found = stale_memories(texts, repo) if texts and repo else {}
    for memory in memories:
        if memory.filename in found:
            head, _, body = memory.text.partition("\n\n")
            memory.text = f"{head}\n{header_line(found[memory.filename])}\n\n{body}"


def _cut(text: str, size: int, path: Path) -> tuple[str, str]:
    """`text` cut to 200 lines (it is already at most 4 KiB), and the note saying so."""
    by_bytes = size > FILE_MAX_BYTES
    newline = text.rfind("\n")
    if by_bytes and newline > len(text) // 2:
        text = text[:newline]  # no half line at the byte cut, unless the line is most of it
    lines = text.split("\n")
    if len(lines) > FILE_MAX_LINES:
        shown = "\n".join(lines[:FILE_MAX_LINES])
        return shown, (
            f"\n\n[Truncated to the first {FILE_MAX_LINES} lines "
            f"({len(shown.encode()):,} of {size:,} bytes). Read {path} for the rest.]"
        )
    if by_bytes:
        return text, (
            f"\n\n[Truncated to the first {len(text.encode()):,} of {size:,} bytes "
            f"(limit {FILE_MAX_BYTES:,}). Read {path} for the rest.]"
        )
    return text, ""


def recalls_in_context(messages: Iterable[Message]) -> dict[str, int]:
    """filename -> bytes of every recalled-memory block still in the conversation."""
    found: dict[str, int] = {}
    prefix = _REMINDER_OPEN + HEADER_PREFIX
    for message in messages:
        if message.role != "user":
            continue
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.startswith(prefix):
                inner = block.text[len(_REMINDER_OPEN) :].removesuffix(_REMINDER_CLOSE)
                match = _HEADER.match(inner)
                if match:
                    found[match.group("file")] = len(inner.encode("utf-8"))
    return found


def query_key(text: str) -> str:
    """A query as a prefetch is matched to a turn: its words, single-spaced."""
    return " ".join(text.split())


def tier_note(filename: str) -> str:
    """What a manifest line says of a file that is not a live private memory."""
    if is_archived_name(filename):
        return "archived"
    return "team" if is_team_name(filename) else ""


def result_or_empty(future: asyncio.Future[list[RecalledMemory]]) -> list[RecalledMemory]:
    if not future.done() or future.cancelled() or future.exception() is not None:
        return []
    return future.result()
