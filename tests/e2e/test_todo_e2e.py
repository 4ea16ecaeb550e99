"""End to end: TodoWrite in -p (no question), its list back after `-c` in the REPL (/todos), and the
list under the answer of a REPL turn that changed it."""

from __future__ import annotations

import re

from tests.e2e.test_repl import main_replies, start  # noqa: F401  (the `start` fixture)
from tests.fake_anthropic import Reply
from tests.tools.test_todo import DONE, PLAN


def test_the_todo_list_survives_continue_and_shows_under_the_answer(run_cli, start, fake_server):  # noqa: F811
    main_replies(fake_server, Reply.tool("TodoWrite", {"todos": PLAN}), Reply.text("Planned."))
    result = run_cli("-p", "plan the release", env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Planned." and result.stderr == ""
    sent = fake_server.requests_for("main")[1].body["messages"][-1]["content"][0]
    assert sent["type"] == "tool_result" and not sent.get("is_error"), sent  # -p cannot ask: none needed
    assert sent["content"].startswith("Todo list updated: 3 items (1 completed, 1 in progress, 1 pending).")

    main_replies(fake_server, Reply.tool("TodoWrite", {"todos": DONE}), Reply.text("All three are done."))
    term = start("-c")
    term.expect(r"Resumed session")
    term.ready()
    term.submit("/todos")
    term.expect(r"Todos · 1 of 3 completed\s+☒ Read the parser\s+◼ Write the tests\s+☐ Update the README")
    term.ready()
    term.submit("finish it")
    term.expect("Updated the todo list: 3 of 3 completed")
    for line in (
        "All three are done.",
        "Todos · 3 of 3 completed",
        "☒ Read the parser",
        "☒ Write the tests",
        "☒ Update the README",
    ):  # in this order, under the answer (the spinner redraws between)
        term.expect(re.escape(line))
    term.ready()
    term.submit("/context")
    term.expect(r"Todos: 3 of 3 completed \(/todos shows them\)")
