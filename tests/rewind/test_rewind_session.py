"""File checkpoints in a running session (the real runtime, the fake server): what a turn's Write,
Edit and Bash leave in the store, restoring code and conversation, and a subagent's changes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from claude_mini.base import paths
from claude_mini.config import load_config
from claude_mini.config.layers import merge
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.memory.extract.gate import no_gate
from claude_mini.memory.store import format_memory
from claude_mini.rewind.conversation import memories_since, rewind_conversation
from claude_mini.rewind.points import read_checkpoints
from claude_mini.rewind.restore import apply_code_restore, plan_code_restore
from claude_mini.runtime import build_runtime
from claude_mini.session import read_transcript
from tests.fake_anthropic import Reply
from tests.rewind.turns import ORIGINAL_APP, PROMPTS, three_turns
from tests.sessions import run_session as run
from tests.sessions import turn


@pytest.fixture
def project(repo: Path, monkeypatch) -> Path:
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    return repo


def main_then(fake_server, *replies: Reply) -> None:
    for reply in replies:
        fake_server.on(reply, purpose="main")


async def run_three(runtime) -> None:
    runtime.policy.mode = "bypassPermissions"
    for text in PROMPTS:
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
        plan = plan_code_restore(checkpoints, second.prompt, root=project)
        assert not plan.conflicts and plan.commands == ["echo made > made.txt"]
        result = apply_code_restore(checkpoints, plan, overwrite_outside=False)
        assert sorted(p.name for p in result.written) == ["app.py", "util.py"]
        assert [p.name for p in result.deleted] == ["todo.md"]
        await rewind_conversation(runtime.agent, second.prompt.id)
        read = runtime.agent.ctx.read_files
        assert project / "app.py" not in read  # read only in the part rewound away
        assert read[project / "util.py"] != (project / "util.py").stat().st_mtime  # restored since: read again
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
    assert 'change app"' not in texts and "third turn" not in texts and "Done three." not in texts
    assert sent[-1]["content"][0]["text"] == "change app differently"
    resumed = read_transcript(runtime.session.transcript.path)  # what -c would continue
    assert [p.text for p in resumed.prompts] == ["create util", "change app differently"]
    assert [m.text for m in resumed.messages] == [m.text for m in runtime.session.messages]


def test_a_subagents_write_is_kept_under_the_parents_message(project, fake_server):
    main_then(
        fake_server,
        Reply.tool("Agent", {"description": "make it", "prompt": "Create helper.py."}),
        Reply.text("The child made it."),
    )
    fake_server.on(Reply.tool("Write", {"file_path": "helper.py", "content": "def h(): ...\n"}), purpose="subagent")
    fake_server.on(Reply.text("Created helper.py."), purpose="subagent")

    async def scenario(runtime):
        runtime.policy.mode = "acceptEdits"
        await turn(runtime, "delegate it")
        checkpoints = read_checkpoints(runtime.session.transcript.path, runtime.file_history.history())
        [point] = checkpoints.points
        [change] = checkpoints.index.changes
        assert (change.by, change.message, Path(change.path).name) == ("subagent", point.prompt.id, "helper.py")
        plan = plan_code_restore(checkpoints, point.prompt, root=project)
        apply_code_restore(checkpoints, plan, overwrite_outside=False)

    run(fake_server, project, scenario)
    assert not (project / "helper.py").exists()


def test_extraction_never_runs_on_the_rewound_part_and_its_memories_are_listed(repo, fake_server):
    memdir = paths.memory_dir(repo)
    memory = format_memory(name="Tabs", description="the user wants tabs", type="feedback", body="Tabs.")
    for text in ("Noted one.", "Noted two.", "Noted three.", "Noted two again."):
        fake_server.on(Reply.text(text), purpose="main")
    fake_server.on(Reply.text("Nothing to save."), purpose="extract")
    fake_server.on(
        Reply.tool("Write", {"file_path": str(memdir / "feedback_tabs.md"), "content": memory}), purpose="extract"
    )
    fake_server.on(Reply.text("Saved."), purpose="extract")
    fake_server.on(Reply.text("never arrives").hang(), purpose="extract")  # turn three's: still running
    fake_server.on(Reply.text("Nothing new."), purpose="extract")
    config = load_config(repo)
    config.settings = merge(config.settings, {"recall": {"strategy": "off"}})

    async def scenario():
        rt = build_runtime(config, client=AnthropicClient(base_url=fake_server.base_url, api_key="test"))
        rt.extractor.gate = no_gate  # this test is about the rewind, not the gate
        try:
            for text in ("one", "two: I like tabs", "three"):
                await turn(rt, text)
                if text != "three":
                    assert await rt.extractor.wait(10)
            while len(fake_server.requests_for("extract")) < 4:  # turn three's run waits on the server
                await asyncio.sleep(0.02)
            second = rt.session.messages[2]
            assert rt.extractor.running and rt.extractor.cursor == 4
            prompt_id = read_checkpoints(rt.session.transcript.path, rt.file_history.history()).points[1].prompt.id
            await rewind_conversation(rt.agent, prompt_id)
            assert not rt.extractor.running and rt.extractor.cursor == 2  # the run on "three" was cancelled
            assert second not in rt.session.messages
            listed = memories_since(rt.session.transcript.path, prompt_id, memdir)
            await turn(rt, "two, said differently")
            assert await rt.extractor.wait(10)
            return listed
        finally:
            await rt.close()

    assert asyncio.run(scenario()) == ["feedback_tabs.md"]
    last = fake_server.requests_for("extract")[-1].body
    prompt = last["messages"][-1]["content"][-1]["text"]
    assert "last 2 messages of the conversation above" in prompt
    assert "three" not in json.dumps(last["messages"]) and "I like tabs" not in json.dumps(last["messages"])
