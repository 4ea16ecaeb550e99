"""End to end: daily-log memory mode — extraction appends bullets, MEMORY.md is read-only to agents."""

from __future__ import annotations

import json

from tests.fake_anthropic import Reply


def test_log_mode_appends_bullets_and_protects_the_index(run_cli, fake_server, repo, isolated_env):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"memory": {"mode": "log"}}))
    fake_server.on(Reply.text("- the user prefers tabs\n- deploys happen on Fridays"), purpose="extract")
    fake_server.queue(Reply.text("Noted."))
    result = run_cli("-p", "remember my preferences", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    system = "\n".join(b["text"] for b in fake_server.requests_for("main")[0].body["system"])
    assert "daily-log mode" in system
    logs = list(isolated_env.home.glob("projects/*/memory/logs/*/*/*.md"))
    assert len(logs) == 1, result.stderr
    text = logs[0].read_text()
    assert "the user prefers tabs" in text and "deploys happen on Fridays" in text
    assert "Logged 2 note(s)" in result.stderr
    memory_dir = logs[0].parents[2]
    fake_server.queue(
        Reply.tool("Write", {"file_path": str(memory_dir / "MEMORY.md"), "content": "x"}), Reply.text("ok")
    )
    assert run_cli("-c", "-p", "now edit the index", "--permission-mode", "bypassPermissions").returncode == 0
    denied = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]
    assert denied["is_error"] and "log" in denied["content"].lower()
    assert not (memory_dir / "MEMORY.md").exists()
