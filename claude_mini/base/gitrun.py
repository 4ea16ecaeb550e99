"""git run so that the repository it runs in cannot make it start a program.

A repository that arrived with its own `.git` (an archive, a shared folder), or
one the model wrote, names programs in its configuration that git starts on
its own: core.fsmonitor, hooks, pagers, gpg programs, transports of a lazy
fetch, the drivers of a submodule. Every git the product runs (the read-only
Bash lines, the Read-deny check, the git root, staleness, the team tier's git
info, @-mention completion) runs with `neutral_env`: command-scope config
(`GIT_CONFIG_COUNT`, above every config file) that switches those keys off,
and the program variables made harmless. Driver keys (`filter.<name>.*`,
`diff.<name>.textconv`) have names only the repository knows; the read-only
Bash lines find and switch them off too (shell/git_safety.py); the product's
own git commands here never run a driver (no diff output, no index refresh).

What each key does was checked with git 2.39 (tests/tools/test_git_safety.py).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

# Subcommands the read-only check accepts; each gets pager.<name>=false.
READ_ONLY_SUBCOMMANDS = (
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "ls-files",
    "ls-tree",
    "rev-parse",
    "rev-list",
    "describe",
    "shortlog",
    "merge-base",
    "grep",
    "branch",
    "tag",
    "remote",
    "config",
    "stash",
)

# Transports by name. A per-protocol key (`protocol.ext.allow=always`) beats `protocol.allow`,
# so each known one is set to never by name as well; GIT_ALLOW_PROTOCOL (below) covers the
# names nobody can list (any `<helper>::` remote helper).
PROTOCOLS = ("ext", "fd", "file", "git", "ssh", "http", "https", "ftp", "ftps", "testgit")

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
    *((f"protocol.{name}.allow", "never") for name in PROTOCOLS),
    # git does not go into a submodule (whose own config may name drivers): the repository can
    # still ask for it (`submodule.<name>.ignore`), so the read-only lines also switch off the
    # submodules' drivers by name (shell/git_safety.py).
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("diff.submodule", "short"),
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
    # Set (even empty), it is the only list of allowed transports and beats every config key,
    # per-protocol ones included; empty allows none. Submodule and lazy-fetch children inherit it.
    "GIT_ALLOW_PROTOCOL": "",
    # A missing object is an error, never a fetch: git 2.45, and the May 2024 security releases
    # of older lines (2.39.4 on); without it the transports above still refuse.
    "GIT_NO_LAZY_FETCH": "1",
}
ENV_REMOVED = ("GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND")


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


def neutral_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) with git's program-running keys off and its program variables harmless."""
    base = os.environ if env is None else env
    out = {k: v for k, v in base.items() if k not in ENV_REMOVED}
    out.update(ENV_OVERRIDES)
    return with_config(out, list(NEUTRAL_CONFIG))


def run_git(cwd: Path | str, args: list[str], timeout: float) -> subprocess.CompletedProcess[bytes] | None:
    """`git args` in `cwd` under `neutral_env`, output as bytes; None when git is missing or too slow.

    Paths come unquoted (core.quotepath off) and messages in English.
    """
    env = {**neutral_env(), "LC_ALL": "C"}
    try:
        return subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def git_output(cwd: Path, args: list[str], timeout: float) -> str | None:
    """stdout of `git args` in `cwd`, or None (no git, not a repository, an error, too slow).

    Runs under `neutral_env` (no lock is taken, no prompt asked, no program the repository
    names is started); output that is not UTF-8 is decoded with replacement characters.
    """
    done = run_git(cwd, args, timeout)
    if done is None or done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")
