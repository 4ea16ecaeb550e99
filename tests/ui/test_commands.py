"""Slash commands, each run through the registry against a real runtime (no network)."""

from __future__ import annotations

import asyncio
import json

import pytest

from claude_mini.command_table import CommandTable, builtin_table, discover
from claude_mini.llm.messages import Message, Usage
from claude_mini.session import Session
from claude_mini.ui import commands, init_commands
from claude_mini.ui.commands import command, is_command, unknown_hint
from claude_mini.ui.status_line import next_mode


def test_help_lists_every_command_with_its_help(slash):
    out = slash.run("/help")
    for name in (
        "help",
        "clear",
        "exit",
        "model",
        "cost",
        "context",
        "resume",
        "status",
        "config",
        "init",
        "permissions",
    ):
        assert f"/{name}" in out
        assert builtin_table().find(name).help in out
    assert "Shift-Tab" in out


def test_unknown_command_suggests_the_closest(slash):
    assert slash.run("/hlep").strip() == "Unknown command /hlep. Did you mean /help?"
    assert "Type /help for the list." in slash.run("/zzzzzz")
    assert unknown_hint("contxt", builtin_table()) == "Unknown command /contxt. Did you mean /context?"


def test_unique_prefix_runs_the_command(slash):
    assert "purpose" in slash.run("/cos")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/help", True),
        ("  /cost  ", True),
        ("/permissions allow Edit", True),
        ("/usr/bin/python is broken", False),
        ("hello /help", False),
        ("/", False),
        ("", False),
    ],
)
def test_what_counts_as_a_command(text, expected):
    assert is_command(text, builtin_table()) is expected


def test_a_registered_name_with_a_dot_or_a_leading_digit_is_a_command():
    table = CommandTable()
    assert not is_command("/v1.2-notes draft", table)
    table.put("skills", [commands.Command("v1.2-notes", "notes", lambda ctx: None)])
    assert is_command("/v1.2-notes draft", table) and not is_command("/1.5x faster", table)


def test_a_crashing_command_prints_one_line_and_returns(slash):
    @command("boom-test", help="Always fails.")
    def boom(ctx):
        raise RuntimeError("kaput\nsecond line")

    slash.runtime.commands.put("test", [boom])
    out = slash.run("/boom-test")
    assert out.strip() == "✗ /boom-test failed: RuntimeError: kaput second line. The session is unchanged."


def test_exit_asks_the_host_to_stop(slash):
    slash.run("/exit")
    assert slash.host.exited


def test_cost_splits_by_purpose(slash):
    costs = slash.runtime.session.costs
    costs.add("main", "claude-sonnet-4-6", Usage(input_tokens=1000, output_tokens=500))
    costs.add("main", "claude-sonnet-4-6", Usage(cache_read_input_tokens=2000))
    costs.add("extract", "claude-haiku-4-5", Usage(input_tokens=300, output_tokens=40))
    out = slash.run("/cost")
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:]}
    assert rows["main"][:2] == ["main", "2"] and rows["main"][2] == "1,000"
    assert rows["main"][-1] == f"${costs.by_purpose['main'].cost_usd:.4f}"
    assert rows["extract"][1] == "1" and rows["recall"][2] == "-"
    assert rows["total"][1] == "3" and rows["total"][-1] == f"${costs.total_cost:.4f}"


def test_cost_says_when_the_model_has_no_price(slash):
    slash.runtime.agent.model = "qwen2.5-coder"
    assert "no price known for qwen2.5-coder" in slash.run("/cost")


