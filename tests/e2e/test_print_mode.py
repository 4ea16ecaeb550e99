"""End to end: `claude-mini -p` through the real SDK against the fake server."""

from __future__ import annotations

import json

from claude_mini.tools.registry import TOOL_NAMES
from tests.e2e.conftest import json_lines
from tests.fake_anthropic import Reply


def test_multi_tool_turn_changes_files_on_disk(run_cli, fake_server, repo):
    fake_server.queue(
        Reply.tool("Glob", {"pattern": "**/*.py"}),
        Reply.tool("Read", {"file_path": "app.py"}),
        Reply.tool("Edit", {"file_path": "app.py", "old_string": '"hello"', "new_string": '"hello, world"'}),
        Reply.tool("Bash", {"command": "python -c 'import app; print(app.greet())'"}),
        Reply.text("Changed the greeting; it now prints hello, world."),
    )
    result = run_cli(
        "-p", "change the greeting", "--permission-mode", "acceptEdits", "--allowedTools", "Bash(python:*)"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Changed the greeting; it now prints hello, world."
    assert (repo / "app.py").read_text() == 'def greet():\n    return "hello, world"\n'
    main = fake_server.requests_for("main")
    assert len(main) == 5
    results = [b for b in main[-1].body["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert "hello, world" in results[0]["content"] and not results[0].get("is_error")
    glob_result = main[1].body["messages"][-1]["content"][0]
    assert "app.py" in glob_result["content"]


def test_json_output_fields(run_cli, fake_server):
    fake_server.queue(Reply.text("The answer is 42."))
    result = run_cli("-p", "what is the answer?", "--output-format", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["type"] == "result" and out["subtype"] == "success" and out["is_error"] is False
    assert out["result"] == "The answer is 42."
    assert out["num_turns"] == 1 and isinstance(out["duration_ms"], int)
    assert out["total_cost_usd"] > 0 and len(out["session_id"]) == 36
    assert out["usage"]["output_tokens"] > 0
    assert set(out["usage"]) >= {"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}


def test_json_total_cost_counts_the_extraction_after_the_turn(run_cli, fake_server):
    from claude_mini.llm.messages import Usage
    from claude_mini.llm.pricing import cost_usd

    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    fake_server.queue(Reply.text("The answer is 42."))
    result = run_cli("-p", "remember that the answer is 42", "--output-format", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    purposes = [r.purpose for r in fake_server.requests if r.usage]
    assert purposes == ["main", "extract"]
    expected = sum(cost_usd(r.body["model"], Usage(**r.usage)) for r in fake_server.requests if r.usage)
    assert abs(out["total_cost_usd"] - expected) < 1e-6


def test_stream_json_lines(run_cli, fake_server):
    fake_server.queue(Reply.tool("Read", {"file_path": "README.md"}), Reply.text("It is a demo."))
    result = run_cli("-p", "read the readme", "--output-format", "stream-json")
    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    assert lines[0]["type"] == "system" and lines[0]["subtype"] == "init"
    # the built-ins in their fixed order; WebSearch is not offered on the fake server
    assert lines[0]["tools"] == [*(n for n in TOOL_NAMES if n != "WebSearch"), "Agent"]
    kinds = [line["type"] for line in lines]
    assert kinds == ["system", "user", "assistant", "user", "assistant", "result"]
    assert lines[2]["message"]["content"][0]["name"] == "Read"
    assert lines[3]["message"]["content"][0]["type"] == "tool_result"
    assert "# demo" in lines[3]["message"]["content"][0]["content"]
    assert lines[-1]["result"] == "It is a demo." and lines[-1]["num_turns"] == 2
    assert all(line["session_id"] == lines[0]["session_id"] for line in lines)


def test_prompt_on_stdin(run_cli, fake_server):
    fake_server.queue(Reply.text("from stdin"))
    result = run_cli("-p", input="summarise this\n")
    assert result.returncode == 0 and result.stdout.strip() == "from stdin"
    assert fake_server.requests_for("main")[0].last_user_text.startswith("summarise this")


def test_request_carries_purpose_header_and_cache_breakpoints(run_cli, fake_server):
    run_cli("-p", "hi")
    request = fake_server.requests_for("main")[0]
    assert request.headers["x-claude-mini-purpose"] == "main"
    body = request.body
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_usage_errors_exit_2(run_cli):
    assert run_cli("-p", "x", "--output-format", "yaml").returncode == 2
    assert run_cli("--no-such-flag").returncode == 2
    assert run_cli("-p", "x", "--permission-mode", "yolo").returncode == 2
    result = run_cli("-p")
    assert result.returncode == 2 and "no prompt" in result.stderr


BLOCK_LLAMA = """
import sys

class _NoLocalModel:
    def find_spec(self, name, path=None, target=None):
        if name == "llama_cpp":
            raise ModuleNotFoundError("llama_cpp is blocked for this test")
        return None

sys.meta_path.insert(0, _NoLocalModel())
"""


def test_no_credentials_names_the_ways(run_cli, tmp_path):
    """No key, no base URL and no local model (llama_cpp hidden from the process)."""
    (tmp_path / "sitecustomize.py").write_text(BLOCK_LLAMA)
    result = run_cli("-p", "hi", env={"ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY": "", "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 1
    assert "ANTHROPIC_API_KEY" in result.stderr and "ANTHROPIC_BASE_URL" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_version_is_fast_path(run_cli):
    result = run_cli("--version")
    assert result.returncode == 0 and "claude-mini" in result.stdout
