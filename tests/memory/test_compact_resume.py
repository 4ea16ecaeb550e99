"""Compaction through the runtime and the fake server: memory is extracted before every kind of
compaction, and the files read survive a resume (read-before-write and the post-compact restore)."""

from __future__ import annotations

import asyncio
import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from claude_mini.base import paths
from claude_mini.command_table import builtin_table
from claude_mini.config import load_config
from claude_mini.config.layers import merge
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.memory.compact.part import files_seen
from claude_mini.memory.extract.gate import GateDecision, no_gate
from claude_mini.memory.store import format_memory
from claude_mini.runtime import Runtime, build_runtime
from claude_mini.session import resume_session
from claude_mini.tools.base import ToolContext
from claude_mini.ui.commands import CommandContext
from tests.fake_anthropic import Reply

TOO_LONG = Reply.error(400, "prompt is too long: 250000 tokens > 200000 maximum")
SUMMARY = Reply.text("<summary>SUMMARY</summary>")


def start(repo: Path, server, session=None) -> Runtime:
    config = load_config(repo)
    config.settings = merge(config.settings, {"recall": {"strategy": "off"}})
    config.permission_mode = "acceptEdits"
    client = AnthropicClient(base_url=server.base_url, api_key="test")
    return build_runtime(config, client=client, session=session)


async def turn(rt: Runtime, text: str) -> None:
    async for _ in rt.agent.run(text):
        pass


async def slash_compact(rt: Runtime) -> str:
    out = io.StringIO()
    await builtin_table().find("compact").run(CommandContext(None, rt, Console(file=out, width=100), ""))  # type: ignore[arg-type]
    return out.getvalue()


# ---------------------------------------------------------------- memory first


@pytest.mark.parametrize("path", ["manual", "auto", "too_long"])
def test_every_compaction_extracts_what_is_new_before_summarising(repo, fake_server, path):
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    fake_server.on(SUMMARY, purpose="compact", times=None)

    async def scenario() -> Runtime:
        rt = start(repo, fake_server)
        rt.extractor.gate = lambda messages: GateDecision(False, "test")  # only the flush extracts
        fake_server.queue(Reply.text("first answer"))
        await turn(rt, "we deploy with make ship")
        assert not fake_server.requests_for("extract")
        if path == "manual":
            assert "Compacted" in await slash_compact(rt)
        else:
            if path == "auto":  # the next request crosses the threshold
                rt.config.settings["autoCompactThreshold"] = rt.compactor.used() / rt.compactor.window
            else:
                fake_server.on(TOO_LONG, purpose="main", times=1)
            fake_server.queue(Reply.text("second answer"))
            await turn(rt, "and now the second question, which is a little longer than the first")
        await rt.close()
        return rt

    rt = asyncio.run(scenario())
    assert rt.compactor.count == 1
    order = [r.purpose for r in fake_server.requests if r.purpose in ("extract", "compact")]
    assert order == ["extract", "compact"]
    [extract] = fake_server.requests_for("extract")
    assert "we deploy with make ship" in str(extract.body["messages"])


def test_saved_names_lists_each_memory_saved_once_in_order(repo, fake_server):
    memdir = paths.memory_dir(repo)
    first, second = memdir / "project_ship.md", memdir / "feedback_tests.md"

    def write(path: Path, description: str) -> Reply:
        text = format_memory(name=path.stem, description=description, type="project", body="Body.")
        return Reply.tool("Write", {"file_path": str(path), "content": text})

    for reply in (
        write(first, "ship with make ship"),
        Reply.text("Saved."),
        write(second, "run tests with -x"),
        Reply.tool("Read", {"file_path": str(first)}),
        write(first, "ship with make ship-all"),
        Reply.text("Saved."),
    ):
        fake_server.on(reply, purpose="extract")

    async def scenario() -> Runtime:
        rt = start(repo, fake_server)
        rt.extractor.gate = no_gate
        assert rt.extractor.saved_names == []
        for text in ("we ship with make ship", "run the tests with -x; ship is now make ship-all"):
            fake_server.queue(Reply.text("Noted."))
            await turn(rt, text)
            assert await rt.extractor.wait(10)
        await rt.close()
        return rt

    rt = asyncio.run(scenario())
    assert [m.filename for m in rt.extractor.engine.saved] == [
        "project_ship.md",
        "feedback_tests.md",
        "project_ship.md",
    ]
    assert rt.extractor.saved_names == ["project_ship.md", "feedback_tests.md"]
    rt.extractor.saved_names.append("x")  # a copy: the checkpoint cannot change what was saved
    assert rt.extractor.saved_names == ["project_ship.md", "feedback_tests.md"]


# ---------------------------------------------------------------- restore survives resume


EDIT = Reply.tool("Edit", {"file_path": "a.py", "old_string": "return 1", "new_string": "return 2"})


