"""/resume: the picker (20 newest, each by its first request), an id or id prefix of any session
of the folder, and the redraw of the last exchanges after the switch."""

from __future__ import annotations

import os
from pathlib import Path

from claude_mini.llm.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    message_to_api,
)
from claude_mini.session import Session
from claude_mini.tools.base import ToolResult
from claude_mini.ui.session_commands import resumed_lines
from claude_mini.ui.shell_mode import exchange_blocks


def saved(repo: Path, session_id: str, *exchanges: tuple[str, str], age: int = 0) -> Session:
    session = Session(repo, session_id)
    for request, answer in exchanges:
        session.add_message(Message.user(request))
        session.add_message(Message("assistant", [TextBlock(answer)]))
    when = 1_700_000_000 - age
    os.utime(session.transcript.path, (when, when))
    return session


def test_the_picker_shows_the_20_newest_by_their_first_request_even_when_compacted(slash, repo):
    for i in range(24):
        saved(repo, f"s{i:02d}-filler", (f"request {i}", "ok"), age=i)
    compacted = saved(repo, "c0-compacted", ("fix the parser please", "done"))
    compacted.transcript.append("compact_boundary", messages=[message_to_api(Message.user("summary text"))])
    os.utime(compacted.transcript.path, (1_700_000_100, 1_700_000_100))  # the newest
    assert "Nothing resumed." in slash.run("/resume")
    [options] = slash.host.choices
    assert len(options) == 20 and options[0][0] == "c0-compacted"
    assert "fix the parser please" in options[0][1] and "summary text" not in options[0][1]
    assert "1 msgs" in options[0][1]


def test_an_id_or_a_prefix_finds_a_session_beyond_the_picker(slash, repo):
    for i in range(24):
        saved(repo, f"s{i:02d}-filler", (f"request {i}", "ok"), age=i)
    slash.run("/resume s23")  # the oldest, not among the 20 listed
    assert slash.runtime.session.id == "s23-filler"
    assert "No earlier session matches 'zz'; /resume without an argument lists them." in slash.run("/resume zz")
    out = slash.run("/resume s1")
    assert "'s1' matches 10 sessions (s10-filler, s11-filler," in out and slash.runtime.session.id == "s23-filler"
    slash.run("/resume 1")  # a number of the list: the newest other session
    assert slash.runtime.session.id == "s00-filler"


def test_resume_restores_the_costs_and_says_what_it_could_not_read(slash, repo):
    earlier = saved(repo, "e1-earlier", ("hello", "hi"))
    earlier.costs.add("main", "claude-sonnet-4-6", Usage(input_tokens=1_000_000))
    with earlier.transcript.path.open("a") as fh:
        fh.write("not json\n")
    slash.run("/resume e1")
    assert slash.runtime.session.costs.by_purpose["main"].requests == 1
    assert "$3.0000" in slash.run("/cost")
    [notice] = slash.runtime.notices.said("warning")
    assert notice.text.startswith("Skipped 1 unreadable line of the transcript")


def test_the_redraw_shows_the_last_exchanges_shortened(tmp_path, isolated_env):
    session = Session(tmp_path, "r1")
    for i in range(1, 5):
        session.add_message(Message.user(f'request {i}\n\n<attached-file path="a.py">\nsecret\n</attached-file>'))
        session.add_message(
            Message("assistant", [TextBlock(f"answer {i}"), ToolUseBlock(f"t{i}", "Bash", {"command": "ls\x1b[2J"})])
        )
        session.add_message(Message("user", [ToolResultBlock(f"t{i}", "files")]))
        session.add_message(Message("assistant", [TextBlock("\n".join(f"line {n}" for n in range(6)) + "x" * 200)]))
    lines = resumed_lines(session)
    assert lines[:2] == ["Resumed session r1 (16 messages).", "  ⋮ 4 earlier messages"]
    assert lines[2:9] == [
        "> request 2",
        "● answer 2",
        "● Bash(ls\\x1b[2J)",
        "● line 0",
        "  line 1",
        "  line 2",
        "  … +3 lines",
    ]
    assert lines[-7] == "> request 4" and all(len(line) <= 100 for line in lines)
    assert not any("secret" in line or "files" in line for line in lines)
    assert resumed_lines(Session(tmp_path, "empty")) == ["Resumed session empty (0 messages)."]


def test_the_redraw_shows_a_shell_line_as_typed(tmp_path, isolated_env):
    session = Session(tmp_path, "r2")
    session.add_message(Message("user", list(exchange_blocks("git status", ToolResult("clean")))))
    session.add_message(Message.user("what now?"))  # merged into the same user message
    session.add_message(Message("assistant", [TextBlock("Nothing to do.")]))
    assert resumed_lines(session)[1:] == ["! git status", "> what now?", "● Nothing to do."]


def test_the_redraw_shows_paths_relative_and_marks_calls_that_did_not_run(tmp_path, isolated_env):
    session = Session(tmp_path, "r2")
    session.add_message(Message.user("fix it"))
    calls = [
        ToolUseBlock("e1", "Edit", {"file_path": str(tmp_path / "src" / "app.py")}),
        ToolUseBlock("b1", "Bash", {"command": "make"}),
        ToolUseBlock("r1", "Read", {"file_path": str(tmp_path / "README.md")}),
    ]
    session.add_message(Message("assistant", [TextBlock("on it"), *calls]))
    results = [
        ToolResultBlock("e1", "The user declined this Edit call.", True),
        ToolResultBlock("b1", "Exit code 2", True),
        ToolResultBlock("r1", "# readme"),
    ]
    session.add_message(Message("user", results))
    assert resumed_lines(session)[-3:] == [
        "● Edit(src/app.py) (declined)",
        "● Bash(make) (failed)",
        "● Read(README.md)",
    ]
