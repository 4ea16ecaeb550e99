"""End to end: `!` shell mode and readable tool output in the REPL, through a real pseudo-terminal."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_repl import main_replies, start  # noqa: F401 (start is a fixture)
from tests.fake_anthropic import Reply

pytestmark = pytest.mark.e2e


def test_a_bang_line_runs_at_once_and_reaches_the_next_request(start, fake_server, repo):  # noqa: F811
    main_replies(fake_server, Reply.text("I see the marker."))
    (repo / "notes.txt").write_text("marker-41\n")
    term = start()
    term.ready()
    term.submit("!cat notes.txt")
    term.expect("⎿  .{0,8}marker-41")
    term.ready()
    assert fake_server.requests_for("main") == []  # no model request of its own
    term.submit("!sh -c 'echo broken >&2; exit 3'")
    term.expect("Exit code 3")
    term.expect("broken")
    term.ready()
    term.submit("what did you see?")
    term.expect("I see the marker.")
    [request] = fake_server.requests_for("main")
    [message] = request.body["messages"]
    texts = [block["text"] for block in message["content"]]
    assert "<bash-input>cat notes.txt</bash-input>\n<bash-stdout>marker-41</bash-stdout>" in texts[0]
    assert "<bash-input>sh -c 'echo broken >&2; exit 3'</bash-input>" in texts[1] and "Exit code 3" in texts[1]
    assert texts[-1] == "what did you see?"


def test_a_bang_line_obeys_deny_rules(start, fake_server, repo):  # noqa: F811
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
    (repo / "keep.txt").write_text("x")
    term = start()
    term.ready()
    term.submit("!rm keep.txt")
    term.expect("Permission denied")
    term.ready()
    assert (repo / "keep.txt").exists()


def test_ctrl_o_shows_the_whole_output_and_goes_back(start, fake_server, repo):  # noqa: F811
    main_replies(fake_server, Reply.tool("Bash", {"command": "seq 101 160"}), Reply.text("Counted."))
    term = start()
    term.ready()
    term.submit("count for me")
    term.expect(r"… \+57 lines \(ctrl\+o to expand\)")
    term.expect("Counted.")
    term.ready()
    assert "159" not in term.output.getvalue()  # cut in the conversation's flow
    term.child.send("\x0f")
    term.expect("159")  # the view opens at the end: the last lines of the output
    term.expect("Transcript · ")
    term.child.send("g")  # to the top: the user's message and the call with its arguments
    term.expect("count for me")
    term.expect("seq 101 160")
    term.child.send("\x0f")
    term.ready()
    term.submit("!echo back-at-the-prompt")
    term.expect("back-at-the-prompt")
