"""Layer 3 recall through the real agent loop, the real anthropic SDK and the loopback fake.

Each test builds a runtime in-process (fast: no CLI start-up) and scripts the fake:
the main reply is a tool call, so the turn has a tool-result boundary where a
finished prefetch is injected; the recall reply is a rule matched by purpose.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import anthropic  # noqa: F401  (imported here so the first request does not pay for it)
import pytest

from claude_mini.config import load_config
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.llm.messages import Message, TextBlock, ToolUseBlock
from claude_mini.memory.recall.lexical import Candidate
from claude_mini.memory.recall.part import RecallPart
from claude_mini.memory.recall.selection import (
    FILE_MAX_BYTES,
    RECALL_SCHEMA,
    RECALL_SYSTEM,
    SESSION_BUDGET_BYTES,
    RecallFailed,
    age_phrase,
    parse_selection,
    recalls_in_context,
    recent_tools,
    render_memory,
    should_recall,
)
from claude_mini.runtime import Runtime, build_runtime
from tests.fake_anthropic import FakeAnthropic, Reply

DEPLOY_DESC = "How to deploy the billing service to staging with make deploy-billing"
QUERY = "how do I deploy the billing service to staging?"
BOUNDARY_DELAY = 0.5  # the main tool-call reply waits this long, so a fast prefetch is done by then


def make_runtime(repo: Path, server: FakeAnthropic, settings: dict | None = None) -> Runtime:
    if settings:
        (repo / ".claude").mkdir(exist_ok=True)
        (repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    # Extraction (Layer 4) runs after each turn; it must not take the main replies queued here.
    server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    client = AnthropicClient(base_url=server.base_url, api_key="test", max_retries=0)
    # Trusted for the run: an untrusted repository may not choose recall.* (it costs requests).
    return build_runtime(load_config(repo, trust_folder=bool(settings)), client=client)


def hook_of(rt: Runtime) -> RecallPart:
    return next(h for h in rt.lifecycle.parts if isinstance(h, RecallPart))


def run_turns(rt: Runtime, *texts: str) -> None:
    """Run user turns in one event loop (the SDK's connection pool belongs to it)."""

    async def go() -> None:
        try:
            for text in texts:
                async for _ in rt.agent.run(text):
                    pass
        finally:
            await rt.client.aclose()

    asyncio.run(go())


def save(rt: Runtime, filename: str, description: str = DEPLOY_DESC, body: str = "Run it.", **kw) -> Path:
    return rt.store.write(
        filename,
        name=kw.pop("name", filename.removesuffix(".md")),
        description=description,
        type=kw.pop("type", "project"),
        body=body,
        **kw,
    )


def tool_turn(server: FakeAnthropic, turns: int = 1) -> None:
    for _ in range(turns):
        server.queue(Reply.tool("Read", {"file_path": "app.py"}).slow_first_byte(BOUNDARY_DELAY), Reply.text("done"))


def select(server: FakeAnthropic, *names: str, **kw) -> None:
    server.on(Reply.json({"selected_memories": list(names)}), purpose="recall", times=None, **kw)


def main_text(server: FakeAnthropic, index: int) -> str:
    return json.dumps(server.requests_for("main")[index].body["messages"])


def manifest_of(request) -> str:
    return request.body["messages"][0]["content"][0]["text"]


# --- the recall request --------------------------------------------------------------
def test_recall_request_body(repo, fake_server):
    rt = make_runtime(repo, fake_server, {"smallModel": "tiny-recall-model"})
    save(rt, "deploy.md")
    save(rt, "user-role.md", "User is a senior backend engineer who is new to React", type="user")
    select(fake_server, "deploy.md")
    tool_turn(fake_server, 2)
    run_turns(rt, QUERY, "and what about the frontend?")
    first, second = fake_server.requests_for("recall")
    assert first.headers["x-claude-mini-purpose"] == "recall"
    body = first.body
    assert body["model"] == "tiny-recall-model"
    assert body["max_tokens"] == 256
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": RECALL_SCHEMA}}
    assert body["system"][0]["text"] == RECALL_SYSTEM
    manifest = manifest_of(first)
    assert QUERY in manifest and "Recently used tools: none" in manifest
    assert "- [project] deploy.md (" in manifest and f"): {DEPLOY_DESC}" in manifest
    assert "- [user] user-role.md (" in manifest
    # Turn 2: the tool used in turn 1 is named, and the surfaced file is not offered again.
    assert "Recently used tools: Read" in manifest_of(second)
    assert "deploy.md" not in manifest_of(second) and "user-role.md" in manifest_of(second)
    recall_cost = rt.session.costs.by_purpose["recall"]
    assert recall_cost.requests == 2 and recall_cost.usage.output_tokens > 0


RELEASE_DESC = "Release checklist for the invoicing backend"  # no word in common with QUERY


def test_selected_memory_reaches_the_next_main_request(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    save(rt, "release.md", RELEASE_DESC, body="RELEASE-BODY: tag, then run the pipeline.")
    select(fake_server, "../x.md", "unknown.md", "release.md")
    tool_turn(fake_server)
    calls: list[tuple[str, bool]] = []
    rt.notices.set_background = lambda kind, running: kind == "recall" and calls.append((kind, running))
    run_turns(rt, QUERY)
    assert calls == [("recall", True), ("recall", False)]  # the REPL's status line
    assert "RELEASE-BODY" not in main_text(fake_server, 0)  # only the side model could link them
    last = fake_server.requests_for("main")[1].body["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result"
    reminder = last[1]["text"]
    assert reminder.startswith("<system-reminder>\nRecalled memory: release.md — saved today\n")
    assert "RELEASE-BODY" in reminder and "x.md" not in reminder
    usage = json.loads((rt.store.root / "usage.json").read_text())["files"]
    assert list(usage) == ["release.md"] and usage["release.md"]["count"] == 1
    event = hook_of(rt).summary().events[-1]
    assert (event.outcome, event.injected, event.via) == ("injected", ["release.md"], {"release.md": "model"})


def test_a_strong_local_match_joins_the_users_message_and_the_model_adds_only_new_files(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    save(rt, "deploy.md", body="DEPLOY-BODY")
    save(rt, "release.md", RELEASE_DESC, body="RELEASE-BODY")
    save(rt, "tabs.md", "User wants tabs instead of spaces in every Makefile", body="TABS-BODY")
    select(fake_server, "deploy.md", "release.md")
    fake_server.queue(Reply.text("no tools needed"))  # a turn with no tool result still benefits
    tool_turn(fake_server)
    run_turns(rt, QUERY, "now do the same thing for the money side of things")
    first = fake_server.requests_for("main")[0].body["messages"][0]["content"]
    assert first[0]["text"] == QUERY
    assert [b["text"].split("\n")[1] for b in first[1:]] == ["Recalled memory: deploy.md — saved today"]
    # Turn 2: the side model's pick that is not in the context yet arrives at the tool result.
    second = main_text(fake_server, 2)
    assert second.count("DEPLOY-BODY") == 1 and "RELEASE-BODY" in second
    assert "TABS-BODY" not in json.dumps(fake_server.requests_for("main")[1].body)
    events = hook_of(rt).summary().events
    assert events[0].via == {"deploy.md": "local"}
    assert events[1].via == {"release.md": "model"}
    lines = hook_of(rt).summary().lines()
    assert any("deploy.md (local)" in line for line in lines)


def test_a_weak_match_is_not_sent_without_the_side_model(repo, fake_server):
    rt = make_runtime(repo, fake_server, {"recall": {"strategy": "lexical"}})
    save(rt, "deploy.md", body="DEPLOY-BODY")
    save(rt, "tabs.md", "User wants tabs instead of spaces in every Makefile", body="TABS-BODY")
    fake_server.queue(Reply.text("ok"))
    run_turns(rt, "which service should I look at first")  # shares only "service" with deploy.md
    assert "Recalled memory" not in main_text(fake_server, 0)
    assert hook_of(rt).events[-1].outcome == "nothing selected"


# --- budgets -------------------------------------------------------------------------
def test_a_10_kb_memory_is_cut_to_4_kib_with_a_note(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    body = "".join(f"line {i:04d} of the long runbook, with some padding text\n" for i in range(190))
    path = save(rt, "deploy.md", body=body + "TAIL-MARKER\n")
    assert path.stat().st_size > 10_000
    select(fake_server, "deploy.md")
    tool_turn(fake_server)
    run_turns(rt, QUERY)
    reminder = fake_server.requests_for("main")[0].body["messages"][-1]["content"][1]["text"]
    assert "line 0000" in reminder and "TAIL-MARKER" not in reminder
    assert f"of {path.stat().st_size:,} bytes (limit 4,096). Read {path} for the rest.]" in reminder
    shown = reminder.split("\n\n", 1)[1].split("\n\n[Truncated")[0]
    assert len(shown.encode()) <= FILE_MAX_BYTES and shown.endswith("padding text")


def test_the_session_cap_counts_what_is_in_the_context(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    names = [f"runbook-{i:02d}.md" for i in range(20)]
    for name in names:
        save(rt, name, f"Billing runbook part {name} for deploys to staging", body="x" * 4000)
    select(fake_server, *names)
    tool_turn(fake_server, 4)
    run_turns(rt, QUERY, QUERY, QUERY, QUERY)
    hook = hook_of(rt)
    in_context = recalls_in_context(rt.session.messages)
    assert hook.summary().in_context == in_context
    assert SESSION_BUDGET_BYTES - 4500 < sum(in_context.values()) <= SESSION_BUDGET_BYTES
    assert [e.outcome for e in hook.events][:4] == ["injected", "injected", "injected", "over budget"]
    recalls = fake_server.requests_for("recall")
    surfaced_first = hook.events[0].injected
    assert all(f"] {name} (" not in manifest_of(recalls[1]) for name in surfaced_first)
    # A compaction drops the recalled blocks: the budget comes back and they are offered again.
    rt.session.messages = [Message.user("summary of the conversation so far")]
    hook.reset_budget()
    assert hook.bytes_used == 0 and hook.summary().in_context == {}


def test_recall_stops_once_the_budget_is_used_up(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    save(rt, "deploy.md")
    filler = "<system-reminder>\nRecalled memory: old.md — saved today\n" + "y" * 61_000 + "\n</system-reminder>"
    rt.session.messages = [
        Message("user", [TextBlock("earlier"), TextBlock(filler)]),
        Message("assistant", [TextBlock("ok")]),
    ]
    select(fake_server, "deploy.md")
    tool_turn(fake_server)
    run_turns(rt, QUERY)
    assert fake_server.requests_for("recall") == []
    assert any("budget is used up" in n.text for n in rt.notices.said())


# --- never blocking ------------------------------------------------------------------
def test_a_slow_selection_does_not_delay_the_turn_and_is_dropped(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    save(rt, "deploy.md", body="DEPLOY-BODY")
    save(rt, "release.md", RELEASE_DESC, body="RELEASE-BODY")
    # The selection is held until the server stops: the turn completing at all shows it never waited.
    fake_server.on(Reply.json({"selected_memories": ["release.md"]}).hang(), purpose="recall")
    fake_server.queue(Reply.tool("Read", {"file_path": "app.py"}), Reply.text("done"))
    run_turns(rt, QUERY)
    assert len(fake_server.requests_for("recall")) == 1
    assert "RELEASE-BODY" not in main_text(fake_server, 1)
    assert "DEPLOY-BODY" in main_text(fake_server, 0)  # the local pass did not wait for it
    event = hook_of(rt).events[-1]
    assert (event.outcome, event.note) == ("injected", "")
    assert event.via == {"deploy.md": "local"}
    assert "recall" not in rt.session.costs.by_purpose
    assert not hook_of(rt).running


def test_wait_ms_lets_recall_reach_the_first_request(repo, fake_server):
    rt = make_runtime(repo, fake_server, {"recall": {"waitMs": 3000}})
    save(rt, "deploy.md", body="DEPLOY-BODY")
    select(fake_server, "deploy.md")
    fake_server.queue(Reply.text("answer"))
    run_turns(rt, QUERY)
    first = fake_server.requests_for("main")[0].body["messages"][0]["content"]
    assert first[0]["text"] == QUERY and "DEPLOY-BODY" in first[1]["text"]


def test_bad_settings_are_said_once_as_warnings_when_the_session_starts(repo, fake_server):
    rt = make_runtime(repo, fake_server, {"recall": {"waitMs": -1}, "memory": {"extractEvery": 0}})
    save(rt, "deploy.md", body="DEPLOY-BODY")
    select(fake_server)
    fake_server.queue(Reply.text("one"), Reply.text("two"))
    run_turns(rt, QUERY, QUERY)  # two turns: recall no longer says them at each turn
    assert [n.text for n in rt.notices.said() if "must be" in n.text] == [
        "recall.waitMs must be a number of milliseconds >= 0 (got -1); using 0.",
        "memory.extractEvery must be a whole number >= 1 (got 0); using 1.",
    ]
    assert all(n.level == "warning" for n in rt.notices.said() if "must be" in n.text)


# --- failures fall back to lexical ---------------------------------------------------
@pytest.mark.parametrize(
    "reply", [Reply.error(500), Reply.text("I would pick deploy.md")], ids=["http-500", "not-json"]
)
def test_a_failing_selection_falls_back_to_lexical(repo, fake_server, reply):
    rt = make_runtime(repo, fake_server)
    save(rt, "deploy.md", body="DEPLOY-BODY")
    save(rt, "tabs.md", "User wants tabs instead of spaces in every Makefile they edit")
    fake_server.on(reply, purpose="recall", times=None)
    tool_turn(fake_server)
    run_turns(rt, QUERY)
    assert "DEPLOY-BODY" in main_text(fake_server, 1)
    event = hook_of(rt).events[-1]
    assert event.strategy == "lexical (fallback)" and event.injected == ["deploy.md"]
    assert any("fell back to lexical" in n.text for n in rt.notices.said())


def test_a_deadline_falls_back_to_lexical(repo, fake_server):
    rt = make_runtime(repo, fake_server, {"recall": {"timeoutMs": 200}})
    save(rt, "deploy.md", body="DEPLOY-BODY")
    fake_server.on(Reply.json({"selected_memories": []}).slow_first_byte(3), purpose="recall")
    fake_server.queue(Reply.tool("Read", {"file_path": "app.py"}).slow_first_byte(1.0), Reply.text("done"))
    run_turns(rt, QUERY)
    assert "DEPLOY-BODY" in main_text(fake_server, 1)
    assert "within 200 ms" in hook_of(rt).events[-1].note


def test_an_endpoint_without_structured_output_gets_json_parsed_from_text(repo):
    with FakeAnthropic(ollama_like=True) as server:
        rt = make_runtime(repo, server)
        save(rt, "deploy.md", body="DEPLOY-BODY")
        server.on(Reply.text('Sure!\n```json\n{"selected_memories": ["deploy.md"]}\n```'), purpose="recall")
        tool_turn(server)
        run_turns(rt, QUERY)
        rejected, answered = server.requests_for("recall")
        assert "output_config" in rejected.body and "output_config" not in answered.body
        assert rt.client.structured_output is False
        assert "DEPLOY-BODY" in main_text(server, 1)
        assert hook_of(rt).events[-1].strategy == "model"


# --- strategies ----------------------------------------------------------------------
def test_lexical_strategy_makes_no_model_call(repo, fake_server):
    rt = make_runtime(repo, fake_server, {"recall": {"strategy": "lexical"}})
    save(rt, "deploy.md", body="DEPLOY-BODY")
    tool_turn(fake_server)
    run_turns(rt, QUERY)
    assert fake_server.requests_for("recall") == []
    assert "DEPLOY-BODY" in main_text(fake_server, 1)


@pytest.mark.parametrize("how", ["strategy-off", "auto-memory-off", "slash", "one-word"])
def test_no_recall_when_off_or_not_a_real_request(repo, fake_server, monkeypatch, how):
    settings = {"strategy-off": {"recall": {"strategy": "off"}}, "auto-memory-off": {"autoMemoryEnabled": False}}.get(
        how
    )
    rt = make_runtime(repo, fake_server, settings)
    save(rt, "deploy.md")
    select(fake_server, "deploy.md")
    tool_turn(fake_server)
    run_turns(rt, {"slash": "/deploy billing", "one-word": "thanks"}.get(how, QUERY))
    assert fake_server.requests_for("recall") == []
    assert hook_of(rt).events == []


# --- pure helpers --------------------------------------------------------------------
def test_parse_selection_accepts_only_listed_names():
    allowed = ["a.md", "b.md", "sub/c.md"]
    assert parse_selection('{"selected_memories": ["b.md", "../a.md", "a", "b.md", "z.md"]}', allowed) == [
        "b.md",
        "a.md",
    ]
    assert parse_selection('Here: {"selected_memories": ["./sub/c.md"]} done', allowed) == ["sub/c.md"]
    assert parse_selection('{"selected_memories": []}', allowed) == []
    many = json.dumps({"selected_memories": [f"m{i}.md" for i in range(9)]})
    assert len(parse_selection(many, [f"m{i}.md" for i in range(9)])) == 5
    for bad in ("no json here", '{"selected": ["a.md"]}', '{"selected_memories": "a.md"}', ""):
        with pytest.raises(RecallFailed):
            parse_selection(bad, allowed)


def test_should_recall_skips_commands_and_single_words():
    assert should_recall("how do I deploy billing")
    assert not should_recall("/memory list")
    assert not should_recall("  thanks  ")
    assert not should_recall("")
    assert should_recall("怎么部署到预发环境") and not should_recall("谢谢")


def test_recent_tools_most_recent_first():
    messages = [
        Message("assistant", [ToolUseBlock("1", "Grep", {})]),
        Message("assistant", [ToolUseBlock("2", "Bash", {}), ToolUseBlock("3", "Read", {})]),
    ]
    assert recent_tools(messages) == ["Read", "Bash", "Grep"]
    assert recent_tools(messages, window=1) == ["Read", "Bash"]


def test_age_phrase_warns_past_30_days():
    now = 1_800_000_000.0
    assert age_phrase(now - 100, now) == "saved today"
    assert age_phrase(now - 86_400 * 12.5, now) == "saved 12 days ago"
    assert age_phrase(now - 86_400 * 45, now) == "saved 45 days ago; may be outdated, check before relying on it"


def test_render_cuts_at_200_lines(tmp_path):
    path = tmp_path / "many.md"
    path.write_text("".join(f"{i}\n" for i in range(300)))
    old = time.time() - 86_400 * 40
    os.utime(path, (old, old))
    candidate = Candidate("many.md", None, old, "d", "", path=path)
    memory = render_memory(candidate, time.time())
    assert memory is not None
    assert "may be outdated" in memory.text.splitlines()[0]
    assert "\n199\n" in memory.text and "\n200\n" not in memory.text
    assert "[Truncated to the first 200 lines" in memory.text


def test_recalls_in_context_reads_back_what_was_injected():
    block = "<system-reminder>\nRecalled memory: a b.md — saved today\n(file x)\n\nbody\n</system-reminder>"
    messages = [
        Message("user", [TextBlock("hi"), TextBlock(block)]),
        Message("assistant", [TextBlock(block)]),
    ]  # only user messages carry attachments
    inner = block.removeprefix("<system-reminder>\n").removesuffix("\n</system-reminder>")
    assert recalls_in_context(messages) == {"a b.md": len(inner.encode())}


def test_local_model_sessions_default_to_lexical_recall(tmp_path):
    config = load_config(tmp_path)
    assert config.memory.recall.strategy == "model"
    config.model = "local"
    assert config.memory.recall.strategy == "lexical"
    config.settings["recall"] = {"strategy": "model"}  # an explicit setting still wins
    assert config.memory.recall.strategy == "model"


# --- while the user types (the REPL) ---------------------------------------------------
def run_after_draft(rt: Runtime, draft: str, sent: str) -> None:
    """The REPL's order: a pause in typing starts recall for the draft, Enter settles it."""

    async def go() -> None:
        try:
            hook = hook_of(rt)
            assert hook.prefetch_draft(rt.agent, draft)
            assert hook.prefetch_draft(rt.agent, draft)  # the same draft again: no new request
            task = hook._task
            assert task is not None
            await task
            hook.settle_draft(sent)
            async for _ in rt.agent.run(sent):
                pass
        finally:
            await rt.client.aclose()

    asyncio.run(go())


def test_a_selection_made_while_typing_joins_the_users_message(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    save(rt, "release.md", RELEASE_DESC, body="RELEASE-BODY")
    select(fake_server, "release.md")
    fake_server.queue(Reply.text("answer without tools"))
    run_after_draft(rt, QUERY, QUERY)
    assert len(fake_server.requests_for("recall")) == 1
    first = fake_server.requests_for("main")[0].body["messages"][0]["content"]
    assert "RELEASE-BODY" in first[1]["text"]
    event = hook_of(rt).events[-1]
    assert event.via == {"release.md": "model, while typing"}
    assert event.note == "ready before Enter"


def test_a_draft_that_changed_before_enter_is_dropped_and_not_reported(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    save(rt, "release.md", RELEASE_DESC, body="RELEASE-BODY")
    select(fake_server, "release.md")
    tool_turn(fake_server)
    run_after_draft(rt, "how do I deploy", QUERY)
    recalls = fake_server.requests_for("recall")
    assert [manifest_of(r).split("</request>")[0].split("<request>\n")[1].strip() for r in recalls] == [
        "how do I deploy",
        QUERY,
    ]
    assert [e.query for e in hook_of(rt).events] == [QUERY]


# --- a request in another script -----------------------------------------------------
def fill_folder(rt: Runtime, count: int) -> None:
    """`count` English memories about made-up services, newer than anything a test saves."""
    from claude_mini.memory.store import format_memory

    rt.store.root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        text = format_memory(
            name=f"svc{i} runbook",
            type="project",
            body="Restart it with make.",
            description=f"Runbook of service svc{i}: restart with make restart-{i}",
        )
        (rt.store.root / f"svc{i}-runbook.md").write_text(text)


def test_a_chinese_request_to_a_large_english_folder_is_bridged_by_keywords(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    path = save(rt, "staging-reset.md", "The staging database is wiped every Monday at 02:00", body="RESET-BODY")
    old = time.time() - 90 * 86_400
    os.utime(path, (old, old))  # the oldest file: the manifest's newest-first fill leaves it out
    fill_folder(rt, 450)
    fake_server.on(
        Reply.json({"keywords": ["staging", "database", "wiped", "Monday"]}),
        purpose="recall",
        match=lambda r: "keywords" in json.dumps(r.body),
    )
    select(fake_server, "staging-reset.md")
    tool_turn(fake_server)
    run_turns(rt, "我周四在预发环境建的测试数据，周一早上全没了，谁删的？")
    bridge, selection = fake_server.requests_for("recall")
    assert bridge.body["output_config"]["format"]["schema"]["required"] == ["keywords"]
    assert "周一早上全没了" in manifest_of(bridge) and "Memory files" not in manifest_of(bridge)
    assert "] staging-reset.md (" in manifest_of(selection)
    assert "RESET-BODY" in main_text(fake_server, 1)
    assert rt.session.costs.by_purpose["recall"].requests == 2


def test_no_bridge_for_a_small_folder_or_an_english_request(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    save(rt, "staging-reset.md", "The staging database is wiped every Monday at 02:00")
    fill_folder(rt, 150)
    select(fake_server)
    tool_turn(fake_server, 2)
    run_turns(
        rt,
        "我周四在预发环境建的测试数据，周一早上全没了，谁删的？",
        "who deleted my test data on the pre-production environment?",
    )
    assert len(fake_server.requests_for("recall")) == 2  # a selection each, no keyword request
    assert all("keywords" not in json.dumps(r.body) for r in fake_server.requests_for("recall"))


def test_a_large_folder_bridges_any_request_with_no_strong_local_match_and_only_those(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    save(rt, "staging-reset.md", "The staging database is wiped every Monday at 02:00", body="RESET-BODY")
    fill_folder(rt, 450)
    fake_server.on(
        Reply.json({"keywords": ["staging", "database", "wiped", "Monday"]}),
        purpose="recall",
        match=lambda r: "keywords" in json.dumps(r.body),
    )
    select(fake_server, "staging-reset.md")
    tool_turn(fake_server, 2)
    run_turns(
        rt,
        "when is the staging database wiped?",  # a strong local match: no keyword request
        "who deleted my test data on the pre-production environment?",  # a paraphrase: nothing strong
    )
    kinds = ["keywords" in json.dumps(r.body) for r in fake_server.requests_for("recall")]
    assert kinds == [False, True, False]
    assert "pre-production environment" in manifest_of(fake_server.requests_for("recall")[1])
