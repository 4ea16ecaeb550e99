"""Is a shell command read-only, and which commands does a command line run?

Two views of one command line, both built on `shlex` (posix, punctuation_chars):

- `parse_command` and `is_read_only_command` are strict and deny by default.
  Anything we cannot analyse exactly is refused: substitutions, `$` expansions,
  subshells, redirections to files, here-documents, background jobs. Every
  simple command between `;`, `&&`, `||`, `|` (and newlines) must be an
  allow-listed program used without its writing or executing options. This is
  what lets a command run without asking.
- `command_candidates` is lenient: it lists every simple command a line might
  run, looking inside `$(...)`, backticks, `sh -c`, `eval`, `find -exec` and
  wrappers such as `sudo`, `xargs`, `env`, `timeout`. Deny and ask rules are
  matched against it, where matching too much is the safe side.

Decisions a reviewer may want to argue with:
- `N>&M` descriptor duplication and redirection to /dev/null are allowed; every
  other redirection is refused, `<` from a file included (pass the file as an
  argument instead).
- `$VAR`, `${...}`, `$'...'` are refused: the command we would check is not the
  one that runs. A `$` before whitespace, a closing quote or the end is literal.
- `FOO=1 cmd` is refused: PAGER, GIT_EXTERNAL_DIFF or LD_PRELOAD run code.
- Programs must be named bare (`ls`, not `/bin/ls` or `./ls`).
- Not read-only: `sed` (`w` and `e` commands), `awk` (`system()`), `xargs`,
  `env` and shells (they run other programs), `cd` (it moves the session).
- For programs that have options which write or execute (find, sort, uniq, git,
  rg, tree, file, date) unquoted wildcards are refused: `*` could expand to a
  file named `--output=x`.
- `git -C`, `git -c` and other global options are refused: `-C` into a folder
  with a crafted `.git/config` (core.fsmonitor) runs code on `git status`.
- Lines holding control characters (other than tab and newline), private-use,
  format (zero-width, bidi), surrogate or unassigned code points are refused:
  the parser uses private-use characters internally, and such characters make
  what a person reads differ from what bash runs. Only ASCII digits count as
  descriptor numbers (`2>`), as in bash.
- Lines over MAX_COMMAND_CHARS are refused, so a check costs at most a few
  milliseconds; every step is linear in the length of the line.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

_OPERATOR_CHARS = "();<>|&"
_GLOB_CHARS = "*?[{"
# Characters hidden from shlex when quoted or escaped, so that it splits only on
# real operators and unquoted wildcards stay recognisable; restored afterwards.
_HIDDEN = _OPERATOR_CHARS + _GLOB_CHARS + "]}'\"\\ \t\n$`#"
_HIDE = {c: chr(0xE000 + i) for i, c in enumerate(_HIDDEN)}
# Marks a descriptor number glued to a redirection (`2>`), which is not a word of the command.
_FD_MARK = "\ue0ff"
# Marks, in lenient mode, where the shell really expands something (`$f`, `"$f"`, `$(..)`, not '$f').
_EXPAND_MARK = "\ue0fe"
_UNHIDE: dict[int, str | None] = {**{ord(v): k for k, v in _HIDE.items()}, ord(_EXPAND_MARK): None}
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&"})
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_SPECIAL_PARAMS = frozenset("@*#?$!-0123456789{[")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_EXPANSION = re.compile(r"\$(\{[^}]*\}?|[A-Za-z_][A-Za-z0-9_]*|.)")
_MAX_DEPTH = 5
_ASCII_DIGITS = frozenset("0123456789")
# Longest line the checks analyse; longer ones are not read-only and match every deny rule.
MAX_COMMAND_CHARS = 100_000
# Non-ASCII characters get a closer look; these categories are refused (see the module docstring).
_NON_ASCII = re.compile(r"[^\t\n\x20-\x7e]")
_UNUSUAL_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
# `$\<newline>'...'` is `$'...'` to bash; `<\<newline>(` a process substitution.
_SPLIT_OPERATOR = re.compile(r"[$<>]\\\n")


class ShellSyntaxError(ValueError):
    """A command line the strict parser will not vouch for; the message says why."""


@dataclass(frozen=True)
class SimpleCommand:
    """One command of a command line: its words after quote removal."""

    words: tuple[str, ...]
    # Indexes of words holding unquoted wildcard or brace characters (the shell expands them).
    globbed: frozenset[int] = frozenset()
    # Why the command that really runs cannot be known (`$X`, `| sh`, `python -c`), or None.
    # Such a command matches every deny and ask rule of Bash.
    opaque: str | None = None
    # Its standard input comes from a pipe or a redirection (a shell there runs that input).
    stdin: bool = False
    # Its redirections as (operator, target): `cat < .env` reads `.env`.
    redirects: tuple[tuple[str, str], ...] = ()
    # Words in which the shell expands a variable or a substitution (quoted '$x' is not one).
    expanded: frozenset[str] = frozenset()

    @property
    def text(self) -> str:
        """The words joined by single spaces: what Bash permission rules are matched against."""
        return " ".join(self.words)


# ---------------------------------------------------------------- scanning


class _Prescan:
    """One pass over a command line that tracks quoting the way bash does.

    It produces text for shlex in which quoted or escaped special characters are
    replaced by placeholders, line continuations are removed, comments dropped
    and unquoted newlines turned into `;`. `problem` is the first construct the
    strict parser refuses. In lenient mode a substitution is kept whole inside
    its word (for `command_candidates` to open) instead of being a problem.
    """

    def __init__(self, cmd: str, lenient: bool) -> None:
        self.src = cmd
        self.lenient = lenient
        self.out: list[str] = []
        self.problem: str | None = None
        self.quote: str | None = None
        self.word_start = True
        self.last = ""  # the last non-blank character emitted (tracked, not searched: linear time)
        self.i = 0

    def run(self) -> tuple[str, str | None]:
        """The text for shlex and the first refused construct (None if there is none)."""
        while self.i < len(self.src) and not (self.problem and not self.lenient):
            self._step(self.src[self.i])
        if self.quote:
            self._refuse("unbalanced quotes")
            self.out.append(self.quote)
        return "".join(self.out), self.problem

    def _step(self, c: str) -> None:
        if self.quote == "'":
            self._emit(c if c == "'" else _HIDE.get(c, c), 1)
            self.quote = None if c == "'" else "'"
        elif c == "\\":
            self._escape()
        elif c == '"':
            self.quote = None if self.quote == '"' else '"'
            self._emit(c, 1)
        elif c == "`":
            self._substitution("`", "command substitution (backticks) is not allowed")
        elif c == "$":
            self._dollar()
        elif self.quote == '"':
            self._emit(_HIDE.get(c, c), 1)
        else:
            self._unquoted(c)

    def _emit(self, text: str, advance: int) -> None:
        self.out.append(text)
        self.i += advance
        self.word_start = False
        if text.strip():
            self.last = text.rstrip()[-1]

    def _refuse(self, problem: str) -> None:
        self.problem = self.problem or problem

    def _peek(self, offset: int = 1) -> str:
        j = self.i + offset
        return self.src[j] if j < len(self.src) else ""

    def _escape(self) -> None:
        nxt = self._peek()
        if nxt == "\n":  # line continuation: bash removes it, in or out of double quotes
            self.i += 2
        elif not nxt:
            self._refuse("the command ends with a backslash")
            self.i += 1
        elif self.quote == '"':
            if nxt in '"\\$`':
                self._emit(_HIDE[nxt], 2)
            else:  # inside double quotes the backslash stays literal
                self._emit(_HIDE["\\"], 1)
        else:
            self._emit(_HIDE.get(nxt, "\\" + nxt), 2)

    def _dollar(self) -> None:
        nxt = self._peek()
        if nxt == "(":
            self._substitution("$(", "command substitution $(...) is not allowed")
        elif nxt in _NAME_CHARS or nxt in _SPECIAL_PARAMS or (nxt in "'\"" and not self.quote):
            # `$'..'` (ANSI-C quoting) can spell any character, so it counts as an expansion too.
            shown = _EXPANSION.match(self.src, self.i)
            text = shown.group(0) if shown else "$"
            self._refuse(f"expansion {text} is not allowed: the command that runs could differ")
            self._emit(_EXPAND_MARK + "$" if self.lenient else "$", 1)
        else:
            self._emit(_HIDE["$"], 1)

    def _substitution(self, marker: str, problem: str) -> None:
        if not self.lenient:
            self._refuse(problem)
            return
        end = _substitution_end(self.src, self.i, marker)
        span = self.src[self.i : end]
        self._emit(_EXPAND_MARK + "".join(_HIDE.get(ch, ch) for ch in span), len(span))

    def _unquoted(self, c: str) -> None:
        nxt = self._peek()
        if c in "<>" and nxt == "(":
            self._substitution(c + "(", "process substitution <(...) is not allowed")
        elif c == "'":
            self.quote = "'"
            self._emit(c, 1)
        elif c == "#" and self.word_start:
            end = self.src.find("\n", self.i)
            self.i = len(self.src) if end < 0 else end
        elif c == "\n":
            # After `|`, `&&` or `||` a newline continues the command; elsewhere it separates.
            self._emit(" " if self.last in ("|", "&") else " ; ", 1)
            self.word_start = True
        elif c in _ASCII_DIGITS and self.word_start and (fd := _fd_prefix(self.src, self.i)):
            self._emit(fd + _FD_MARK, len(fd))
        else:
            self._emit(c, 1)
            self.word_start = c in " \t" or c in _OPERATOR_CHARS


def _fd_prefix(src: str, start: int) -> str:
    """The digits at `start` if a redirection operator follows them directly (`2>&1`), else ''."""
    end = start
    while end < len(src) and src[end] in _ASCII_DIGITS:
        end += 1
    return src[start:end] if end < len(src) and src[end] in "<>" else ""


def _substitution_end(src: str, start: int, marker: str) -> int:
    """Index just past the substitution opened at `start` (lenient: quotes only roughly honoured)."""
    if marker == "`":
        end = src.find("`", start + 1)
        return len(src) if end < 0 else end + 1
    depth, i, quote = 0, start + len(marker) - 1, None
    while i < len(src):
        ch = src[i]
        if ch == "\\" and quote != "'":  # an escaped quote or bracket does not count
            i += 2
            continue
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(src)


def _split(text: str) -> list[str]:
    lex = shlex.shlex(text, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lex.whitespace_split = True
    lex.commenters = ""  # comments are handled by _Prescan, with bash's word-start rule
    return list(lex)


def _is_operator(token: str) -> bool:
    return bool(token) and all(ch in _OPERATOR_CHARS for ch in token)


def _segments(tokens: list[str], strict: bool) -> list[SimpleCommand]:
    """Group tokens into simple commands; strict mode refuses every operator we do not vouch for."""
    commands: list[SimpleCommand] = []
    words: list[str] = []
    globbed: set[int] = set()
    expanded: set[str] = set()
    redirects: list[tuple[str, str]] = []
    pending = False  # a `|`, `&&` or `||` still waiting for its right-hand command
    stdin = False  # the command being collected reads a pipe or a redirection

    def finish() -> None:
        if words or (not strict and any(op.startswith("<") and not op.startswith("<<") for op, _ in redirects)):
            # `$(< .env)` is bash's `$(cat .env)`: a command of redirections alone still reads
            commands.append(
                SimpleCommand(
                    tuple(words) or ("cat",),
                    frozenset(globbed),
                    stdin=stdin,
                    redirects=tuple(redirects),
                    expanded=frozenset(expanded),
                )
            )

    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.endswith(_FD_MARK):
            i += 1
            continue
        if not _is_operator(token):
            if any(ch in _GLOB_CHARS for ch in token):
                globbed.add(len(words))
            words.append(token.translate(_UNHIDE))
            if _EXPAND_MARK in token:
                expanded.add(words[-1])
            pending = False
            i += 1
            continue
        if "<" in token or ">" in token:
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            if strict:
                _check_redirect(token, target)
            if target is not None and not _is_operator(target):
                redirects.append((token, target.translate(_UNHIDE)))
                if _EXPAND_MARK in target:
                    expanded.add(redirects[-1][1])
            stdin = stdin or "<" in token  # `<file`, here-strings, `<&3`: the command reads them
            i += 2
            continue
        if strict and (token not in _SEPARATORS or (token != ";" and not words)):
            raise ShellSyntaxError(_operator_problem(token))
        pending = token != ";"
        finish()
        words, globbed, expanded, redirects = [], set(), set(), []
        stdin = token in ("|", "|&")
        i += 1
    if strict and pending:
        raise ShellSyntaxError("the command ends with an operator")
    finish()
    return commands


def _operator_problem(token: str) -> str:
    if token == "&":
        return "background jobs (&) are not allowed"
    if token in _SEPARATORS:
        return f"`{token}` needs a command on each side"
    if "(" in token or ")" in token:
        return "subshells and grouping ( ) are not allowed"
    return f"shell syntax `{token}` is not allowed"


def _check_redirect(op: str, target: str | None) -> None:
    """Allow `N>&M` and redirection to /dev/null; refuse every other redirection."""
    if op.startswith("<<"):
        raise ShellSyntaxError("here-documents and here-strings are not allowed")
    if target is None or _is_operator(target):
        raise ShellSyntaxError(f"redirection `{op}` has no target")
    target = target.translate(_UNHIDE)
    if op in (">&", "<&") and (target.isdigit() or target == "-"):
        return
    if op in (">", ">>", "&>", "&>>", ">&", ">|") and target == "/dev/null":
        return
    if op == "<":
        raise ShellSyntaxError("input redirection (<) is not allowed; pass the file as an argument")
    raise ShellSyntaxError(f"redirection `{op} {target}` can write files")


def unusual_character(cmd: str) -> str | None:
    """A description of the first character bash would treat differently from how it reads, or None.

    Control characters other than tab and newline, format characters (zero-width,
    bidi overrides), private-use, surrogate and unassigned code points.
    """
    import unicodedata

    for match in _NON_ASCII.finditer(cmd):
        ch = match.group(0)
        category = unicodedata.category(ch)
        if ch < " " or ch == "\x7f" or category in _UNUSUAL_CATEGORIES:
            return f"U+{ord(ch):04X} ({unicodedata.name(ch, category)}) at offset {match.start()}"
    return None


def input_problem(cmd: str) -> str | None:
    """Why a command line is not analysed at all (too long, unusual characters), or None."""
    if len(cmd) > MAX_COMMAND_CHARS:
        return f"the command is {len(cmd):,} characters long, over the {MAX_COMMAND_CHARS:,} the check reads"
    if unusual := unusual_character(cmd):
        return f"the command contains the unusual character {unusual}"
    if match := _SPLIT_OPERATOR.search(cmd):
        return (
            f"a line continuation right after `{match.group(0)[0]}` joins what follows into it, "
            "which the check does not follow"
        )
    return None


def parse_command(cmd: str) -> list[SimpleCommand]:
    """Split a command line into simple commands, refusing anything we cannot analyse exactly."""
    if problem := input_problem(cmd):
        raise ShellSyntaxError(problem)
    text, problem = _Prescan(cmd, lenient=False).run()
    if problem:
        raise ShellSyntaxError(problem)
    try:
        tokens = _split(text)
    except ValueError as exc:  # _Prescan catches quoting problems first; this is a backstop
        raise ShellSyntaxError(f"cannot parse the command: {exc}") from None
    commands = _segments(tokens, strict=True)
    if not commands:
        raise ShellSyntaxError("the command is empty")
    return commands


# ---------------------------------------------------------------- read-only programs

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
    if _ASSIGNMENT.match(program):
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


# ---------------------------------------------------------------- lenient candidates

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "csh", "tcsh"})
_KEYWORDS = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "while",
        "until",
        "!",
        "{",
        "}",
        "case",
        "esac",
    }
)
# Programs that run the command in their arguments, as `wrapper [options] [values] command args`.
# Which options take a value is not needed: every word that could start the command is tried.
_WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "pkexec",
        "su",
        "runuser",
        "sg",
        "env",
        "nice",
        "ionice",
        "chrt",
        "taskset",
        "numactl",
        "timeout",
        "stdbuf",
        "xargs",
        "exec",
        "watch",
        "nohup",
        "command",
        "builtin",
        "setsid",
        "unbuffer",
        "flock",
        "strace",
        "ltrace",
        "script",
        "chroot",
        "unshare",
        "nsenter",
        "prlimit",
        "setpriv",
        "firejail",
        "bwrap",
        "systemd-run",
        "fakeroot",
        "proxychains",
        "proxychains4",
        "torsocks",
        "tsocks",
        "cgexec",
        "catchsegv",
        "valgrind",
        "gdb",
        "perf",
        "hyperfine",
        "parallel",
        "entr",
        "caffeinate",
        "dbus-launch",
        "xvfb-run",
        "daemonize",
        "chpst",
        "trickle",
        "cpulimit",
        "nocache",
        "eatmydata",
        "faketime",
        "rlwrap",
        "sshpass",
        "ssh",
        "npx",
        "bunx",
        "pnpx",
        "uvx",
        "pipx",
        "nix-shell",
        "doppler",
        "op",
        "dotenv",
        "with-contenv",
        "tini",
        "dumb-init",
        "gosu",
        "su-exec",
        "chronic",
        "ts",
        "ifne",
        "time",
        "start-stop-daemon",
        "busybox",
        "toybox",
        "setarch",
        "linux32",
        "linux64",
        "i386",
        "x86_64",
        "uname26",
        "ld.so",
    }
)
# Launchers whose second word is a subcommand that runs a command: `uv run curl x`.
_RUN_SUBCOMMANDS = {
    "uv": {"run", "tool"},
    "poetry": {"run"},
    "pipenv": {"run"},
    "conda": {"run"},
    "mamba": {"run"},
    "npm": {"exec", "x"},
    "pnpm": {"exec", "dlx"},
    "yarn": {"exec", "dlx"},
    "bun": {"x", "exec"},
    "bundle": {"exec"},
    "pdm": {"run"},
    "hatch": {"run"},
    "rye": {"run"},
    "pixi": {"run"},
    "docker": {"exec", "run"},
    "podman": {"exec", "run"},
    "kubectl": {"exec"},
    "mise": {"exec", "x"},
    "direnv": {"exec"},
    "aws-vault": {"exec"},
    "systemd-nspawn": set(),
    "perf": {"stat", "record", "trace", "mem", "c2c", "kmem", "lock", "sched", "kvm", "top"},
}
# Wrappers whose first operand is theirs, never the command (`ssh HOST cmd`, `chroot DIR cmd`).
_OPERAND_FIRST = frozenset(
    {
        "ssh",
        "sg",
        "chroot",
        "flock",
        "taskset",
        "timeout",
        "chrt",
        "faketime",
        "cgexec",
        "sshpass",
        "nix-shell",
        "doppler",
        "op",
        "setarch",
    }
)
# Options of wrappers whose value is a shell command string (`su -c 'cmd'`, `flock -c`, `script -c`).
_COMMAND_STRING_OPTIONS = frozenset({"-c", "--command", "-e", "--exec"})
# Wrappers that join their operands into one shell command (`watch 'a | b'`, `ssh host cmd`).
_JOINING_WRAPPERS = frozenset({"watch", "ssh", "hyperfine", "parallel", "sg", "su", "runuser"})
# Interpreters whose inline code cannot be read as commands: (short option letters, long options)
# that take code. Letters count inside clusters (`perl -le`, `python -Sc`).
_INLINE_CODE: dict[str, tuple[str, tuple[str, ...]]] = {
    "python": ("c", ()),
    "pypy": ("c", ()),
    "perl": ("eE", ()),
    "ruby": ("e", ()),
    "node": ("ep", ("--eval", "--print")),
    "nodejs": ("ep", ("--eval", "--print")),
    "deno": ("", ("eval",)),
    "bun": ("ep", ("--eval", "--print")),
    "php": ("rR", ()),
    "lua": ("e", ()),
    "luajit": ("e", ()),
    "Rscript": ("e", ()),
    "R": ("e", ()),
    "osascript": ("e", ()),
    "tclsh": ("", ()),
    "wish": ("", ()),
    "expect": ("c", ()),
    "jshell": ("", ()),
    "irb": ("", ()),
    "julia": ("e", ("--eval",)),
    "pwsh": ("c", ("-Command", "-command", "-EncodedCommand")),
    "powershell": ("c", ("-Command",)),
    "groovy": ("e", ()),
    "scala": ("e", ()),
    "elixir": ("e", ("--eval",)),
    "erl": ("", ("-eval",)),
    "guile": ("c", ()),
    "racket": ("e", ()),
    "sbcl": ("", ("--eval",)),
    "gdb": ("x", ("-ex", "--eval-command")),
    "vim": ("cS", ("--cmd",)),
    "vi": ("cS", ("--cmd",)),
    "nvim": ("cS", ("--cmd",)),
    "ex": ("cS", ("--cmd",)),
    "emacs": ("", ("--eval", "-eval", "--batch")),
    "socat": ("", ()),
    "nc": ("ec", ()),
    "ncat": ("ec", ("--exec", "--sh-exec", "--lua-exec")),
}
# Options of other programs that run a command or a program they name: `tar --to-command=...`.
_RUNS_PROGRAMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "make": ("", ("--eval",)),
    "gmake": ("", ("--eval",)),
    "tar": (
        "IF",
        (
            "--to-command",
            "--checkpoint-action",
            "--use-compress-program",
            "--rsh-command",
            "--info-script",
            "--new-volume-script",
        ),
    ),
    "zip": ("", ("-TT", "--unzip-command")),
    "rsync": ("e", ("--rsh", "--rsync-path")),
    "scp": ("S", ()),
    "sftp": ("S", ()),
    "man": ("PH", ("--pager", "--html")),
    "less": ("", ()),
    "openssl": ("", ("-engine",)),
    "curl": ("", ()),
    "wget": ("", ("--use-askpass",)),
    "mysql": ("", ("--pager",)),
    "psql": ("", ()),
    "sqlite3": ("", ("-cmd",)),
    "dpkg": ("", ()),
    "ffmpeg": ("", ()),
    "convert": ("", ()),
    "aria2c": ("", ("--on-download-complete",)),
}
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_AWK_RUNS = re.compile(r"\bsystem\s*\(|\|\s*getline|\bprint[f]?\b[^;}]*\||@\w+\s*\(")
# sed's `e` command (after an address, `!` or flags) and the `e` flag of `s///`.
_SED_RUNS = re.compile(r"(?:^|[;{}\n!/0-9$IM])\s*e(?:\s|;|}|$)|s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1[gpIiMm0-9w]*e")
# Variables whose value is a command line something will run: it is looked into like `sh -c`.
_COMMAND_VARIABLES = re.compile(
    r"^(EDITOR|VISUAL|PAGER|MANPAGER|BROWSER|SHELL|LESSOPEN|LESSCLOSE|SSH_ASKPASS|GIT_SSH|GIT_SSH_COMMAND"
    r"|GIT_EXTERNAL_DIFF|GIT_ASKPASS|GIT_PROXY_COMMAND|\w+_COMMAND|\w+_EDITOR|\w+_PAGER)$"
)
# Variables that change which code runs without naming a command: the line is unknowable.
_CODE_VARIABLES = re.compile(
    r"^(BASH_ENV|ENV|PROMPT_COMMAND|IFS|LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|DYLD_\w+|PERL5OPT|RUBYOPT"
    r"|NODE_OPTIONS|GIT_EXEC_PATH|GIT_CONFIG\w*|GIT_DIR|GIT_WORK_TREE|HOME|XDG_CONFIG_HOME|XDG_\w+|MANOPT"
    r"|PATH)\+?="
)
# git global options that take a separate value.
_GIT_VALUE_OPTIONS = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "--config-env",
        "--attr-source",
        "--list-cmds",
    }
)
# git settings whose value is a program or script run by git (lower case, `*` for any middle part).
_GIT_EXEC_KEYS = re.compile(
    r"^(core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|alternaterefscommand)"
    r"|sequence\.editor|diff\.external|diff\..+\.(textconv|command)|merge\..+\.driver|filter\..+"
    r"|credential(\..+)?\.helper|gpg(\..+)?\.program|pager\..+|include(if\..+)?\.path|uploadpack\..+"
    r"|remote\..+\.(uploadpack|receivepack|proxy)|http\..*proxy|protocol\..+|url\..+|ssh\.variant"
    r"|man\..+\.cmd|web\.browser|browser\..+\.cmd|difftool\..+|mergetool\..+|receive\.procreceive\w*"
    r"|sendemail\..+|imap\..+|instaweb\..+|init\.templatedir|uploadarchive\..+|fetch\..+|submodule\..+"
    r"|.+\.(command|cmd|program|helper|editor|pager|driver|textconv|process|clean|smudge|proxy|hook\w*))$"
)
# git settings whose value is itself a command line (looked into); other _GIT_EXEC_KEYS are unknowable.
_GIT_COMMAND_KEYS = re.compile(
    r"^(core\.(pager|editor|sshcommand|askpass|gitproxy)|sequence\.editor"
    r"|diff\.external|pager\..+|.+\.(command|cmd|program|helper|editor|pager|driver|textconv|process"
    r"|clean|smudge))$"
)
# git subcommand options whose value is a command git runs (`git rebase --exec 'make'`).
_GIT_COMMAND_OPTIONS: dict[str, frozenset[str]] = {
    "rebase": frozenset({"--exec", "-x"}),
    "difftool": frozenset({"-x", "--extcmd"}),
    "ls-remote": frozenset({"--upload-pack", "-u"}),
    "clone": frozenset({"--upload-pack", "-u"}),
    "fetch": frozenset({"--upload-pack"}),
    "pull": frozenset({"--upload-pack"}),
    "push": frozenset({"--receive-pack", "--exec"}),
    "archive": frozenset({"--exec"}),
    "send-pack": frozenset({"--receive-pack", "--exec"}),
    "fetch-pack": frozenset({"--upload-pack", "--exec"}),
    "grep": frozenset({"-O", "--open-files-in-pager"}),
    "filter-branch": frozenset(
        {
            "--tree-filter",
            "--index-filter",
            "--msg-filter",
            "--env-filter",
            "--commit-filter",
            "--parent-filter",
            "--tag-name-filter",
        }
    ),
}
# git subcommands that run the command in their arguments.
_GIT_RUNNING_SUBCOMMANDS = {"bisect": "run", "submodule": "foreach"}
# At most this many positions are tried as the start of a wrapper's command.
_MAX_WRAPPER_STARTS = 8
_SUBSTITUTION_MARKERS = ("$(", "`", "<(", ">(")
# ssh's options that run a local command, as `-o ProxyCommand=...` (scp, sftp, rsync -e, git too).
_SSH_COMMAND_OPTION = re.compile(r"(?i)^(-o)?\s*(proxy|local|knownhosts)command(\s*=|\s+\S)")
_BRACE_LIST = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
# Script operands that are really the command's input: `bash -`, `sh /dev/stdin`, `bash <(...)`.
_STDIN_SCRIPT = re.compile(r"^(-|/dev/stdin|/dev/fd/\d+|/proc/(self|thread-self|\d+)/fd/\d+|[<>]\(.*)$")
# Programs that read commands from their standard input even with a file operand (`ed f <<< '!cmd'`).
_STDIN_INTERPRETERS = frozenset(
    {
        "ed",
        "ex",
        "vim",
        "vi",
        "nvim",
        "sqlite3",
        "mysql",
        "psql",
        "gdb",
        "ftp",
        "sftp",
        "dc",
        "tclsh",
        "expect",
        "lua",
        "jshell",
        "irb",
        "R",
        "julia",
        "parallel",
        "sem",
    }
)
# Programs that copy or link a file to their last operand.
_COPIERS = frozenset({"cp", "ln", "install", "mv", "rsync", "link", "ditto"})
# A path to an installed program (`/usr/bin/curl`), whose copy is the program under another name.
_PROGRAM_PATH = re.compile(r"(^|/)s?bin/[^/]+$")
# At most this many candidate commands per line; beyond it the line is treated as unknowable.
_MAX_CANDIDATES = 400


def command_candidates(cmd: str) -> list[SimpleCommand]:
    """Every simple command `cmd` might run, found leniently, for matching deny and ask rules.

    A candidate with `opaque` set stands for a command that cannot be known in
    advance; callers treat it as matching every Bash rule.
    """
    if problem := input_problem(cmd):
        return [SimpleCommand((cmd[:200],), opaque=problem)]
    finder = _CandidateFinder()
    finder.collect(cmd, 0)
    finder.written_then_run()
    if len(finder.found) >= _MAX_CANDIDATES:
        finder.found.append(SimpleCommand((cmd[:200],), opaque="the line is too complex to analyse"))
    return list({(c.text, c.opaque): c for c in reversed(finder.found)}.values())[::-1]


class _CandidateFinder:
    """Walks a command line and everything it would run, recording each command once found."""

    def __init__(self) -> None:
        self.found: list[SimpleCommand] = []
        self._seen: set[tuple[tuple[str, ...], str | None, tuple[tuple[str, str], ...]]] = set()

    def add(
        self, words: list[str], opaque: str | None = None, stdin: bool = False, origin: SimpleCommand | None = None
    ) -> None:
        """Record a command once (a script repeating `ls` 20,000 times has one candidate).

        `origin` is the simple command of the line these words come from: its redirections
        and expanded words go with the first candidate made of it, for the Read deny check."""
        redirects = origin.redirects if origin else ()
        key = (tuple(words), opaque, redirects)
        if len(self.found) < _MAX_CANDIDATES and key not in self._seen:
            self._seen.add(key)
            # Redirection targets keep theirs too: `f=.env; cat < $f` reads what `$f` holds.
            expanded = origin.expanded & {*words, *(t for _, t in redirects)} if origin else frozenset()
            self.found.append(
                SimpleCommand(key[0], opaque=opaque, stdin=stdin, redirects=redirects, expanded=frozenset(expanded))
            )

    def written_then_run(self) -> None:
        """A file the line writes (`> f`, `cp`, `ln`, `tee`) and then runs or sources is a command
        the text does not show; a copy of a program (`cp /usr/bin/curl c`) counts as using it."""
        written: set[str] = set()
        for command in list(self.found):
            name = os.path.basename(command.words[0])
            written.update(os.path.normpath(t) for op, t in command.redirects if ">" in op and "&" not in op)
            operands = [w for w in command.words[1:] if not w.startswith("-")]
            if name in _COPIERS and len(operands) >= 2:
                written.add(os.path.normpath(operands[-1]))
                for source in operands[:-1]:
                    if _PROGRAM_PATH.search(source):
                        self.add([os.path.basename(source)], stdin=False)
            elif name == "tee":
                written.update(os.path.normpath(w) for w in operands)
        if not written:
            return
        for command in list(self.found):
            name = os.path.basename(command.words[0])
            runs = [command.words[0]] if "/" in command.words[0] else []
            if name in ("source", ".") or _interpreter(name) in _SHELLS or _interpreter(name) in _INLINE_CODE:
                runs += command.words[1:]
            if hit := next((w for w in runs if os.path.normpath(w) in written), None):
                self.add(list(command.words), f"it runs {hit}, which the same line writes")

    def full(self, depth: int) -> bool:
        return depth > _MAX_DEPTH or len(self.found) >= _MAX_CANDIDATES

    def collect(self, cmd: str, depth: int) -> None:
        """Record every command of the shell text `cmd`."""
        if self.full(depth):
            return
        text, _ = _Prescan(cmd, lenient=True).run()
        try:
            tokens = _split(text)
        except ValueError:
            tokens = text.split()
        for command in _segments(tokens, strict=False):
            # Substitutions run wherever they are: in words, redirection targets, here-strings.
            for word in (*command.words, *(target for _, target in command.redirects)):
                if any(m in word for m in _SUBSTITUTION_MARKERS):
                    if re.search(r"\bcase\b", word):  # its `)` patterns defeat the bracket matching
                        self.add(list(command.words), "a `case` inside a substitution cannot be analysed")
                    inner = word
                    for marker in (*_SUBSTITUTION_MARKERS, ")"):
                        inner = inner.replace(marker, " ; ")
                    self.collect(inner, depth + 1)
            name_is_glob = 0 in command.globbed
            self.unwrap(list(command.words), depth, stdin=command.stdin, glob_name=name_is_glob, origin=command)

    def unwrap(
        self,
        words: list[str],
        depth: int,
        *,
        stdin: bool = False,
        glob_name: bool = False,
        origin: SimpleCommand | None = None,
    ) -> None:
        """Record `words` and every command it runs through keywords, wrappers, shells and git."""
        while words and not self.full(depth):
            stripped = self._assignments(words, depth)
            glob_name = glob_name and len(stripped) == len(words)  # the wildcard was in `VAR=*`
            words = stripped
            if not words:
                return
            name = os.path.basename(words[0])
            self.add(words, self._unknowable(words[0], glob_name and name not in _KEYWORDS), stdin, origin)
            if unseen := unseeable(words):
                self.add(words, unseen)
            glob_name = False
            if stdin and name in _STDIN_INTERPRETERS:
                self.add(words, f"{name} reads commands from its input, which cannot be read in advance")
            if (name in _AWKS or name in ("make", "gmake", "sed", "gsed") or runs_arbitrary_code(name)) and any(
                reads_stdin_code(w) for w in words[1:]
            ):
                self.add(words, f"{name} reads its program from input, which cannot be read in advance")
            if name == "sqlite3" and any(w.lstrip().startswith((".shell", ".system")) for w in words[1:]):
                self.add(words, "sqlite3 .shell runs a command")
            if name != words[0]:  # /bin/rm is rm as far as rules are concerned
                self.add([name, *words[1:]], stdin=stdin)
            if name in _KEYWORDS:
                words = words[1:]
                continue
            if name in ("function", "coproc"):  # `function f { ...`, `coproc NAME { ...`, `coproc cmd`
                braced = len(words) > 2 and words[2] in ("{", "(")
                words = words[3 if braced else 2 if name == "function" else 1 :]
                continue
            if name == "alias":
                for word in words[1:]:
                    self.collect(word.partition("=")[2], depth + 1)
                return
            if name == "command" and len(words) > 1 and words[1] in ("-v", "-V"):
                return  # `command -v curl` asks where curl is; it runs nothing
            if any(_SSH_COMMAND_OPTION.search(w) for w in words[1:]):
                self.add(words, f"{name} passes an ssh option that runs a command (ProxyCommand, LocalCommand)")
            if name in _WRAPPERS or (len(words) > 1 and words[1] in _RUN_SUBCOMMANDS.get(name, ())):
                if _interpreter(name) in _INLINE_CODE:  # gdb -ex 'shell ...' as well as gdb --args cmd
                    self._inline_code(_interpreter(name), words, stdin)
                self._wrapped(name, words, depth + 1)
            else:
                self._nested(name, words, depth, stdin)
            return

    def _assignments(self, words: list[str], depth: int) -> list[str]:
        """Drop `VAR=value` words before a command: a value that is a command (`GIT_PAGER=cat`) is
        looked into; one that changes what code runs (`LD_PRELOAD`, `HOME`) makes the line unknowable."""
        start = 0  # an index, not repeated slicing: 20,000 assignments were quadratic
        while start < len(words) and _ASSIGNMENT.match(words[start]):
            name, _, value = words[start].partition("=")
            if _COMMAND_VARIABLES.match(name):
                self.collect(value.lstrip("|!"), depth + 1)
            elif _CODE_VARIABLES.match(words[start]):
                self.add(words[start:], f"{name.rstrip('+')} changes what code the command runs")
            start += 1
        return words[start:]

    @staticmethod
    def _unknowable(name: str, glob_name: bool) -> str | None:
        if "$" in name or "`" in name:
            return "the command's name is only known when it runs"
        if name in ("[", "[[", "{", "}"):  # test builtins and grouping, not wildcards
            return None
        # After a wrapper the quoting is gone, so any wildcard or brace list counts (safe side).
        if glob_name or any(ch in name for ch in "*?[") or _BRACE_LIST.search(name) or name == "{}":
            return "the command's name is a wildcard or brace list the shell expands"
        return None

    def _wrapped(self, name: str, words: list[str], depth: int) -> None:
        """The commands a wrapper may run: from every word that could start the command."""
        start = 2 if len(words) > 1 and words[1] in _RUN_SUBCOMMANDS.get(name, ()) else 1
        args = words[start:]
        starts = 0
        for i, word in enumerate(args):
            if self.full(depth):
                return
            if (script := _command_string(name, args, i)) is not None:
                self.collect(script, depth)
            if word.startswith("-") and word != "-":
                continue
            starts += 1
            if starts > _MAX_WRAPPER_STARTS:
                self.add(words, f"{name} has too many operands to tell which one is the command")
                return
            follows_option = i > 0 and args[i - 1].startswith("-") and "=" not in args[i - 1]
            first_operand = name in _OPERAND_FIRST and all(a.startswith("-") for a in args[:i])
            # `-v "$PWD:/app"`, `ssh $HOST`: an option's value or the wrapper's own operand, not a command
            if not ((follows_option and ("$" in word or _looks_like_value(word))) or first_operand):
                self.unwrap(list(args[i:]), depth)
                if name in _JOINING_WRAPPERS:
                    self.collect(" ".join(args[i:]), depth)
            # The next word may still be the command if this one was an option's value (`-u root`)
            # or a wrapper's own operand (`timeout 5`, `flock /tmp/lock`, `ssh user@host`).
            if not (follows_option or first_operand or _looks_like_value(word)):
                break
        if name == "xargs":  # its input becomes arguments: of a shell or env, they are commands
            command = next((os.path.basename(w) for w in args if not w.startswith("-")), None)
            if (
                command in _SHELLS
                or command in ("env", "eval", "exec", "sudo", "xargs", "nohup")
                or (command is not None and _interpreter(command) in _INLINE_CODE)
            ):
                self.add(words, "xargs runs a command built from its input")

    def _nested(self, name: str, words: list[str], depth: int, stdin: bool) -> None:
        """Look inside `eval`, shells, interpreters with inline code, find -exec, trap and git."""
        base = _interpreter(name)
        if name == "eval":
            self.collect(" ".join(words[1:]), depth + 1)
        elif name == "trap" and len(words) > 1:
            self.collect(words[1], depth + 1)
        elif _interpreter(name) in _SHELLS:  # bash5.2 is bash
            self._shell(name, words, depth, stdin)
        elif base in _INLINE_CODE:
            self._inline_code(base, words, stdin)
        elif name in _RUNS_PROGRAMS:
            self._runs_programs(name, words)
        elif name in ("source", ".") and len(words) > 1 and reads_stdin_code(words[1]):
            self.add(words, f"{name} reads its commands from input, which cannot be read in advance")
        elif name in _AWKS and _AWK_RUNS.search(" ".join(w for w in words[1:] if not w.startswith("-"))):
            self.add(words, f"{name} runs commands from its program (system, pipes)")
        elif name in ("sed", "gsed") and any(_SED_RUNS.search(w) for w in words[1:]):
            self.add(words, f"{name}'s `e` command runs its input as commands")
        elif name == "find":
            for i, word in enumerate(words):
                if word in ("-exec", "-execdir", "-ok", "-okdir"):
                    rest = words[i + 1 :]
                    end = next((j for j, w in enumerate(rest) if w in (";", "+")), len(rest))
                    self.unwrap(rest[:end], depth + 1)
        elif name == "git":
            self._git(words, depth + 1)

    def _shell(self, name: str, words: list[str], depth: int, stdin: bool) -> None:
        script = _shell_script(words)
        operands = _operands(words[1:])
        if script is not None:
            self.collect(script, depth + 1)
        elif any(w.startswith("-") and not w.startswith("--") and "c" in w for w in words[1:]):
            self.add(words, f"{name} -c without a script runs what is appended to it")
        elif (
            (stdin and not operands)
            or any(w in ("-s", "-i") for w in words[1:])
            or (operands and reads_stdin_code(operands[0]))
        ):
            self.add(words, f"{name} runs commands from its input, which cannot be read in advance")

    def _inline_code(self, base: str, words: list[str], stdin: bool) -> None:
        letters, long_names = _INLINE_CODE[base]
        inline = next((w for w in _interpreter_options(words) if _is_code_option(w, letters, long_names)), None)
        operands = _operands(words[1:])
        if inline is not None:
            self.add(words, f"{words[0]} {inline} runs inline code")
        elif (stdin and not operands and "-m" not in words) or (operands and reads_stdin_code(operands[0])):
            self.add(words, f"{words[0]} runs code from its input, which cannot be read in advance")

    def _runs_programs(self, name: str, words: list[str]) -> None:
        letters, long_names = _RUNS_PROGRAMS[name]
        option = next((w for w in words[1:] if _is_code_option(w, letters, long_names)), None)
        if option is not None:
            self.add(words, f"{name} {option} runs a program it names")
        elif name in ("make", "gmake") and any(
            w in ("-", "/dev/stdin", "--file=-", "--makefile=-") or w.startswith("-f-") for w in words[1:]
        ):
            self.add(words, f"{name} reads its makefile from input, which cannot be read in advance")

    def _git(self, words: list[str], depth: int) -> None:
        """`git push` however it is spelled: global options dropped, inline aliases expanded."""
        i, aliases = 1, {}
        while i < len(words) and words[i].startswith("-"):
            option, has_value, value = words[i].partition("=")
            if option in _GIT_VALUE_OPTIONS and not has_value:
                value = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            i += 1
            if option == "-c":
                key, _, setting = value.partition("=")
                if key.lower().startswith("alias."):
                    aliases[key[6:].lower()] = setting
                elif _GIT_COMMAND_KEYS.match(key.lower()):
                    self.collect(setting.lstrip("!"), depth + 1)  # core.editor=true, core.pager=less
                elif _GIT_EXEC_KEYS.match(key.lower()):
                    self.add(words, f"git -c {key} changes which programs git runs")
            elif option in ("--config-env", "--exec-path") and value:
                self.add(words, f"git {option} changes which programs git runs")
        rest = words[i:]
        for _ in range(_MAX_DEPTH):  # an alias may name another alias
            if not rest:
                return
            self.add(["git", *rest])
            alias = aliases.pop(rest[0].lower(), None)
            if alias is None:
                break
            if alias.startswith("!"):
                self.collect(alias[1:] + " " + " ".join(shlex.quote(w) for w in rest[1:]), depth)
                return
            rest = [*alias.split(), *rest[1:]]
        if rest and rest[0] not in _GIT_COMMANDS:
            self.add(
                ["git", *rest], f"git {rest[0]} may be an alias from git's configuration, which can run any command"
            )
        self._git_subcommand(rest, depth)

    def _git_subcommand(self, rest: list[str], depth: int) -> None:
        """Commands a git subcommand runs itself: `rebase --exec`, `bisect run`, `submodule foreach`."""
        runner = _GIT_RUNNING_SUBCOMMANDS.get(rest[0])
        if runner and runner in rest:
            self.collect(" ".join(shlex.quote(w) for w in rest[rest.index(runner) + 1 :]), depth)
        options = _GIT_COMMAND_OPTIONS.get(rest[0], frozenset())
        for word in rest[1:]:
            if _is_code_option(
                word, "".join(o[1] for o in options if len(o) == 2), tuple(o for o in options if o.startswith("--"))
            ):
                self.add(["git", *rest], f"git {rest[0]} {word.split('=', 1)[0]} runs a command it is given")
                return


def _command_string(name: str, args: list[str], i: int) -> str | None:
    """The shell command a wrapper's option at `args[i]` carries (`su -c CMD`, `env -S CMD`,
    `env -iS'CMD'`, `env --split-s=CMD`), or None."""
    word = args[i]
    option, has_value, value = word.partition("=")
    following = args[i + 1] if i + 1 < len(args) else ""
    if option in _COMMAND_STRING_OPTIONS:
        return value if has_value else following
    if name != "env":
        return None
    if option.startswith("--") and len(option) > 3 and "--split-string".startswith(option):
        return value if has_value else following
    if word.startswith("-") and not word.startswith("--") and "S" in word:
        rest = word[word.index("S") + 1 :]
        return rest or following
    return None


def runs_arbitrary_code(program: str) -> bool:
    """Whether `program` runs code or commands named in its arguments (shells, interpreters,
    wrappers, find, sed, awk): a rule for it must spell out the whole command."""
    name = os.path.basename(program)
    return (
        name in _SHELLS
        or name in _WRAPPERS
        or name in _AWKS
        or _interpreter(name) in _INLINE_CODE
        or name in ("find", "sed", "gsed", "eval", "exec", "trap", "source", ".")
    )


def _interpreter(name: str) -> str:
    """`python3.11` -> `python`: the interpreter family of a program name."""
    return re.sub(r"[\d.]+$", "", name)


def _interpreter_options(words: list[str]) -> list[str]:
    """The words before an interpreter's script (`python -W x -c ...` but not `python app.py -c`):
    a plain word ends them unless it follows a two-letter option, which may take it as a value."""
    out = []
    for i, word in enumerate(words[1:], 1):
        if not word.startswith("-") and not (len(words[i - 1]) == 2 and words[i - 1].startswith("-")):
            break
        out.append(word)
    return out


def _is_code_option(word: str, letters: str, long_names: tuple[str, ...]) -> bool:
    """Whether `word` is one of the options that carry code: a short letter (also in a cluster or
    with its value glued on) or a long name (also abbreviated, with or without `=value`)."""
    name = word.split("=", 1)[0]
    if any(name == n or (n.startswith("--") and len(name) > 3 and n.startswith(name)) for n in long_names):
        return True
    if word.startswith("-") and not word.startswith("--") and len(word) > 1:
        cluster = word[1:]  # tested once: per letter it made a long word quadratic
        return word[1] in letters or (cluster.isalpha() and any(ch in letters for ch in cluster))
    return False


def reads_stdin_code(word: str) -> bool:
    """Whether an argument (or an option's `=value`) names standard input: `-`, `/dev/stdin`,
    `/dev/fd//0`, `/proc/thread-self/fd/0`, `<(...)`."""
    value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
    if value.startswith(("<(", ">(")):
        return True
    return bool(_STDIN_SCRIPT.match(re.sub(r"/(\./)+", "/", re.sub(r"/+", "/", value))))


def _operands(words: list[str]) -> list[str]:
    """The words that are not options (a rough view, enough to tell `sh` from `sh script.sh`)."""
    return [w for w in words if not w.startswith(("-", "+")) or w == "-"]


def _looks_like_value(word: str) -> bool:
    """Whether a wrapper's positional word is a value (`5s`, `0x3`, `/tmp/lock`, `user@host`)."""
    return bool(re.match(r"^[0-9]", word)) or any(ch in word for ch in "/=:@,")


def _shell_script(words: list[str]) -> str | None:
    """The script of `sh -c SCRIPT` (also `bash -lc`, `sh -ec`), if that is how the shell is called."""
    seen_c = False
    for word in words[1:]:
        if word.startswith(("-", "+")) and not word.startswith("--"):
            seen_c = seen_c or "c" in word
        elif seen_c and not word.startswith("--"):
            return word
    return None


# ---------------------------------------------------------------- what cannot be seen through

# Shells the candidate finder does not model (their options and syntax differ): any use is unknowable.
_UNMODELLED_SHELLS = frozenset(
    {
        "rbash",
        "rksh",
        "rzsh",
        "yash",
        "posh",
        "lksh",
        "oksh",
        "pdksh",
        "loksh",
        "hush",
        "msh",
        "bosh",
        "elvish",
        "xonsh",
        "nu",
        "nush",
        "ion",
        "osh",
        "ysh",
        "oil",
        "es",
        "rc",
        "scsh",
        "closh",
        "murex",
        "sash",
        "jsh",
        "bsh",
        "ksh93",
        "zsh-static",
        "bash-static",
        "busybox-sh",
        "dash-static",
        "mksh-static",
        "gitsh",
        "sheldon",
    }
)
# Names ending in `sh` that are not shells (a name like `rbash` we do not know is taken for one).
_NOT_SHELLS = frozenset(
    {
        "ssh",
        "mosh",
        "autossh",
        "hash",
        "trash",
        "flash",
        "push",
        "refresh",
        "publish",
        "finish",
        "fresh",
        "crash",
        "stash",
        "splash",
        "wash",
        "flush",
        "mesh",
        "ush",
    }
)
# The dynamic loader: `ld-linux-x86-64.so.2 /usr/bin/curl` runs curl under another name.
_LOADER = re.compile(r"^ld(-[\w.+-]*)?\.so(\.[\w.]+)?$|^ld64\.so\.\d+$")
# `/proc/self/exe`, `/proc/1/exe`: whatever program that process runs (this shell: bash).
_PROC_EXE = re.compile(r"^/proc/[^/]+/(exe|root/.*|cwd/.*|fd/\d+|map_files/.*)$")
# Programs that run commands read from input or a file, later or elsewhere (no command on the line).
_RUNS_INPUT_LATER = {
    "at": "at runs commands read from its input or a file",
    "batch": "batch runs commands read from its input or a file",
    "crontab": "crontab installs commands that run later",
}
# Editors whose `+cmd` and `-c cmd` run ex commands (`+'!curl x'`); `+N` and `+/pattern` only move.
_VIM_FAMILY = frozenset(
    {"vim", "vi", "nvim", "ex", "view", "rvim", "gvim", "vimdiff", "evim", "nvi", "elvis", "vile", "exim"} - {"exim"}
)
_HARMLESS_PLUS = re.compile(r"^\+(\d*|/.*|\?.*)$")
_PAGERS = frozenset({"less", "more", "most"})
# git's own commands (and common installed ones); another name may be an alias from git's configuration.
_GIT_COMMANDS = frozenset(
    {
        "add",
        "am",
        "annotate",
        "apply",
        "archive",
        "bisect",
        "blame",
        "branch",
        "bundle",
        "cat-file",
        "check-attr",
        "check-ignore",
        "check-mailmap",
        "check-ref-format",
        "checkout",
        "checkout-index",
        "cherry",
        "cherry-pick",
        "citool",
        "clean",
        "clone",
        "column",
        "commit",
        "commit-graph",
        "commit-tree",
        "config",
        "count-objects",
        "credential",
        "describe",
        "diagnose",
        "diff",
        "diff-files",
        "diff-index",
        "diff-tree",
        "difftool",
        "fast-export",
        "fast-import",
        "fetch",
        "fetch-pack",
        "filter-branch",
        "fmt-merge-msg",
        "for-each-ref",
        "for-each-repo",
        "format-patch",
        "fsck",
        "gc",
        "get-tar-commit-id",
        "grep",
        "gui",
        "hash-object",
        "help",
        "hook",
        "http-backend",
        "index-pack",
        "init",
        "instaweb",
        "interpret-trailers",
        "log",
        "ls-files",
        "ls-remote",
        "ls-tree",
        "mailinfo",
        "mailsplit",
        "maintenance",
        "merge",
        "merge-base",
        "merge-file",
        "merge-index",
        "merge-tree",
        "mergetool",
        "mktag",
        "mktree",
        "multi-pack-index",
        "mv",
        "name-rev",
        "notes",
        "pack-objects",
        "pack-redundant",
        "pack-refs",
        "patch-id",
        "prune",
        "prune-packed",
        "pull",
        "push",
        "range-diff",
        "read-tree",
        "rebase",
        "reflog",
        "remote",
        "repack",
        "replace",
        "request-pull",
        "rerere",
        "reset",
        "restore",
        "rev-list",
        "rev-parse",
        "revert",
        "rm",
        "send-email",
        "send-pack",
        "shortlog",
        "show",
        "show-branch",
        "show-index",
        "show-ref",
        "sparse-checkout",
        "stage",
        "stash",
        "status",
        "stripspace",
        "submodule",
        "switch",
        "symbolic-ref",
        "tag",
        "unpack-file",
        "unpack-objects",
        "update-index",
        "update-ref",
        "update-server-info",
        "var",
        "verify-commit",
        "verify-pack",
        "verify-tag",
        "version",
        "whatchanged",
        "worktree",
        "write-tree",
        "lfs",
        "flow",
        "filter-repo",
        "annex",
        "crypt",
        "secret",
        "absorb",
    }
)
# perl's `-M`/`-m` value becomes `use VALUE;`: only a module name (with an import list) is read as such.
_PERL_MODULE = re.compile(r"^-[mM]-?[A-Za-z_][\w:]*(=[\w,:.]*)?$")
_PERL_DEBUGGER = re.compile(r"^-d(t)?(:[\w:]+(=[\w,]*)?)?$")
# python's -X options that only tune the interpreter (others, like presite=, import code).
_PYTHON_X = re.compile(
    r"^(dev|utf8(=\d)?|importtime(=\d)?|faulthandler|tracemalloc(=\d+)?|showrefcount"
    r"|warn_default_encoding|no_debug_ranges|frozen_modules(=on|=off)?|int_max_str_digits=\d+"
    r"|perf|perf_jit|cpu_count=\w+|gil=\d|pycache_prefix=[^;]*|context_aware_warnings(=\d)?"
    r"|thread_inherit_context(=\d)?|disable_remote_debug|lazy_imports(=\w+)?)$"
)


def unseeable(words: list[str]) -> str | None:
    """Why the command `words` runs something its text does not show, or None: `/proc/self/exe`,
    the dynamic loader, shells we do not model, `hash -p`, `enable -f`, unknown interpreter
    options, editors' `+cmd`, git aliases. Such a command matches every deny and ask rule."""
    path = re.sub(r"/(\./)+", "/", re.sub(r"/+", "/", words[0]))
    name = os.path.basename(path)
    if _PROC_EXE.match(path):
        return f"{words[0]} runs the program of a process (/proc), which the line does not name"
    if len(name) < 200 and _LOADER.match(name):  # a longer name is no loader (and is not scanned)
        return f"{name} is the dynamic loader, which runs the program it is given (loader)"
    shell = _interpreter(name)
    if shell in _UNMODELLED_SHELLS or (
        re.fullmatch(r"[a-z]{1,6}sh", shell) and shell not in _SHELLS and shell not in _NOT_SHELLS
    ):
        return f"{name} is a shell the check does not model"
    if name in _RUNS_INPUT_LATER:
        return _RUNS_INPUT_LATER[name]
    args = words[1:]
    if name == "hash" and any(w.startswith("-") and "p" in w for w in args):
        return "hash -p makes a name run another program"
    if name == "enable" and any(w.startswith("-") and "f" in w for w in args):
        return "enable -f loads a builtin from a shared object"
    return _option_problem(name, args)


def _option_problem(name: str, args: list[str]) -> str | None:
    """Options of editors, pagers and interpreters that run code the line does not show."""
    if name in _VIM_FAMILY and (
        bad := next((w for w in args if w.startswith("+") and not _HARMLESS_PLUS.match(w)), None)
    ):
        return f"{name} {bad} runs an editor command"
    if name in _PAGERS and any(w.startswith("+") and "!" in w for w in args):
        return f"{name} +! runs a shell command"
    if name == "parallel" and not next((w for w in args if not w.startswith("-")), ":::").strip(":"):
        return "parallel without a command runs its arguments or input as commands"
    base = _interpreter(name)
    if base == "perl":
        bad = next(
            (
                w
                for w in _interpreter_options([name, *args])
                if w[:2] in ("-M", "-m", "-d") and not (_PERL_MODULE.match(w) or _PERL_DEBUGGER.match(w))
            ),
            None,
        )
        return f"perl {bad} is an option whose value becomes code" if bad else None
    if base in ("python", "pypy"):
        return _python_option_problem(name, args)
    if base in ("node", "nodejs", "bun", "deno") and any("data:" in w for w in args):
        return f"{name} loads code from a data: URL"
    return None


def _python_option_problem(name: str, args: list[str]) -> str | None:
    """An -X option python does not merely tune itself with (`-X presite=mod` imports code)."""
    for i, word in enumerate(args):
        if not word.startswith("-") or word in ("-c", "-m") or word.startswith(("-c", "-m")):
            return None  # the script, the module or the code: the interpreter's options end here
        value = None
        if word == "-X":
            value = args[i + 1] if i + 1 < len(args) else ""
        elif word.startswith("-X"):
            value = word[2:]
        if value is not None and not _PYTHON_X.match(value):
            return f"{name} -X {value} is an interpreter option the check does not know"
    return None
