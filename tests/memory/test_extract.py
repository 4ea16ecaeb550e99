"""Layer 4 (memory/extract/, memory/secrets/guard.py) in-process through the fake server: the request,
saving with provenance, skip, throttle, coalescing, the gate's batching and final run, failures,
denials, the secret guard. The gate's own rules: test_extract_gate.py."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from claude_mini.agent.fork import strip_cache_control
from claude_mini.base import paths
from claude_mini.config import load_config
from claude_mini.config.layers import merge
from claude_mini.config.memory_settings import ExtractionSettings
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.memory.extract.gate import assess, no_gate
from claude_mini.memory.secrets.guard import SecretGuard
from claude_mini.memory.store import format_memory
from claude_mini.runtime import Runtime, build_runtime
from claude_mini.session import resume_session
from tests.fake_anthropic import Reply

CLOCK = 1_800_000_000.0  # 2027-01-15T08:00:00Z
STAMP = "2027-01-15T08:00:00Z"


@pytest.fixture
def memdir(repo: Path) -> Path:
    return paths.memory_dir(repo)


def start(repo: Path, server, **settings: Any) -> Runtime:
    config = load_config(repo)
    extra = {"recall": {"strategy": "off"}, "memory": settings.pop("memory", {}), **settings}
    config.settings = merge(config.settings, extra)
    rt = build_runtime(config, client=AnthropicClient(base_url=server.base_url, api_key="test"))
    rt.extractor.engine.clock = lambda: CLOCK
    rt.extractor.gate = no_gate  # these tests are about scheduling; the gate's are below
    return rt


async def turn(rt: Runtime, text: str) -> None:
    async for _ in rt.agent.run(text):
        pass


async def session(rt: Runtime, *texts: str, wait: bool = True) -> None:
    """Run user turns one after the other, waiting for each extraction when `wait`."""
    for text in texts:
        await turn(rt, text)
        if wait:
            assert await rt.extractor.wait(10)
    assert await rt.extractor.wait(10)
    await rt.client.aclose()


def script(server, purpose: str, *replies: Reply) -> None:
    for reply in replies:
        server.on(reply, purpose=purpose)


def memory_text(name: str, description: str, type: str = "feedback", body: str = "Body.") -> str:
    return format_memory(name=name, description=description, type=type, body=body)


def frontmatter(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text().split("---\n")[1])


def transcript(rt: Runtime) -> list[dict[str, Any]]:
    return [json.loads(line) for line in rt.session.transcript.path.read_text().splitlines()]


def extract_prompt(request) -> str:
    return request.body["messages"][-1]["content"][-1]["text"]


# ---------------------------------------------------------------- the request


def test_extraction_request_shares_the_main_prefix(repo, memdir, fake_server):
    script(fake_server, "main", Reply.tool("Read", {"file_path": "app.py"}), Reply.text("It greets."))
    script(fake_server, "extract", Reply.text("Nothing to save."))
    rt = start(repo, fake_server)
    asyncio.run(session(rt, "what does app.py do?"))
    main, extract = fake_server.requests_for("main")[-1], fake_server.requests_for("extract")[0]
    assert extract.headers["x-claude-mini-purpose"] == "extract"
    assert extract.body["tools"] == main.body["tools"] and extract.body["system"] == main.body["system"]
    assert extract.body["model"] == main.body["model"]
    assert extract.body["max_tokens"] == main.body["max_tokens"]
    sent = strip_cache_control(main.body["messages"])
    assert strip_cache_control(extract.body["messages"][: len(sent)]) == sent
    prompt = extract_prompt(extract)
    assert 'last 4 messages of the conversation above (from the user\'s "what does app.py do?")' in prompt
    assert str(memdir) in prompt and "(none yet)" in prompt and "Do not investigate" in prompt
    assert "Read every file you will change" in prompt and "make every Write and Edit at once" in prompt
    assert rt.session.costs.by_purpose["extract"].requests == 1
    assert rt.extractor.cursor == 4 and rt.extractor.engine.runs == 1
    assert not memdir.exists()  # nothing saved, nothing created


def test_prompt_lists_existing_memories_and_appends_memory_policies(repo, memdir, fake_server, isolated_env):
    rt = start(repo, fake_server)
    rt.store.write(
        "feedback_testing.md",
        name="Tests",
        description="always run pytest with -x",
        type="feedback",
        body="Run pytest -x.",
    )
    (repo / ".claude").mkdir()
    (repo / ".claude" / "memory-policy.md").write_text("Remember every deploy decision.\n")
    (isolated_env.home / "memory-policy.md").write_text("Never remember my name.\n")
    asyncio.run(session(rt, "hi"))
    prompt = extract_prompt(fake_server.requests_for("extract")[0])
    assert "- [feedback] feedback_testing.md (" in prompt and "): always run pytest with -x" in prompt
    assert f"according to {repo / '.claude' / 'memory-policy.md'}\n\nRemember every deploy decision." in prompt
    assert f"according to {isolated_env.home / 'memory-policy.md'}\n\nNever remember my name." in prompt
    assert prompt.index("deploy decision") < prompt.index("my name")


# ---------------------------------------------------------------- saving


def test_saved_memory_gets_provenance_an_index_line_a_notice_and_a_transcript_entry(repo, memdir, fake_server):
    target = memdir / "feedback_testing.md"
    script(fake_server, "main", Reply.text("Will do."))
    script(
        fake_server,
        "extract",
        Reply.tool(
            "Write",
            {"file_path": str(target), "content": memory_text("Run pytest with -x", "always run pytest with -x")},
        ),
        Reply.text("Saved."),
    )
    rt = start(repo, fake_server)
    saved = rt.extractor.engine.saved  # the memories this session saved (each also told to the user)
    asyncio.run(session(rt, "always run pytest with -x please"))
    fm = frontmatter(target)
    assert fm["source"] == rt.session.id and fm["created"] == STAMP and fm["updated"] == STAMP
    assert fm["name"] == "Run pytest with -x" and target.read_text().endswith("Body.\n")
    assert [s.line for s in saved] == ["Saved memory: feedback_testing.md — always run pytest with -x"]
    assert saved[0].created is True
    assert "(feedback_testing.md) — always run pytest with -x" in (memdir / "MEMORY.md").read_text()
    entries = [e for e in transcript(rt) if e.get("subtype") == "memory_saved"]
    assert entries[0]["file"] == "feedback_testing.md" and entries[0]["created"] is True
    assert not list(memdir.glob(".*.tmp"))  # every write was atomic


def test_an_updated_memory_keeps_its_created_time(repo, memdir, fake_server):
    rt = start(repo, fake_server)
    rt.store.write(
        "project_deploy.md",
        name="Deploy",
        description="deploys go out on Tuesdays only",
        type="project",
        body="Tuesdays.",
        extra_frontmatter={"created": "2026-01-01T00:00:00Z"},
    )
    path = str(memdir / "project_deploy.md")
    script(fake_server, "main", Reply.text("Noted."))
    script(
        fake_server,
        "extract",
        Reply.tool("Read", {"file_path": path}),
        Reply.tool("Edit", {"file_path": path, "old_string": "Tuesdays.", "new_string": "Thursdays."}),
        Reply.text("Updated."),
    )
    saved = rt.extractor.engine.saved  # the memories this session saved (each also told to the user)
    asyncio.run(session(rt, "deploys moved to Thursdays"))
    fm = frontmatter(memdir / "project_deploy.md")
    assert fm["created"] == "2026-01-01T00:00:00Z" and fm["updated"] == STAMP and fm["source"] == rt.session.id
    assert "Thursdays." in (memdir / "project_deploy.md").read_text()
    assert saved[0].created is False and (memdir / "MEMORY.md").read_text().count("project_deploy.md") == 1


def test_ten_turn_session_extractions_read_at_least_90_percent_from_the_cache(repo, memdir, fake_server):
    """The fork pays for its prompt and the parent's last answer; the rest is the parent's cache."""
    for i in range(1, 11):
        (repo / f"module_{i}.py").write_text(f"def handler_{i}(request):\n    return request\n" * 30)
        script(
            fake_server,
            "main",
            Reply.tool("Read", {"file_path": f"module_{i}.py"}),
            Reply.text(f"module_{i}.py returns the request unchanged."),
        )
        if i % 3 == 2:  # some turns save a memory: read, write, a last line
            content = memory_text(f"Kind {i}", f"handlers of kind {i} return the request", "project")
            script(
                fake_server,
                "extract",
                Reply.tool("Read", {"file_path": str(memdir / "MEMORY.md")}),
                Reply.tool("Write", {"file_path": str(memdir / f"project_{i}.md"), "content": content}),
                Reply.text("Saved."),
            )
        else:
            script(fake_server, "extract", Reply.text("Nothing to save."))
    rt = start(repo, fake_server)
    asyncio.run(session(rt, *(f"explain module_{i}.py" for i in range(1, 11))))
    usages = [r.usage for r in fake_server.requests_for("extract")]
    assert len(usages) == 16 and len(list(memdir.glob("project_*.md"))) == 3
    later = usages[1:]
    read = sum(u["cache_read_input_tokens"] for u in later)
    total = sum(u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] for u in later)
    assert read / total >= 0.90, f"{read / total:.1%} of the extraction input came from the cache"


# ---------------------------------------------------------------- when it runs


def test_skipped_when_the_main_agent_wrote_memory_itself(repo, memdir, fake_server):
    script(
        fake_server,
        "main",
        Reply.tool(
            "Write",
            {
                "file_path": str(memdir / "user_role.md"),
                "content": memory_text("Role", "the user is a data engineer", "user"),
            },
        ),
        Reply.text("Saved it."),
        Reply.text("Sure."),
    )
    script(fake_server, "extract", Reply.text("Nothing to save."))
    rt = start(repo, fake_server)
    rt.policy.mode = "bypassPermissions"

    async def go():
        await turn(rt, "remember that I am a data engineer")
        assert await rt.extractor.wait(10)
        assert fake_server.requests_for("extract") == [] and rt.extractor.cursor == 4
        await session(rt, "thanks")

    asyncio.run(go())
    extracts = fake_server.requests_for("extract")
    assert len(extracts) == 1 and "last 2 messages" in extract_prompt(extracts[0])
    assert any(e.get("subtype") == "memory_extraction_skipped" for e in transcript(rt))
    assert "source" not in frontmatter(memdir / "user_role.md")  # not stamped: not the fork's


def test_throttle_runs_every_third_turn(repo, fake_server):
    rt = start(repo, fake_server, memory={"extractEvery": 3})
    asyncio.run(session(rt, *(f"message {i}" for i in range(1, 7))))
    extracts = fake_server.requests_for("extract")
    assert len(extracts) == 2
    assert 'last 6 messages of the conversation above (from the user\'s "message 1")' in extract_prompt(extracts[0])
    assert 'last 6 messages of the conversation above (from the user\'s "message 4")' in extract_prompt(extracts[1])
    assert rt.extractor.cursor == 12


def test_turns_ending_during_a_slow_extraction_coalesce_into_one_trailing_run(repo, fake_server):
    fake_server.on(Reply.text("Nothing to save.").slow_first_byte(2.0), purpose="extract")
    rt = start(repo, fake_server)

    async def go():
        await turn(rt, "first")
        assert rt.extractor.running
        await turn(rt, "second")
        await turn(rt, "third")
        assert rt.extractor.running and len(fake_server.requests_for("extract")) == 1
        await session(rt)

    asyncio.run(go())
    extracts = fake_server.requests_for("extract")
    assert len(extracts) == 2
    trailing = extracts[1]
    assert 'last 4 messages of the conversation above (from the user\'s "second")' in extract_prompt(trailing)
    texts = [m["content"][0].get("text") for m in trailing.body["messages"]]
    assert "third" in texts  # the newest context
    assert rt.extractor.cursor == 6 and rt.extractor.engine.runs == 2


def test_a_resumed_conversation_is_not_extracted_again(repo, fake_server):
    rt = start(repo, fake_server)
    asyncio.run(session(rt, "first session"))
    config = load_config(repo)
    config.settings = merge(config.settings, {"recall": {"strategy": "off"}})
    resumed = build_runtime(
        config,
        client=AnthropicClient(base_url=fake_server.base_url, api_key="t"),
        session=resume_session(repo, rt.session.id),
    )
    resumed.extractor.gate = rt.extractor.gate
    assert resumed.extractor.cursor == 2
    asyncio.run(session(resumed, "second session"))
    prompt = extract_prompt(fake_server.requests_for("extract")[-1])
    assert 'last 2 messages of the conversation above (from the user\'s "second session")' in prompt


def test_a_run_still_going_at_clear_keeps_to_its_own_session(repo, fake_server):
    from claude_mini.session import Session

    rt = start(repo, fake_server)
    fake_server.on(Reply.error(400, "invalid request").slow_first_byte(1.0), purpose="extract")
    old = rt.session

    async def go():
        await turn(rt, "old conversation")
        assert rt.extractor.running
        rt.switch_session(Session(repo), "clear")  # /clear while the old run is in flight
        assert rt.extractor.cursor == 0
        await session(rt, "new conversation")

    asyncio.run(go())
    kinds = [e.get("subtype") for e in transcript(rt)]
    assert "memory_extraction_failed" not in kinds  # the old run reported to the old transcript
    old_entries = [json.loads(line) for line in old.transcript.path.read_text().splitlines()]
    assert "memory_extraction_failed" in [e.get("subtype") for e in old_entries]
    prompt = extract_prompt(fake_server.requests_for("extract")[-1])
    assert 'last 2 messages of the conversation above (from the user\'s "new conversation")' in prompt
    assert list(rt.extractor.engine._sessions) == [rt.session.id]


def test_status_follows_each_run_for_the_ui(repo, fake_server):
    class Status:
        def __init__(self):
            self.calls = []

        def set_background(self, kind, running):
            if kind == "extract":  # the channel also carries recall's status
                self.calls.append((kind, running))

    rt = start(repo, fake_server)
    status = Status()
    rt.notices.set_background = status.set_background
    asyncio.run(session(rt, "one", "two"))
    assert status.calls == [("extract", True), ("extract", False)] * 2


def test_no_extraction_when_auto_memory_is_off_or_the_turn_did_not_end_normally(repo, fake_server):
    rt = start(repo, fake_server, autoMemoryEnabled=False)
    asyncio.run(session(rt, "hi"))
    assert fake_server.requests_for("extract") == []
    script(fake_server, "main", Reply.text("cut").with_stop_reason("max_tokens"))
    rt = start(repo, fake_server)
    asyncio.run(session(rt, "long answer please"))
    assert fake_server.requests_for("extract") == []


def test_flush_extracts_now_and_reset_cursor_follows_a_rewritten_conversation(repo, fake_server):
    """What compaction uses: extraction before, the cursor after."""
    rt = start(repo, fake_server, memory={"extractEvery": 10})

    async def go():
        await turn(rt, "one")
        assert fake_server.requests_for("extract") == []
        assert await rt.extractor.flush(rt.agent, timeout=10)
        assert rt.extractor.cursor == 2
        rt.session.messages[:] = rt.session.messages[:1]  # as if compacted
        rt.extractor.engine.reset_cursor()
        assert rt.extractor.cursor == 1
        await rt.client.aclose()

    asyncio.run(go())
    assert len(fake_server.requests_for("extract")) == 1


# ---------------------------------------------------------------- the gate: batching and the final run


def gated(repo: Path, server, **settings: Any) -> Runtime:
    """A runtime with the real gate (memory/extract/gate.py)."""
    rt = start(repo, server, **settings)
    rt.extractor.gate = assess
    return rt


def user_texts(request) -> list[str]:
    """What the user typed in the turns an extraction request carries (before its prompt)."""
    return [
        block["text"]
        for m in request.body["messages"][:-1]
        if m["role"] == "user"
        for block in m["content"]
        if block.get("type") == "text"
    ]


def test_turns_with_nothing_durable_wait_and_join_the_run_of_the_durable_turn(repo, fake_server):
    rt = gated(repo, fake_server)

    async def go():
        await turn(rt, "hello")
        await turn(rt, "list files")
        assert fake_server.requests_for("extract") == [] and rt.extractor.cursor == 0  # held, not skipped
        assert rt.extractor.context_report() == [
            "Memory extraction: 2 turns pending (a run at a durable turn or at 5) · last turn held: "
            "nothing durable in 2 turns: no preference, correction, decision, fact or resolved failure"
        ]
        await session(rt, "always run pytest with -x")

    asyncio.run(go())
    [extract] = fake_server.requests_for("extract")
    assert 'last 6 messages of the conversation above (from the user\'s "hello")' in extract_prompt(extract)
    assert user_texts(extract) == ["hello", "list files", "always run pytest with -x"]
    assert rt.extractor.cursor == 6
    assert rt.extractor.context_report() == [
        "Memory extraction: 0 turns pending (a run at a durable turn or at 5) · last turn extracted: "
        'a preference: "always run pytest with -x"'
    ]


def test_a_batch_of_turns_is_extracted_even_with_nothing_durable(repo, fake_server):
    """memory.extractBatchTurns: the safety net for what the gate's words miss."""
    rt = gated(repo, fake_server, memory={"extractBatchTurns": 3})

    async def go():
        await session(rt, "hello", "list files", "what does app.py do?")
        assert rt.extractor.last_verdict.reason.startswith(
            "3 turns pending (memory.extractBatchTurns); nothing durable in 3 turns"
        )
        await session(rt, "thanks")

    asyncio.run(go())
    [extract] = fake_server.requests_for("extract")
    assert user_texts(extract) == ["hello", "list files", "what does app.py do?"]
    assert rt.extractor.cursor == 6 and len(rt.session.messages) == 8


