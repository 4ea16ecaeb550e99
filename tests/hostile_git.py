"""Repositories that arrive with their own `.git` and name programs git would start.

Built with real git; each program only creates a marker file, which the tests look for.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = ("-c", "user.email=a@example.com", "-c", "user.name=a", "-c", "protocol.file.allow=always")


def git(root: Path, *args: str) -> str:
    """Run git in `root` (committer set, local submodules allowed); its stdout."""
    done = subprocess.run(["git", *IDENTITY, *args], cwd=root, check=True, capture_output=True)
    return done.stdout.decode().strip()


def partial_clone_with_ext_remote(root: Path, marker: Path, helper: str = "ext") -> Path:
    """A partial clone whose s.txt blob is missing and whose promisor remote runs `touch marker`.

    `protocol.<helper>.allow=always` is the per-protocol key that beats `protocol.allow=never`.
    With helper "ext" the remote is `ext::sh -c touch% <marker>`; with any other name it is
    `<helper>::x`, which runs `git-remote-<helper>` from PATH.
    """
    root.mkdir(parents=True)
    git(root, "init", "-q", ".")
    (root / "s.txt").write_text("secret\n")
    git(root, "add", "s.txt")
    git(root, "commit", "-qm", "one")
    blob = git(root, "rev-parse", "HEAD:s.txt")
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    url = f"ext::sh -c touch% {marker}" if helper == "ext" else f"{helper}::x"
    for key, value in [
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", url),
        ("remote.origin.promisor", "true"),
        ("remote.origin.partialclonefilter", "blob:none"),
        (f"protocol.{helper}.allow", "always"),
    ]:
        git(root, "config", key, value)
    return root


SUBMODULE_CONFIG = {
    "clean": '[filter "evil"]\n\tclean = "touch {m}/clean; cat"\n',
    "textconv": '[diff "evil"]\n\ttextconv = "touch {m}/textconv; cat"\n',
    "command": '[diff "evil"]\n\tcommand = "touch {m}/command; true"\n',
    "external": '[diff]\n\texternal = "touch {m}/external; true"\n',
    "fsmonitor": '[core]\n\tfsmonitor = "touch {m}/fsmonitor; false"\n',
}


def repo_with_driven_file(root: Path) -> Path:
    """`root` made a repository whose a.txt uses the `evil` filter and diff driver, in two commits."""
    git(root, "init", "-q", ".")
    (root / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    (root / "a.txt").write_text("hello\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "one")
    (root / "a.txt").write_text("hellp\n")
    git(root, "commit", "-qam", "two")
    return root


def make_stat_dirty(path: Path) -> None:
    """A change of the same size with an old mtime: `git status` must hash the file (running its filter)."""
    path.write_text("hellq\n")
    os.utime(path, (1, 1))


def superproject_with_hostile_submodule(root: Path, marks: Path, kind: str, *, absorbed: bool = True) -> Path:
    """`root/super` whose submodule `sub` has a dirty a.txt and, in its own config, a `kind` program.

    The superproject's .gitmodules asks git to look into the submodule (`ignore = none`).
    Absorbed: the submodule's git folder is `.git/modules/sub`; otherwise `sub/.git` is a folder
    (a repository unpacked from an archive).
    """
    source = root / "subsrc"
    source.mkdir(parents=True)
    repo_with_driven_file(source)
    top = root / "super"
    top.mkdir()
    git(top, "init", "-q", ".")
    (top / "x").write_text("x\n")
    git(top, "add", "x")
    git(top, "commit", "-qm", "one")
    git(top, "submodule", "add", "-q", "../subsrc", "sub")
    git(top, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none")
    git(top, "commit", "-qam", "sub")
    git_dir = top / ".git" / "modules" / "sub"
    if not absorbed:
        (top / "sub" / ".git").unlink()
        git_dir.rename(top / "sub" / ".git")
        git_dir = top / "sub" / ".git"
        git(top, "config", "--file", str(git_dir / "config"), "--unset", "core.worktree")
    with open(git_dir / "config", "a") as f:
        f.write(SUBMODULE_CONFIG[kind].format(m=marks))
    make_stat_dirty(top / "sub" / "a.txt")
    return top


def fsmonitor_repo(root: Path, marker: Path) -> Path:
    """A repository with a committed file and `core.fsmonitor` naming `touch marker`."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", ".")
    (root / "app.py").write_text("print('hi')\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "one")
    with open(root / ".git" / "config", "a") as f:
        f.write(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')
    return root
