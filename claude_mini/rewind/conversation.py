"""Putting the conversation back to before one of the user's messages.

The transcript decides what the conversation was then (`session.rewind_target`: read up to that
message, compactions and earlier rewinds replayed), so a live rewind and a later resume agree; a
`rewind` entry records it and nothing is deleted from the file. Every lifecycle part hears
`on_rewind`: extraction drops what it was doing with the rewound-away part, attached rules and
the todo list follow the conversation. The next request is simply the shorter message list: the
system prompt and the tools are untouched (DESIGN.md section 6).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.agent.lifecycle import ConversationRewind
from claude_mini.llm.messages import Message, message_to_api
from claude_mini.session import RewindTarget, rewind_target, transcript_entries

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent

MEMORY_INDEX = "MEMORY.md"


async def rewind_conversation(agent: Agent, message_id: str) -> RewindTarget:
    """Rewind `agent`'s conversation to before its message `message_id` (RewindError when it cannot)."""
    session = agent.session
    target = rewind_target(session.transcript.path, message_id)
    old = session.rewind(target)
    event = ConversationRewind(target.prompt.id, old, common_prefix(old, session.messages), target.rebuilt)
    # What the model read it no longer has (compaction's part re-reads the kept part), and the last
    # request's size says nothing of the shorter conversation.
    agent.lifecycle.reset_conversation(agent)
    await agent.lifecycle.on_rewind(agent, event)
    return target


def common_prefix(old: list[Message], new: list[Message]) -> int:
    """How many first messages of `old` and `new` are the same."""
    count = 0
    for a, b in zip(old, new, strict=False):
        if message_to_api(a) != message_to_api(b):
            break
        count += 1
    return count


def memories_since(transcript: Path, message_id: str, memory_root: Path) -> list[str]:
    """The memory files saved at or after the message `message_id` that still exist: by extraction
    (its `memory_saved` entries) or by the model's own Write or Edit in the memory folder. The
    user may want to forget them, since the part they came from was rewound away."""
    root = os.path.realpath(memory_root)
    found: list[str] = []
    started = False
    for entry in transcript_entries(transcript):
        started = started or entry.get("uuid") == message_id
        if not started:
            continue
        if entry.get("type") == "system" and entry.get("subtype") == "memory_saved":
            found.append(str(entry.get("file", "")))
        elif entry.get("type") == "assistant":
            found += _memory_writes(entry, root)
    names = dict.fromkeys(n for n in found if n and n != MEMORY_INDEX)
    return [n for n in names if os.path.isfile(os.path.join(root, n))]


def _memory_writes(entry: dict[str, Any], root: str) -> list[str]:
    """Memory files a response's Write and Edit calls name (relative to the memory folder)."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    cwd = str(entry.get("cwd") or "")
    names = []
    for block in content if isinstance(content, list) else []:
        if not (isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") in ("Write", "Edit")):
            continue
        raw = block.get("input", {}).get("file_path") if isinstance(block.get("input"), dict) else None
        if not isinstance(raw, str) or not (os.path.isabs(raw) or cwd):
            continue
        real = os.path.realpath(os.path.join(cwd, os.path.expanduser(raw)))
        if real.startswith(root + os.sep):
            names.append(os.path.relpath(real, root))
    return names