def test_a_turn_ending_while_the_run_before_it_is_in_flight_is_judged_alone(repo, fake_server):
    """The durable turn being extracted does not make the next, trivial one start a second run."""
    fake_server.on(Reply.text("Nothing to save.").slow_first_byte(1.0), purpose="extract")
    rt = gated(repo, fake_server)

    async def go():
        await turn(rt, "always run pytest with -x")
        assert rt.extractor.running
        await turn(rt, "thanks")
        assert not rt.extractor.last_verdict.ran
        await session(rt)

    asyncio.run(go())
    assert len(fake_server.requests_for("extract")) == 1
    assert rt.extractor.cursor == 2 and [m.text for m in rt.extractor.engine.pending_messages()][0] == "thanks"


def test_extract_every_spaces_the_runs_of_durable_turns(repo, fake_server):
    rt = gated(repo, fake_server, memory={"extractEvery": 2})

    async def go():
        await session(rt, "always use tabs", "hello", "we deploy on Fridays")
        assert rt.extractor.last_verdict.reason.startswith("1 of 2 turns since the last run (memory.extractEvery)")

    asyncio.run(go())
    [extract] = fake_server.requests_for("extract")
    assert user_texts(extract) == ["always use tabs", "hello"]


def test_the_session_end_extracts_a_durable_pending_batch_but_not_a_trivial_one(repo, fake_server):
    rt = gated(repo, fake_server, memory={"extractEvery": 5})

    async def go():
        await turn(rt, "hello")
        assert not rt.extractor.schedule_final_run(rt.agent)  # "hello" alone costs no fork at exit
        await turn(rt, "the release freeze starts Monday")
        assert fake_server.requests_for("extract") == []  # extractEvery holds it at the turn's end...
        assert rt.extractor.schedule_final_run(rt.agent)  # ...not at the session's
        await session(rt)
        assert not rt.extractor.schedule_final_run(rt.agent)  # nothing left

    asyncio.run(go())
    [extract] = fake_server.requests_for("extract")
    assert user_texts(extract) == ["hello", "the release freeze starts Monday"]


