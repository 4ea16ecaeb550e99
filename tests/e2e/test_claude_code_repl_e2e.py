"""End to end in a pty: Claude Code's `-r` without an id (the session picker) and the /model picker."""

from __future__ import annotations

from tests.e2e.test_repl import start  # noqa: F401  (the pty fixture)


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
