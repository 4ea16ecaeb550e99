"""File checkpoints in a running session (the real runtime, the fake server): what a turn's Write,
Edit and Bash leave in the store, restoring code and conversation, and a subagent's changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_anthropic import Reply

from claude_mini.rewind.conversation import rewind_conversation
from claude_mini.rewind.points import read_checkpoints
from claude_mini.rewind.restore import apply_code_restore, plan_code_restore
from claude_mini.session import read_transcript
from tests.sessions import run_session as run
from tests.sessions import turn

ORIGINAL_APP = 'def greet():\n    return "hello"\n'


@pytest.fixture
def project(repo: Path, monkeypatch) -> Path:
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    return repo


def main_then(fake_server, *replies: Reply) -> None:
    for reply in replies:
        fake_server.on(reply, purpose="main")


def three_turns(fake_server) -> None:
    main_then(fake_server,
              Reply.tool("Write", {"file_path": "util.py", "content": "A = 1\n"}), Reply.text("Created util."),
              Reply.tool("Read", {"file_path": "app.py"}),
              Reply.tool("Edit", {"file_path": "app.py", "old_string": "hello", "new_string": "hi"}),
              Reply.text("Changed app."),
              Reply.tool("Edit", {"file_path": "util.py", "old_string": "A = 1", "new_string": "A = 2"}),
              Reply.tool("Write", {"file_path": "notes/todo.md", "content": "- x\n"}),
              Reply.tool("Bash", {"command": "echo made > made.txt"}), Reply.text("Done three."))


async def run_three(runtime) -> None:
    runtime.policy.mode = "bypassPermissions"
    for text in ("create util", "change app", "third turn"):
        await turn(runtime, text)


def test_restoring_code_and_conversation_to_the_second_message(project, fake_server):
    three_turns(fake_server)
    main_then(fake_server, Reply.text("After the rewind."))

    async def scenario(runtime):
        await run_three(runtime)
        checkpoints = read_checkpoints(runtime.session.transcript.path, runtime.file_history.history())
        newest, second, first = checkpoints.points
        assert [p.prompt.text for p in (newest, second, first)] == ["third turn", "change app", "create util"]
        assert [(Path(f.path).name, f.created) for f in first.files] == [("util.py", True)]
        assert [(Path(f.path).name, f.created) for f in newest.files] == [("util.py", False), ("todo.md", True)]
        assert newest.commands == ["echo made > made.txt"] and not second.commands
        plan = plan_code_restore(checkpoints, second.prompt)
        assert not plan.conflicts and plan.commands == ["echo made > made.txt"]
        result = apply_code_restore(checkpoints, plan, overwrite_outside=False)
        assert sorted(p.name for p in result.written) == ["app.py", "util.py"]
        assert [p.name for p in result.deleted] == ["todo.md"]
        await rewind_conversation(runtime.agent, second.prompt.id)
        await turn(runtime, "change app differently")
        return runtime

    runtime = run(fake_server, project, scenario)
    assert (project / "app.py").read_text() == ORIGINAL_APP
    assert (project / "util.py").read_text() == "A = 1\n"  # as the first turn left it
    assert not (project / "notes" / "todo.md").exists()
    assert (project / "made.txt").exists()  # Bash is not undone
    sent = fake_server.requests_for("main")[-1].body["messages"]
    texts = json.dumps(sent)
    assert "create util" in texts and "Created util." in texts
    assert "change app\"" not in texts and "third turn" not in texts and "Done three." not in texts
    assert sent[-1]["content"][0]["text"] == "change app differently"
    resumed = read_transcript(runtime.session.transcript.path)  # what -c would continue
    assert [p.text for p in resumed.prompts] == ["create util", "change app differently"]
    assert [m.text for m in resumed.messages] == [m.text for m in runtime.session.messages]
