"""End to end: `claude-mini checkpoints list|restore`, /rewind for scripts, on sessions run with -p.

Restoring refuses (exit 1, one line, nothing changed) an unknown message id or a file changed by
hand since, unless --force; a conversation restore is what the next `-c` continues from. A damaged
index or a missing saved copy gets one line, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_repl import main_replies
from tests.fake_anthropic import Reply

ORIGINAL_APP = 'def greet():\n    return "hello"\n'
QUIET = {"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}


def two_turns(fake_server, run_cli) -> list[dict]:
    """`create new.txt`, then `edit app`; the messages `checkpoints list --json` gives, newest first."""
    main_replies(
        fake_server,
        Reply.tool("Write", {"file_path": "new.txt", "content": "new\n"}),
        Reply.text("Made it."),
        Reply.tool("Read", {"file_path": "app.py"}),
        Reply.tool("Edit", {"file_path": "app.py", "old_string": "hello", "new_string": "hi"}),
        Reply.text("Edited."),
    )
    for i, text in enumerate(("create new.txt", "edit app")):
        done = run_cli(*(["-c"] if i else []), "-p", text, "--permission-mode", "acceptEdits", env=QUIET)
        assert done.returncode == 0, done.stderr
    listed = run_cli("checkpoints", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)["messages"]


def test_list_then_restore_refuses_a_hand_edit_until_forced_and_continue_sees_the_rewind(run_cli, fake_server, repo):
    newest, first = two_turns(fake_server, run_cli)
    assert (newest["text"], first["text"]) == ("edit app", "create new.txt")
    assert [(Path(f["path"]).name, f["created"]) for f in first["files"]] == [("new.txt", True)]
    text = run_cli("checkpoints", "list").stdout
    assert f"{first['id']}" in text and "created new.txt" in text and "changed app.py" in text

    unknown = run_cli("checkpoints", "restore", "no-such-message")
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr.startswith(
        "claude-mini checkpoints: No message 'no-such-message' in the current conversation"
    )
    assert len(unknown.stderr.splitlines()) == 1

    (repo / "app.py").write_text("# by hand\n")
    refused = run_cli("checkpoints", "restore", first["id"][:8])
    assert refused.returncode == 1 and len(refused.stderr.splitlines()) == 1
    assert "app.py was changed outside the assistant" in refused.stderr and "--force" in refused.stderr
    assert (repo / "new.txt").exists() and (repo / "app.py").read_text() == "# by hand\n"  # nothing changed

    forced = run_cli("checkpoints", "restore", first["id"], "--force")
    assert forced.returncode == 0, forced.stderr
    assert "Restored 1 file(s) as they were before that message: app.py." in forced.stdout
    assert "Deleted 1 file(s) the assistant created: new.txt." in forced.stdout
    assert "The message was: create new.txt" in forced.stdout
    assert (repo / "app.py").read_text() == ORIGINAL_APP and not (repo / "new.txt").exists()

    main_replies(fake_server, Reply.text("Fresh start."))
    again = run_cli("-c", "-p", "start over", env=QUIET)
    assert again.returncode == 0 and "Fresh start." in again.stdout, again.stderr
    sent = fake_server.requests_for("main")[-1].body["messages"]
    assert [m["content"][0]["text"] for m in sent] == ["start over"]  # the rewound part is gone
    assert run_cli("checkpoints", "list", "--json").stdout.count('"text"') == 1  # only "start over" is left


def test_a_damaged_index_and_a_missing_copy_get_one_line_each(run_cli, fake_server, repo, isolated_env):
    newest, first = two_turns(fake_server, run_cli)
    store = Path(json.loads(run_cli("checkpoints", "list", "--json").stdout)["store"])
    for blob in (store / "blobs").iterdir():
        blob.unlink()
    missing = run_cli("checkpoints", "restore", newest["id"], "--code-only")
    assert missing.returncode == 0, missing.stderr
    assert "app.py cannot be restored: its saved copy" in missing.stdout and "is missing or damaged" in missing.stdout
    assert "No file was restored." in missing.stdout and (repo / "app.py").read_text() != ORIGINAL_APP

    (store / "index.json").write_text("{not json")
    listed = run_cli("checkpoints", "list")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr
    assert listed.stderr.count("\n") == 1 and "The checkpoint index" in listed.stderr and "is damaged" in listed.stderr
    code = run_cli("checkpoints", "restore", newest["id"], "--code-only")
    assert code.returncode == 1 and len(code.stderr.splitlines()) == 1 and "Nothing was restored" in code.stderr
    assert (store / "index.json").read_text() == "{not json"  # left as it was

    main_replies(fake_server, Reply.tool("Write", {"file_path": "later.txt", "content": "x\n"}), Reply.text("ok"))
    later = run_cli("-c", "-p", "one more", "--permission-mode", "acceptEdits", env=QUIET)
    assert "The checkpoint index was damaged; it was kept as" in later.stderr
    assert [p.name.startswith("index.json.damaged-") for p in store.iterdir()].count(True) == 1
    assert json.loads(run_cli("checkpoints", "list", "--json").stdout)["messages"][0]["files"][0]["created"]


def snapshot(folder: Path) -> dict[str, str]:
    """Every file below `folder` with its content: what the test judges on disk."""
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_folder_that_became_a_symlink_is_never_written_or_deleted_through(run_cli, fake_server, repo, tmp_path):
    """`restore --force` went through `sub`, now a link out of the repository, and wrote
    f.txt and deleted new.txt there. Both are refused with one line each; nothing outside changes."""
    (repo / "sub").mkdir()
    (repo / "sub" / "f.txt").write_text("original\n")
    main_replies(
        fake_server,
        Reply.tool("Read", {"file_path": "sub/f.txt"}),
        Reply.tool("Edit", {"file_path": "sub/f.txt", "old_string": "original", "new_string": "edited"}),
        Reply.tool("Write", {"file_path": "sub/new.txt", "content": "made\n"}),
        Reply.text("Done."),
    )
    done = run_cli("-p", "edit sub", "--permission-mode", "acceptEdits", env=QUIET)
    assert done.returncode == 0, done.stderr
    [message] = json.loads(run_cli("checkpoints", "list", "--json").stdout)["messages"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("someone else's file\n")
    (outside / "new.txt").write_text("someone else's other file\n")
    (outside / "keep.txt").write_text("untouched\n")
    before = snapshot(outside)
    (repo / "sub" / "f.txt").unlink()
    (repo / "sub" / "new.txt").unlink()
    (repo / "sub").rmdir()
    (repo / "sub").symlink_to(outside)

    for args in (("--force",), ()):
        restored = run_cli("checkpoints", "restore", message["id"], "--code-only", *args)
        assert restored.returncode == 0 and "Traceback" not in restored.stderr, restored.stderr
        assert snapshot(outside) == before and (repo / "sub").is_symlink()
        refusals = [line for line in restored.stdout.splitlines() if "is now a symbolic link" in line]
        assert sorted(line.split(" cannot be restored")[0] for line in refusals) == ["sub/f.txt", "sub/new.txt"]
        assert all(f"its folder sub is now a symbolic link (to {outside})" in line for line in refusals)
        assert "No file was restored." in restored.stdout
