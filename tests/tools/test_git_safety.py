"""Read-only git through the Bash tool runs no program a repository's configuration names.

Every case runs the same command twice: with plain bash (the control: the
hostile configuration really does run its program there) and through the
BashTool (the marker file must stay absent).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from claude_mini.tools import ToolContext
from claude_mini.tools.bash import BashTool
from claude_mini.tools.git_safety import neutral_env, with_config

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, input=stdin)
    return done.stdout.decode().strip()


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    """The folder where hostile programs leave a file named after themselves."""
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder


def _touch(marks: Path, name: str) -> str:
    return f"touch {marks / name}"


def _hostile_repo(root: Path, config: str) -> Path:
    """A repository whose a.txt has a filter and a diff driver, history, a stat-dirty change."""
    root.mkdir()
    _git(root, "init", "-q", ".")
    _git(root, "config", "user.email", "a@example.com")
    _git(root, "config", "user.name", "a")
    (root / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    (root / "a.txt").write_text("hello\n")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "one")
    (root / "a.txt").write_text("hellp\n")
    _git(root, "commit", "-qam", "two")
    (root / "a.txt").write_text("hellq\n")  # same size and an old mtime: status must hash it
    os.utime(root / "a.txt", (1, 1))
    with open(root / ".git" / "config", "a") as f:
        f.write(config)
    return root


def _plain(root: Path, command: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, stdin=subprocess.DEVNULL, env=env)


def _tool(root: Path, command: str):
    ctx = ToolContext(cwd=root, project_root=root)
    return asyncio.run(BashTool().call({"command": command}, ctx))


def _fired(marks: Path) -> list[str]:
    found = sorted(p.name for p in marks.iterdir())
    for p in marks.iterdir():
        p.unlink()
    return found


def _config(kind: str, marks: Path) -> str:
    t = lambda name: _touch(marks, name)  # noqa: E731
    return {
        "fsmonitor": f'[core]\n\tfsmonitor = "{t("fsmonitor")}; false"\n',
        "clean": f'[filter "evil"]\n\tclean = "{t("clean")}; cat"\n',
        "process": f'[filter "evil"]\n\tprocess = "{t("process")}"\n',
        "textconv": f'[diff "evil"]\n\ttextconv = "{t("textconv")}; cat"\n',
        "command": f'[diff "evil"]\n\tcommand = "{t("command")}; true"\n',
        "external": f'[diff]\n\texternal = "{t("external")}; true"\n',
        "hooks": f"[core]\n\thooksPath = {marks.parent / 'hooks'}\n",
    }[kind]


# (configuration, commands that run its program with plain git)
CASES = [
    ("fsmonitor", ["git status", "git diff", "git ls-files -m", "git grep hell", "git blame a.txt"]),
    ("clean", ["git status", "git diff --stat", "git ls-files -m", "git status -v"]),
    ("process", ["git status", "git diff", "git blame a.txt"]),
    ("textconv", ["git diff", "git log -p -1", "git show", "git blame a.txt", "git diff HEAD~1"]),
    ("command", ["git diff", "git diff HEAD~1"]),
    ("external", ["git diff", "git diff HEAD~1"]),
    ("hooks", ["git status", "git status -v"]),  # post-index-change, when status refreshes the index
]


@pytest.mark.parametrize(("kind", "commands"), CASES)
def test_repository_config_runs_nothing_through_the_tool(tmp_path: Path, marks: Path, kind, commands) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    hook = hooks / "post-index-change"
    hook.write_text(f"#!/bin/sh\n{_touch(marks, 'hook')}\n")
    hook.chmod(0o755)
    for command in commands:
        root = _hostile_repo(tmp_path / f"repo-{commands.index(command)}", _config(kind, marks))
        _plain(root, command)
        assert _fired(marks), f"control: plain `{command}` should run the {kind} program"
        os.utime(root / "a.txt", (1, 1))
        _tool(root, command)
        assert _fired(marks) == [], f"`{command}` ran the repository's {kind} program"


def test_diffs_still_show_content_with_drivers_switched_off(tmp_path: Path, marks: Path) -> None:
    root = _hostile_repo(tmp_path / "repo", _config("textconv", marks) + _config("command", marks))
    result = _tool(root, "git diff")
    assert "-hellp" in result.content and "+hellq" in result.content and not result.is_error
    assert "+hellp" in _tool(root, "git log -p -1").content


def test_bare_layout_in_a_folder_is_not_a_repository(tmp_path: Path, marks: Path) -> None:
    """What acceptEdits can write: HEAD, config with core.fsmonitor, objects/, refs/."""
    bare = tmp_path / "innocent"
    (bare / "objects").mkdir(parents=True)
    (bare / "refs" / "heads").mkdir(parents=True)
    (bare / "sub").mkdir()
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    (bare / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f'\tfsmonitor = "{_touch(marks, "fsmonitor")}; false"\n'
    )
    for folder, command in [(bare, "git status"), (bare, "git ls-files"), (bare / "sub", "git status")]:
        _plain(folder, command)
        assert _fired(marks) == ["fsmonitor"]
        result = _tool(folder, command)
        assert _fired(marks) == []
        assert "safe.bareRepository" in result.content and result.is_error


def test_a_git_file_pointing_at_a_written_folder(tmp_path: Path, marks: Path) -> None:
    root = tmp_path / "proj"
    (root / "gd" / "objects").mkdir(parents=True)
    (root / "gd" / "refs" / "heads").mkdir(parents=True)
    (root / "gd" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "gd" / "config").write_text(
        f'[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "{_touch(marks, "m")}; false"\n'
    )
    (root / ".git").write_text("gitdir: gd\n")
    _plain(root, "git status")
    assert _fired(marks) == ["m"]
    _tool(root, "git status")
    assert _fired(marks) == []


def test_signature_verification_runs_no_gpg_program(tmp_path: Path, marks: Path) -> None:
    gpg = tmp_path / "gpg.sh"
    gpg.write_text(f"#!/bin/sh\n{_touch(marks, 'gpg')}\n")
    gpg.chmod(0o755)
    root = _hostile_repo(tmp_path / "repo", f"[gpg]\n\tprogram = {gpg}\n[log]\n\tshowSignature = true\n")
    tree, head = _git(root, "rev-parse", "HEAD^{tree}"), _git(root, "rev-parse", "HEAD")
    commit = (f"tree {tree}\nparent {head}\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n"
              "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ==\n -----END PGP SIGNATURE-----\n\nsigned\n")
    _git(root, "update-ref", "HEAD", _git(root, "hash-object", "-t", "commit", "-w", "--stdin",
                                           stdin=commit.encode()))
    for command in ["git log -1", "git show --stat", "git log --show-signature -1", "git log --format=%GG -1"]:
        _plain(root, command)
        assert _fired(marks) == ["gpg"], command
        _tool(root, command)
        assert _fired(marks) == [], command


def test_lazy_fetch_of_a_partial_clone_runs_no_upload_pack(tmp_path: Path, marks: Path) -> None:
    origin, clone = tmp_path / "origin", tmp_path / "clone"
    origin.mkdir()
    _git(origin, "init", "-q", ".")
    (origin / "a.txt").write_text("lazy\n")
    _git(origin, "add", ".")
    _git(origin, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one")
    _git(origin, "config", "uploadpack.allowFilter", "true")
    _git(tmp_path, "clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{origin}", str(clone))
    _git(clone, "config", "remote.origin.uploadpack", f"{_touch(marks, 'upload')}; git-upload-pack")
    for command in ["git show HEAD:a.txt", "git log -p -1", "git grep lazy HEAD"]:
        result = _tool(clone, command)
        assert _fired(marks) == [] and ("not allowed" in result.content or "lazy fetching disabled" in result.content), command
    _plain(clone, "git show HEAD:a.txt")
    assert _fired(marks) == ["upload"]  # the control, last: it fetches the blob for good


def test_the_users_own_git_c_parameters_cannot_reopen_a_key(tmp_path: Path, marks: Path, monkeypatch) -> None:
    """GIT_CONFIG_PARAMETERS beats GIT_CONFIG_COUNT, so ours are appended there too."""
    root = _hostile_repo(tmp_path / "repo", "")
    params = f"'core.fsmonitor'='{_touch(marks, 'params')}; false'"
    _plain(root, "git status", env={**os.environ, "GIT_CONFIG_PARAMETERS": params})
    assert _fired(marks) == ["params"]
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", params)
    _tool(root, "git status")
    assert _fired(marks) == []


def test_lines_that_are_not_read_only_keep_the_users_configuration(tmp_path: Path, marks: Path) -> None:
    """A line the user approved (here: one that writes a file) runs git as configured."""
    root = _hostile_repo(tmp_path / "repo", _config("fsmonitor", marks))
    _tool(root, "git status > out.txt")
    assert _fired(marks) == ["fsmonitor"]


def test_drivers_from_the_users_global_config_are_kept(tmp_path: Path, marks: Path, monkeypatch) -> None:
    """git-lfs and friends live in ~/.gitconfig: only repository-defined drivers are switched off."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f'[filter "evil"]\n\tclean = "{_touch(marks, "global")}; cat"\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    root = _hostile_repo(tmp_path / "repo", "")
    _tool(root, "git status")
    assert _fired(marks) == ["global"]


@pytest.mark.parametrize("variable", ["GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_PAGER", "GIT_ASKPASS"])
def test_program_variables_are_removed_or_harmless(tmp_path: Path, variable: str) -> None:
    env = neutral_env({variable: "touch /tmp/x", "PATH": "/usr/bin"})
    assert env.get(variable) in (None, "cat")
    assert env["PATH"] == "/usr/bin"


def test_config_pairs_are_appended_after_the_users_own() -> None:
    env = with_config({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c"},
                      [("core.fsmonitor", "false"), ("x.y", "it's")])
    assert env["GIT_CONFIG_COUNT"] == "3" and env["GIT_CONFIG_KEY_0"] == "a.b"
    assert (env["GIT_CONFIG_KEY_2"], env["GIT_CONFIG_VALUE_2"]) == ("x.y", "it's")
    assert "GIT_CONFIG_PARAMETERS" not in env
    quoted = with_config({"GIT_CONFIG_PARAMETERS": "'u.v'='w'"}, [("x.y", "it's")])["GIT_CONFIG_PARAMETERS"]
    assert quoted == "'u.v'='w' 'x.y'='it'\\''s'"