def test_cost_is_unknown_for_api_requests_to_an_unpriced_model_after_switching_to_the_offline_one(slash):
    from pathlib import Path

    from claude_mini.llm.local import LocalClient
    from claude_mini.ui.status_line import cost_text

    rt, api = slash.runtime, slash.runtime.client
    rt.session.costs.add("main", "qwen3-coder", Usage(input_tokens=100))  # an API model with no price
    rt.switch_client(LocalClient(Path("SmolLM2.gguf")))  # /model local
    rt.session.costs.add("extract", "SmolLM2", Usage(input_tokens=100))
    rows = {line.split()[0]: line.split() for line in slash.run("/cost").splitlines()[2:]}
    assert rows["main"][-1] == "?" and rows["total"][-1] == "?" and rows["extract"][-1] == "$0.0000"
    assert cost_text(rt) == "cost unknown"
    rt.switch_client(api)  # and back to the API: the offline model's requests stay free
    rt.session.costs.by_purpose.pop("main")
    assert "$0.0000" in slash.run("/cost").splitlines()[-1] and cost_text(rt) == "$0.0000"


def test_context_shows_sections_instructions_and_messages(slash, repo):
    rt = slash.runtime
    rt.session.add_message(Message.user("hello"))
    rt.agent.last_usage = Usage(input_tokens=3000, output_tokens=1000)
    out = slash.run("/context")
    assert "Context: 4,000 of 200,000 tokens (2%)" in out
    assert "System prompt (" in out and "identity" in out and "environment" in out
    assert "Instruction files" in out
    assert f"Tools: {len(rt.agent.tools)} definitions" in out
    assert "Messages: 1 (1 user, 0 assistant" in out


def test_context_window_comes_from_settings(slash, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"contextWindow": 8000}))
    from claude_mini.config import load_config

    slash.runtime.config = load_config(repo, trust_folder=True)  # untrusted, contextWindow is ignored
    slash.runtime.agent.last_usage = Usage(input_tokens=2000)
    assert "2,000 of 8,000 tokens (25%)" in slash.run("/context")


def test_clear_starts_a_new_session_and_rebuilds_the_prompt(slash, repo):
    rt = slash.runtime
    old = rt.session
    old.add_message(Message.user("first"))
    rt.agent.last_usage = Usage(input_tokens=10)
    (repo / "CLAUDE.md").write_text("Always answer in French.\n")
    out = slash.run("/clear")
    assert rt.session is not old and rt.agent.session is rt.session
    assert rt.session.messages == [] and rt.agent.last_usage == Usage()
    assert any("Always answer in French." in block for block in rt.agent.system)
    assert old.id in out and "/resume" in out
    assert slash.host.changes == 1


def test_clear_gives_the_memory_layers_the_new_session(slash):
    from claude_mini.memory.recall.part import RecallPart

    rt = slash.runtime
    rt.session.add_message(Message.user("first"))
    rt.compactor.count, rt.compactor.failures = 2, 3  # the breaker is open
    assert not rt.compactor.auto_enabled
    recall = rt.lifecycle.find(RecallPart)
    recall.engine._said.add("memory recall fell back to lexical search")
    slash.run("/clear")
    assert (rt.compactor.count, rt.compactor.failures) == (0, 0) and rt.compactor.auto_enabled
    assert rt.extractor.engine.session is rt.session and rt.extractor.cursor == 0
    assert recall.engine.session is rt.session and recall.engine._said == set() and recall.events == []


def test_model_shows_and_switches(slash):
    assert "Model: claude-sonnet-4-6" in slash.run("/model")
    out = slash.run("/model claude-opus-4-5")
    assert slash.runtime.agent.model == "claude-opus-4-5" == slash.runtime.config.model
    assert "claude-opus-4-5" in out


def test_model_aliases_switch_to_their_current_ids_and_show_in_model(slash):
    out = slash.run("/model opus")
    assert slash.runtime.agent.model == "claude-opus-4-6" and "Model set to claude-opus-4-6" in out
    assert "not a Claude model" not in out
    assert "Model: claude-opus-4-6 (opus) (side model: claude-haiku-4-5)" in slash.run("/model")


