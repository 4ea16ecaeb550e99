"""The Bash decision's own steps, in the order of PermissionPolicy's docstring (policy.py).

- deny and ask rules match every command the line might run (shell/candidates.py), and one
  whose program cannot be known matches them all (`dynamic_note` says why);
- a Read deny rule makes a line ask when it reads a covered path (`bash_reads_denied`);
- allow rules (`bash_allowed`): every command of the line must be allowed by a rule or be
  read-only (shell/read_only.py);
- "yes, and don't ask again" offers a rule no wider than what the user saw (`bash_suggestion`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from claude_mini.permissions.decisions import Ask, RuleError
from claude_mini.permissions.request import ToolRequest
from claude_mini.permissions.rules import (
    Rule,
    collapse_spaces,
    parse_rule,
)
from claude_mini.shell.bash_reads import read_targets, shows_git_history
from claude_mini.shell.parse import ShellSyntaxError, parse_command
from claude_mini.shell.read_only import read_only_problem
from claude_mini.shell.runners import runs_arbitrary_code

_RISKY_PROGRAMS = frozenset(
    {
        "rm",
        "rmdir",
        "mv",
        "dd",
        "chmod",
        "chown",
        "sudo",
        "curl",
        "wget",
        "kill",
        "pkill",
        "killall",
        "shred",
        "truncate",
        "mkfs",
    }
)
# Programs that run other programs or write files they are told: `Bash(docker run:*)` or `tee:*`
# would allow any command or any file; "don't ask again" offers the exact line instead.
_RUNS_OR_WRITES = frozenset(
    {
        "tee",
        "crontab",
        "at",
        "batch",
        "cp",
        "install",
        "ln",
        "rsync",
        "scp",
        "sftp",
        "patch",
        "unzip",
        "launchctl",
        "aws-vault",
    }
)
_RUNNING_SUBCOMMANDS = {  # `docker run`, `kubectl exec`: the second word runs or writes anything
    "docker": {"run", "exec", "compose", "container", "create", "start", "build", "cp"},
    "podman": {"run", "exec", "compose", "container", "create", "start", "build", "cp"},
    "kubectl": {"exec", "run", "debug", "cp", "apply", "create", "patch", "replace", "attach"},
    "direnv": {"exec"},
    "mise": {"exec", "x"},
    "git": {"-c", "config"},
}
_RUNNERS = frozenset({"run", "exec", "x", "dlx"})  # `npm run test` keeps three words
# Programs whose first word alone says little (`git:*` would allow `git push --force`).
_SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git",
        "npm",
        "yarn",
        "pnpm",
        "bun",
        "uv",
        "pip",
        "pip3",
        "pipx",
        "poetry",
        "cargo",
        "go",
        "docker",
        "podman",
        "kubectl",
        "helm",
        "gh",
        "glab",
        "aws",
        "gcloud",
        "az",
        "terraform",
        "systemctl",
        "apt",
        "apt-get",
        "brew",
        "make",
        "bundle",
        "gem",
        "dotnet",
        "mvn",
        "gradle",
        "conda",
        "deno",
        "rustup",
    }
)


def _covering(rules: list[Rule], *paths: str) -> Rule | None:
    """The first path rule that matches one of `paths`."""
    return next((r for r in rules if r.path is not None and any(r.path.matches(p) for p in paths)), None)


# A recursive search of a folder with more entries than this is assumed to reach a denied file.
MAX_WALK_ENTRIES = 20_000


def _denied_below(folder: str, rules: list[Rule]) -> Rule | None:
    """The first Read deny rule that covers a file below `folder` (walked up to MAX_WALK_ENTRIES;
    a bigger tree counts as covered, since it cannot be checked quickly)."""
    candidates = [
        r
        for r in rules
        if r.path is not None and any(r.path.may_match_inside(p) for p in (folder, os.path.realpath(folder)))
    ]
    if not candidates:
        return None
    if not os.path.isdir(folder):
        return candidates[0]
    seen = 0
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in (*files, *dirs):
            seen += 1
            path = os.path.join(here, name)
            if rule := _covering(candidates, path):
                return rule
            if seen > MAX_WALK_ENTRIES:
                return candidates[0]
    return None


def _tracked_and_denied(cwd: str, rules: list[Rule]) -> Rule | None:
    """The first Read deny rule covering a file git tracks at `cwd` (up to MAX_WALK_ENTRIES
    files; more count as covered); None outside a repository."""
    # The neutral environment: the repository's fsmonitor never runs during the check.
    from claude_mini.base.gitrun import run_git

    listed = run_git(cwd, ["ls-files", "-z", "--full-name"], timeout=5)
    top = run_git(cwd, ["rev-parse", "--show-toplevel"], timeout=5)
    if listed is None or top is None or listed.returncode != 0 or top.returncode != 0:
        return None
    names = listed.stdout.split(b"\0")
    if len(names) > MAX_WALK_ENTRIES:
        return rules[0]
    root = os.fsdecode(top.stdout).rstrip("\n")
    for name in names:
        path = os.path.join(root, os.fsdecode(name))
        if name and (rule := _covering(rules, path)):
            return rule
    return None


def dynamic_note(rule: Rule, req: ToolRequest) -> str:
    """Why a deny or ask rule matched a line it does not spell out: what the line runs is unknowable."""
    if rule.command is None or any(rule.command.matches(c.text) for c in req.candidates):
        return ""
    why = next((c.opaque for c in req.candidates if c.opaque), "it cannot be known in advance")
    return f" (what this line runs cannot be checked against the rule: {why})"


def bash_reads_denied(req: ToolRequest, deny: list[Rule], project_root: str) -> Ask | None:
    """Ask before Bash reads a path a Read deny rule covers: arguments that name it, wildcards
    that expand to it, `REV:path` of git, and recursive searches of a folder that may hold it."""
    rules = [r for r in reversed(deny) if r.tool == "Read" and r.path is not None]
    if not rules or req.command is None:
        return None
    for target in read_targets(req.candidates, req.cwd, project_root, req.command):
        both = (target.path, os.path.realpath(target.path))
        if target.anything:
            return Ask(
                f"{target.shown} could name any file, including those covered by {rules[0].where}; "
                "reading it with Bash needs approval",
                by_rule=True,
            )
        if target.recursive:
            if rule := _denied_below(target.path, rules):
                return Ask(
                    f"{target.shown} is searched recursively and holds files covered by "
                    f"{rule.where}; reading it with Bash needs approval",
                    by_rule=True,
                )
        elif rule := _covering(rules, *both):
            return Ask(f"{target.shown} is covered by {rule.where}; reading it with Bash needs approval", by_rule=True)
    if shows_git_history(req.candidates) and (rule := _tracked_and_denied(req.cwd, rules)):
        return Ask(
            f"git history holds a tracked file covered by {rule.where}; showing it with Bash needs approval",
            by_rule=True,
        )
    return None


def bash_allowed(command: str | None, rules: list[Rule]) -> bool:
    """Every command of the line is allowed by a rule or read-only; a bare `Bash` rule allows all."""
    if command is None:
        return False
    if any(r.specifier is None for r in rules):
        return True
    patterns = [r.command for r in rules if r.command is not None]
    if not patterns:
        return False
    if any(p.exact and p.raw == collapse_spaces(command) for p in patterns):
        return True  # a rule that spells out the whole line, even one we cannot parse
    try:
        commands = parse_command(command)
    except ShellSyntaxError:
        return False
    return all(any(p.matches(c.text) for p in patterns) or read_only_problem(c) is None for c in commands)


def bash_suggestion(command: str, project_root: Path) -> str:
    """`Bash(<prefix or line>)`, always a rule that parses (unbalanced quotes fall back to the program)."""
    rule = f"Bash({_command_rule(command)})"
    try:
        parse_rule(rule, source="session", project_root=project_root)
    except RuleError:
        # Never fall back to a bare `Bash`: that would allow every command for the session.
        words = re.sub(r"[\"'\\()]", " ", command).split()
        if not words:
            return "Bash(true)"
        exact_only = runs_arbitrary_code(words[0]) or words[0] in _RISKY_PROGRAMS or _runs_or_writes(words)
        rule = f"Bash({words[0]})" if exact_only or words[0] in _SUBCOMMAND_PROGRAMS else f"Bash({words[0]}:*)"
    return rule


def _command_rule(command: str) -> str:
    """`git log:*` for `git log --oneline`; the exact line for risky programs or unparseable lines."""
    try:
        commands = parse_command(command)
    except ShellSyntaxError:
        return command
    target = next((c for c in commands if read_only_problem(c)), commands[0]).words
    program = target[0]
    if program in _RISKY_PROGRAMS or _runs_or_writes(target):
        return command  # `rm:*` or `docker run:*` would allow far more than the user just saw
    if runs_arbitrary_code(program):
        # `python:*` or `bash:*` would allow any code; `python -m pytest:*` is as wide as what was seen.
        if len(target) > 2 and target[1] == "-m" and re.fullmatch(r"[\w.]+", target[2]):
            return " ".join(target[:3]) + ":*"
        return command
    words: list[str] = []
    for word in target:
        limit = 3 if len(words) >= 2 and words[1] in _RUNNERS else 2
        looks_like_argument = word.startswith("-") or any(ch in word for ch in "/.=$*?[{~\\")
        if len(words) >= limit or (words and looks_like_argument):
            break
        words.append(word)
    if len(words) == 3 and runs_arbitrary_code(words[2]):
        return command  # `uv run python:*` is `python:*`
    if len(words) == 1 and len(target) > 1 and program in _SUBCOMMAND_PROGRAMS:
        return command  # `git -C x push` must not become `git:*`
    return " ".join(words) + ":*"


def _runs_or_writes(words: Sequence[str]) -> bool:
    """Whether a command runs other programs or writes files it is told (`tee`, `docker run`,
    `kubectl exec`, `aws-vault exec`): no prefix rule for it is narrower than "anything"."""
    program = os.path.basename(words[0]) if words else ""
    if program in _RUNS_OR_WRITES:
        return True
    subcommands = _RUNNING_SUBCOMMANDS.get(program, set())
    return any(word in subcommands for word in words[1:])  # `docker --context x run` too


def exact_command_rule(rule: str, command: Any) -> bool:
    """Whether `rule` (a suggestion) allows only this exact Bash line, for the prompt to say so."""
    return isinstance(command, str) and rule == f"Bash({command.strip()})" and bool(command.strip())