@pytest.mark.parametrize(("said", "runs"), [("we deploy on Fridays", 1), ("hello", 0)])
def test_clear_extracts_the_old_conversations_durable_pending_turns(repo, fake_server, said, runs):
    from claude_mini.session import Session

    rt = gated(repo, fake_server, memory={"extractEvery": 3})
    old = rt.session

    async def go():
        await turn(rt, said)
        rt.switch_session(Session(repo), "clear")
        assert rt.extractor.running == bool(runs) and rt.extractor.cursor == 0
        await session(rt)

    asyncio.run(go())
    assert len(fake_server.requests_for("extract")) == runs
    if runs:
        assert user_texts(fake_server.requests_for("extract")[0]) == [said]  # the old conversation's
    assert old.messages and not rt.session.messages


# ---------------------------------------------------------------- failures


def test_a_failed_extraction_rolls_back_keeps_the_cursor_and_retries(repo, memdir, fake_server):
    rt = start(repo, fake_server)
    rt.store.write(
        "project_db.md",
        name="DB",
        description="the database is postgres 16 on staging",
        type="project",
        body="Postgres 16.",
    )
    before = (memdir / "project_db.md").read_bytes()
    path = str(memdir / "project_db.md")
    script(
        fake_server,
        "extract",
        Reply.tool("Read", {"file_path": path}),
        Reply.tools(
            [
                ("Edit", {"file_path": path, "old_string": "16", "new_string": "17"}),
                ("Write", {"file_path": str(memdir / "new.md"), "content": memory_text("N", "new one")}),
            ]
        ),
        Reply.error(400, "invalid request"),
    )
    notices = []
    rt.notices.attach(notices.append)

    async def go():
        await turn(rt, "first")
        assert await rt.extractor.wait(10)
        assert (memdir / "project_db.md").read_bytes() == before and not (memdir / "new.md").exists()
        assert rt.extractor.cursor == 0 and rt.extractor.engine.failures == 1
        await session(rt, "second")

    asyncio.run(go())
    retry = fake_server.requests_for("extract")[-1]
    assert 'last 4 messages of the conversation above (from the user\'s "first")' in extract_prompt(retry)
    assert rt.extractor.cursor == 4 and len(notices) == 1 and "they will be tried again" in notices[0].text
    assert any(e.get("subtype") == "memory_extraction_failed" for e in transcript(rt))


