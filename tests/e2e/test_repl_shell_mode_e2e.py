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
    assert texts[0].startswith("<local-command-caveat>")  # the model is told it is context, as Claude Code does
    assert texts[1:3] == [
        "<bash-input>cat notes.txt</bash-input>",
        "<bash-stdout>marker-41</bash-stdout><bash-stderr></bash-stderr>",
    ]
    assert texts[4] == "<bash-input>sh -c 'echo broken >&2; exit 3'</bash-input>"
    assert "broken" in texts[5] and "Exit code 3" in texts[5]
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


def test_a_paragraph_shows_while_it_streams_and_type_ahead_is_visible(start, fake_server):  # noqa: F811
    # The stream stalls mid-paragraph: what arrived is on screen although the block has not ended.
    paragraph = "Streaming words arrive one piece at a time and show at once"
    main_replies(fake_server, Reply.text(paragraph + " and then more never arrives.").hang(mid_stream=True, after=8))
    term = start()
    term.ready()
    term.submit("talk to me")
    term.expect("Streaming words arrive")
    term.child.send("next thing to as")
    term.expect(">.{0,8}next thing to as")  # typed while the model works: shown, not echoed raw
    term.child.send("\x7f\x7fask")  # Backspace edits it
    term.expect(">.{0,8}next thing to ask")
    term.child.send("\x1b")
    term.expect("Interrupted")
    term.expect("next thing to ask")  # the prompt has it, to edit or send
    term.ready()
    term.submit("")
    term.expect("You said: talk to me")
    assert (
        fake_server.requests_for("main")[-1].body["messages"][-1]["content"][-1]["text"].endswith("next thing to ask")
    )


def test_ctrl_o_during_a_turn_opens_the_view_when_it_ends(start, fake_server):  # noqa: F811
    main_replies(fake_server, Reply.text("A slow answer, in several pieces.").delay_between_events(0.2))
    term = start()
    term.ready()
    term.submit("go slowly")
    term.expect("esc to interrupt")
    term.child.send("\x0f")
    term.expect("The transcript view opens when this turn ends.")
    term.expect("Transcript · ")
    term.child.send("q")
    term.ready()
