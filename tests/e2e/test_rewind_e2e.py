"""End to end: /rewind in the real REPL (a pty) against the fake server.

Three turns write, edit and create files (and run a command); Esc Esc on the empty prompt opens
the picker, and going back to the second message puts the files back as they were before it and
the conversation with them: the message returns to the input, and the next request carries the
shorter conversation. After `-c`, a file changed by hand since is refused unless confirmed, and
the store keeps within its cap.
"""

from __future__ import annotations

import json

from fake_anthropic import Reply

from tests.e2e.test_repl import main_replies, start, wait_until  # noqa: F401 (start is a fixture)

ORIGINAL_APP = 'def greet():\n    return "hello"\n'


def three_turns(fake_server) -> None:
    main_replies(fake_server,
                 Reply.tool("Write", {"file_path": "util.py", "content": "A = 1\n"}), Reply.text("Created util."),
                 Reply.tool("Read", {"file_path": "app.py"}),
                 Reply.tool("Edit", {"file_path": "app.py", "old_string": "hello", "new_string": "hi"}),
                 Reply.text("Changed app."),
                 Reply.tool("Edit", {"file_path": "util.py", "old_string": "A = 1", "new_string": "A = 2"}),
                 Reply.tool("Write", {"file_path": "notes/todo.md", "content": "- x\n"}),
                 Reply.tool("Bash", {"command": "echo made > made.txt"}), Reply.text("Done three."))


def test_esc_esc_rewinds_code_and_conversation_to_the_second_message(start, fake_server, repo):  # noqa: F811
    three_turns(fake_server)
    main_replies(fake_server, Reply.text("After the rewind."))
    term = start("--permission-mode", "bypassPermissions")
    for text, answer in (("create util", "Created util."), ("change app", "Changed app."),
                         ("third turn", "Done three.")):
        term.ready()
        term.submit(text)
        term.expect(answer)
    assert (repo / "app.py").read_text() != ORIGINAL_APP and (repo / "notes" / "todo.md").exists()
    term.ready()
    term.child.send("\x1b\x1b")  # Esc Esc on the empty prompt
    term.expect("Rewind to before which message")
    term.expect(r"third turn\s+· util\.py, notes/todo\.md \(new\)\s+· ran commands \(not tracked\)")
    term.expect(r"change app\s+· app\.py")
    term.expect(r"create util\s+· util\.py \(new\)")
    term.child.send("2")
    term.expect("Rewind to before “change app”")
    term.child.send("1")  # code and conversation
    term.expect(r"Restored 2 file\(s\) as they were before that message: ")
    term.expect(r"Deleted 1 file\(s\) the assistant created: notes/todo\.md")
    term.expect(r"Not undone: commands run since then")
    term.expect(r"echo made")
    term.expect(r"Rewound the conversation to before that message \(14 messages left out")
    term.ready()
    assert (repo / "app.py").read_text() == ORIGINAL_APP
    assert (repo / "util.py").read_text() == "A = 1\n"  # as the first turn left it
    assert not (repo / "notes" / "todo.md").exists() and (repo / "made.txt").exists()
    term.submit(" again")  # the message is back in the input: this completes it
    term.expect("After the rewind.")
    sent = fake_server.requests_for("main")[-1].body["messages"]
    assert sent[-1]["content"][0]["text"] == "change app again"
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    everything = json.dumps(sent)
    assert "Created util." in everything
    assert not any(word in everything for word in ("Changed app.", "third turn", "Done three."))