def test_stopping_a_running_extraction_rolls_back(repo, memdir, fake_server):
    script(
        fake_server,
        "extract",
        Reply.tool("Write", {"file_path": str(memdir / "half.md"), "content": memory_text("H", "half")}),
        Reply.text("never").hang(),
    )
    rt = start(repo, fake_server)

    async def go():
        await turn(rt, "hi")
        for _ in range(100):
            if len(fake_server.requests_for("extract")) == 2:
                break
            await asyncio.sleep(0.05)
        assert (memdir / "half.md").exists() and rt.extractor.running
        await rt.extractor.stop()
        await rt.client.aclose()

    asyncio.run(go())
    assert not (memdir / "half.md").exists() and rt.extractor.cursor == 0 and not rt.extractor.running


def test_extraction_is_stopped_after_five_turns_and_keeps_complete_files(repo, memdir, fake_server):
    script(
        fake_server,
        "extract",
        Reply.tool(
            "Write",
            {
                "file_path": str(memdir / "user_editor.md"),
                "content": memory_text("Editor", "the user edits with helix", "user"),
            },
        ),
    )
    fake_server.on(Reply.tool("Read", {"file_path": str(memdir / "MEMORY.md")}), purpose="extract", times=None)
    rt = start(repo, fake_server)
    asyncio.run(session(rt, "I use helix"))
    assert len(fake_server.requests_for("extract")) == 5
    assert frontmatter(memdir / "user_editor.md")["source"] == rt.session.id
    assert rt.extractor.cursor == 2
    assert any(e.get("subtype") == "memory_extraction_stopped" for e in transcript(rt))


