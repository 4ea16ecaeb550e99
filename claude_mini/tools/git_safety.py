"""Read-only git that cannot run programs.

A "read-only" `git status`, `git diff` or `git log -p` obeys the configuration
of the repository it runs in, and several keys name programs git starts:
core.fsmonitor, filter drivers (status and diff run `clean`), diff drivers
(textconv, external diff), gpg.program, hooks, pagers, transports of a lazy
fetch. A model that may write files (acceptEdits) can write such a
repository. So every Bash line that the read-only check approves runs with
three layers of defence:

1. `GIT_CONFIG_COUNT` entries (command-line scope: they beat every config file)
   that switch the fixed keys off, plus `GIT_PAGER`/`GIT_EDITOR`/... harmless and
   `GIT_EXTERNAL_DIFF`/`GIT_SSH*`/askpass unset;
2. driver keys (`filter.<name>.*`, `diff.<name>.textconv|command`, `diff.external`)
   found in the configuration git would read there (one `git config
   --get-regexp` in the command's folder, under layer 1) and defined anywhere
   but the user's own system/global files are switched off by name;
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

# Subcommands the read-only check accepts; each gets pager.<name>=false.
READ_ONLY_SUBCOMMANDS = (
    "status", "log", "diff", "show", "blame", "ls-files", "ls-tree", "rev-parse", "rev-list",
    "describe", "shortlog", "merge-base", "grep", "branch", "tag", "remote", "config", "stash",
)

# Keys that would run a program, and the value that stops it. Empty values are not always
# "unset" (an empty diff.external or textconv is run and fails), hence `false`/`cat` below.
NEUTRAL_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("core.alternateRefsCommand", ""),
    ("core.editor", "true"),
    ("credential.helper", ""),  # an empty value clears the list of helpers
    ("safe.bareRepository", "explicit"),  # a bare layout written into a folder is not a repository
    ("protocol.allow", "never"),  # no transport: a lazy fetch cannot run upload-pack or ssh
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("log.showSignature", "false"),
    *((f"pager.{sub}", "false") for sub in READ_ONLY_SUBCOMMANDS),
)

ENV_OVERRIDES: dict[str, str] = {
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_OPTIONAL_LOCKS": "0",  # status does not rewrite the index (no post-index-change hook)
    "GIT_TERMINAL_PROMPT": "0",
}
ENV_REMOVED = ("GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS",
               "GIT_PROXY_COMMAND")

# Driver keys that run programs, with the value that stops each one.
_DRIVER_KEY = re.compile(
    r"^(?:(?P<filter>filter\..+\.(?:clean|smudge|process))|(?P<textconv>diff\..+\.textconv)"
    r"|(?P<command>diff\..+\.command)|(?P<external>diff\.external))$"
)
_DRIVER_REGEXP = r"^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|diff\.external)$"
_DRIVER_NEUTRAL = {"filter": "", "textconv": "cat", "command": "false", "external": "false"}
_TRUSTED_SCOPES = frozenset({"system", "global", "command"})
DISCOVERY_TIMEOUT_SECONDS = 10.0

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


def with_config(env: Mapping[str, str], pairs: list[tuple[str, str]]) -> dict[str, str]:
    """`env` plus `pairs` as command-scope git config, after (so above) any the user set.

    GIT_CONFIG_PARAMETERS (what `git -c` passes on) is read after GIT_CONFIG_COUNT and
    would win, so when the environment has it the pairs are appended there too.
    """
    out = dict(env)
    try:
        start = max(0, int(out.get("GIT_CONFIG_COUNT", "0")))
    except ValueError:
        start = 0
    for i, (key, value) in enumerate(pairs, start):
        out[f"GIT_CONFIG_KEY_{i}"] = key
        out[f"GIT_CONFIG_VALUE_{i}"] = value
    out["GIT_CONFIG_COUNT"] = str(start + len(pairs))
    if out.get("GIT_CONFIG_PARAMETERS"):
        quoted = " ".join(f"{_sq(key)}={_sq(value)}" for key, value in pairs)
        out["GIT_CONFIG_PARAMETERS"] = f"{out['GIT_CONFIG_PARAMETERS']} {quoted}"
    return out


def _sq(text: str) -> str:
    """git's own shell quoting (sq_quote): only `'\\''` is understood inside quotes."""
    return "'" + text.replace("'", "'\\''") + "'"


def neutral_env(env: Mapping[str, str]) -> dict[str, str]:
    """Layer 1: `env` with the fixed keys switched off and the program variables made harmless."""
    out = {k: v for k, v in env.items() if k not in ENV_REMOVED}
    out.update(ENV_OVERRIDES)
    return with_config(out, list(NEUTRAL_CONFIG))


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
    """Driver keys in the config git reads in `cwd` that the user's own files did not set.

    Trusted: system and global files outside the project (the model cannot write
    them without asking) and the command scope (the user's environment). Anything
    else, the repository's .git/config above all, may have been written by the model.
    """
    out = await _git_config_records(env, cwd)
    keys: list[str] = []
    fields = out.split(b"\0")
    for scope, origin, entry in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
        key = os.fsdecode(entry.partition(b"\n")[0])
        if not _trusted(os.fsdecode(scope), os.fsdecode(origin), project_root) and key not in keys:
            keys.append(key)
    return keys


def _trusted(scope: str, origin: str, project_root: Path) -> bool:
    if scope not in _TRUSTED_SCOPES:
        return False
    if not origin.startswith("file:"):
        return True  # command line or environment: set by the user
    path = origin[len("file:"):]
    root = os.path.realpath(project_root).rstrip("/") + "/"
    return os.path.isabs(path) and not os.path.realpath(path).startswith(root)


async def _git_config_records(env: Mapping[str, str], cwd: Path) -> bytes:
    """`git config --show-scope --show-origin --get-regexp` output; empty if git fails or is missing."""
    args = ["git", "config", "--null", "--show-scope", "--show-origin", "--get-regexp", _DRIVER_REGEXP]
    try:
        proc = await asyncio.create_subprocess_exec(
            *args, cwd=cwd, env=dict(env), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return b""
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), DISCOVERY_TIMEOUT_SECONDS)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return b""
    return out if proc.returncode == 0 else b""
