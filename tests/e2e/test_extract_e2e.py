"""End to end: background memory extraction in `claude-mini -p` (real CLI, fake server)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import yaml
from fake_anthropic import Reply

from claude_mini import paths
from claude_mini.memory.store import format_memory
from tests.e2e.conftest import cli_env

MEMORY = format_memory(name="Run pytest with -x", description="always run pytest with -x",
                       type="feedback", body="Run the tests with `pytest -x`.",
                       why="the user wants the first failure only", how_to_apply="every test run")


def settings(repo, **memory) -> None:
    (repo / ".claude").mkdir(exist_ok=True)
    data = {"recall": {"strategy": "off"}, "memory": memory}
    (repo / ".claude" / "settings.json").write_text(json.dumps(data))


def save_replies(fake_server, memdir) -> None:
    fake_server.on(Reply.tool("Write", {"file_path": str(memdir / "feedback_testing.md"), "content": MEMORY}),
                   purpose="extract")
    fake_server.on(Reply.text("Saved one memory."), purpose="extract")


def transcript_entries(home, repo) -> list[dict]:
    files = list(paths.project_dir(repo).glob("*.jsonl"))
    assert len(files) == 1 and str(files[0]).startswith(str(home))
    return [json.loads(line) for line in files[0].read_text().splitlines()]


def test_print_mode_saves_a_memory_and_says_so(run_cli, fake_server, repo, isolated_env):
    settings(repo)
    memdir = paths.memory_dir(repo)
    fake_server.on(Reply.text("OK, pytest -x it is."), purpose="main")
    save_replies(fake_server, memdir)
    result = run_cli("-p", "always run pytest with -x")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "OK, pytest -x it is.\n"
    assert "Saved memory: feedback_testing.md — always run pytest with -x\n" in result.stderr
    entries = transcript_entries(isolated_env.home, repo)
    session_id = entries[0]["session_id"]
    saved = [e for e in entries if e.get("subtype") == "memory_saved"]
    assert saved and saved[0]["file"] == "feedback_testing.md"
    text = (memdir / "feedback_testing.md").read_text()
    fm = yaml.safe_load(text.split("---\n")[1])
    assert fm["source"] == session_id and fm["created"] == fm["updated"]
    assert "(feedback_testing.md) — always run pytest with -x" in (memdir / "MEMORY.md").read_text()
    extract = fake_server.requests_for("extract")[0]
    assert extract.body["tools"] == fake_server.requests_for("main")[0].body["tools"]


def test_json_output_stays_one_object_and_announces_nothing(run_cli, fake_server, repo):
    settings(repo)
    save_replies(fake_server, paths.memory_dir(repo))
    result = run_cli("-p", "always run pytest with -x", "--output-format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["type"] == "result" and "Saved memory" not in result.stderr
    assert (paths.memory_dir(repo) / "feedback_testing.md").exists()


def test_print_mode_waits_for_a_slow_extraction_before_exiting(run_cli, fake_server, repo):
    settings(repo)
    memdir = paths.memory_dir(repo)
    fake_server.on(Reply.tool("Write", {"file_path": str(memdir / "feedback_testing.md"), "content": MEMORY})
                   .slow_first_byte(2.0), purpose="extract")
    fake_server.on(Reply.text("Saved."), purpose="extract")
    result = run_cli("-p", "always run pytest with -x")
    assert result.returncode == 0, result.stderr
    # Ordering, not timing: the file the slow extraction writes exists when the process has exited.
    assert (memdir / "feedback_testing.md").exists() and "Saved memory:" in result.stderr


def test_print_mode_stops_waiting_after_the_configured_time(run_cli, fake_server, repo):
    settings(repo, extractWaitSeconds=1)
    memdir = paths.memory_dir(repo)
    fake_server.on(Reply.tool("Write", {"file_path": str(memdir / "feedback_testing.md"), "content": MEMORY}),
                   purpose="extract")
    fake_server.on(Reply.text("never").hang(), purpose="extract")
    # The extraction's reply never comes: the run ending at all (run_cli's timeout would raise) shows
    # that print mode stopped waiting.
    result = run_cli("-p", "always run pytest with -x", timeout=30)
    assert result.returncode == 0 and result.stdout == "(fake model) You said: always run pytest with -x\n"
    assert "Memory extraction was still running after 1 s and was stopped" in result.stderr
    assert not (memdir / "feedback_testing.md").exists()  # the unfinished run was rolled back


def test_text_output_says_it_is_saving_and_stops_after_a_few_seconds(run_cli, fake_server, repo):
    settings(repo)  # no memory.extractWaitSeconds: text output waits printmode.TEXT_WAIT_SECONDS
    fake_server.on(Reply.text("never").hang(), purpose="extract")
    result = run_cli("-p", "always run pytest with -x", timeout=30)
    assert result.returncode == 0 and result.stdout == "(fake model) You said: always run pytest with -x\n"
    lines = result.stderr.splitlines()
    assert lines[0] == "saving memories… (Ctrl-C skips)"
    assert lines[1].startswith("Memory extraction was still running after 5 s and was stopped")


def test_ctrl_c_while_saving_skips_it(isolated_env, fake_server, repo):
    """A real process, to send it SIGINT once it says it is saving."""
    settings(repo, extractWaitSeconds=60)
    memdir = paths.memory_dir(repo)
    fake_server.on(Reply.tool("Write", {"file_path": str(memdir / "feedback_testing.md"), "content": MEMORY}),
                   purpose="extract")
    fake_server.on(Reply.text("never").hang(), purpose="extract")
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url)
    proc = subprocess.Popen([sys.executable, "-m", "claude_mini", "-p", "always run pytest with -x"], cwd=repo,
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stderr.readline() == "saving memories… (Ctrl-C skips)\n"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out == "(fake model) You said: always run pytest with -x\n"
    assert err == "Memory saving skipped; nothing from this turn was kept.\n"
    assert not (memdir / "feedback_testing.md").exists()  # the unfinished run was rolled back


def test_a_trivial_turn_is_not_extracted(run_cli, fake_server, repo):
    settings(repo)
    fake_server.queue(Reply.text("Hello!"), Reply.tool("Glob", {"pattern": "*"}), Reply.text("app.py, README.md"))
    for prompt in ("hello", "list files"):
        result = run_cli("-p", prompt)
        assert result.returncode == 0 and result.stderr == "", result.stderr
    assert fake_server.requests_for("extract") == [] and len(fake_server.requests_for("main")) == 3


def test_main_agent_cannot_save_a_secret_into_memory(run_cli, fake_server, repo):
    settings(repo)
    memdir = paths.memory_dir(repo)
    content = format_memory(name="Token", description="the deploy token is ghp_" + "x" * 36,
                            type="reference", body="Use it to deploy.")
    fake_server.on(Reply.tool("Write", {"file_path": str(memdir / "reference_token.md"), "content": content}),
                   purpose="main")
    fake_server.on(Reply.text("I could not save it."), purpose="main")
    result = run_cli("-p", "remember the deploy token", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    tool_result = fake_server.requests_for("main")[1].body["messages"][-1]["content"][0]
    assert tool_result["is_error"] and "refused to save a GitHub token (ghp_…)" in tool_result["content"]
    assert not (memdir / "reference_token.md").exists()
    assert len(fake_server.requests_for("extract")) == 1  # a refused write does not skip extraction


def test_no_extraction_when_auto_memory_is_disabled(run_cli, fake_server, repo):
    settings(repo)
    result = run_cli("-p", "always run pytest with -x", env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"})
    assert result.returncode == 0, result.stderr
    assert fake_server.requests_for("extract") == [] and len(fake_server.requests_for("main")) == 1