# ---------------------------------------------------------------- the fork's limits


def denied_calls(memdir: Path, outside: Path) -> list[tuple[str, dict[str, Any], str]]:
    body = memory_text("X", "something to remember")
    return [
        ("Write", {"file_path": f"{memdir}/../../x.md", "content": body}, "uses .. to leave"),
        ("Write", {"file_path": "/etc/x.md", "content": body}, "is outside the memory dir"),
        ("Write", {"file_path": str(memdir / "link" / "x.md"), "content": body}, "follows a symlink out"),
        ("Bash", {"command": f"echo hi > {memdir}/x.md"}, "read-only"),
        ("Bash", {"command": f"rm {outside}/keep.txt"}, "read-only"),
        ("Bash", {"command": "git commit -m x"}, "read-only"),
        ("Bash", {"command": f"echo $(touch {outside}/pwned)"}, "read-only"),
        ("Bash", {"command": f"ls; rm {outside}/keep.txt"}, "read-only"),
    ]


def test_every_escape_is_denied_with_a_reason_and_the_session_goes_on(repo, memdir, fake_server, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    memdir.mkdir(parents=True)
    os.symlink(outside, memdir / "link")
    calls = denied_calls(memdir, outside)
    script(fake_server, "extract", Reply.tools([(name, args) for name, args, _ in calls]), Reply.text("done"))
    script(fake_server, "main", Reply.text("ok"), Reply.text("still here"))
    rt = start(repo, fake_server)
    asyncio.run(session(rt, "hi", "again"))
    results = fake_server.requests_for("extract")[1].body["messages"][-1]["content"]
    assert len(results) == len(calls)
    for result, (name, args, why) in zip(results, calls, strict=True):
        assert result["is_error"] and result["content"].startswith("Permission denied"), (name, args)
        assert why in result["content"], (name, args, result["content"])
    assert (outside / "keep.txt").exists() and not (outside / "x.md").exists()
    assert not (memdir / "x.md").exists() and not (memdir.parent.parent / "x.md").exists()
    assert not (outside / "pwned").exists()
    assert rt.extractor.cursor == 4 and rt.session.messages[-1].text == "still here"


# ---------------------------------------------------------------- the secret guard


# What counts as a secret, and Edits that assemble one: tests/memory/test_secrets.py.


def test_secret_guard_refuses_memory_writes_by_the_fork_and_the_main_agent(repo, memdir, fake_server):
    key = "sk-ant-api03-" + "k" * 40
    script(
        fake_server,
        "main",
        Reply.tool(
            "Write",
            {
                "file_path": str(memdir / "reference_api.md"),
                "content": memory_text("API", f"the key is {key}", "reference"),
            },
        ),
        Reply.tool("Write", {"file_path": str(repo / "config.env"), "content": f"KEY={key}\n"}),
        Reply.text("ok"),
    )
    script(
        fake_server,
        "extract",
        Reply.tool(
            "Write",
            {
                "file_path": str(memdir / "aws.md"),
                "content": memory_text("AWS", "aws key AKIAIOSFODNN7EXAMPLE", "reference"),
            },
        ),
        Reply.text("done"),
    )
    rt = start(repo, fake_server)
    rt.policy.mode = "bypassPermissions"  # not even bypass lets a secret into memory
    asyncio.run(session(rt, "remember my api key"))
    main_result = fake_server.requests_for("main")[1].body["messages"][-1]["content"][0]
    assert main_result["is_error"] and "refused to save an API key (sk-ant-api03-…) on line 3" in main_result["content"]
    assert key not in main_result["content"]
    assert (repo / "config.env").exists()  # outside the memory folder the guard does not apply
    fork_result = fake_server.requests_for("extract")[1].body["messages"][-1]["content"][0]
    assert fork_result["is_error"] and "an AWS access key id (AKIA…)" in fork_result["content"]
    assert not (memdir / "reference_api.md").exists() and not (memdir / "aws.md").exists()


def test_the_session_chain_holds_the_secret_guard_and_speaks_for_the_rules(repo, memdir, fake_server):
    rt = start(repo, fake_server)
    assert rt.agent.policy is rt.policy  # built once by the runtime, never re-wrapped
    guard = next(g for g in rt.policy.guards if isinstance(g, SecretGuard))
    rt.policy.mode = "plan"
    assert rt.policy.rules.mode == "plan" and rt.policy.mode == "plan"
    assert rt.policy.suggest_rule("Bash", {"command": "git log -1"}) == "Bash(git log:*)"
    assert SecretGuard(memdir, cwd=repo).targets_memory(str(memdir / "a.md"))
    assert not SecretGuard(memdir, cwd=repo).targets_memory("a.md")
    assert guard.team is not None
    asyncio.run(rt.client.aclose())


def test_settings_with_bad_values_fall_back_to_defaults(repo):
    config = load_config(repo)
    config.settings["memory"] = {"extractEvery": 0, "extractWaitSeconds": "soon"}
    settings = config.memory.extraction
    assert settings.every == 1 and settings.wait_seconds == 60.0
    assert any("memory.extractEvery" in w for w in config.memory.problems)
    config.settings["memory"] = {"extractEvery": 3, "extractWaitSeconds": 5}
    assert config.memory.extraction == ExtractionSettings(every=3, wait_seconds=5.0)


# ---------------------------------------------------------------- the local model


def test_no_extraction_with_the_local_model(repo):
    """Its one worker would keep the user's next answer waiting (docs/install.md "Offline and local models")."""
    config = load_config(repo, {"model": "local"})
    assert not build_runtime(config, client=AnthropicClient(api_key="t")).extractor.enabled()
    config.model = "claude-sonnet-4-6"  # /model switches back: extraction resumes
    assert build_runtime(config, client=AnthropicClient(api_key="t")).extractor.enabled()