def _first_session(repo: Path, fake_server) -> str:
    """A session that reads a.py and b.py (and fails to read a missing file); returns its id."""
    (repo / "a.py").write_text("def f():\n    return 1\n")
    (repo / "b.py").write_text("B = 1\n")
    fake_server.queue(
        Reply.tools(
            [("Read", {"file_path": "a.py"}), ("Read", {"file_path": "b.py"}), ("Read", {"file_path": "missing.py"})]
        ),
        Reply.text("read them"),
    )

    async def scenario() -> str:
        rt = start(repo, fake_server)
        await turn(rt, "read a.py and b.py")
        await rt.close()
        return rt.session.id

    return asyncio.run(scenario())


def _edit_result(rt: Runtime) -> ToolResultBlock:
    [result] = [b for b in rt.session.messages[-2].content if isinstance(b, ToolResultBlock)]
    return result


def test_an_edit_right_after_resume_needs_no_read_and_a_compaction_restores_the_files(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    session_id = _first_session(repo, fake_server)
    fake_server.on(SUMMARY, purpose="compact", times=None)

    async def scenario() -> Runtime:
        rt = start(repo, fake_server, session=resume_session(repo, session_id))
        await rt.start(source="resume", dream=False)
        assert list(rt.agent.ctx.read_files) == [repo / "a.py", repo / "b.py"]  # the failed Read is not one
        fake_server.queue(EDIT, Reply.text("edited"))
        await turn(rt, "make f return 2")
        assert not _edit_result(rt).is_error, _edit_result(rt).content
        assert "Compacted" in await slash_compact(rt)
        await rt.close()
        return rt

    rt = asyncio.run(scenario())
    assert (repo / "a.py").read_text() == "def f():\n    return 2\n"
    [message] = rt.session.messages
    assert f"Current contents of {repo / 'a.py'} (read earlier):" in message.text
    assert "return 2" in message.text and f"Current contents of {repo / 'b.py'}" in message.text
    # a.py was touched last (the Edit), so it comes first
    assert message.text.index(str(repo / "a.py")) < message.text.index(str(repo / "b.py"))


def test_a_file_changed_after_the_session_must_be_read_again(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    session_id = _first_session(repo, fake_server)
    transcript = resume_session(repo, session_id).transcript.path
    later = transcript.stat().st_mtime + 10
    (repo / "a.py").write_text("def f():\n    return 1  # changed by the user\n")
    os.utime(repo / "a.py", (later, later))

    async def scenario() -> Runtime:
        rt = start(repo, fake_server, session=resume_session(repo, session_id))
        await rt.start(source="resume", dream=False)
        fake_server.queue(EDIT, Reply.text("it changed"))
        await turn(rt, "make f return 2")
        await rt.close()
        return rt

    rt = asyncio.run(scenario())
    result = _edit_result(rt)
    assert result.is_error and "modified since you last read it" in str(result.content)
    assert "changed by the user" in (repo / "a.py").read_text()


def test_slash_resume_rebuilds_the_files_read(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    session_id = _first_session(repo, fake_server)

    async def scenario() -> Runtime:
        rt = start(repo, fake_server)
        await rt.start(source="startup", dream=False)
        assert not rt.agent.ctx.read_files
        rt.switch_session(resume_session(repo, session_id), "resume")
        assert list(rt.agent.ctx.read_files) == [repo / "a.py", repo / "b.py"]
        fake_server.queue(EDIT, Reply.text("edited"))
        await turn(rt, "make f return 2")
        await rt.close()
        return rt

    rt = asyncio.run(scenario())
    assert not _edit_result(rt).is_error
    assert "return 2" in (repo / "a.py").read_text()


def test_files_seen_takes_a_compactions_restored_files_then_the_calls_in_order(tmp_path):
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    restored = [
        TextBlock(f"<system-reminder>\nCurrent contents of {tmp_path / n} (read earlier):\n\nx\n</system-reminder>")
        for n in ("new.py", "old.py")
    ]  # most recent first
    messages = [
        Message("user", [TextBlock("<summary>S</summary>"), *restored]),
        Message(
            "assistant",
            [
                ToolUseBlock("1", "Write", {"file_path": "w.py", "content": ""}),
                ToolUseBlock("2", "Edit", {"file_path": "old.py"}),
                ToolUseBlock("3", "Bash", {"command": "cat z.py"}),
            ],
        ),
        Message(
            "user", [ToolResultBlock("1", "ok"), ToolResultBlock("2", "no", is_error=True), ToolResultBlock("3", "ok")]
        ),
        Message("assistant", [ToolUseBlock("4", "Read", {"file_path": str(tmp_path / "new.py")})]),
        Message("user", [ToolResultBlock("4", "ok")]),
    ]
    assert [path for path, _ in files_seen(messages, ctx)] == [
        tmp_path / "old.py",
        tmp_path / "w.py",
        tmp_path / "new.py",
    ]
