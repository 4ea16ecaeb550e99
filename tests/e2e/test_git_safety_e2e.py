"""End to end: a "read-only" git command the model runs cannot start a program a repository names.

The hostile layouts are on disk already (as an acceptEdits session could have
written them); the model asks for `git status` / `git diff`, which print mode
runs without asking. The marker files the hostile programs would create must
not exist afterwards.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from fake_anthropic import Reply


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


@pytest.mark.parametrize(("command", "attribute"), [
    ("git status", "filter"), ("git diff", "filter"), ("git diff", "diff"),
    ("git log -p -1", "diff"), ("git blame app.py", "diff"),
])
def test_repository_drivers_run_nothing(run_cli, fake_server, repo, tmp_path, command, attribute):
    marker = tmp_path / "driver-ran"
    git = lambda *a: subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *a],  # noqa: E731
                                    cwd=repo, check=True, capture_output=True)
    (repo / ".gitattributes").write_text(f"*.py {attribute}=evil\n")
    git("add", ".")
    git("commit", "-qm", "one")
    (repo / "app.py").write_text('def greet():\n    return "hellp"\n')
    git("commit", "-qam", "two")
    (repo / "app.py").write_text('def greet():\n    return "hellq"\n')
    os.utime(repo / "app.py", (1, 1))
    with open(repo / ".git" / "config", "a") as f:
        f.write(f'[filter "evil"]\n\tclean = "touch {marker}; cat"\n'
                f'[diff "evil"]\n\ttextconv = "touch {marker}; cat"\n\tcommand = "touch {marker}; true"\n')
    fake_server.queue(Reply.tool("Bash", {"command": command}), Reply.text("ok"))
    assert run_cli("-p", "what changed?").returncode == 0
    assert not marker.exists()
    assert ("app.py" if command == "git status" else "hell") in _last_tool_result(fake_server)
