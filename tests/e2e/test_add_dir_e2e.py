"""End to end: a second folder (--add-dir, /add-dir, permissions.additionalDirectories).

Reading it, writing it as the mode allows (acceptEdits edits an added folder unasked, a folder
not added is still asked about), Bash writing it inside the sandbox, and one clear line for a
folder that is not there.
"""

from __future__ import annotations

import json

import pytest

from claude_mini.sandbox.bwrap import probe
from tests.e2e.conftest import text_of, tool_results
from tests.e2e.test_repl import main_replies, start  # noqa: F401 (start is a fixture)
from tests.fake_anthropic import Reply


@pytest.fixture
def other(tmp_path):
    folder = tmp_path / "other-repo"
    folder.mkdir()
    (folder / "lib.py").write_text("VALUE = 1\n")
    return folder


def write_call(other) -> Reply:
    return Reply.tool("Write", {"file_path": str(other / "new.py"), "content": "NEW = 2\n"})


def test_add_dir_lets_accept_edits_write_the_second_folder(run_cli, fake_server, other):
    main_replies(
        fake_server, Reply.tool("Read", {"file_path": str(other / "lib.py")}), write_call(other), Reply.text("Done.")
    )
    result = run_cli("-p", "copy it", "--permission-mode", "acceptEdits", "--add-dir", str(other))
    assert result.returncode == 0, result.stderr
    read, wrote = tool_results(fake_server)
    assert "VALUE = 1" in text_of(read) and not wrote.get("is_error"), wrote
    assert (other / "new.py").read_text() == "NEW = 2\n"
    system = json.dumps(fake_server.requests_for("main")[0].body["system"])
    assert f"Additional working directories: {other}" in system


def test_without_add_dir_the_write_is_not_allowed(run_cli, fake_server, other):
    main_replies(fake_server, write_call(other), Reply.text("Refused."))
    result = run_cli("-p", "copy it", "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    [refused] = tool_results(fake_server)
    assert refused["is_error"] and "outside the project" in text_of(refused)
    assert not (other / "new.py").exists()


def test_additional_directories_in_settings_work_like_the_flag(run_cli, fake_server, repo, other, isolated_env):
    settings = {"permissions": {"additionalDirectories": [str(other)]}}
    (isolated_env.home / "settings.json").write_text(json.dumps(settings))
    main_replies(fake_server, write_call(other), Reply.text("Done."))
    result = run_cli("-p", "copy it", "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    assert (other / "new.py").exists()


def test_a_missing_add_dir_is_one_line_and_nothing_runs(run_cli, fake_server, tmp_path):
    result = run_cli("-p", "hi", "--add-dir", str(tmp_path / "nope"))
    assert result.returncode == 2
    assert result.stderr.strip() == f"claude-mini: --add-dir {tmp_path / 'nope'}: no such folder; nothing was run."
    assert not fake_server.requests


@pytest.mark.skipif(not probe().works, reason=f"bwrap cannot run here: {probe().problem}")
@pytest.mark.parametrize("added", [True, False], ids=["added", "not-added"])
def test_the_sandbox_lets_bash_write_an_added_folder(run_cli, fake_server, other, added):
    main_replies(fake_server, Reply.tool("Bash", {"command": f"echo made > {other}/made.txt"}), Reply.text("ok"))
    extra = ["--add-dir", str(other)] if added else []
    result = run_cli("-p", "make it", "--permission-mode", "bypassPermissions", *extra)
    assert result.returncode == 0, result.stderr
    assert (other / "made.txt").exists() is added
    if not added:
        assert "No such file or directory" in text_of(tool_results(fake_server)[0])  # /tmp is the sandbox's own


def test_slash_add_dir_in_the_repl(start, fake_server, other):  # noqa: F811
    main_replies(fake_server, write_call(other), Reply.text("Written there."))
    term = start("--permission-mode", "acceptEdits")
    term.ready()
    term.submit(f"/add-dir {other / 'missing'}")
    term.expect(r"does\s+not\s+exist;\s+nothing\s+was\s+added")  # the long path may wrap the line
    term.ready()
    term.submit(f"/add-dir {other}")
    term.expect(r"as\s+a\s+working\s+folder\s+for\s+this\s+session")
    term.ready()
    term.submit(f"use @{other}/lib.py")
    term.expect("Written there.")
    assert (other / "new.py").read_text() == "NEW = 2\n"
    first = fake_server.requests_for("main")[0].body["messages"][0]["content"]
    texts = [c.get("text", "") for c in first]
    assert "VALUE = 1" in texts[0]  # the @mention of the added folder's file was attached
    assert any(f"The user added {other} as a working directory" in t for t in texts[1:])


@pytest.mark.parametrize("read", [False, True], ids=["default", "variable-set"])
def test_an_added_folders_claude_md_is_read_only_when_asked(run_cli, fake_server, other, read):
    (other / "CLAUDE.md").write_text("Other repo rule: tabs, never spaces.\n")
    env = {"CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD": "1"} if read else {}
    main_replies(fake_server, Reply.text("ok"))
    assert run_cli("-p", "hi", "--add-dir", str(other), env=env).returncode == 0
    system = json.dumps(fake_server.requests_for("main")[0].body["system"])
    assert ("Other repo rule: tabs, never spaces." in system) is read
