"""End to end: the faults the SDK does not handle are recovered, or fail cleanly and resume."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from fake_anthropic import Reply

from tests.e2e.conftest import cli_env

ANSWER = "Here is a complete answer that streams in several chunks."


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
    ],
    ids=["429", "529", "500", "stream-error", "reset", "cut", "slow"],
)
def test_fault_is_recovered_without_duplicated_text(run_cli, fake_server, fault):
    fake_server.queue(fault, Reply.text(ANSWER))
    result = run_cli("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ANSWER + "\n"
    assert "Traceback" not in result.stderr
    assert result.stderr.count("retrying") <= 1


def test_stream_error_shows_one_retrying_line(run_cli, fake_server):
    fake_server.queue(Reply.text(ANSWER).stream_error("overloaded_error"), Reply.text(ANSWER))
    result = run_cli("-p", "hi", "--output-format", "stream-json")
    assert result.returncode == 0
    assert result.stderr.count("retrying") == 1
    assistant = [json.loads(line) for line in result.stdout.splitlines() if '"assistant"' in line]
    assert assistant[-1]["message"]["content"][0]["text"] == ANSWER


def test_persistent_failure_exits_1_and_continue_resumes(run_cli, fake_server):
    fake_server.on(Reply.text("x").stream_error("overloaded_error"), purpose="main", times=4)
    result = run_cli("-p", "first question", "--output-format", "json")
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
        [sys.executable, "-m", "claude_mini", "-p", "run the slow thing",
         "--permission-mode", "bypassPermissions"],
        cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        transcript = _wait_for_transcript_with(isolated_env.home, "toolu_sleep", proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    fake_server.queue(Reply.text("Resumed fine."))
    resumed = subprocess.run(
        [sys.executable, "-m", "claude_mini", "-c", "-p", "what happened?"],
        cwd=repo, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "Resumed fine."
    messages = fake_server.requests_for("main")[-1].body["messages"]
    result = messages[-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_sleep"
    assert result["is_error"] and "Interrupted" in result["content"]
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
