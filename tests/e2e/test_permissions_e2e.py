"""End to end: deny rules, plan mode and managed denies, seen through the tool results the model gets;
edits that cannot apply fail without a permission prompt."""

from __future__ import annotations

import json

from tests.e2e.test_repl import main_replies, start  # noqa: F401 (start is a fixture)
from tests.fake_anthropic import Reply


def _tool_result(fake_server) -> dict:
    return fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]


def test_project_deny_rule(run_cli, fake_server, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    fake_server.queue(Reply.tool("Bash", {"command": "rm app.py"}), Reply.text("ok"))
    result = run_cli("-p", "delete it", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0
    denied = _tool_result(fake_server)
    assert denied["is_error"] and "Bash(rm:*)" in denied["content"]
    assert (repo / "app.py").exists()


def test_plan_mode_is_read_only(run_cli, fake_server, repo):
    fake_server.queue(Reply.tool("Write", {"file_path": "new.txt", "content": "x"}), Reply.text("ok"))
    result = run_cli("-p", "write it", "--permission-mode", "plan")
    assert result.returncode == 0
    denied = _tool_result(fake_server)
    assert denied["is_error"] and "plan" in denied["content"].lower()
    assert not (repo / "new.txt").exists()


def test_managed_deny_beats_flags(run_cli, fake_server, repo, isolated_env):
    (isolated_env.managed / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Edit"]}}))
    fake_server.queue(
        Reply.tool("Read", {"file_path": "app.py"}),
        Reply.tool("Edit", {"file_path": "app.py", "old_string": "hello", "new_string": "bye"}),
        Reply.text("ok"),
    )
    result = run_cli("-p", "edit it", "--allowedTools", "Edit", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0
    denied = _tool_result(fake_server)
    assert denied["is_error"] and "managed" in denied["content"]
    assert "hello" in (repo / "app.py").read_text()


def test_print_mode_denies_what_would_ask(run_cli, fake_server, repo):
    fake_server.queue(Reply.tool("Write", {"file_path": "new.txt", "content": "x"}), Reply.text("ok"))
    assert run_cli("-p", "write it").returncode == 0
    denied = _tool_result(fake_server)
    assert denied["is_error"] and "cannot ask" in denied["content"]
    assert not (repo / "new.txt").exists()


def test_edits_that_cannot_apply_fail_without_a_prompt(start, fake_server, repo):  # noqa: F811
    (repo / "notes.txt").write_text("hello\n")
    main_replies(
        fake_server,
        Reply.tools(
            [
                ("Edit", {"file_path": "README.md", "old_string": "demo", "new_string": "x"}),
                ("Write", {"file_path": "app.py", "content": "gone\n"}),
                ("Read", {"file_path": "README.md"}),
                ("Read", {"file_path": "notes.txt"}),
            ]
        ),
        Reply.tool("Edit", {"file_path": "README.md", "old_string": "no such text", "new_string": "x"}),
        Reply.tool("Edit", {"file_path": "notes.txt", "old_string": "hello", "new_string": "bye"}),
        Reply.text("Changed it."),
    )
    term = start()
    term.ready()
    term.submit("change things")
    term.expect(r"Make this edit to notes\.txt\?")  # the one edit that can apply is asked about
    term.child.send("1")
    term.expect("Changed it.")
    shown = term.output.getvalue()
    assert "Make this edit to README.md?" not in shown and "Overwrite app.py?" not in shown
    unread, overwrite, *_ = fake_server.requests_for("main")[1].body["messages"][-1]["content"]
    assert unread["is_error"] and "has not been read in this session" in unread["content"]
    assert overwrite["is_error"] and "has not been read in this session" in overwrite["content"]
    [missing] = fake_server.requests_for("main")[2].body["messages"][-1]["content"]
    assert missing["is_error"] and "old_string was not found" in missing["content"]
    assert (repo / "notes.txt").read_text() == "bye\n" and (repo / "README.md").read_text() == "# demo\n"
    assert "hello" in (repo / "app.py").read_text()


def test_a_call_an_ask_rule_covers_is_not_checked_before_approval(run_cli, fake_server, repo):
    # What a Read or Write would fail with (a missing file and its neighbours' names, a file
    # that exists) is what the ask rule guards: the model learns it only once the user allows.
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"ask": ["Read(./secrets/**)", "Write(./secrets/**)"]}})
    )
    (repo / "secrets").mkdir()
    (repo / "secrets" / "tokens.txt").write_text("t0ken\n")
    fake_server.queue(
        Reply.tools(
            [
                ("Read", {"file_path": "secrets/token.txt"}),
                ("Write", {"file_path": "secrets/tokens.txt", "content": "x"}),
            ]
        ),
        Reply.text("ok"),
    )
    assert run_cli("-p", "look", "--permission-mode", "acceptEdits").returncode == 0
    read, write = fake_server.requests_for("main")[-1].body["messages"][-1]["content"]
    for result in (read, write):
        assert result["is_error"] and result["content"].startswith("Permission needed"), result
        assert "tokens.txt" not in result["content"] and "exist" not in result["content"]
    assert (repo / "secrets" / "tokens.txt").read_text() == "t0ken\n"