def test_model_without_a_name_offers_the_aliases_to_pick(slash):
    slash.run("/model")  # the picker answered None: nothing changes
    assert slash.runtime.agent.model == "claude-sonnet-4-6"
    [rows] = slash.host.choices
    assert rows == [
        ("claude-sonnet-4-6", "keep claude-sonnet-4-6"),
        ("claude-haiku-4-5", "haiku   claude-haiku-4-5"),
        ("claude-opus-4-6", "opus    claude-opus-4-6"),
    ]
    slash.host.choice = "claude-haiku-4-5"
    assert "Model set to claude-haiku-4-5" in slash.run("/model")
    assert slash.runtime.agent.model == "claude-haiku-4-5"


def test_model_keeps_the_old_client_open_until_the_session_ends(slash, monkeypatch):
    """A fork started on the old client (a background extraction) may still be streaming."""
    closed = []
    old = slash.runtime.client
    old.provider = "local"  # leaving the offline model for the API makes a new client
    old.aclose = lambda: closed.append(old) or asyncio.sleep(0)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    assert "Model set to claude-opus-4-5" in slash.run("/model claude-opus-4-5")
    new = slash.runtime.client
    assert new is not old and slash.runtime.agent.client is new
    assert closed == []
    asyncio.run(slash.runtime.close())
    assert closed == [old]


def _saved_session(repo, text: str) -> Session:
    session = Session(repo)
    session.add_message(Message.user(text))
    session.add_message(Message("assistant", [*Message.user("ok").content]))
    return session


def test_resume_picks_from_a_list(slash, repo):
    earlier = _saved_session(repo, "fix the parser")
    slash.host.choice = earlier.id
    out = slash.run("/resume")
    [options] = slash.host.choices
    assert [value for value, _ in options] == [earlier.id]
    assert "fix the parser" in options[0][1] and "2 msgs" in options[0][1]
    assert slash.runtime.session.id == earlier.id and len(slash.runtime.agent.session.messages) == 2
    assert f"Resumed session {earlier.id}" in out


def test_resume_by_number_and_cancel(slash, repo):
    earlier = _saved_session(repo, "one")
    assert "Nothing resumed." in slash.run("/resume")  # the host's menu was cancelled
    slash.run("/resume 1")
    assert slash.runtime.session.id == earlier.id
    assert "No earlier session" in slash.run("/resume")  # the only other one is the current one now


