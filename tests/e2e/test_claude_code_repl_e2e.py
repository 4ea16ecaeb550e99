"""End to end in a pty: Claude Code's `-r` without an id (the session picker), the /model picker,
and settings and command files changed during a session."""

from __future__ import annotations

import json

from tests.e2e.test_hooks_e2e import hook, logged, write_hooks
from tests.e2e.test_repl import main_replies, start  # noqa: F401  (start: the pty fixture)
from tests.fake_anthropic import Reply


def test_resume_without_an_id_opens_the_picker_then_model_picks_an_alias(start, run_cli, fake_server):  # noqa: F811
    assert run_cli("-p", "first question", env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}).returncode == 0
    term = start("-r")
    term.expect("Resume which session")
    term.expect("first question")
    term.child.send("\r")
    term.expect("You said: first question")  # the resumed session's last exchange, redrawn
    term.ready()
    term.submit("/model")
    term.expect(r"Model: claude-sonnet-4-6 \(sonnet\)")
    term.expect("Switch to which model")
    term.child.send("\x1b[B\r")  # down to the first alias (haiku), Enter
    term.expect("Model set to claude-haiku-4-5")
    term.ready()
    term.submit("again")
    term.expect("You said: again")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    last = fake_server.requests_for("main")[-1].body
    assert last["model"] == "claude-haiku-4-5"
    assert [m["role"] for m in last["messages"]] == ["user", "assistant", "user"]


def test_settings_and_command_files_changed_mid_session_apply_from_the_next_input(start, fake_server, repo):  # noqa: F811
    """Hooks and permissions written to .claude/settings.json after start-up, and a command folder
    made then, apply without a restart; one line says what changed; /hooks lists the new hooks."""
    main_replies(fake_server, Reply.text("first"))
    term = start()
    term.ready()
    term.submit("hello")
    term.expect("first")
    term.ready()
    write_hooks(
        repo, {"UserPromptSubmit": [hook({"out": "CONTEXT-FROM-HOOK"})]}, permissions={"allow": ["Bash(echo:*)"]}
    )
    (repo / ".claude" / "commands").mkdir()
    (repo / ".claude" / "commands" / "greet.md").write_text("---\ndescription: Greet\n---\nGreet $ARGUMENTS warmly\n")
    term.submit("/hooks")
    term.expect(r"Settings changed in \.claude/settings\.json: hooks, permissions; applied from now on\.")
    term.expect("UserPromptSubmit")
    term.ready()
    main_replies(fake_server, Reply.tool("Bash", {"command": "echo allowed-now"}), Reply.text("ran it"))
    term.submit("/greet Ada")
    term.expect("ran it")  # the new allow rule: no permission question
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    last = json.dumps(fake_server.requests_for("main")[-1].body["messages"])
    assert "Greet Ada warmly" in last and "CONTEXT-FROM-HOOK" in last and "allowed-now" in last
    assert [e["hook_event_name"] for e in logged(repo)] == ["UserPromptSubmit"]


def test_ctrl_c_leaves_history_search_with_the_draft_and_tab_enter_runs_a_command(start, fake_server):  # noqa: F811
    main_replies(fake_server, Reply.text("one"))
    term = start()
    term.ready()
    term.submit("hello there")
    term.expect("one")
    term.ready()
    term.child.send("my draft")
    term.child.send("\x12")  # Ctrl-R
    term.child.send("hel")
    term.expect("I-search backward")
    term.child.send("\x03")  # Ctrl-C: out of the search, the draft back
    term.child.send("\r")
    term.expect("You said: my draft")
    term.ready()
    term.child.send("/stat")
    term.expect("/status")  # the completion menu
    term.child.send("\t")
    term.child.send("\r")  # one Enter runs the completed command
    term.expect("Home folder:")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
