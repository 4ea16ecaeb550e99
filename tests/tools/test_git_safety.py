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

from claude_mini.base.gitrun import NEUTRAL_CONFIG, neutral_env, with_config
from claude_mini.shell.git_safety import untrusted_driver_keys
from claude_mini.tools import ToolContext
from claude_mini.tools.bash import BashTool
from tests.hostile_git import (
    SUBMODULE_CONFIG,
    fsmonitor_repo,
    make_stat_dirty,
    partial_clone_with_ext_remote,
    repo_with_driven_file,
    superproject_with_hostile_submodule,
)

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
    repo_with_driven_file(root)
    _git(root, "config", "user.email", "a@example.com")
    _git(root, "config", "user.name", "a")
    make_stat_dirty(root / "a.txt")
    with open(root / ".git" / "config", "a") as f:
        f.write(config)
    return root


def _plain(root: Path, command: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, stdin=subprocess.DEVNULL, env=env)


def _tool(root: Path, command: str):
    ctx = ToolContext(cwd=root, project_root=root)
    return asyncio.run(BashTool().call({"command": command}, ctx))


def _stale_stat(root: Path) -> None:
    """An unchanged tracked file with a new mtime: `git status` refreshes its stat and so writes the index.

    Without it, whether status writes the index (and runs post-index-change) depends on how
    the index's and a.txt's times compare, which a busy machine changes.
    """
    os.utime(root / ".gitattributes", (2, 2))


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
        _stale_stat(root)
        _plain(root, command)
        assert _fired(marks), f"control: plain `{command}` should run the {kind} program"
        os.utime(root / "a.txt", (1, 1))
        _stale_stat(root)
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
    commit = (
        f"tree {tree}\nparent {head}\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ==\n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    _git(root, "update-ref", "HEAD", _git(root, "hash-object", "-t", "commit", "-w", "--stdin", stdin=commit.encode()))
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
        assert _fired(marks) == [] and (
            "not allowed" in result.content or "lazy fetching disabled" in result.content
        ), command
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
    env = with_config(
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c"},
        [("core.fsmonitor", "false"), ("x.y", "it's")],
    )
    assert env["GIT_CONFIG_COUNT"] == "3" and env["GIT_CONFIG_KEY_0"] == "a.b"
    assert (env["GIT_CONFIG_KEY_2"], env["GIT_CONFIG_VALUE_2"]) == ("x.y", "it's")
    assert "GIT_CONFIG_PARAMETERS" not in env
    quoted = with_config({"GIT_CONFIG_PARAMETERS": "'u.v'='w'"}, [("x.y", "it's")])["GIT_CONFIG_PARAMETERS"]
    assert quoted == "'u.v'='w' 'x.y'='it'\\''s'"


# ---- a repository that arrived with its own .git


def _no_lazy_fetch_guard(env: dict[str, str]) -> dict[str, str]:
    """The neutral environment as an older git sees it: GIT_NO_LAZY_FETCH not understood."""
    return {k: v for k, v in env.items() if k != "GIT_NO_LAZY_FETCH"}


@pytest.mark.parametrize("command", ["git show HEAD:s.txt", "git log -p -1", "git grep secret HEAD"])
def test_a_per_protocol_key_cannot_reopen_the_ext_transport(tmp_path: Path, marks: Path, command: str) -> None:
    """`protocol.ext.allow=always` beats `protocol.allow=never`: the read-only line must still fetch nothing."""
    clone = partial_clone_with_ext_remote(tmp_path / "clone", marks / "ext")
    result = _tool(clone, command)
    assert _fired(marks) == [], command
    assert result.is_error
    _plain(clone, command)
    assert _fired(marks) == ["ext"], "control: plain git runs the ext:: command"


@pytest.mark.parametrize("drop", ["GIT_ALLOW_PROTOCOL", "GIT_CONFIG_COUNT"])
def test_each_transport_guard_holds_alone_without_the_lazy_fetch_switch(tmp_path: Path, marks: Path, drop) -> None:
    """git before 2.39.4 ignores GIT_NO_LAZY_FETCH: the empty GIT_ALLOW_PROTOCOL and the per-name
    `protocol.ext.allow=never` each stop the fetch on their own."""
    clone = partial_clone_with_ext_remote(tmp_path / "clone", marks / "ext")
    env = {k: v for k, v in _no_lazy_fetch_guard(neutral_env(os.environ)).items() if k != drop}
    if drop == "GIT_CONFIG_COUNT":  # keep only the protocol keys of the command scope
        env = with_config(
            {k: v for k, v in env.items() if not k.startswith("GIT_CONFIG_")},
            [(k, v) for k, v in NEUTRAL_CONFIG if k.startswith("protocol.")],
        )
        env.pop("GIT_ALLOW_PROTOCOL")
    done = subprocess.run(["git", "show", "HEAD:s.txt"], cwd=clone, env=env, capture_output=True, text=True)
    assert _fired(marks) == [] and "transport 'ext' not allowed" in done.stderr


def test_a_remote_helper_of_any_name_is_refused(tmp_path: Path, marks: Path, monkeypatch) -> None:
    """No list of names covers every `<name>::` helper: the empty GIT_ALLOW_PROTOCOL does."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helper = bin_dir / "git-remote-evil"
    helper.write_text(f"#!/bin/sh\n{_touch(marks, 'helper')}\nexit 1\n")
    helper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    clone = partial_clone_with_ext_remote(tmp_path / "clone", marks / "unused", helper="evil")
    done = subprocess.run(
        ["git", "show", "HEAD:s.txt"],
        cwd=clone,
        env=_no_lazy_fetch_guard(neutral_env()),
        capture_output=True,
        text=True,
    )
    assert _fired(marks) == [] and "transport 'evil' not allowed" in done.stderr
    _tool(clone, "git show HEAD:s.txt")
    assert _fired(marks) == []
    _plain(clone, "git show HEAD:s.txt")
    assert _fired(marks) == ["helper"], "control: plain git runs the helper"


SUBMODULE_COMMANDS = [
    "git status",
    "git diff",
    "git diff HEAD",
    "git status --ignore-submodules=none",
    "git diff --submodule=diff",
    "git log -p -1 --submodule=diff",
    "git show --submodule=diff",
]


@pytest.mark.parametrize("absorbed", [True, False], ids=["absorbed", "own-git-folder"])
@pytest.mark.parametrize("kind", sorted(SUBMODULE_CONFIG))
def test_a_submodules_own_config_runs_nothing(tmp_path: Path, marks: Path, kind: str, absorbed: bool) -> None:
    fired_plain = set()
    for i, command in enumerate(SUBMODULE_COMMANDS):
        top = superproject_with_hostile_submodule(tmp_path / f"{i}-plain", marks, kind, absorbed=absorbed)
        _plain(top, command)
        fired_plain.update(_fired(marks))
        top = superproject_with_hostile_submodule(tmp_path / f"{i}-tool", marks, kind, absorbed=absorbed)
        result = _tool(top, command)
        assert _fired(marks) == [], f"`{command}` ran the submodule's {kind} program"
        assert not result.is_error or "fatal" not in result.content, result.content
    assert fired_plain == {kind}, "control: plain git runs the submodule's program for some of these"


def test_a_submodule_git_file_pointing_anywhere_is_looked_into(tmp_path: Path, marks: Path) -> None:
    """`sub/.git` may name any folder (`gitdir: ../../elsewhere`), not only `.git/modules/<name>`."""
    top = superproject_with_hostile_submodule(tmp_path, marks, "clean")
    elsewhere = tmp_path / "elsewhere"
    (top / ".git" / "modules" / "sub").rename(elsewhere)
    (top / "sub" / ".git").write_text(f"gitdir: {os.path.relpath(elsewhere, top / 'sub')}\n")
    subprocess.run(
        ["git", "config", "--file", str(elsewhere / "config"), "core.worktree", str(top / "sub")], check=True
    )
    os.utime(top / "sub" / "a.txt", (1, 1))
    _tool(top, "git status --ignore-submodules=none")
    assert _fired(marks) == []
    _plain(top, "git status --ignore-submodules=none")
    assert _fired(marks) == ["clean"]


def test_submodule_drivers_are_found_by_name(tmp_path: Path, marks: Path) -> None:
    top = superproject_with_hostile_submodule(tmp_path, marks, "textconv")
    keys = asyncio.run(untrusted_driver_keys(neutral_env(), top, top))
    assert "diff.evil.textconv" in keys


def test_the_neutral_environment_names_every_transport() -> None:
    env = neutral_env({"GIT_ALLOW_PROTOCOL": "ext:file", "PATH": "/usr/bin"})
    assert env["GIT_ALLOW_PROTOCOL"] == "" and env["GIT_NO_LAZY_FETCH"] == "1"
    pairs = {(env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"]) for i in range(int(env["GIT_CONFIG_COUNT"]))}
    for name in ("ext", "file", "git", "ssh", "http", "https"):
        assert (f"protocol.{name}.allow", "never") in pairs
    assert {("diff.ignoreSubmodules", "all"), ("submodule.recurse", "false")} <= pairs


@pytest.mark.parametrize("call", ["git_output", "run_git", "tracked_and_denied", "checkout_root"])
def test_the_products_own_git_runs_no_fsmonitor(tmp_path: Path, marks: Path, call: str) -> None:
    """Staleness, the team tier, the git root and the Read-deny check run git in the repository too."""
    from claude_mini.base import paths
    from claude_mini.base.gitrun import git_output, run_git
    from claude_mini.permissions import parse_rule
    from claude_mini.permissions.bash import _tracked_and_denied

    root = fsmonitor_repo(tmp_path / "repo", marks / "fsmonitor")
    _plain(root, "git ls-files -m")
    assert _fired(marks) == ["fsmonitor"]
    if call == "git_output":
        assert git_output(root, ["ls-files", "-m"], 5) == ""
    elif call == "run_git":
        assert run_git(root, ["status", "--porcelain"], 5) is not None
    elif call == "tracked_and_denied":
        rule = parse_rule("Read(app.py)", source="user", project_root=root)
        assert _tracked_and_denied(str(root), [rule]) is rule
    else:
        paths.checkout_root.cache_clear()
        assert paths.checkout_root(root) == Path(os.path.realpath(root))
    assert _fired(marks) == []