def test_status_names_endpoint_home_and_settings_files(slash, repo, isolated_env, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9999")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "secret-value")
    (isolated_env.home / "settings.json").write_text("{}")
    out = slash.run("/status", width=300)
    assert "claude-mini 0.1.0" in out and "anthropic" in out
    assert "http://127.0.0.1:9999" in out
    assert "ANTHROPIC_API_KEY is set" in out and "secret-value" not in out
    assert f"Home folder:  {isolated_env.home}" in out
    assert f"{repo / '.claude' / 'settings.json'}  [not found]" in out
    assert f"{isolated_env.home / 'settings.json'}  [present, not used" in out  # empty: no layer


def test_config_shows_each_setting_with_its_origin(slash, repo):
    (repo / ".claude").mkdir()
    settings = repo / ".claude" / "settings.json"
    settings.write_text(json.dumps({"model": "claude-haiku-4-5", "recall": {"strategy": "lexical"}}))
    from claude_mini.config import load_config

    slash.runtime.config = load_config(repo, trust_folder=True)  # untrusted, both keys are ignored
    out = slash.run("/config", width=300)
    lines = [line.split() for line in out.splitlines()]
    assert ["model", "=", '"claude-haiku-4-5"', "<-", str(settings)] in lines
    assert ["recall.strategy", "=", '"lexical"', "<-", str(settings)] in lines
    assert ["model", "claude-haiku-4-5"] in lines  # the resolved value


def test_config_without_settings(slash):
    assert "(no settings files: defaults in effect)" in slash.run("/config")


def test_init_runs_a_turn_with_the_fixed_prompt(slash):
    slash.run("/init")
    assert slash.host.turns == [init_commands.INIT_PROMPT]
    assert "CLAUDE.md" in init_commands.INIT_PROMPT


def test_init_asks_to_improve_an_existing_claude_md_in_place(slash):
    existing = slash.runtime.config.project_root / "CLAUDE.md"
    existing.write_text("# CLAUDE.md\nRun tests with pytest.\n")
    slash.run("/init")
    [turn] = slash.host.turns
    assert f"already has a CLAUDE.md at {existing}" in turn and "improve that file in place" in turn


def test_permissions_lists_rules_with_sources(slash):
    out = slash.run("/permissions")
    assert "Permission mode: default" in out and "Allow rules:" in out and "/permissions allow" in out


@pytest.mark.usefixtures("no_sandbox")
def test_permissions_add_and_remove_session_rules(slash):
    policy = slash.runtime.policy
    assert "Added allow rule Bash(npm test:*) for this session" in slash.run(
        "/permissions allow session Bash(npm test:*)"
    )
    assert policy.can_use_tool("Bash", {"command": "npm test --watch"}).__class__.__name__ == "Allow"
    assert "Removed the session rule Bash(npm test:*)" in slash.run("/permissions remove Bash(npm test:*)")
    assert slash.runtime.agent.policy.can_use_tool("Bash", {"command": "npm test"}).__class__.__name__ == "Ask"
    assert "No rule Edit" in slash.run("/permissions remove Edit")


def test_permissions_remove_edits_the_settings_file_and_keeps_managed_rules(slash, repo, isolated_env):
    (repo / ".claude").mkdir()
    project = repo / ".claude" / "settings.json"
    project.write_text(
        json.dumps({"model": "claude-haiku-4-5", "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Read"]}})
    )
    (isolated_env.managed / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(curl:*)"]}}))
    from claude_mini.config import load_config
    from claude_mini.runtime import make_policy

    slash.runtime.config = load_config(repo, trust_folder=True)
    slash.runtime.policy = slash.runtime.agent.policy = make_policy(slash.runtime.config, slash.runtime.agent.ctx)
    out = slash.run("/permissions remove Bash(rm:*)", width=300)
    assert f"Removed Bash(rm:*) from {project} (permissions.deny)." in out
    assert json.loads(project.read_text()) == {
        "model": "claude-haiku-4-5",
        "permissions": {"deny": [], "allow": ["Read"]},
    }
    assert "Bash(rm:*)" not in slash.run("/permissions", width=300)
    assert slash.runtime.policy.can_use_tool("Bash", {"command": "rm -rf x"}).__class__.__name__ == "Ask"
    assert "Bash(rm:*)" not in json.dumps(slash.runtime.config.settings)  # /config agrees
    out = slash.run("/permissions remove Bash(curl:*)", width=300)
    assert "Kept managed rule Bash(curl:*)" in out and "administrator" in out
    assert slash.runtime.policy.can_use_tool("Bash", {"command": "curl x"}).__class__.__name__ == "Deny"


def test_permissions_remove_leaves_a_broken_file_alone(slash, repo):
    (repo / ".claude").mkdir()
    project = repo / ".claude" / "settings.json"
    project.write_text(json.dumps({"permissions": {"allow": ["Read"]}}))
    from claude_mini.config import load_config
    from claude_mini.runtime import make_policy

    slash.runtime.config = load_config(repo, trust_folder=True)
    slash.runtime.policy = slash.runtime.agent.policy = make_policy(slash.runtime.config, slash.runtime.agent.ctx)
    project.write_text("{broken")
    out = slash.run("/permissions remove Read", width=300)
    assert "Not changed:" in out and "is not valid JSON" in out and "left unchanged" in out
    assert project.read_text() == "{broken"
    assert any(r.text == "Read" for r in slash.runtime.policy.allow_rules)


def test_permissions_mode_and_bad_input(slash):
    assert "Permission mode: plan" in slash.run("/permissions mode plan")
    assert slash.runtime.policy.mode == "plan"
    assert "Permission mode: default" in slash.run("/permissions mode")  # cycles, bypass left out
    assert "Not changed: bypassPermissions is available only" in slash.run("/permissions mode bypassPermissions")
    assert "Not changed: unknown permission mode" in slash.run("/permissions mode sideways")
    assert "Not changed" in slash.run("/permissions allow Bash(unclosed")
    assert "Usage: /permissions" in slash.run("/permissions frobnicate")


def test_next_mode_cycles():
    modes = ("default", "acceptEdits", "plan")
    assert [next_mode(m, modes) for m in modes] == ["acceptEdits", "plan", "default"]
    assert next_mode("bypassPermissions", modes) == "default"


def test_discovery_imports_command_modules_and_reports_broken_ones(tmp_path, monkeypatch):
    package = tmp_path / "plugpkg"
    (package / "memory").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "memory" / "__init__.py").write_text("")
    (package / "memory" / "memory_commands.py").write_text(
        "from claude_mini.ui.commands import command\n"
        "@command('memory-test', help='Open the memory files.', needs_runtime=False)\n"
        "def memory(ctx):\n    ctx.console.print('memory!')\n"
    )
    (package / "broken_commands.py").write_text("raise ImportError('missing dependency')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = discover(package, "plugpkg")
    assert "memory-test" in [c.name for c in found.commands]
    assert found.problems == (
        "Slash commands in plugpkg.broken_commands are unavailable: ImportError: missing dependency",
    )
    assert discover(package, "plugpkg") is found  # imported once
    assert "memory-test" not in builtin_table()  # another package's commands are not claude-mini's


def test_context_includes_what_memory_hooks_report(slash):
    from claude_mini.agent.lifecycle import Lifecycle, Part

    class Hook(Part):
        def context_report(self):
            return ["Recalled memories (strategy test): 1 in the context", "  tabs.md  120 bytes"]

    runtime = slash.runtime
    runtime.agent.lifecycle = Lifecycle([*runtime.lifecycle.parts, Hook()])
    out = slash.run("/context")
    assert "Recalled memories (strategy test): 1 in the context\n  tabs.md  120 bytes" in out


def test_permissions_remove_reports_each_file_and_keeps_the_rule_of_the_one_it_could_not_change(
    slash, repo, isolated_env
):
    from claude_mini.base import paths
    from claude_mini.config import load_config
    from claude_mini.runtime import make_policy

    user = paths.home_dir() / "settings.json"
    project = repo / ".claude" / "settings.json"
    project.parent.mkdir()
    for path in (user, project):
        path.write_text(json.dumps({"permissions": {"allow": ["Read", "Bash(ls)"]}}))
    slash.runtime.config = load_config(repo, trust_folder=True)
    slash.runtime.policy = slash.runtime.agent.policy = make_policy(slash.runtime.config, slash.runtime.agent.ctx)
    project.write_text("{broken")
    out = slash.run("/permissions remove Bash(ls)", width=300)
    assert f"Removed Bash(ls) from {user} (permissions.allow)." in out
    assert f"Not changed: {project} is not valid JSON" in out
    assert json.loads(user.read_text()) == {"permissions": {"allow": ["Read"]}}
    assert project.read_text() == "{broken"
    assert [r.origin for r in slash.runtime.policy.allow_rules if r.text == "Bash(ls)"] == [str(project)]


def test_repl_texts_name_the_slash_command_not_the_cli_one():
    assert (
        commands.repl_wording("`claude-mini memory restore a.md` brings it back")
        == "`/memory restore a.md` brings it back"
    )
    assert commands.repl_wording("see claude-mini hooks list and claude-mini mcp list") == "see /hooks and /mcp"
    assert commands.repl_wording("claude-mini context --lint") == "claude-mini context --lint"  # no such slash form
