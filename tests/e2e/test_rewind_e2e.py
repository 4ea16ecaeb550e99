"""End to end: /rewind in the real REPL (a pty) against the fake server.

Three turns write, edit and create files (and run a command); Esc Esc on the empty prompt opens
the picker, and going back to the second message puts the files back as they were before it and
the conversation with them: the message returns to the input, and the next request carries the
shorter conversation. After `-c`, a file changed by hand since is refused unless confirmed, and
the store keeps within its cap.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_repl import main_replies, start  # noqa: F401 (start is a fixture)
from tests.fake_anthropic import Reply
from tests.rewind.turns import ANSWERS, ORIGINAL_APP, PROMPTS, three_turns


def test_esc_esc_rewinds_code_and_conversation_to_the_second_message(start, fake_server, repo):  # noqa: F811
    three_turns(fake_server)
    main_replies(fake_server, Reply.text("After the rewind."))
    term = start("--permission-mode", "bypassPermissions")
    for text, answer in zip(PROMPTS, ANSWERS, strict=True):
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


BIG = "line\n" * 6000  # 30,000 bytes: two of them fit under the cap below, three do not
CAP_MB = 0.0625  # 64 KB


def edit_turn(fake_server, name: str) -> None:
    """One print-mode turn: read `name`, edit its first line."""
    main_replies(
        fake_server,
        Reply.tool("Read", {"file_path": name}),
        Reply.tool("Edit", {"file_path": name, "old_string": "TOP", "new_string": "EDITED"}),
        Reply.text(f"Edited {name}."),
    )


def test_after_continue_a_hand_edit_is_refused_unless_confirmed_and_the_store_keeps_its_cap(
    start,  # noqa: F811 (the fixture imported above)
    fake_server,
    repo,
    run_cli,
):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"checkpoints": {"maxSessionMB": CAP_MB}}))
    for name in ("a.txt", "b.txt", "c.txt"):
        (repo / name).write_text(f"TOP {name}\n" + BIG)  # different: no two are one stored copy
    quiet = {"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}
    for i, name in enumerate(("a.txt", "b.txt", "c.txt")):
        edit_turn(fake_server, name)
        done = run_cli(*(["-c"] if i else []), "-p", f"edit {name[0]}", "--permission-mode", "acceptEdits", env=quiet)
        assert done.returncode == 0 and f"Edited {name}." in done.stdout, done.stderr
    assert "reached their cap of 64 KB (checkpoints.maxSessionMB): 1 saved file copy was dropped" in done.stderr
    listed = json.loads(run_cli("checkpoints", "list", "--json").stdout)
    assert listed["stored_bytes"] <= listed["cap_bytes"] == int(CAP_MB * 1024 * 1024)
    [oldest] = [m for m in listed["messages"] if m["text"] == "edit a"]
    assert not oldest["files"][0]["restorable"] and "dropped" in oldest["files"][0]["why"]
    (repo / "c.txt").write_text("TOP\nby hand\n")

    main_replies(fake_server, Reply.text("Going on from b."))
    term = start("-c")
    term.ready()
    term.submit("/rewind 1")  # edit c, code only: c.txt was changed by hand since
    term.expect("Rewind to before “edit c”")
    term.child.send("3")
    term.expect(r"c\.txt was changed outside the assistant since its last change")
    term.expect("Restore those files too")
    term.child.send("1")  # keep it
    term.expect(r"No file was restored\.")
    term.expect(r"Kept as they are \(changed outside the assistant\): c\.txt")
    assert (repo / "c.txt").read_text() == "TOP\nby hand\n"
    term.ready()
    term.submit("/rewind 2")  # edit b, code and conversation, this time overwriting the hand edit
    term.expect("Rewind to before “edit b”")
    term.child.send("1")
    term.expect("Restore those files too")
    term.child.send("2")
    term.expect(r"Restored 2 file\(s\) as they were before that message: ")
    term.expect("Rewound the conversation")
    term.ready()
    assert (repo / "b.txt").read_text() == "TOP b.txt\n" + BIG and (repo / "c.txt").read_text() == "TOP c.txt\n" + BIG
    assert (repo / "a.txt").read_text() == "EDITED a.txt\n" + BIG
    term.submit(" again")
    term.expect("Going on from b.")
    sent = fake_server.requests_for("main")[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert sent[0]["content"][0]["text"] == "edit a" and sent[-1]["content"][0]["text"] == "edit b again"
    term.ready()
    term.submit("/rewind 2")  # edit a (the list is now: edit b again, edit a): its copy was dropped over the cap
    term.expect("Rewind to before “edit a”")
    term.child.send("3")
    term.expect(r"a\.txt cannot be restored: its checkpoint was dropped to keep this session's checkpoints under 64 KB")
    store = json.loads(run_cli("checkpoints", "list", "--json").stdout)
    blobs = sum(p.stat().st_size for p in (Path(store["store"]) / "blobs").iterdir())
    assert blobs == store["stored_bytes"] <= store["cap_bytes"]
