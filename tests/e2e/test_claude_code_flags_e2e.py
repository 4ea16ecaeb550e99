"""End to end: the flags and files a Claude Code user already has, through the real CLI.

`--verbose`, `--system-prompt`, `--settings`, `--mcp-config`, `--input-format stream-json`,
`-r` without an id, the model aliases, and Claude Code's user folder (CLAUDE_CONFIG_DIR, the
conftest points it at a fresh folder) read below claude-mini's own files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.conftest import MCP_CONNECT_WAIT_MS, json_lines
from tests.fake_anthropic import Reply

DEMO = str(Path(__file__).resolve().parents[1] / "mcp_servers" / "demo_server.py")
NO_MEMORY = {"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}


def system_texts(request) -> list[str]:
    return [block["text"] for block in request.body["system"]]


def test_a_claude_code_stream_json_script_runs_unchanged(run_cli, fake_server):
    """`-p --output-format stream-json --verbose`: Claude Code requires --verbose there; it is accepted."""
    result = run_cli("-p", "--output-format", "stream-json", "--verbose", "hello", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    assert [(line["type"], line.get("subtype")) for line in lines] == [
        ("system", "init"),
        ("user", None),
        ("assistant", None),
        ("result", "success"),
    ]
    assert lines[0]["mcp_servers"] == [] and "Read" in lines[0]["tools"]


def test_verbose_text_output_lists_each_tool_call_on_stderr(run_cli, fake_server, repo):
    fake_server.queue(Reply.tool("Read", {"file_path": str(repo / "app.py")}), Reply.text("It greets."))
    result = run_cli("-p", "--verbose", "what does app.py do", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It greets.\n"
    assert f'claude-mini: Read {{"file_path": "{repo / "app.py"}"}}' in result.stderr


def test_system_prompt_replaces_the_built_in_instructions_but_keeps_claude_md(run_cli, fake_server, repo):
    (repo / "CLAUDE.md").write_text("Use tabs.\n")
    result = run_cli("-p", "--system-prompt", "You are a pirate.", "--append-system-prompt", "Be brief.", "hi")
    assert result.returncode == 0, result.stderr
    texts = system_texts(fake_server.requests_for("main")[0])
    assert texts[0] == "You are a pirate." and texts[-1] == "Be brief."
    assert any("Use tabs." in text for text in texts)
    assert not any("claude-mini" in text.split("\n")[0] for text in texts[:1])


def test_settings_flag_takes_a_file_or_json_and_sits_above_the_project_files(run_cli, fake_server, repo, tmp_path):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"model": "claude-sonnet-4-5"}))
    extra = tmp_path / "ci-settings.json"
    extra.write_text(json.dumps({"model": "opus"}))
    assert run_cli("-p", "--settings", str(extra), "hi").returncode == 0
    assert run_cli("-p", "--settings", '{"model": "haiku"}', "hi").returncode == 0
    assert [r.body["model"] for r in fake_server.requests_for("main")] == ["claude-opus-4-6", "claude-haiku-4-5"]


def test_a_bad_settings_or_mcp_config_value_is_one_line_and_status_2(run_cli, fake_server, tmp_path):
    broken = run_cli("-p", "--settings", '{"model": ', "hi")
    missing = run_cli("-p", "--mcp-config", str(tmp_path / "nope.json"), "--", "hi")
    shapeless = run_cli("-p", "--mcp-config", '{"servers": {}}', "--", "hi")
    assert [r.returncode for r in (broken, missing, shapeless)] == [2, 2, 2]
    assert broken.stderr == (
        "claude-mini: --settings JSON is not valid JSON (line 1: Expecting value). "
        "Nothing was started; fix it and run again.\n"
    )
    assert "nope.json: No such file or directory" in missing.stderr
    assert 'has no "mcpServers" object' in shapeless.stderr
    assert fake_server.requests_for("main") == []


def test_mcp_config_servers_start_without_approval_and_init_lists_them(run_cli, fake_server, tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": [DEMO]}}}))
    broken = json.dumps({"mcpServers": {"gone": {"command": str(tmp_path / "no-such-program")}}})
    result = run_cli(
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--mcp-config",
        str(config),
        broken,
        "--",
        "hi",
        env={**NO_MEMORY, "MCP_TIMEOUT": str(MCP_CONNECT_WAIT_MS)},
    )
    assert result.returncode == 0, result.stderr
    init = json_lines(result.stdout)[0]
    assert init["mcp_servers"] == [{"name": "demo", "status": "connected"}, {"name": "gone", "status": "failed"}]
    assert "mcp__demo__add" in init["tools"]
    sent = [tool["name"] for tool in fake_server.requests_for("main")[0].body["tools"]]
    assert sent == init["tools"]


def test_strict_mcp_config_leaves_the_user_servers_out(run_cli, fake_server, isolated_env):
    (isolated_env.home / "settings.json").write_text(
        json.dumps({"mcpServers": {"mine": {"command": sys.executable, "args": [DEMO]}}})
    )
    result = run_cli(
        "-p", "--output-format", "stream-json", "--strict-mcp-config", "--mcp-config", '{"mcpServers": {}}', "--", "hi"
    )
    assert result.returncode == 0, result.stderr
    assert json_lines(result.stdout)[0]["mcp_servers"] == []


def test_stream_json_input_runs_each_user_message_as_a_turn_of_one_session(run_cli, fake_server):
    messages = [
        {"type": "user", "message": {"role": "user", "content": "first"}},
        "not json",
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "second"}]}},
    ]
    stdin = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages)
    result = run_cli(
        "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", input=stdin, env=NO_MEMORY
    )
    assert result.returncode == 1  # a line was skipped
    assert "claude-mini: stdin line skipped: not JSON" in result.stderr
    lines = json_lines(result.stdout)
    results = [line for line in lines if line["type"] == "result"]
    assert [r["result"] for r in results] == ["(fake model) You said: first", "(fake model) You said: second"]
    assert len({line["session_id"] for line in lines}) == 1 and lines[0]["subtype"] == "init"
    second = fake_server.requests_for("main")[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]  # the first turn is its history


def test_stream_json_input_needs_stream_json_output(run_cli, fake_server):
    result = run_cli("-p", "--input-format", "stream-json", input="{}\n")
    assert result.returncode == 2
    assert result.stderr == (
        "claude-mini: --input-format stream-json needs -p and --output-format stream-json, as in Claude Code.\n"
    )


def test_resume_without_an_id_does_not_swallow_print(run_cli, fake_server):
    for args in (["-r", "-p", "hi"], ["-p", "hi", "--resume"]):
        result = run_cli(*args)
        assert result.returncode == 2
        assert "-r/--resume without an id opens a picker" in result.stderr
    assert fake_server.requests_for("main") == []


def test_model_aliases_map_to_current_ids(run_cli, fake_server):
    for alias in ("opus", "Sonnet", "haiku"):
        assert run_cli("-p", "--model", alias, "hi", env=NO_MEMORY).returncode == 0
    assert [r.body["model"] for r in fake_server.requests_for("main")] == [
        "claude-opus-4-6",
        "claude-sonnet-4-6",
        "claude-haiku-4-5",
    ]


def test_claude_code_user_folder_is_read_below_claude_minis_own(run_cli, fake_server, isolated_env):
    cc = isolated_env.claude_code
    (cc / "commands").mkdir(parents=True)
    (cc / "CLAUDE.md").write_text("From Claude Code's CLAUDE.md.\n")
    (cc / "commands" / "hi.md").write_text("---\ndescription: Say hi\n---\nSay hi to $ARGUMENTS\n")
    (cc / "settings.json").write_text(json.dumps({"model": "haiku", "permissions": {"allow": ["Bash(echo:*)"]}}))
    (isolated_env.home / "CLAUDE.md").write_text("From claude-mini's CLAUDE.md.\n")
    result = run_cli("-p", "/hi Bob", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    request = fake_server.requests_for("main")[0]
    assert request.body["model"] == "claude-haiku-4-5"
    prompt = "\n".join(system_texts(request))
    assert f"Contents of {cc / 'CLAUDE.md'} (user, Claude Code's)" in prompt
    assert prompt.index("From Claude Code's") < prompt.index("From claude-mini's")
    assert "Say hi to Bob" in json.dumps(request.body["messages"])
    context = run_cli("context")
    assert "(user, Claude Code's" in context.stdout and "hi.md" in context.stdout


def test_use_claude_code_home_false_turns_the_folder_off(run_cli, fake_server, isolated_env):
    cc = isolated_env.claude_code
    cc.mkdir(parents=True)
    (cc / "CLAUDE.md").write_text("From Claude Code's CLAUDE.md.\n")
    (cc / "settings.json").write_text(json.dumps({"model": "haiku"}))
    (isolated_env.home / "settings.json").write_text(json.dumps({"useClaudeCodeHome": False}))
    assert run_cli("-p", "hi", env=NO_MEMORY).returncode == 0
    request = fake_server.requests_for("main")[0]
    assert request.body["model"] == "claude-sonnet-4-6"
    assert "From Claude Code's" not in json.dumps(request.body["system"])
