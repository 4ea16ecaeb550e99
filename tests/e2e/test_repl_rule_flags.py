"""End to end: several rules after one --allowedTools flag in the REPL."""

from __future__ import annotations

from tests.e2e.test_repl import main_replies, start  # noqa: F401 (start is a fixture)
from tests.fake_anthropic import Reply


def test_the_repl_takes_several_rules_after_one_flag(start, fake_server, repo):  # noqa: F811
    main_replies(
        fake_server,
        Reply.tools([("Write", {"file_path": "a.txt", "content": "a\n"}), ("Bash", {"command": "git status"})]),
        Reply.text("Both ran."),
    )
    term = start("make a.txt", "--allowedTools", "Write", "Bash(git status:*)")
    term.expect("Both ran.")  # no permission question came first
    assert (repo / "a.txt").read_text() == "a\n"
    write, status = fake_server.requests_for("main")[-1].body["messages"][-1]["content"]
    assert not write.get("is_error") and not status.get("is_error")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
