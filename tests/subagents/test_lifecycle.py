"""The Agent tool in a running session (runtime.subagents) against the fake server: a child's own
context, the fork's shared prefix, permissions and limits binding children, sidechains, hooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_mini.agent.fork import strip_cache_control
from claude_mini.agent.loop import PermissionAnswer, TurnDeclined
from tests.fake_anthropic import Reply
from tests.sessions import run_session as run
from tests.sessions import turn


@pytest.fixture
def project(repo: Path, monkeypatch) -> Path:
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    (repo / "CLAUDE.md").write_text("Always answer in English. PROJECT-RULE-7.\n")
    (repo / "dates.py").write_text("import datetime\n\ndef parse(s):\n    return datetime.date.fromisoformat(s)\n")
    return repo


def main_then(fake_server, *replies: Reply) -> None:
    for reply in replies:
        fake_server.on(reply, purpose="main")


def child_then(fake_server, *replies: Reply) -> None:
    for reply in replies:
        fake_server.on(reply, purpose="subagent")


def last_result(fake_server) -> dict:
    return fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]


def test_an_explore_child_has_its_own_context_and_returns_one_result(project, fake_server):
    main_then(
        fake_server,
        Reply.tool(
            "Agent",
            {"description": "Find date parsing", "prompt": "Find where dates are parsed.", "subagent_type": "Explore"},
        ),
        Reply.text("It is in dates.py."),
    )
    child_then(
        fake_server,
        Reply.tool("Read", {"file_path": "dates.py"}),
        Reply.text("dates.py:3 parses ISO dates with fromisoformat."),
    )

    async def scenario(runtime):
        await turn(runtime, "where do we parse dates?")
        return runtime

    runtime = run(fake_server, project, scenario)
    first, second = fake_server.requests_for("subagent")
    main = fake_server.requests_for("main")[0].body
    assert [t["name"] for t in first.body["tools"]] == ["Read", "Bash", "Grep", "Glob"]
    system = json.dumps(first.body["system"])
    assert "PROJECT-RULE-7" in system and "read-only" in system.lower()
    assert first.body["system"] != main["system"]
    assert first.body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Find where dates are parsed.", "cache_control": {"type": "ephemeral"}}
            ],
        }
    ]
    assert "fromisoformat" in json.dumps(second.body["messages"])  # its Read ran, in its own context
    result = last_result(fake_server)
    assert result["type"] == "tool_result" and not result.get("is_error")
    assert result["content"].startswith("dates.py:3 parses ISO dates")
    assert "\n\n[subagent Explore · 1 tool call · " in result["content"]
    assert "fromisoformat(s)" not in json.dumps(fake_server.requests_for("main")[-1].body)  # not the file
    assert runtime.session.costs.by_purpose["subagent"].requests == 2
    [child] = runtime.subagents.runs
    assert child.status == "completed" and child.tool_count == 1 and child.transcript.exists()
    sidechain = child.transcript.read_text()
    assert "Find where dates are parsed." in sidechain and child.transcript.parent.name == "subagents"
    assert f'"agent_id": "{child.agent_id}"' in runtime.session.transcript.path.read_text()


def test_a_general_purpose_child_is_a_fork_on_the_parents_cached_prefix(project, fake_server):
    main_then(
        fake_server,
        Reply.tool("Agent", {"description": "Summarise", "prompt": "Summarise dates.py."}),
        Reply.text("Done."),
    )
    child_then(fake_server, Reply.text("One function, parse()."))

    async def scenario(runtime):
        await turn(runtime, "summarise dates.py with a subagent")

    run(fake_server, project, scenario)
    parent = fake_server.requests_for("main")[0]
    [fork] = fake_server.requests_for("subagent")
    assert fork.body["tools"] == parent.body["tools"] and fork.body["system"] == parent.body["system"]
    sent = strip_cache_control(parent.body["messages"])
    assert strip_cache_control(fork.body["messages"][: len(sent)]) == sent  # the parent's conversation, as sent
    assert fork.body["messages"][len(sent)]["role"] == "assistant"  # then the response holding the call
    assert fork.usage["cache_read_input_tokens"] > 0  # the parent's prefix, read back from the cache
    last = fork.body["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and "Summarise dates.py." in json.dumps(last[-1])


def test_permissions_and_the_read_only_type_bind_children(project, fake_server):
    main_then(
        fake_server,
        Reply.tool("Agent", {"description": "x", "prompt": "Make a file.", "subagent_type": "Explore"}),
        Reply.text("ok"),
    )
    child_then(
        fake_server,
        Reply.tools(
            [("Write", {"file_path": "new.py", "content": "x"}), ("Bash", {"command": f"touch {project}/made"})]
        ),
        Reply.text("I could not."),
    )  # Explore has no Write tool, and its Bash only reads

    async def scenario(runtime):
        await turn(runtime, "go")

    run(fake_server, project, scenario)
    write, bash = fake_server.requests_for("subagent")[-1].body["messages"][-1]["content"][:2]
    assert write["is_error"] and "Unknown tool 'Write'" in write["content"]
    assert bash["is_error"] and "read-only" in json.dumps(bash)
    assert not (project / "new.py").exists() and not (project / "made").exists()


def test_a_child_cannot_start_a_child_unless_a_setting_allows_it(project, fake_server):
    main_then(fake_server, Reply.tool("Agent", {"description": "x", "prompt": "Delegate."}), Reply.text("ok"))
    child_then(
        fake_server, Reply.tool("Agent", {"description": "y", "prompt": "Deeper."}), Reply.text("I did it myself.")
    )

    async def scenario(runtime):
        await turn(runtime, "go")

    run(fake_server, project, scenario)
    refused = fake_server.requests_for("subagent")[-1].body["messages"][-1]["content"][0]
    assert refused["is_error"] and "subagents.maxDepth" in json.dumps(refused)


def test_max_turns_stops_a_child_and_says_so(project, fake_server):
    main_then(
        fake_server,
        Reply.tool("Agent", {"description": "x", "prompt": "Loop.", "subagent_type": "Explore"}),
        Reply.text("ok"),
    )
    child_then(fake_server, *[Reply.tool("Glob", {"pattern": "*.py"}) for _ in range(3)])

    async def scenario(runtime):
        await turn(runtime, "go")
        return runtime.subagents.runs[-1]

    child = run(fake_server, project, scenario, settings={"subagents": {"maxTurns": 2}}, trusted=True)
    assert len(fake_server.requests_for("subagent")) == 2 and child.status == "stopped"
    assert "stopped before finishing" in json.dumps(last_result(fake_server))


def test_a_custom_type_with_memory_has_its_own_memory_and_never_the_main_one(repo, fake_server, isolated_env):
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep\n"
        "memory: project\n---\nYou review code. REVIEWER-PROMPT.\n"
    )
    main_then(
        fake_server,
        Reply.tool("Agent", {"description": "Review", "prompt": "Review dates.", "subagent_type": "reviewer"}),
        Reply.text("ok"),
    )
    child_then(fake_server, Reply.text("Looks fine."))

    async def scenario(runtime):
        await turn(runtime, "review")

    run(fake_server, repo, scenario, trusted=True)
    [child] = fake_server.requests_for("subagent")
    system = json.dumps(child.body["system"])
    assert "REVIEWER-PROMPT" in system and str(repo / ".claude" / "agent-memory" / "reviewer") in system
    assert "projects" not in system or "memory" not in system.split("agent-memory")[0]
    assert [t["name"] for t in child.body["tools"]] == ["Read", "Write", "Edit", "Grep"]
    assert (repo / ".claude" / "agent-memory" / "reviewer").is_dir()


def test_a_subagent_stop_hook_sends_the_child_back_to_work_once(project, fake_server, isolated_env):
    (isolated_env.home / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "SubagentStop": [
                        {
                            "matcher": "Explore",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": 'python3 -c "import json,sys; d=json.load(sys.stdin); '
                                    "print(json.dumps({} if d['stop_hook_active'] else "
                                    "{'decision': 'block', 'reason': 'Check tests too.'}))\"",
                                }
                            ],
                        }
                    ]
                }
            }
        )
    )
    main_then(
        fake_server,
        Reply.tool("Agent", {"description": "x", "prompt": "Look.", "subagent_type": "Explore"}),
        Reply.text("ok"),
    )
    child_then(fake_server, Reply.text("First answer."), Reply.text("Tests checked too."))

    async def scenario(runtime):
        await turn(runtime, "go")

    run(fake_server, project, scenario)
    assert len(fake_server.requests_for("subagent")) == 2
    assert "Check tests too." in json.dumps(fake_server.requests_for("subagent")[-1].body["messages"])
    assert "Tests checked too." in json.dumps(last_result(fake_server))


def test_an_unknown_type_is_an_error_naming_the_others(project, fake_server):
    main_then(
        fake_server,
        Reply.tool("Agent", {"description": "x", "prompt": "y", "subagent_type": "nosuch"}),
        Reply.text("ok"),
    )

    async def scenario(runtime):
        await turn(runtime, "go")

    run(fake_server, project, scenario)
    result = last_result(fake_server)
    assert result["is_error"] and "general-purpose" in json.dumps(result) and "Explore" in json.dumps(result)
    assert fake_server.requests_for("subagent") == []


def test_a_childs_cd_does_not_slip_past_a_deny_rule(project, fake_server):
    (project / "protected").mkdir()
    main_then(fake_server, Reply.tool("Agent", {"description": "x", "prompt": "Write there."}), Reply.text("ok"))
    child_then(
        fake_server,
        Reply.tool("Bash", {"command": "cd protected"}),
        Reply.tool("Write", {"file_path": "secret.txt", "content": "x"}),
        Reply.text("done"),
    )

    async def scenario(runtime):
        runtime.policy.mode = "acceptEdits"
        await turn(runtime, "go")

    rules = {"permissions": {"allow": ["Bash(cd:*)"], "deny": ["Write(protected/**)"]}}
    run(fake_server, project, scenario, settings=rules, trusted=True)
    refused = fake_server.requests_for("subagent")[-1].body["messages"][-1]["content"][0]
    assert refused["is_error"] and "Denied by" in refused["content"]
    assert not (project / "protected" / "secret.txt").exists()


def test_a_child_never_writes_the_sessions_memory(project, fake_server, monkeypatch):
    monkeypatch.delenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY")
    main_then(fake_server, Reply.tool("Agent", {"description": "x", "prompt": "Remember it."}), Reply.text("ok"))
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)

    async def scenario(runtime):
        target = runtime.store.root / "note.md"
        child_then(fake_server, Reply.tool("Write", {"file_path": str(target), "content": "x"}), Reply.text("done"))
        await turn(runtime, "go")
        return target

    target = run(fake_server, project, scenario)
    refused = fake_server.requests_for("subagent")[-1].body["messages"][-1]["content"][0]
    assert refused["is_error"] and "does not write the session's memory" in refused["content"]
    assert not target.exists()


def test_an_untrusted_repositorys_linked_agent_memory_is_not_a_way_out(repo, fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "keeper.md").write_text(
        "---\nname: keeper\ndescription: Keeps notes\nmemory: project\n---\nKeep notes.\n"
    )
    (repo / ".claude" / "agent-memory").mkdir()
    (repo / ".claude" / "agent-memory" / "keeper").symlink_to(outside)
    main_then(
        fake_server,
        Reply.tool("Agent", {"description": "x", "prompt": "Note.", "subagent_type": "keeper"}),
        Reply.text("ok"),
    )
    child_then(
        fake_server,
        Reply.tool("Write", {"file_path": str(repo / ".claude/agent-memory/keeper/evil.sh"), "content": "x"}),
        Reply.text("done"),
    )

    async def scenario(runtime):
        await turn(runtime, "go")

    run(fake_server, repo, scenario)
    assert not (outside / "evil.sh").exists()


def test_task_and_agent_type_rules_bind_the_agent_tool(project, fake_server):
    main_then(
        fake_server,
        Reply.tools(
            [
                ("Agent", {"description": "a", "prompt": "p", "subagent_type": "Explore"}),
                ("Agent", {"description": "b", "prompt": "p"}),
            ]
        ),
        Reply.text("ok"),
    )

    async def scenario(runtime):
        await turn(runtime, "go")

    run(
        fake_server,
        project,
        scenario,
        settings={"permissions": {"deny": ["Agent(Explore)", "Task(general-purpose)"]}},
        trusted=True,
    )
    explore, general = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][:2]
    assert explore["is_error"] and general["is_error"] and fake_server.requests_for("subagent") == []


def test_clear_lists_a_new_agent_type_in_the_tool_sent(project, fake_server):
    fake_server.queue(Reply.text("one"), Reply.text("two"))

    async def scenario(runtime):
        from claude_mini.session import Session

        await turn(runtime, "first")
        (project / ".claude" / "agents").mkdir(parents=True)
        (project / ".claude" / "agents" / "late.md").write_text(
            "---\nname: late\ndescription: Added later\n---\nBody\n"
        )
        runtime.switch_session(Session(project), "clear")
        await turn(runtime, "second")

    run(fake_server, project, scenario, trusted=True)
    one, two = (
        next(t for t in r.body["tools"] if t["name"] == "Agent")["description"]
        for r in fake_server.requests_for("main")
    )
    assert "- late:" not in one and "- late: Added later" in two


@pytest.mark.usefixtures("no_sandbox")
def test_no_to_a_childs_call_stops_the_whole_turn(project, fake_server):
    main_then(
        fake_server,
        Reply.tool("Agent", {"description": "x", "prompt": "Make a file.", "subagent_type": "general-purpose"}),
        Reply.text("never asked for"),
    )
    child_then(fake_server, Reply.tool("Bash", {"command": f"touch {project}/made"}), Reply.text("never asked for"))

    async def no(call, reason):
        return PermissionAnswer(allow=False)

    async def scenario(runtime):
        runtime.agent.ask_user = no
        with pytest.raises(TurnDeclined):
            await turn(runtime, "go")
        return runtime

    runtime = run(fake_server, project, scenario)
    assert len(fake_server.requests_for("main")) == 1 and len(fake_server.requests_for("subagent")) == 1
    assert not (project / "made").exists()
    [answer] = runtime.session.messages[-1].content[:1]
    assert answer.is_error and "the user declined a call" in answer.content
    assert runtime.subagents.runs[-1].status == "stopped"
