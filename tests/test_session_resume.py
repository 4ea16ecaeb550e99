"""session.py directly: appending (consecutive user messages merge, a cut last line, a failed
write), repairing unanswered tool calls, and resuming from a transcript (its last compact
boundary, unreadable lines and blocks, an id prefix, its costs)."""

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
    Usage,
    message_to_api,
)
from claude_mini.session import (
    UNFINISHED_TOOL,
    Session,
    SessionNotFound,
    load_messages,
    read_transcript,
    resume_session,
    transcript_state,
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
        ("toolu_a", "contents", False),
        ("toolu_b", UNFINISHED_TOOL, True),
    ]
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


def test_an_append_after_a_cut_line_starts_on_a_fresh_line(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    session.add_message(user("first"))
    with session.transcript.path.open("a") as fh:
        fh.write('{"type": "assistant", "message": {"role": "assi')  # the disk filled up mid-line
    later = resume_session(tmp_path, session.id)
    later.add_message(user("second"))
    lines = later.transcript.path.read_text().splitlines()
    assert lines[1].endswith('"role": "assi') and json.loads(lines[2])["message"]["content"][0]["text"] == "second"
    assert [b.text for b in load_messages(later.transcript.path)[0].content] == ["first", "second"]


def test_resume_skips_non_object_lines_and_unknown_blocks_and_says_so_once(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    session.add_message(user("hello"))
    with session.transcript.path.open("a") as fh:
        fh.write('42\n["a list"]\n"text"\nnull\n')
        answer = {
            "role": "assistant",
            "content": [{"type": "text", "text": "hi"}, {"type": "server_tool_use", "id": "x", "name": "web"}],
        }
        fh.write(json.dumps({"type": "assistant", "message": answer}) + "\n")
        fh.write(
            json.dumps({"type": "user", "message": {"role": "user", "content": [{"type": "image", "source": {}}]}})
            + "\n"
        )
    resumed = resume_session(tmp_path, session.id)
    assert [(m.role, m.text) for m in resumed.messages] == [("user", "hello"), ("assistant", "hi")]
    [notice] = resumed.notices.said()
    assert notice.level == "warning"
    assert notice.text == (
        f"Skipped 4 unreadable lines and 2 unknown content blocks of the transcript "
        f"{session.transcript.path}; resumed the 2 messages that could be read."
    )
    assert resume_session(tmp_path, session.id).notices.said()[0].text == notice.text  # each resume says it


def test_a_unique_id_prefix_resumes_an_ambiguous_one_lists_them_and_none_says_how_to_list(tmp_path, isolated_env):
    a = Session(tmp_path, "abc-1111")
    b = Session(tmp_path, "abd-2222")
    for s in (a, b):
        s.add_message(user(s.id))
    assert resume_session(tmp_path, "abc").id == "abc-1111"
    assert resume_session(tmp_path, "abd-2222").messages[0].text == "abd-2222"
    with pytest.raises(SessionNotFound) as ambiguous:
        resume_session(tmp_path, "ab")
    message = str(ambiguous.value)
    assert "\n" not in message and "abc-1111" in message and "abd-2222" in message and "2 sessions" in message
    with pytest.raises(SessionNotFound, match="/resume in claude-mini to list"):
        resume_session(tmp_path, "zz")
    with pytest.raises(SessionNotFound):
        resume_session(tmp_path, "../" + tmp_path.name)  # only this directory's sessions, by id


def test_costs_are_recorded_in_the_transcript_and_restored_on_resume(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    session.add_message(user("hello"))
    session.costs.add("main", "claude-sonnet-4-6", Usage(input_tokens=1000, output_tokens=50))
    session.costs.add("recall", "claude-haiku-4-5", Usage(input_tokens=200, cache_read_input_tokens=10))
    session.costs.add("main", "claude-sonnet-4-6", Usage(input_tokens=10, output_tokens=5))
    resumed = resume_session(tmp_path, session.id)
    assert resumed.costs.total_cost == pytest.approx(session.costs.total_cost) and session.costs.total_cost > 0
    assert {p: (c.requests, c.usage) for p, c in resumed.costs.by_purpose.items()} == {
        p: (c.requests, c.usage) for p, c in session.costs.by_purpose.items()
    }
    resumed.costs.add("main", "claude-sonnet-4-6", Usage(input_tokens=1))  # recorded again, once
    assert resume_session(tmp_path, session.id).costs.by_purpose["main"].requests == 3


def test_a_compacted_transcript_keeps_its_first_request(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    session.add_message(user("fix the parser please"))
    session.add_message(Message("assistant", [TextBlock("done")]))
    session.transcript.append("compact_boundary", messages=[message_to_api(user("the summary"))])
    contents = read_transcript(session.transcript.path)
    assert contents.first_request == "fix the parser please"
    assert [m.text for m in contents.messages] == ["the summary"]


def test_a_failed_write_warns_once_and_the_session_goes_on_unsaved(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    assert transcript_state(session) == "Nothing of this session was saved"
    session.add_message(user("saved"))
    assert transcript_state(session) == f"The transcript is saved; `claude-mini -r {session.id}` continues"
    path = session.transcript.path
    path.rename(path.with_suffix(".kept"))
    path.mkdir()  # every later write fails, as on a full disk
    session.add_message(Message("assistant", [TextBlock("lost")]))
    session.add_message(user("lost too"))
    session.costs.add("main", "claude-sonnet-4-6", Usage(input_tokens=1))
    assert [m.text for m in session.messages] == ["saved", "lost", "lost too"]  # the conversation goes on
    [warning] = session.notices.said()
    assert warning.level == "warning" and "Could not write the transcript" in warning.text
    assert "nothing more of it is saved" in warning.text
    assert transcript_state(session).startswith("The transcript could not be saved completely (Is a directory)")
    path.rmdir()
    session.add_message(Message("assistant", [TextBlock("not after a failure")]))
    assert not path.exists()  # the saved part stays a consistent prefix


def test_a_cost_before_the_first_message_makes_no_transcript(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    session.costs.add("dream", "claude-haiku-4-5", Usage(input_tokens=10))  # start-up work
    assert not session.transcript.path.exists()
    with pytest.raises(SessionNotFound):
        resume_session(tmp_path, None)  # `-c` does not continue a session nobody spoke in


def test_a_session_resumed_from_a_shared_folder_goes_on_in_the_file_it_was_read_from(tmp_path: Path, isolated_env):
    from claude_mini.base import paths

    owner, lookalike = tmp_path / "my-app", tmp_path / "my_app"
    owner.mkdir()
    lookalike.mkdir()
    plain = paths.project_dir(owner)
    (plain / "memory").mkdir(parents=True)
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": str(lookalike.resolve() / "x.py")}}
    old = plain / "old1.jsonl"  # from before cwd was recorded; claude-mini ran in the lookalike
    old.write_text(
        "".join(
            json.dumps(e) + "\n"
            for e in (
                {"type": "user", "message": message_to_api(user("read x.py"))},
                {"type": "assistant", "message": {"role": "assistant", "content": [call]}},
            )
        )
    )
    paths.claim_project_folders(owner, print)  # the owner keeps the plain folder, the lookalike moves
    session = resume_session(lookalike, "old1")
    assert paths.project_dir(lookalike) != plain  # claimed: the lookalike has its own folder now
    session.add_message(user("go on"))
    assert session.transcript.path == old
    assert [m.role for m in load_messages(old)] == ["user", "assistant", "user"]
    assert transcript_state(session) == f"The transcript is saved in {old}"  # -r here would not find it


def test_the_exit_line_names_a_command_that_finds_the_session(tmp_path: Path, isolated_env):
    from claude_mini.base import paths

    owner, lookalike = tmp_path / "my-app", tmp_path / "my_app"
    owner.mkdir()
    lookalike.mkdir()
    plain = paths.project_dir(owner)
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": str(lookalike.resolve() / "x.py")}}
    (plain / "old1.jsonl").parent.mkdir(parents=True)
    (plain / "old1.jsonl").write_text(
        json.dumps(
            {
                "type": "assistant",
                "message": {  # no cwd: from before
                    "role": "assistant",
                    "content": [call],
                },
            }
        )
        + "\n"
    )
    session = resume_session(owner, "old1")  # /resume of a session from before, in the shared folder
    session.add_message(user("go on"))
    with pytest.raises(SessionNotFound):
        resume_session(owner, None)  # -c takes only sessions that recorded this cwd: not this one
    state = transcript_state(session)
    assert state == "The transcript is saved; `claude-mini -r old1` continues"
    assert resume_session(owner, "old1").id == session.id
