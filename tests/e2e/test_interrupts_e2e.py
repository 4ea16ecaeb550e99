"""End to end: a cancelled or failed turn leaves a conversation the model (and the API) can go on
from: the interruption marker after Esc in the REPL and Ctrl-C in print mode, and a tool call
whose input holds a NUL byte refused with a reason instead of crashing the turn."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from claude_mini.agent.loop import INTERRUPTED, INTERRUPTED_FOR_TOOL_USE
from tests.e2e.conftest import cli_env
from tests.e2e.test_repl import main_replies, start, wait_until  # noqa: F401 (start is a fixture)
from tests.fake_anthropic import Reply


def transcript_messages(home: Path) -> list[dict]:
    """The user and assistant entries of the one transcript under `home`."""
    [path] = home.glob("projects/*/*.jsonl")
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["message"] for e in entries if e["type"] in ("user", "assistant")]


def test_esc_during_a_tool_call_answers_it_and_marks_the_request(start, fake_server, repo):  # noqa: F811
    main_replies(fake_server, Reply.tool("Bash", {"command": "touch started && sleep 30"}), Reply.text("Fine."))
    term = start("--allowedTools", "Bash(touch:*)", "Bash(sleep:*)")
    term.ready()
    term.submit("wait for it")
    wait_until((repo / "started").exists)
    term.child.send("\x1b")
    term.expect("Interrupted")
    term.ready()
    term.submit("never mind")
    term.expect("Fine.")
    *_, asked, answered = fake_server.requests_for("main")[-1].body["messages"]
    [call] = [b for b in asked["content"] if b["type"] == "tool_use"]
    result, marker, text = answered["content"]
    assert result["tool_use_id"] == call["id"] and result["is_error"]
    assert "interrupted" in result["content"]
    assert (marker["text"], text["text"]) == (INTERRUPTED_FOR_TOOL_USE, "never mind")


def test_ctrl_c_in_print_mode_leaves_the_marker_at_the_end_of_the_transcript(isolated_env, fake_server, repo):
    fake_server.queue(Reply.text("never arrives").hang())
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, CLAUDE_MINI_DISABLE_AUTO_MEMORY="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mini", "-p", "take your time"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: fake_server.requests_for("main"))
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    [transcript] = isolated_env.home.glob("projects/*/*.jsonl")
    assert err.strip().endswith(
        f"claude-mini: interrupted. The transcript is saved; `claude-mini -r {transcript.stem}` continues."
    ), err
    assert transcript_messages(isolated_env.home) == [
        {"role": "user", "content": [{"type": "text", "text": "take your time"}]},
        {"role": "user", "content": [{"type": "text", "text": INTERRUPTED}]},
    ]


def test_a_nul_byte_in_a_tool_input_is_refused_and_the_turn_goes_on(run_cli, fake_server):
    fake_server.queue(
        Reply.tools([("Read", {"file_path": "README\x00.md"}), ("Grep", {"pattern": "demo"})]),
        Reply.text("Read it another way."),
    )
    result = run_cli("-p", "read the readme", env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Read it another way.\n"
    read, grep = fake_server.requests_for("main")[-1].body["messages"][-1]["content"]
    assert read["is_error"] and "`file_path` contains a NUL byte at position 6" in read["content"]
    assert "README.md" in grep["content"]
