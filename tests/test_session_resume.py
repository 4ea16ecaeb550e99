"""session.py directly: appending (consecutive user messages merge), repairing unanswered tool
calls, and resuming from a transcript (its last compact boundary, a line cut by a crash)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from claude_mini.llm.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    message_to_api,
)
from claude_mini.session import (
    INTERRUPTED,
    Session,
    SessionNotFound,
    load_messages,
    resume_session,
)


def user(text: str) -> Message:
    return Message("user", [TextBlock(text)])


def entries(session: Session) -> list[dict]:
    return [json.loads(line) for line in session.transcript.path.read_text().splitlines()]


def test_two_user_messages_in_a_row_merge_and_both_are_in_the_transcript(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    session.add_message(user("first"))
    session.add_message(user("second"))
    assert len(session.messages) == 1
    assert [b.text for b in session.messages[0].content] == ["first", "second"]
    assert [e["type"] for e in entries(session)] == ["user", "user"]


def test_repair_answers_every_unanswered_tool_use_once(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    session.add_message(user("go"))
    calls = [ToolUseBlock("toolu_a", "Read", {"file_path": "a"}), ToolUseBlock("toolu_b", "Bash", {"command": "ls"})]
    session.add_message(Message("assistant", list(calls)))
    session.add_message(Message("user", [ToolResultBlock("toolu_a", "contents")]))
    assert session.repair() == 1
    last = session.messages[-1].content
    assert [(b.tool_use_id, b.content, b.is_error) for b in last if isinstance(b, ToolResultBlock)] == [
        ("toolu_a", "contents", False), ("toolu_b", INTERRUPTED, True)]
    assert session.repair() == 0


def test_resume_starts_at_the_last_compact_boundary_and_skips_a_cut_line(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    session.add_message(user("before the compaction"))
    session.add_message(Message("assistant", [TextBlock("old answer")]))
    summary = user("the summary")
    session.transcript.append("compact_boundary", messages=[message_to_api(summary)], summarised_messages=2)
    session.add_message(Message("assistant", [TextBlock("after")]))
    with session.transcript.path.open("a") as fh:
        fh.write('{"type": "user", "message": {"role": "us')  # a crash mid-line
    resumed = resume_session(tmp_path, session.id)
    assert [m.text for m in resumed.messages] == ["the summary", "after"]
    assert load_messages(session.transcript.path) == resumed.messages


def test_continue_takes_the_newest_session_and_a_missing_one_says_what_to_do(tmp_path: Path, isolated_env):
    with pytest.raises(SessionNotFound, match="No earlier session"):
        resume_session(tmp_path, None)
    older, newer = Session(tmp_path), Session(tmp_path)
    older.add_message(user("older"))
    newer.add_message(user("newer"))
    os.utime(older.transcript.path, (1_700_000_000, 1_700_000_000))  # written a while ago
    assert resume_session(tmp_path, None).id == newer.id
    with pytest.raises(SessionNotFound, match="claude-mini -c"):
        resume_session(tmp_path, "no-such-id")
