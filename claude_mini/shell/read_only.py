"""Which simple commands only read: the allow-listed programs and, per program, the options that
would write files or run code.

`is_read_only_command` parses a line strictly (parse.py) and asks `read_only_problem` of every
simple command between `;`, `&&`, `||`, `|` (and newlines): each must be an allow-listed program
used without its writing or executing options. This is what lets a command run without asking.

Decisions a reviewer may want to argue with:
- `FOO=1 cmd` is refused: PAGER, GIT_EXTERNAL_DIFF or LD_PRELOAD run code.
- Programs must be named bare (`ls`, not `/bin/ls` or `./ls`).
- Not read-only: `sed` (`w` and `e` commands), `awk` (`system()`), `xargs`,
  `env` and shells (they run other programs), `cd` (it moves the session).
- For programs that have options which write or execute (find, sort, uniq, git,
  rg, tree, file, date) unquoted wildcards are refused: `*` could expand to a
  file named `--output=x`.
- `git -C`, `git -c` and other global options are refused: `-C` into a folder
  with a crafted `.git/config` (core.fsmonitor) runs code on `git status`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from claude_mini.shell.parse import ASSIGNMENT, ShellSyntaxError, SimpleCommand, parse_command

Validator = Callable[[SimpleCommand], "str | None"]


def _options(words: tuple[str, ...] | list[str]) -> list[str]:
    """Every word of a command's arguments that could be an option.

    A `--` does not end the search: it may be the value of the option before it
    (`git grep -e -- -O'cmd'`, `sort -T -- -o file`), and which options take a
    value differs per program. A file named like an option after a real `--`
    only makes the check refuse more.
    """
    return [word for word in words if word.startswith("-") and word not in ("-", "--")]


def _short_has(options: list[str], letters: str) -> bool:
    """Whether a short-option cluster (`-no`) contains one of `letters`."""
    return any(not o.startswith("--") and any(ch in letters for ch in o[1:]) for o in options)


def _long_option(options: list[str], *names: str) -> str | None:
    """The first option that is one of `names` or an abbreviation of one (GNU getopt accepts those)."""
    for option in options:
        name = option.split("=", 1)[0]
        if name.startswith("--") and len(name) > 2 and any(n.startswith(name) for n in names):
            return option
    return None


def has_option(args: tuple[str, ...] | list[str], letters: str, *long_names: str) -> bool:
    """Whether `args` (before a `--`) hold a short option among `letters` or one of `long_names`
    (abbreviations too, as GNU getopt accepts them)."""
    options = _options(args)
    return _short_has(options, letters) or _long_option(options, *long_names) is not None


def _no_globs(cmd: SimpleCommand) -> str | None:
    if not cmd.globbed:
        return None
    word = cmd.words[min(cmd.globbed)]
    return f"unquoted wildcard `{word}` could expand into options of {cmd.words[0]}; quote it"


def _plain(cmd: SimpleCommand) -> str | None:
    return None


def _check_find(cmd: SimpleCommand) -> str | None:
    for word in cmd.words[1:]:
        if word in ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls") or word.startswith("-fprint"):
            return f"find {word} can run commands or change files"
    return _no_globs(cmd)


def _check_sort(cmd: SimpleCommand) -> str | None:
    options = _options(cmd.words[1:])
    if _short_has(options, "o") or _long_option(options, "--output", "--compress-program"):
        return "sort -o/--output writes a file and --compress-program runs a program"
    return _no_globs(cmd)


def _check_uniq(cmd: SimpleCommand) -> str | None:
    operands, words = [], list(cmd.words[1:])
    while words:
        word = words.pop(0)
        if word == "--":
            operands += words
            break
        if word in ("-f", "-s", "-w"):  # options that take a separate value
            words = words[1:]
        elif not word.startswith("-") or word == "-":
            operands.append(word)
    if len(operands) > 1:
        return "uniq with a second file argument writes to that file"
    return _no_globs(cmd)


def _check_rg(cmd: SimpleCommand) -> str | None:
    if bad := _long_option(_options(cmd.words[1:]), "--pre", "--hostname-bin"):
        return f"rg {bad} runs another program"
    return _no_globs(cmd)


def _check_tree(cmd: SimpleCommand) -> str | None:
    options = _options(cmd.words[1:])
    if _short_has(options, "oR") or _long_option(options, "--output"):
        return "tree -o and -R write output files"
    return _no_globs(cmd)


def _check_file(cmd: SimpleCommand) -> str | None:
    options = _options(cmd.words[1:])
    if _short_has(options, "C") or _long_option(options, "--compile"):
        return "file -C writes a compiled magic file"
    return _no_globs(cmd)


_DATE_OPTIONS_WITH_VALUE = ("-d", "-r", "--date", "--reference", "--rfc-3339")
_DATE_FLAGS = re.compile(
    r"^(-[uRI]+|-I(date|hours|minutes|seconds|ns)|--(utc|universal|rfc-email|rfc-2822"
    r"|iso-8601(=\w+)?|debug)|--(date|reference|rfc-3339)=.*)$"
)


def _check_date(cmd: SimpleCommand) -> str | None:
    """Only `date [-u] [-R] [-I..] [-d STRING] [-r FILE] [+FORMAT]`: an operand sets the clock."""
    words = list(cmd.words[1:])
    while words:
        word = words.pop(0)
        if word in _DATE_OPTIONS_WITH_VALUE or (word[:2] in ("-d", "-r") and len(word) > 2):
            if len(word) == 2 or word.startswith("--") and "=" not in word:
                words = words[1:]
        elif not (word.startswith("+") or _DATE_FLAGS.match(word)):
            return f"date {word}: only +FORMAT, -d, -r, -u, -R and -I are read-only (this could set the clock)"
    return _no_globs(cmd)


# ---- git

_GIT_CONFIG_READ = frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l"})
_GIT_CONFIG_OPTIONS = _GIT_CONFIG_READ | {
    "--global",
    "--local",
    "--system",
    "--worktree",
    "--show-origin",
    "--show-scope",
    "--name-only",
    "-z",
    "--null",
    "--includes",
    "--no-includes",
    "--all",
    "--regexp",
}


def _git_common(args: list[str]) -> str | None:
    options = _options(args)
    if bad := _long_option(options, "--output"):
        return f"git option {bad} writes a file"
    if bad := _long_option([o for o in options if o != "--text"], "--ext-diff", "--textconv"):
        return f"git option {bad} runs a program named in the repository's configuration"
    return None


def _git_describe(args: list[str]) -> str | None:
    if bad := _long_option(_options(args), "--dirty", "--broken"):
        return f"git describe {bad} refreshes the index file"
    return _git_common(args)


def _git_grep(args: list[str]) -> str | None:
    options = _options(args)
    if _short_has(options, "O") or _long_option(options, "--open-files-in-pager"):
        return "git grep -O opens files in another program"
    return _git_common(args)


def _git_listing(sub: str, flags: set[str], list_flags: set[str]) -> Callable[[list[str]], str | None]:
    """A check for `git branch`/`git tag`: listing flags only; names only with --list."""

    def check(args: list[str]) -> str | None:
        options = [a for a in args if a.startswith("-")]
        if bad := [o for o in options if o not in flags]:
            return f"git {sub} {bad[0]} may change the repository"
        names = [a for a in args if not a.startswith("-")]
        if names and not set(options) & list_flags:
            return f"git {sub} {names[0]} would create a {sub}"
        return None

    return check


def _git_remote(args: list[str]) -> str | None:
    if args in ([], ["-v"], ["--verbose"]):
        return None
    return "only `git remote` and `git remote -v` are read-only"


def _git_config(args: list[str]) -> str | None:
    subcommand = bool(args) and args[0] in ("get", "list")
    options = _options(args[1:] if subcommand else args)
    if bad := [o for o in options if o not in _GIT_CONFIG_OPTIONS]:
        return f"git config {bad[0]} is not a reading option"
    if not subcommand and not set(options) & _GIT_CONFIG_READ:
        return "git config without --get or --list can change settings"
    return None


def _git_stash(args: list[str]) -> str | None:
    if args[:1] in (["list"], ["show"]):
        return _git_common(args[1:])
    return "only `git stash list` and `git stash show` are read-only"


_GIT_SUBCOMMANDS: dict[str, Callable[[list[str]], str | None]] = {
    **{
        name: _git_common
        for name in (
            "status",
            "log",
            "diff",
            "show",
            "blame",
            "ls-files",
            "ls-tree",
            "rev-parse",
            "rev-list",
            "shortlog",
            "merge-base",
        )
    },
    "describe": _git_describe,
    "grep": _git_grep,
    "branch": _git_listing(
        "branch",
        {"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current", "--no-color", "-l", "--list"},
        {"-l", "--list"},
    ),
    "tag": _git_listing("tag", {"-l", "--list", "-n"}, {"-l", "--list"}),
    "remote": _git_remote,
    "config": _git_config,
    "stash": _git_stash,
}


def _check_git(cmd: SimpleCommand) -> str | None:
    args = list(cmd.words[1:])
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option not in ("--no-pager", "-P", "--no-optional-locks"):
            return f"git option {option} is not allowed in a read-only command"
    if not args:
        return "git needs a subcommand"
    check = _GIT_SUBCOMMANDS.get(args[0])
    if check is None:
        return f"`git {args[0]}` is not on the read-only list"
    return check(args[1:]) or _no_globs(cmd)


READ_ONLY_PROGRAMS: dict[str, Validator] = {
    **{
        name: _plain
        for name in (
            "ls",
            "cat",
            "head",
            "tail",
            "wc",
            "grep",
            "egrep",
            "fgrep",
            "pwd",
            "echo",
            "stat",
            "du",
            "df",
            "which",
            "cut",
            "diff",
            "basename",
            "dirname",
            "realpath",
            "readlink",
            "nl",
            "tr",
            "true",
            "false",
            "test",  # `test` and `[` only look at files and strings (a command body's `[ -f x ] && ...`)
            "[",
            "whoami",
            "uname",
        )
    },
    "find": _check_find,
    "sort": _check_sort,
    "uniq": _check_uniq,
    "rg": _check_rg,
    "tree": _check_tree,
    "file": _check_file,
    "date": _check_date,
    "git": _check_git,
}

_NOT_READ_ONLY = {
    "xargs": "xargs runs other commands",
    "env": "env runs other commands",
    "eval": "eval runs arbitrary code",
    "exec": "exec replaces the shell with another command",
    "sudo": "sudo runs commands as another user",
    "sed": "sed scripts can write files (w) and run commands (e)",
    "awk": "awk can write files and run commands",
    "cd": "cd changes the session's working directory",
    **{shell: "shells run arbitrary scripts" for shell in ("sh", "bash", "zsh", "dash", "ksh", "fish")},
}


def read_only_problem(cmd: SimpleCommand) -> str | None:
    """Why one simple command is not read-only, or None if it is."""
    program = cmd.words[0]
    if ASSIGNMENT.match(program):
        return f"setting variables before a command ({program.split('=')[0]}=...) is not allowed"
    if "/" in program:
        return f"{program}: run programs by bare name so the read-only list applies"
    validator = READ_ONLY_PROGRAMS.get(program)
    if validator is None:
        return _NOT_READ_ONLY.get(program, f"`{program}` is not on the read-only list")
    return validator(cmd)


def is_read_only_command(cmd: str) -> tuple[bool, str]:
    """Whether `cmd` only reads (deny by default), with the reason either way."""
    try:
        commands = parse_command(cmd)
    except ShellSyntaxError as exc:
        return False, str(exc)
    for command in commands:
        if problem := read_only_problem(command):
            return False, problem
    return True, "only read-only commands: " + ", ".join(c.words[0] for c in commands)
