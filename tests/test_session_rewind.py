"""session.py's side of /rewind: prompts marked in the transcript, a `rewind` entry replayed on
reading (after a cancel merged two user messages, before a compaction, after an earlier rewind),
an entry naming a message the file does not hold, and transcripts from before prompts were marked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_mini.llm.messages import Message, TextBlock, message_to_api
from claude_mini.session import (
    PromptEntry,
    RewindError,
    Session,
    find_prompt,
    is_prompt_entry,
    open_transcript,
    read_transcript,
    rewind_target,
)


def user(text: str) -> Message:
    return Message("user", [TextBlock(text)])


def answer(text: str) -> Message:
    return Message("assistant", [TextBlock(text)])


def texts(messages: list[Message]) -> list[list[str]]:
    return [[b.text for b in m.content if isinstance(b, TextBlock)] for m in messages]


def exchange(session: Session, *turns: str) -> list[str]:
    """Each turn: the prompt and its answer; the prompts' transcript ids."""
    ids = []
    for text in turns:
        session.add_message(user(text), prompt=True)
        ids.append(session.prompt_id)
        session.add_message(answer(f"re: {text}"))
    return ids


def test_a_rewind_is_recorded_and_a_resume_reads_the_rewound_conversation(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    first, second, third = exchange(session, "one", "two", "three")
    old = session.rewind(rewind_target(session.transcript.path, second))
    assert texts(old)[-1] == ["re: three"]
    assert texts(session.messages) == [["one"], ["re: one"]]
    exchange(session, "two again")
    contents = read_transcript(session.transcript.path)
    assert texts(contents.messages) == [["one"], ["re: one"], ["two again"], ["re: two again"]]
    assert [p.text for p in contents.prompts] == ["one", "two again"]
    assert contents.positions[third] < contents.positions[contents.prompts[1].id]  # time order kept
    lines = session.transcript.path.read_text().splitlines()
    assert sum('"three"' in line for line in lines) == 1  # nothing was deleted from the file
    with pytest.raises(RewindError, match="may have been rewound away"):
        rewind_target(session.transcript.path, third)
    resumed = open_transcript(tmp_path, session.transcript.path)
    assert texts(resumed.messages) == texts(session.messages)


def test_a_prompt_merged_after_a_cancel_is_cut_out_of_its_message(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    exchange(session, "one")
    session.add_message(user("go"), prompt=True)
    session.add_message(user("[Request interrupted by user]"))  # the cancelled turn's marker
    session.add_message(user("try this"), prompt=True)  # merged into the marker's message
    target = session.prompt_id
    session.add_message(answer("done"))
    assert texts(session.messages)[-2] == ["go", "[Request interrupted by user]", "try this"]
    session.rewind(rewind_target(session.transcript.path, target))
    assert texts(session.messages) == [["one"], ["re: one"], ["go", "[Request interrupted by user]"]]
    session.add_message(user("instead"), prompt=True)
    assert texts(read_transcript(session.transcript.path).messages)[-1] == [
        "go",
        "[Request interrupted by user]",
        "instead",
    ]


def test_a_rewind_to_before_a_compaction_rebuilds_the_conversation_from_the_transcript(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    first, second = exchange(session, "one", "two")
    summary = [user("SUMMARY of one and two")]
    session.messages[:] = summary
    session.transcript.append("compact_boundary", messages=[message_to_api(m) for m in summary])
    exchange(session, "three")
    target = rewind_target(session.transcript.path, second)
    assert target.rebuilt and texts(target.messages) == [["one"], ["re: one"]]
    assert not rewind_target(session.transcript.path, session.prompt_id).rebuilt
    session.rewind(target)
    contents = read_transcript(session.transcript.path)
    assert texts(contents.messages) == [["one"], ["re: one"]] and contents.compactions == 0
    assert [p.text for p in contents.prompts] == ["one"]


def test_a_rewind_to_a_message_the_file_does_not_hold_is_skipped_and_said(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    exchange(session, "one", "two")
    session.transcript.append("rewind", to="no-such-uuid")  # a hand-edited transcript
    resumed = open_transcript(tmp_path, session.transcript.path)
    assert texts(resumed.messages) == [["one"], ["re: one"], ["two"], ["re: two"]]
    [notice] = [n.text for n in resumed.notices.said("warning")]
    assert "1 rewind to a message the file does not hold" in notice and "resumed the 4 messages" in notice


def test_an_unknown_or_ambiguous_id_is_a_clear_error(tmp_path: Path, isolated_env):
    session = Session(tmp_path)
    exchange(session, "one")
    with pytest.raises(RewindError, match="No message 'zzz'.*checkpoints list.*Nothing was changed"):
        rewind_target(session.transcript.path, "zzz")
    prompts = [PromptEntry("abc1", "a", "", 0), PromptEntry("abc2", "b", "", 1)]
    with pytest.raises(RewindError, match="'abc' fits 2 messages of this session; give more of the id"):
        find_prompt(prompts, "abc")
    assert find_prompt(prompts, "abc2").text == "b"


def test_a_transcript_written_before_prompts_were_marked_still_has_its_prompts(tmp_path: Path, isolated_env):
    path = tmp_path / "old.jsonl"
    rows = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
        {
            "type": "assistant",
            "uuid": "a1",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "x"}}],
            },
        },
        {
            "type": "user",
            "uuid": "u2",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
        },
        {
            "type": "assistant",
            "uuid": "a2",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        },
        {
            "type": "user",
            "uuid": "u3",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "<system-reminder>\nStop hook\n</system-reminder>"}],
            },
        },
        {"type": "user", "uuid": "u4", "message": {"role": "user", "content": "plain string"}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [p.id for p in read_transcript(path).prompts] == ["u1", "u4"]
    assert not is_prompt_entry({"type": "user", "prompt": False, "message": {"role": "user", "content": "x"}})
