"""Skills in a running session (runtime.skills) against the fake server: the listing in the Skill
tool's description, bodies only after a call, allowed-tools for one turn, typed commands, the
compaction attachment, /clear picking up new skills, and resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from claude_mini.config import load_config
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.llm.messages import Message, TextBlock, ToolUseBlock
from claude_mini.runtime import build_runtime
from claude_mini.skills.expand import ExpansionError
from claude_mini.skills.lifecycle import invoked_in
from claude_mini.tools.registry import TOOL_NAMES
from tests.fake_anthropic import Reply
from tests.sessions import run_session, turn

BODY_A = "# Release notes\n" + "Write the notes in the house style. " * 110  # ~4 KB
BODY_B = "# Changelog\n" + "Group the entries by component and date. " * 100


def skill(root: Path, name: str, description: str, body: str, extra: str = "") -> Path:
    folder = root / ".claude" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}")
    return folder


def command(root: Path, name: str, text: str) -> Path:
    path = root / ".claude" / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project(repo: Path, monkeypatch) -> Path:
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    skill(repo, "release-notes", "Write release notes for a version", BODY_A)
    skill(repo, "changelog", "Update CHANGELOG.md", BODY_B)
    return repo


def run(fake_server, root: Path, scenario, *, trusted: bool = False, settings: dict | None = None):
    """Run `scenario(runtime, notices)` in one event loop against the fake server."""
    return run_session(
        fake_server, root, lambda runtime: scenario(runtime, runtime.notices), settings=settings, trusted=trusted
    )


def skill_tool(body: dict) -> dict:
    return next(t for t in body["tools"] if t["name"] == "Skill")


def test_the_listing_is_in_the_skill_tools_description_and_a_body_only_after_a_call(project, fake_server):
    fake_server.queue(Reply.tool("Skill", {"skill": "release-notes", "args": "1.4"}), Reply.text("Done."))

    async def scenario(runtime, notices):
        await turn(runtime, "write the notes for 1.4")

    run(fake_server, project, scenario)
    first, second = fake_server.requests_for("main")
    description = skill_tool(first.body)["description"]
    assert "- release-notes: Write release notes for a version" in description
    assert "- changelog: Update CHANGELOG.md" in description
    assert "house style" not in json.dumps(first.body)  # never a body before the call
    builtins = [name for name in TOOL_NAMES if name != "WebSearch"]  # no server-side search on the fake
    assert [t["name"] for t in first.body["tools"]][: len(builtins) + 1] == [*builtins, "Skill"]
    result = second.body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and not result.get("is_error")
    text = json.dumps(result["content"])
    assert "This skill's folder, where the files it mentions are:" in text and "house style" in text
    assert "ARGUMENTS: 1.4" in text
    assert first.body["tools"] == second.body["tools"] and first.body["system"] == second.body["system"]


def test_compaction_keeps_the_names_of_invoked_skills_not_their_bodies(project, fake_server):
    fake_server.queue(
        Reply.tool("Skill", {"skill": "release-notes"}),
        Reply.tool("Skill", {"skill": "changelog"}),
        Reply.text("Both loaded."),
        Reply.text("Next answer."),
    )
    fake_server.on(Reply.text("<summary>SUMMARY OF WORK</summary>"), purpose="compact")

    async def scenario(runtime, notices):
        await turn(runtime, "prepare the release")
        before = runtime.compactor.used()
        result = await runtime.compactor.compact()
        await turn(runtime, "go on")
        return before, result, runtime.lifecycle.parts

    before, result, hooks = run(fake_server, project, scenario)
    [compact] = fake_server.requests_for("compact")
    assert compact.body["tools"] == fake_server.requests_for("main")[0].body["tools"]  # the fork's prefix
    after = fake_server.requests_for("main")[-1].body
    first = json.dumps(after["messages"][0])
    assert "SUMMARY OF WORK" in first
    assert "Skills loaded earlier in this session" in first and "release-notes, changelog" in first
    assert "house style" not in json.dumps(after["messages"]) and "by component" not in json.dumps(after["messages"])
    assert "- release-notes:" in skill_tool(after)["description"]  # still listed: loadable again
    assert result.tokens_after < before - 1_500  # two ~4 KB bodies (2 x ~1,000 tokens) left out


@pytest.mark.usefixtures("no_sandbox")
def test_allowed_tools_widen_permissions_for_that_turn_only(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    skill(
        repo,
        "toucher",
        "Touch marker files",
        "Touch the files you are asked to.\n",
        extra="allowed-tools: Bash(touch:*)\n",
    )
    fake_server.queue(
        Reply.tool("Skill", {"skill": "toucher"}),
        Reply.tool("Bash", {"command": f"touch {repo}/one"}),
        Reply.text("Touched."),
        Reply.tool("Bash", {"command": f"touch {repo}/two"}),
        Reply.text("Tried."),
    )

    async def scenario(runtime, notices):
        await turn(runtime, "touch one")
        await turn(runtime, "touch two")
        return [r.text for r in runtime.policy.allow_rules]

    rules_after = run(
        fake_server, repo, scenario, trusted=True, settings={"permissions": {"allow": ["Skill(toucher)"]}}
    )
    assert (repo / "one").exists() and not (repo / "two").exists()
    assert "Bash(touch:*)" not in rules_after
    denied = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]
    assert denied["is_error"] and "Permission needed" in json.dumps(denied)


def test_a_skill_that_widens_permissions_needs_permission_to_load(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    skill(repo, "toucher", "Touch marker files", "Touch.\n", extra="allowed-tools: Bash(touch:*)\n")
    skill(repo, "plain", "Only text", "Just text.\n")
    fake_server.queue(Reply.tools([("Skill", {"skill": "toucher"}), ("Skill", {"skill": "plain"})]), Reply.text("ok"))

    async def scenario(runtime, notices):
        await turn(runtime, "go")

    run(fake_server, repo, scenario, trusted=True)
    widening, plain = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][:2]
    assert widening["is_error"] and "Skill" in json.dumps(widening)
    assert not plain.get("is_error") and "Just text." in json.dumps(plain)


@pytest.mark.usefixtures("no_sandbox")
def test_an_untrusted_projects_allowed_tools_are_not_applied(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    skill(repo, "toucher", "Touch marker files", "Touch.\n", extra="allowed-tools: Bash(touch:*)\n")
    fake_server.queue(
        Reply.tool("Skill", {"skill": "toucher"}), Reply.tool("Bash", {"command": f"touch {repo}/x"}), Reply.text("ok")
    )

    async def scenario(runtime, notices):
        await turn(runtime, "go")
        return [n.text for n in notices.said("warning")]

    warnings = run(fake_server, repo, scenario)
    assert not (repo / "x").exists()
    assert any("not trusted" in w and "allowed-tools" in w for w in warnings)


def test_a_typed_command_expands_arms_its_model_and_runs_its_snippets(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    command(
        repo,
        "greet",
        "---\ndescription: Greet someone\nmodel: haiku\n---\nGreet $0 warmly. Today: !`echo SNIPPET-OUT`\n",
    )
    fake_server.queue(Reply.text("Hello!"), Reply.text("Second."))

    async def scenario(runtime, notices):
        hook = runtime.skills
        text = await hook.expand_typed(hook.catalog.find("greet"), "Alice Smith")
        await turn(runtime, text + '\n\n<attached-file path="a.md">\nA\n</attached-file>')  # as the UI sends it
        await turn(runtime, "plain turn")
        return text

    text = run(fake_server, repo, scenario, trusted=True)
    assert text.startswith(
        "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n"
        "<command-args>Alice Smith</command-args>"
    )
    assert "Greet Alice warmly. Today: SNIPPET-OUT" in text
    first, second = fake_server.requests_for("main")
    assert first.body["model"] == "claude-haiku-4-5" and second.body["model"] != "claude-haiku-4-5"


@pytest.mark.usefixtures("no_sandbox")
def test_a_snippet_that_needs_permission_stops_the_command_in_a_session_that_cannot_ask(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    command(repo, "mk", f"Made: !`touch {repo}/made`\n")

    async def scenario(runtime, notices):
        hook = runtime.skills
        with pytest.raises(ExpansionError, match="needs permission.*nothing was sent"):
            await hook.expand_typed(hook.catalog.find("mk"), "")
        return runtime.session.messages

    assert run(fake_server, repo, scenario, trusted=True) == []
    assert not (repo / "made").exists() and fake_server.requests_for("main") == []


def test_clear_lists_a_skill_added_mid_session_and_it_was_said_once(project, fake_server):
    fake_server.queue(Reply.text("one"), Reply.text("two"), Reply.text("three"))

    async def scenario(runtime, notices):
        await turn(runtime, "first")
        skill(project, "late", "Added while the session ran", "Late body.\n")
        await turn(runtime, "second")
        from claude_mini.session import Session

        runtime.switch_session(Session(project), "clear")
        await turn(runtime, "third")
        return [n.text for n in notices.said()]

    said = run(fake_server, project, scenario)
    one, two, three = (skill_tool(r.body)["description"] for r in fake_server.requests_for("main"))
    assert one == two and "- late:" not in two  # the conversation keeps its cached prefix
    assert "- late: Added while the session ran" in three
    assert sum("/late" in line and "next /clear" in line for line in said) == 1


def test_no_commands_or_skills_means_no_part_and_no_skill_tool(repo, monkeypatch):
    from tests.ui.conftest import StubClient

    runtime = build_runtime(load_config(repo), client=StubClient())
    assert runtime.skills is None and "Skill" not in runtime.agent.tools


def test_a_resumed_conversation_knows_the_skills_it_invoked():
    messages = [
        Message(
            "user", [TextBlock("<command-message>greet</command-message>\n<command-name>/greet</command-name>\n\nHi")]
        ),
        Message("assistant", [ToolUseBlock("t1", "Skill", {"skill": "/changelog"})]),
        Message(
            "user",
            [
                TextBlock(
                    "<system-reminder>\nSkills loaded earlier in this session (their text was left "
                    "out of the summary to save room): old-one, greet. If the work still needs "
                    "one, load it again with the Skill tool.\n</system-reminder>"
                )
            ],
        ),
    ]
    assert invoked_in(messages) == ["changelog", "old-one", "greet"]


def test_context_report_names_the_listing_and_the_invoked_skills(project, fake_server):
    fake_server.queue(Reply.tool("Skill", {"skill": "changelog"}), Reply.text("ok"))

    async def scenario(runtime, notices):
        await turn(runtime, "go")
        return runtime.skills.context_report()

    lines = run(fake_server, project, scenario)
    assert lines[0].startswith("Skills and custom commands: 2 (2 listed to the model in the Skill tool's description: ")
    assert lines[-1].startswith("  invoked this session: changelog (")


def test_a_command_typed_before_the_session_start_finished_runs_its_snippets(repo, fake_server, monkeypatch):
    """The REPL starts the session in the background: a command typed at once must not need it."""
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    command(repo, "now", "Branch: !`echo EARLY`\n")

    async def go():
        client = AnthropicClient(base_url=fake_server.base_url, api_key="test")
        runtime = build_runtime(load_config(repo, trust_folder=True), client=client)
        try:
            return await runtime.skills.expand_typed(runtime.skills.catalog.find("now"), "")
        finally:
            await runtime.close()

    assert asyncio.run(go()).endswith("Branch: EARLY\n")


def test_a_deny_rule_binds_however_the_model_spells_the_skill(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    skill(repo, "plain", "Only text", "PLAIN BODY\n")
    skill(repo, "folder-name", "Renamed", "RENAMED BODY\n").joinpath("SKILL.md").write_text(
        "---\nname: other-name\ndescription: Renamed\n---\nRENAMED BODY\n"
    )
    command(repo, "frontend/component", "COMPONENT BODY\n")
    calls = [("Skill", {"skill": name}) for name in ("PLAIN", "/Plain", "frontend:component", "other-name")]
    fake_server.queue(Reply.tools(calls), Reply.text("ok"))
    deny = {"permissions": {"deny": ["Skill(plain)", "Skill(component)", "Skill(folder-name)"]}}

    async def scenario(runtime, notices):
        await turn(runtime, "go")

    run(fake_server, repo, scenario, settings=deny)
    results = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][:4]
    assert all(r["is_error"] and "Permission denied" in json.dumps(r) for r in results)
    assert "BODY" not in json.dumps(results)


def test_an_alias_in_a_deny_rule_binds_the_skill_by_its_name_too(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    command(repo, "frontend/component", "COMPONENT BODY\n")
    fake_server.queue(Reply.tool("Skill", {"skill": "component"}), Reply.text("ok"))

    async def scenario(runtime, notices):
        await turn(runtime, "go")

    run(fake_server, repo, scenario, settings={"permissions": {"deny": ["Skill(frontend:component)"]}})
    result = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]
    assert result["is_error"] and "COMPONENT BODY" not in json.dumps(result)


def test_a_failed_turn_takes_its_grants_and_model_with_it(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    command(repo, "quick", "---\nmodel: haiku\nallowed-tools: Bash(touch:*)\n---\nQuick $ARGUMENTS\n")
    fake_server.queue(Reply.text("").http_error(400, message="bad request"))

    async def scenario(runtime, notices):
        from claude_mini.llm.protocol import ModelError

        hook = runtime.skills
        text = await hook.expand_typed(hook.catalog.find("quick"), "a")
        with pytest.raises(ModelError):
            await turn(runtime, text)
        return runtime.agent.model, [r.text for r in runtime.policy.allow_rules]

    model, rules = run(fake_server, repo, scenario, trusted=True)
    assert fake_server.requests_for("main")[0].body["model"] == "claude-haiku-4-5"
    assert model != "claude-haiku-4-5" and "Bash(touch:*)" not in rules


def test_a_prompt_a_hook_refuses_takes_its_grants_with_it(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    command(repo, "slow", "---\nallowed-tools: Bash(sleep:*)\n---\nSlow\n")
    hooks = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo no >&2; exit 2"}]}]}}

    async def scenario(runtime, notices):
        from claude_mini.agent.loop import PromptBlocked

        hook = runtime.skills
        text = await hook.expand_typed(hook.catalog.find("slow"), "")
        with pytest.raises(PromptBlocked):
            await turn(runtime, text)
        return [r.text for r in runtime.policy.allow_rules]

    assert "Bash(sleep:*)" not in run(fake_server, repo, scenario, trusted=True, settings=hooks)


def test_a_snippet_is_vetted_by_the_users_pre_tool_use_hooks(repo, fake_server, monkeypatch, isolated_env):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    (isolated_env.home / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo NO BASH >&2; exit 2"}]}
                    ]
                }
            }
        )
    )
    command(repo, "branch", "Branch: !`git branch --show-current`\n")

    async def scenario(runtime, notices):
        with pytest.raises(ExpansionError, match="NO BASH"):
            await runtime.skills.expand_typed(runtime.skills.catalog.find("branch"), "")

    run(fake_server, repo, scenario, trusted=True)
    assert fake_server.requests_for("main") == []


def test_after_compaction_a_typed_skill_is_its_name_not_its_body(project, fake_server):
    fake_server.queue(Reply.text("Notes drafted."), Reply.text("Next."))
    fake_server.on(Reply.text("<summary>SUMMARY</summary>"), purpose="compact")

    async def scenario(runtime, notices):
        hook = runtime.skills
        await turn(runtime, await hook.expand_typed(hook.catalog.find("release-notes"), "2.3"))
        await runtime.compactor.compact()
        await turn(runtime, "go on")

    run(fake_server, project, scenario)
    sent = json.dumps(fake_server.requests_for("main")[-1].body["messages"])
    assert "house style" not in sent
    assert "<command-name>/release-notes</command-name>" in sent and "release-notes" in sent.split("Skills loaded")[1]


def test_plan_mode_loads_a_skill(project, fake_server):
    fake_server.queue(Reply.tool("Skill", {"skill": "changelog", "args": None}), Reply.text("ok"))

    async def scenario(runtime, notices):
        runtime.policy.mode = "plan"
        await turn(runtime, "plan the changelog")

    run(fake_server, project, scenario)
    result = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]
    assert not result.get("is_error") and "by component" in json.dumps(result)


def test_a_failed_skill_call_does_not_count_as_invoked():
    from claude_mini.llm.messages import ToolResultBlock

    messages = [
        Message(
            "assistant",
            [ToolUseBlock("t1", "Skill", {"skill": "nosuch"}), ToolUseBlock("t2", "Skill", {"skill": "real"})],
        ),
        Message(
            "user", [ToolResultBlock("t1", "Unknown skill: nosuch.", is_error=True), ToolResultBlock("t2", "REAL BODY")]
        ),
    ]
    assert invoked_in(messages) == ["real"]


def test_many_bad_files_are_said_up_to_ten_lines_and_a_pointer(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    for i in range(15):
        (repo / ".claude" / "skills" / f"empty{i:02d}").mkdir(parents=True)
    skill(repo, "ok", "Fine", "Fine.\n")

    async def scenario(runtime, notices):
        return [n.text for n in notices.said("warning")]

    warnings = run(fake_server, repo, scenario)
    assert sum("has no SKILL.md" in w for w in warnings) == 10
    assert any("and 5 more problems" in w and "context --lint" in w for w in warnings)


def test_a_file_that_would_not_load_is_not_said_to_be_new(project, fake_server):
    (project / ".claude" / "skills" / "binary").mkdir()
    (project / ".claude" / "skills" / "binary" / "SKILL.md").write_bytes(b"\0\0binary")
    fake_server.queue(Reply.text("one"))

    async def scenario(runtime, notices):
        await turn(runtime, "first")
        return [n.text for n in notices.said()]

    said = run(fake_server, project, scenario)
    assert not any("New since this conversation started" in line for line in said)
    assert any("binary" in line and "is binary" in line for line in said)


def test_an_untrusted_projects_command_does_not_pick_the_model(repo, fake_server, monkeypatch):
    """Cost: as an untrusted repository's `model` setting is ignored, so is its
    command's `model:` frontmatter; the session's model answers."""
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    command(repo, "big", "---\ndescription: Think hard\nmodel: opus\n---\nThink about $1.\n")
    fake_server.queue(Reply.text("Thought."))

    async def scenario(runtime, notices):
        hook = runtime.skills
        await turn(runtime, await hook.expand_typed(hook.catalog.find("big"), "it"))

    run(fake_server, repo, scenario)
    [request] = fake_server.requests_for("main")
    assert "opus" not in request.body["model"]
