"""End to end: the faults the SDK does not handle are recovered, or fail cleanly and resume."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time

import pytest

from claude_mini.session import UNFINISHED_TOOL
from tests.e2e.conftest import cli_env
from tests.fake_anthropic import Reply

ANSWER = "Here is a complete answer that streams in several chunks."
# Retries without waiting (RetryPolicy.from_env), and a short stall limit where a test stalls.
NO_WAIT = {"CLAUDE_MINI_RETRY_MAX_WAIT_SECONDS": "0"}
SHORT_STALL = {**NO_WAIT, "CLAUDE_MINI_STREAM_IDLE_SECONDS": "0.3"}


@pytest.mark.parametrize(
    "fault",
    [
        Reply.text(ANSWER).http_error(429, retry_after=0.1),
        Reply.text(ANSWER).http_error(529),
        Reply.text(ANSWER).http_error(500),
        Reply.text(ANSWER).stream_error("overloaded_error"),
        Reply.text(ANSWER).reset_mid_stream(),
        Reply.text(ANSWER).cut_before_stop(),
        Reply.text(ANSWER).slow_first_byte(1.0),
        Reply.text(ANSWER).hang(mid_stream=True),
        Reply.text(ANSWER).malformed_event("not_json"),
        Reply.text(ANSWER).malformed_event("binary", after=0),
        Reply.text(ANSWER).malformed_event("null_text"),
    ],
    ids=["429", "529", "500", "stream-error", "reset", "cut", "slow", "stall", "not-json", "binary", "null-text"],
)
def test_fault_is_recovered_without_duplicated_text(run_cli, fake_server, fault):
    fake_server.queue(fault, Reply.text(ANSWER))
    result = run_cli("-p", "hi", env=SHORT_STALL if fault.hang_at else NO_WAIT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ANSWER + "\n"
    assert "Traceback" not in result.stderr
    assert result.stderr.count("retrying") == (0 if fault.first_byte_delay else 1)


def test_a_stream_that_stalls_twice_ends_with_one_clear_line(run_cli, fake_server):
    fake_server.on(Reply.text(ANSWER).hang(mid_stream=True), purpose="main", times=None)
    result = run_cli("-p", "hi", env=SHORT_STALL)
    assert result.returncode == 1
    assert len(fake_server.requests_for("main")) == 2  # one retry, then the error
    assert result.stderr.count("retrying") == 1
    [error] = [line for line in result.stderr.splitlines() if "stopped sending" in line]
    assert (
        f"{fake_server.base_url}/v1/messages stopped sending (no data from the server for 0.3 s; tried twice)" in error
    )
    assert "CLAUDE_MINI_STREAM_IDLE_SECONDS" in error and "Traceback" not in result.stderr


def test_a_malformed_stream_gives_a_json_result_naming_the_endpoint(run_cli, fake_server):
    fake_server.on(Reply.text(ANSWER).malformed_event("not_json"), purpose="main", times=None)
    result = run_cli("-p", "hi", "--output-format", "json", env=NO_WAIT)
    assert result.returncode == 1, result.stderr
    out = json.loads(result.stdout)
    assert out["is_error"] is True and out["subtype"] == "error_during_execution"
    assert out["result"].startswith(
        f"{fake_server.base_url}/v1/messages sent a response that is not the "
        "Anthropic Messages stream (malformed stream (JSONDecodeError"
    )
    assert "internal error" not in result.stderr and len(fake_server.requests_for("main")) == 4


def test_an_unreachable_server_is_named_with_the_url_tried(run_cli):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    result = run_cli("-p", "hi", env={**NO_WAIT, "ANTHROPIC_BASE_URL": url})
    assert result.returncode == 1
    [error] = [line for line in result.stderr.splitlines() if "Could not reach" in line]
    assert f"Could not reach the model server at {url}/v1/messages (could not connect (Connect" in error
    assert "tried 4 times" in error and "ANTHROPIC_BASE_URL" in error


def test_stream_error_shows_one_retrying_line(run_cli, fake_server):
    fake_server.queue(Reply.text(ANSWER).stream_error("overloaded_error"), Reply.text(ANSWER))
    result = run_cli("-p", "hi", "--output-format", "stream-json", env=NO_WAIT)
    assert result.returncode == 0
    assert result.stderr.count("retrying") == 1
    assistant = [json.loads(line) for line in result.stdout.splitlines() if '"assistant"' in line]
    assert assistant[-1]["message"]["content"][0]["text"] == ANSWER


def test_persistent_failure_exits_1_and_continue_resumes(run_cli, fake_server):
    fake_server.on(Reply.text("x").stream_error("overloaded_error"), purpose="main", times=4)
    result = run_cli("-p", "first question", "--output-format", "json", env=NO_WAIT)
    assert result.returncode == 1
    out = json.loads(result.stdout)
    assert out["is_error"] is True and out["subtype"] == "error_during_execution"
    assert "overloaded" in out["result"].lower() or "overload" in out["result"].lower()
    fake_server.queue(Reply.text("Back again."))
    resumed = run_cli("-c", "-p", "second question")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "Back again."
    sent = fake_server.requests_for("main")[-1].body["messages"]
    texts = [b["text"] for m in sent for b in m["content"] if b["type"] == "text"]
    assert texts[:2] == ["first question", "second question"]


def test_kill_9_mid_turn_then_continue(isolated_env, fake_server, repo):
    fake_server.queue(Reply.tool("Bash", {"command": "sleep 30"}, id="toolu_sleep"))
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url)
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mini", "-p", "run the slow thing", "--permission-mode", "bypassPermissions"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        transcript = _wait_for_transcript_with(isolated_env.home, "toolu_sleep", proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    fake_server.queue(Reply.text("Resumed fine."))
    resumed = subprocess.run(
        [sys.executable, "-m", "claude_mini", "-c", "-p", "what happened?"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "Resumed fine."
    messages = fake_server.requests_for("main")[-1].body["messages"]
    result = messages[-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_sleep"
    assert result["is_error"] and result["content"] == UNFINISHED_TOOL
    assert messages[-1]["content"][1]["text"] == "what happened?"
    assert len(list(transcript.parent.glob("*.jsonl"))) == 1


def _wait_for_transcript_with(home, needle, proc, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in home.glob("projects/*/*.jsonl"):
            if needle in path.read_text():
                return path
        if proc.poll() is not None:
            raise AssertionError(f"claude-mini exited early: {proc.stderr.read().decode()}")
        time.sleep(0.05)
    raise AssertionError("the tool_use never reached the transcript")
