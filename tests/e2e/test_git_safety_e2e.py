"""End to end: a "read-only" git command the model runs cannot start a program a repository names.

The hostile layouts are on disk already (as an acceptEdits session could have
written them); the model asks for `git status` / `git diff`, which print mode
runs without asking. The marker files the hostile programs would create must
not exist afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.fake_anthropic import Reply
from tests.hostile_git import (
    fsmonitor_repo,
    partial_clone_with_ext_remote,
    superproject_with_hostile_submodule,
)


def _last_tool_result(fake_server) -> str:
    block = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]
    content = block["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def _bare_layout(folder, marker) -> None:
    (folder / "objects").mkdir(parents=True)
    (folder / "refs" / "heads").mkdir(parents=True)
    (folder / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f'\tfsmonitor = "touch {marker}; false"\n'
    )


@pytest.mark.parametrize("command", ["git status", "git ls-files", "git diff"])
def test_bare_layout_in_the_working_folder_runs_no_fsmonitor(run_cli, fake_server, tmp_path, command):
    project = tmp_path / "plain-project"  # not a git repository: the layout makes it one
    marker = tmp_path / "fsmonitor-ran"
    _bare_layout(project, marker)
    fake_server.queue(Reply.tool("Bash", {"command": command}), Reply.text("ok"))
    result = run_cli("-p", "check the repository", cwd=project)
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    seen = _last_tool_result(fake_server)
    assert "safe.bareRepository" in seen or "Not a git repository" in seen


@pytest.mark.parametrize(
    ("command", "attribute"),
    [
        ("git status", "filter"),
        ("git diff", "filter"),
        ("git diff", "diff"),
        ("git log -p -1", "diff"),
        ("git blame app.py", "diff"),
    ],
)
def test_repository_drivers_run_nothing(run_cli, fake_server, repo, tmp_path, command, attribute):
    marker = tmp_path / "driver-ran"

    def git(*a):
        return subprocess.run(
            ["git", "-c", "user.email=a@b", "-c", "user.name=a", *a], cwd=repo, check=True, capture_output=True
        )

    (repo / ".gitattributes").write_text(f"*.py {attribute}=evil\n")
    git("add", ".")
    git("commit", "-qm", "one")
    (repo / "app.py").write_text('def greet():\n    return "hellp"\n')
    git("commit", "-qam", "two")
    (repo / "app.py").write_text('def greet():\n    return "hellq"\n')
    os.utime(repo / "app.py", (1, 1))
    with open(repo / ".git" / "config", "a") as f:
        f.write(
            f'[filter "evil"]\n\tclean = "touch {marker}; cat"\n'
            f'[diff "evil"]\n\ttextconv = "touch {marker}; cat"\n\tcommand = "touch {marker}; true"\n'
        )
    fake_server.queue(Reply.tool("Bash", {"command": command}), Reply.text("ok"))
    assert run_cli("-p", "what changed?").returncode == 0
    assert not marker.exists()
    assert ("app.py" if command == "git status" else "hell") in _last_tool_result(fake_server)


# ---- repositories that arrived with their own .git; no prompt and nothing runs, in
# default mode, plan mode, the extraction fork and the Explore subagent.

MODES = ["default", "plan", "extract", "explore"]
# The bubblewrap sandbox is the first line where it runs; these prove the
# second line alone, so the sandbox is off (a key this branch's settings simply ignore).
NO_SANDBOX = {"sandbox": {"enabled": False}}


def _user_settings(home, **extra) -> None:
    (home / "settings.json").write_text(json.dumps({**NO_SANDBOX, **extra}))


def _run_in_mode(run_cli, fake_server, cwd, mode: str, command: str) -> str:
    """The model (or the fork, or an Explore child) runs `command` through Bash; its tool result.

    The user's settings must be written (sandbox off) before this is called.
    """
    bash = Reply.tool("Bash", {"command": command})
    args = ["-p", "look at the repository"]
    env = {"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}
    purpose = "main"
    if mode == "plan":
        args += ["--permission-mode", "plan"]
    if mode in ("default", "plan"):
        fake_server.queue(bash, Reply.text("ok"))
    elif mode == "extract":
        args = ["-p", "remember this"]
        env = {}
        purpose = "extract"
        fake_server.on(Reply.text("Noted."), purpose="main")
        fake_server.on(bash, purpose="extract")
        fake_server.on(Reply.text("Nothing to save."), purpose="extract")
    else:
        purpose = "subagent"
        explore = {"description": "Look", "prompt": "Look at the repository.", "subagent_type": "Explore"}
        fake_server.on(Reply.tool("Agent", explore), purpose="main", times=1)
        fake_server.on(Reply.text("ok"), purpose="main")
        fake_server.on(bash, purpose="subagent", times=1)
        fake_server.on(Reply.text("looked"), purpose="subagent")
    result = run_cli(*args, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    requests = fake_server.requests_for(purpose)
    assert len(requests) >= 2, f"the {purpose} agent never got its Bash result"
    blocks = [b for b in requests[1].body["messages"][-1]["content"] if b.get("type") == "tool_result"]
    content = blocks[0]["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


@pytest.mark.parametrize("mode", MODES)
def test_a_partial_clone_with_an_ext_remote_fetches_nothing(run_cli, fake_server, isolated_env, tmp_path, mode):
    """`protocol.ext.allow=always` beats `protocol.allow=never`; a missing blob makes `git show` fetch."""
    _user_settings(isolated_env.home)
    marker = tmp_path / "ext-ran"
    clone = partial_clone_with_ext_remote(tmp_path / "clone", marker)
    seen = _run_in_mode(run_cli, fake_server, clone, mode, "git show HEAD:s.txt")
    assert not marker.exists()
    assert "lazy fetching disabled" in seen or "not allowed" in seen, seen  # it ran, unasked, and failed


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", ["git status --ignore-submodules=none", "git diff --submodule=diff"])
def test_a_submodules_own_drivers_run_nothing(run_cli, fake_server, isolated_env, tmp_path, mode, command):
    _user_settings(isolated_env.home)
    marks = tmp_path / "marks"
    marks.mkdir()
    kind = "clean" if command.startswith("git status") else "textconv"
    top = superproject_with_hostile_submodule(tmp_path / "checkout", marks, kind)
    seen = _run_in_mode(run_cli, fake_server, top, mode, command)
    assert list(marks.iterdir()) == []
    assert "sub" in seen and "permission" not in seen.lower(), seen


@pytest.mark.parametrize("mode", ["default", "plan"])
def test_the_read_deny_check_runs_no_fsmonitor(run_cli, fake_server, isolated_env, tmp_path, mode):
    """`git log -p` under a Read deny rule: the check lists tracked files with git, in the repository."""
    marker = tmp_path / "fsmonitor-ran"
    root = fsmonitor_repo(tmp_path / "checkout", marker)
    _user_settings(isolated_env.home, permissions={"deny": ["Read(app.py)"]})
    seen = _run_in_mode(run_cli, fake_server, root, mode, "git log -p -1")
    assert not marker.exists()
    assert "Read(app.py)" in seen, seen
