"""Read-only git that cannot run programs.

A "read-only" `git status`, `git diff` or `git log -p` obeys the configuration
of the repository it runs in, and several keys name programs git starts:
core.fsmonitor, filter drivers (status and diff run `clean`), diff drivers
(textconv, external diff), gpg.program, hooks, pagers, transports of a lazy
fetch, and all of these again in a submodule's own config. A model that may
write files (acceptEdits) can write such a repository, and one can arrive with
its own `.git` (an archive, a shared folder). So every Bash line that the
read-only check approves runs with three layers of defence:

1. gitrun.neutral_env: `GIT_CONFIG_COUNT` entries (command-line scope: they beat
   every config file) that switch the fixed keys off (every transport by name,
   and `GIT_ALLOW_PROTOCOL` empty above them; submodules not entered), plus
   `GIT_PAGER`/`GIT_EDITOR`/... harmless and `GIT_EXTERNAL_DIFF`/`GIT_SSH*`/askpass unset;
2. driver keys (`filter.<name>.*`, `diff.<name>.textconv|command`, `diff.external`)
   found in the configuration git would read there and in every submodule it
   could enter (`git config --get-regexp` in each, under layer 1) and defined
   anywhere but the user's own system/global files are switched off by name;
   the command scope reaches submodule processes too;
3. a `git` shell function in the script that adds `--no-ext-diff --no-textconv`
   to the subcommands that accept them.

What each key does was checked with git 2.39 (tests/tools/test_git_safety.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from claude_mini.base.gitrun import (
    ENV_OVERRIDES,
    ENV_REMOVED,
    NEUTRAL_CONFIG,
    READ_ONLY_SUBCOMMANDS,
    neutral_env,
    with_config,
)

__all__ = [
    "ENV_OVERRIDES",
    "ENV_REMOVED",
    "GIT_FUNCTION",
    "NEUTRAL_CONFIG",
    "READ_ONLY_SUBCOMMANDS",
    "mentions_git",
    "neutral_env",
    "safe_git_env",
    "untrusted_driver_keys",
    "with_config",
]

# Driver keys that run programs, with the value that stops each one.
_DRIVER_KEY = re.compile(
    r"^(?:(?P<filter>filter\..+\.(?:clean|smudge|process))|(?P<textconv>diff\..+\.textconv)"
    r"|(?P<command>diff\..+\.command)|(?P<external>diff\.external))$"
)
_DRIVER_REGEXP = r"^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|diff\.external)$"
_DRIVER_NEUTRAL = {"filter": "", "textconv": "cat", "command": "false", "external": "false"}
_TRUSTED_SCOPES = frozenset({"system", "global", "command"})
DISCOVERY_TIMEOUT_SECONDS = 10.0
# Submodules whose drivers are looked up: the repository itself counts. Beyond it git may still
# go into a submodule only where the repository asks for it (`submodule.<name>.ignore`, or a
# `--ignore-submodules`/`--submodule=diff` option): the fixed keys keep it out otherwise.
MAX_REPOSITORIES = 64
SUBMODULE_DEPTH = 3

# Bash function defined before a read-only line: git subcommands that show diffs never run
# an external diff or textconv program, whatever the configuration says.
GIT_FUNCTION = r"""git() {
  local -a pre=()
  while (( $# )) && [[ $1 == -* ]]; do pre+=("$1"); shift; done
  case ${1-} in
    diff|log|show) local sub=$1; shift; command git "${pre[@]}" "$sub" --no-ext-diff --no-textconv "$@" ;;
    blame|grep) local sub=$1; shift; command git "${pre[@]}" "$sub" --no-textconv "$@" ;;
    stash) if [[ ${2-} == show ]]; then shift 2; command git "${pre[@]}" stash show --no-ext-diff --no-textconv "$@"
           else command git "${pre[@]}" "$@"; fi ;;
    *) command git "${pre[@]}" "$@" ;;
  esac
}"""

_MENTIONS_GIT = re.compile(r"(?<![\w.-])git(?![\w.-])")


def mentions_git(command: str) -> bool:
    """Whether the line may run git at all (then driver discovery is worth a process)."""
    return bool(_MENTIONS_GIT.search(command))


async def safe_git_env(env: Mapping[str, str], cwd: Path, project_root: Path, command: str) -> dict[str, str]:
    """The environment for a read-only line: layers 1 and 2 (see the module docstring)."""
    safe = neutral_env(env)
    if not mentions_git(command):
        return safe
    drivers = await untrusted_driver_keys(safe, cwd, project_root)
    return with_config(safe, [(key, _neutral_value(key)) for key in drivers]) if drivers else safe


def _neutral_value(key: str) -> str:
    match = _DRIVER_KEY.match(key)
    kind = next(name for name, value in match.groupdict().items() if value) if match else "filter"
    return _DRIVER_NEUTRAL[kind]


async def untrusted_driver_keys(env: Mapping[str, str], cwd: Path, project_root: Path) -> list[str]:
    """Driver keys git reads in `cwd`, or in a submodule it may enter, that the user's own files did not set.

    Trusted: system and global files outside the project (the model cannot write
    them without asking) and the command scope (the user's environment). Anything
    else, the repository's .git/config above all, may have been written by the model
    or have arrived with the repository. Keys are switched off by name in the command
    scope, which submodule processes inherit, so a submodule's own drivers are looked up too.
    """
    keys: list[str] = []
    args = ["config", "--null", "--show-scope", "--show-origin", "--get-regexp", _DRIVER_REGEXP]
    lookups = [_git(env, where, [*pre, *args]) for where, pre in await _repositories(env, cwd)]
    for code, out in await asyncio.gather(*lookups):
        fields = out.split(b"\0") if code == 0 else []
        for scope, origin, entry in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
            key = os.fsdecode(entry.partition(b"\n")[0])
            if not _trusted(os.fsdecode(scope), os.fsdecode(origin), project_root) and key not in keys:
                keys.append(key)
    return keys


async def _repositories(env: Mapping[str, str], cwd: Path) -> list[tuple[Path, list[str]]]:
    """Where git may read a config during a line run in `cwd`, as (folder, git options).

    `cwd` itself; every git folder under the common dir's `modules/` (absorbed submodules,
    nested ones too, populated or not: `log --submodule=diff` opens them by name); every
    populated submodule of the index, down to SUBMODULE_DEPTH (one with its own `.git`
    folder or a `.git` file pointing anywhere). At most MAX_REPOSITORIES (see the note there).
    """
    found: list[tuple[Path, list[str]]] = [(cwd, [])]
    _, out = await _git(env, cwd, ["rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel"])
    lines = os.fsdecode(out).splitlines()
    if not lines:
        return found
    git_dirs = await asyncio.to_thread(_module_git_dirs, Path(lines[0]))
    found += [(folder, ["--git-dir", str(folder)]) for folder in git_dirs]
    if len(lines) > 1:
        known = {os.path.realpath(folder) for folder in git_dirs}
        found += [(path, []) for path in await _populated_submodules(env, Path(lines[1]), known, SUBMODULE_DEPTH)]
    return found[:MAX_REPOSITORIES]


def _module_git_dirs(common_dir: Path) -> list[Path]:
    """Git folders (a `config` and a `HEAD`) under `common_dir/modules`, nested `modules/` included."""
    found: list[Path] = []
    for here, dirs, files in os.walk(common_dir / "modules"):
        if "config" in files and "HEAD" in files:
            found.append(Path(here))
            # Its object store and refs hold no git folder (and are the bulk of it); a submodule
            # named `a/b` beside one named `a` sits in a's folder, so the rest is walked.
            dirs[:] = [d for d in dirs if d not in ("objects", "refs", "logs")]
        if len(found) >= MAX_REPOSITORIES:
            break
    return found


async def _populated_submodules(env: Mapping[str, str], top: Path, known: set[str], depth: int) -> list[Path]:
    """Work trees of the gitlinks in `top`'s index that git would enter (their `.git` exists),
    leaving out those whose git folder is in `known`; then theirs, `depth` levels down."""
    code, out = await _git(env, top, ["ls-files", "--stage", "-z"])
    found: list[Path] = []
    for entry in out.split(b"\0") if code == 0 else []:
        meta, _, name = entry.partition(b"\t")
        if not meta.startswith(b"160000 ") or not name:
            continue
        path = top / os.fsdecode(name)
        dot_git = path / ".git"
        if not os.path.lexists(dot_git):
            continue
        if os.path.realpath(_gitfile_target(dot_git) or dot_git) not in known:
            found.append(path)
        if depth > 1 and len(found) < MAX_REPOSITORIES:
            found += await _populated_submodules(env, path, known, depth - 1)
        if len(found) >= MAX_REPOSITORIES:
            break
    return found


def _gitfile_target(dot_git: Path) -> str | None:
    """The folder a `.git` file names (`gitdir: <path>`, relative to its folder), None for a folder."""
    try:
        with open(dot_git, "rb") as f:
            line = f.read(4096).partition(b"\n")[0]
    except OSError:  # a folder, or unreadable: git is asked there
        return None
    if not line.startswith(b"gitdir: "):
        return None
    return os.path.join(dot_git.parent, os.fsdecode(line[len(b"gitdir: ") :].strip()))


def _trusted(scope: str, origin: str, project_root: Path) -> bool:
    if scope not in _TRUSTED_SCOPES:
        return False
    if not origin.startswith("file:"):
        return True  # command line or environment: set by the user
    path = origin[len("file:") :]
    root = os.path.realpath(project_root).rstrip("/") + "/"
    return os.path.isabs(path) and not os.path.realpath(path).startswith(root)


async def _git(env: Mapping[str, str], cwd: Path, args: list[str]) -> tuple[int, bytes]:
    """Exit status and stdout of `git args` in `cwd`; (-1, b"") if git is missing or too slow."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return -1, b""
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), DISCOVERY_TIMEOUT_SECONDS)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return -1, b""
    return proc.returncode if proc.returncode is not None else -1, out
