"""Local Anthropic-compatible servers (Ollama, llama-server, vLLM, LM Studio) through ANTHROPIC_BASE_URL.

The fake server's `ollama_like` mode behaves like Ollama's /v1/messages: it rejects
`output_config` (400), has no /v1/messages/count_tokens (404), reports no cache
fields and has no in-stream error events (a failing stream just stops). The real
CLI must get through a whole turn, recall included, on such a server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import cli_env
from tests.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.e2e  # each test runs the real CLI against the fake server

LONG = "The greeting function returns the word hello, nothing else happens in this file."
QUERY = "how do I deploy the billing service to staging?"


def run_cli(server: FakeAnthropic, isolated_env, repo: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI set up as Ollama's documentation says: a placeholder token, an empty key, the base URL."""
    env = cli_env(
        isolated_env.home, isolated_env.managed, server.base_url, ANTHROPIC_API_KEY="", ANTHROPIC_AUTH_TOKEN="ollama"
    )
    return subprocess.run(
        [sys.executable, "-m", "claude_mini", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def add_memory(server, isolated_env, repo) -> str:
    added = run_cli(
        server,
        isolated_env,
        repo,
        "memory",
        "add",
        "--type",
        "project",
        "Deploy billing to staging with make deploy-billing, VPN first. DEPLOY-BODY",
    )
    assert added.returncode == 0, added.stderr
    return added.stdout.split()[1]


def recalled(server: FakeAnthropic, filename: str) -> bool:
    last_main = server.requests_for("main")[-1]
    return f"Recalled memory: {filename}" in json.dumps(last_main.body["messages"], ensure_ascii=False)


def script_main_turn(server: FakeAnthropic) -> None:
    """A tool call (slow enough for recall to finish first), then the answer; extraction saves nothing."""
    server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    server.queue(
        Reply.tool("Read", {"file_path": "app.py"}).slow_first_byte(1.0), Reply.text("Use make deploy-billing.")
    )


def test_a_tool_turn_on_an_ollama_like_server(isolated_env, repo):
    with FakeAnthropic(ollama_like=True, api_key="ollama") as server:
        server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
        server.queue(Reply.tool("Read", {"file_path": "app.py"}), Reply.text("It greets."))
        result = run_cli(
            server,
            isolated_env,
            repo,
            "-p",
            "what does app.py do?",
            "--model",
            "qwen3-coder",
            "--output-format",
            "json",
        )
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout)
        assert out["result"] == "It greets." and out["total_cost_usd"] == 0
        assert out["usage"]["cache_read_input_tokens"] == 0 and out["usage"]["input_tokens"] > 0
        main = server.requests_for("main")
        assert [r.body["model"] for r in main] == ["qwen3-coder", "qwen3-coder"]
        assert main[0].headers["authorization"] == "Bearer ollama"
        tool_result = main[1].body["messages"][-1]["content"][0]
        assert 'return "hello"' in tool_result["content"] and not tool_result.get("is_error")


def test_recall_falls_back_to_json_in_text_when_structured_output_is_rejected(isolated_env, repo):
    with FakeAnthropic(ollama_like=True) as server:
        filename = add_memory(server, isolated_env, repo)
        server.on(Reply.text(f'Sure. {{"selected_memories": ["{filename}"]}}'), purpose="recall", times=None)
        script_main_turn(server)
        result = run_cli(server, isolated_env, repo, "-p", QUERY)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "Use make deploy-billing."
        rejected, retried = server.requests_for("recall")
        assert "output_config" in rejected.body and "output_config" not in retried.body
        assert recalled(server, filename)


def test_recall_parses_fenced_json_when_a_server_ignores_structured_output(isolated_env, repo):
    with FakeAnthropic(ollama_like=True, structured_output="ignore") as server:
        filename = add_memory(server, isolated_env, repo)
        fenced = f'```json\n{{"selected_memories": ["{filename}"]}}\n```'
        server.on(Reply.text(fenced), purpose="recall", times=None)
        script_main_turn(server)
        result = run_cli(server, isolated_env, repo, "-p", QUERY)
        assert result.returncode == 0, result.stderr
        (recall,) = server.requests_for("recall")
        assert "output_config" in recall.body
        assert recalled(server, filename)


def test_a_stream_that_just_stops_is_retried(isolated_env, repo):
    reply = Reply.text(LONG)
    with FakeAnthropic([reply.stream_error(), reply], ollama_like=True) as server:
        server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
        result = run_cli(server, isolated_env, repo, "-p", "explain app.py")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == LONG
        assert "retrying" in result.stderr
        assert len(server.requests_for("main")) == 2
