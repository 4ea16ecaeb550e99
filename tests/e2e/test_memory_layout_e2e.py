"""End to end: the main agent cannot turn the memory folder's MEMORY.md into a folder (which left
every later start without an index), nor write anything but .md files there."""

from __future__ import annotations

from claude_mini.base import paths
from tests.fake_anthropic import Reply


def test_the_main_agent_cannot_make_memory_md_a_folder(run_cli, fake_server, repo):
    memory = paths.memory_dir(repo)
    fake_server.on(
        Reply.tools(
            [
                ("Write", {"file_path": str(memory / "MEMORY.md" / "x.md"), "content": "x\n"}),
                ("Write", {"file_path": str(memory / "notes.txt"), "content": "x\n"}),
            ]
        ),
        purpose="main",
    )
    fake_server.on(Reply.text("Saved elsewhere."), purpose="main")
    result = run_cli("-p", "remember x", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    folder, text = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][:2]
    assert folder["is_error"] and "the memory index, a file: nothing can be written inside it" in folder["content"]
    assert text["is_error"] and "only .md topic files" in text["content"]
    assert not (memory / "MEMORY.md").is_dir() and not (memory / "notes.txt").exists()
    again = run_cli("-p", "still there?")
    assert again.returncode == 0 and again.stderr == ""


def test_no_shell_command_turns_memory_md_into_a_folder(run_cli, fake_server, repo):
    memory = paths.memory_dir(repo)
    (repo / "d").mkdir()
    fake_server.on(
        Reply.tools(
            [
                ("Bash", {"command": f"mv d {memory}/MEMORY.md"}),
                ("Bash", {"command": f"cd {memory} && mkdir MEMORY.md"}),
            ]
        ),
        purpose="main",
    )
    fake_server.on(Reply.text("Left it."), purpose="main")
    result = run_cli("-p", "move it", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    moved, made = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][:2]
    assert moved["is_error"] and "a shell command may only read it" in moved["content"]
    assert made["is_error"] and made["content"].startswith("Permission needed") and "cannot be known" in made["content"]
    assert (repo / "d").is_dir() and not (memory / "MEMORY.md").is_dir()
