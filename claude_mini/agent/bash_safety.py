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
_UNHIDE = str.maketrans({v: k for k, v in _HIDE.items()})
# Marks a descriptor number glued to a redirection (`2>`), which is not a word of the command.
_FD_MARK = "\ue0ff"
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&"})
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_SPECIAL_PARAMS = frozenset("@*#?$!-0123456789{[")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_EXPANSION = re.compile(r"\$(\{[^}]*\}?|[A-Za-z_][A-Za-z0-9_]*|.)")
_MAX_DEPTH = 5


class ShellSyntaxError(ValueError):
    """A command line the strict parser will not vouch for; the message says why."""


@dataclass(frozen=True)
class SimpleCommand:
    """One command of a command line: its words after quote removal."""

    words: tuple[str, ...]
    # Indexes of words holding unquoted wildcard or brace characters (the shell expands them).
    globbed: frozenset[int] = frozenset()

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
            self._emit("$", 1)
        else:
            self._emit(_HIDE["$"], 1)

    def _substitution(self, marker: str, problem: str) -> None:
        if not self.lenient:
            self._refuse(problem)
            return
        end = _substitution_end(self.src, self.i, marker)
        span = self.src[self.i : end]
        self._emit("".join(_HIDE.get(ch, ch) for ch in span), len(span))

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
            self._emit(" " if "".join(self.out).rstrip()[-1:] in ("|", "&") else " ; ", 1)
            self.word_start = True
        elif c.isdigit() and self.word_start and (fd := _fd_prefix(self.src, self.i)):
            self._emit(fd + _FD_MARK, len(fd))
        else:
            self._emit(c, 1)
            self.word_start = c in " \t" or c in _OPERATOR_CHARS


def _fd_prefix(src: str, start: int) -> str:
    """The digits at `start` if a redirection operator follows them directly (`2>&1`), else ''."""
    end = start
    while end < len(src) and src[end].isdigit():
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
    pending = False  # a `|`, `&&` or `||` still waiting for its right-hand command
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
            pending = False
            i += 1
            continue
        if "<" in token or ">" in token:
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            if strict:
                _check_redirect(token, target)
            i += 2
            continue
        if strict and (token not in _SEPARATORS or (token != ";" and not words)):
            raise ShellSyntaxError(_operator_problem(token))
        pending = token != ";"
        if words:
            commands.append(SimpleCommand(tuple(words), frozenset(globbed)))
        words, globbed = [], set()
        i += 1
    if strict and pending:
        raise ShellSyntaxError("the command ends with an operator")
    if words:
        commands.append(SimpleCommand(tuple(words), frozenset(globbed)))
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


def parse_command(cmd: str) -> list[SimpleCommand]:
    """Split a command line into simple commands, refusing anything we cannot analyse exactly."""
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
    """The option words (before a `--`) of a command's arguments."""
    out = []
    for word in words:
        if word == "--":
            break
        if word.startswith("-") and word != "-":
            out.append(word)
    return out


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


def _check_date(cmd: SimpleCommand) -> str | None:
    options = _options(cmd.words[1:])
    if _short_has(options, "s") or _long_option(options, "--set"):
        return "date -s sets the clock"
    return _no_globs(cmd)


# ---- git

_GIT_CONFIG_READ = frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l"})
_GIT_CONFIG_OPTIONS = _GIT_CONFIG_READ | {
    "--global", "--local", "--system", "--worktree", "--show-origin", "--show-scope",
    "--name-only", "-z", "--null", "--includes", "--no-includes", "--all", "--regexp",
}


def _git_common(args: list[str]) -> str | None:
    if bad := _long_option(_options(args), "--output"):
        return f"git option {bad} writes a file"
    return None


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
    **{name: _git_common for name in (
        "status", "log", "diff", "show", "blame", "ls-files", "ls-tree", "rev-parse",
        "rev-list", "describe", "shortlog", "merge-base",
    )},
    "grep": _git_grep,
    "branch": _git_listing(
        "branch",
        {"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current", "--no-color",
         "-l", "--list"},
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
    **{name: _plain for name in (
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "stat",
        "du", "df", "which", "cut", "diff", "basename", "dirname", "realpath", "readlink",
        "nl", "tr", "true", "false", "whoami", "uname",
    )},
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

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
_KEYWORDS = frozenset({
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "case", "esac",
})
# Programs that run the command in their arguments: options that take a value, positionals before the command.
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "env": (frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "--class", "--classdata"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "xargs": (frozenset({"-I", "-n", "-P", "-L", "-d", "-s", "-a", "-E", "--max-args", "--max-procs",
                         "--delimiter", "--arg-file"}), 0),
    "time": (frozenset({"-f", "-o"}), 0),
    "exec": (frozenset({"-a"}), 0),
    "watch": (frozenset({"-n", "--interval"}), 0),
    **{name: (frozenset(), 0) for name in ("nohup", "command", "builtin", "setsid", "unbuffer", "busybox")},
}
_SUBSTITUTION_MARKERS = ("$(", "`", "<(", ">(")


def command_candidates(cmd: str) -> list[SimpleCommand]:
    """Every simple command `cmd` might run, found leniently, for matching deny and ask rules."""
    found: list[SimpleCommand] = []
    _collect(cmd, found, 0)
    return list(dict.fromkeys(found))


def _collect(cmd: str, found: list[SimpleCommand], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    text, _ = _Prescan(cmd, lenient=True).run()
    try:
        tokens = _split(text)
    except ValueError:
        tokens = text.split()
    for command in _segments(tokens, strict=False):
        for word in command.words:
            if any(m in word for m in _SUBSTITUTION_MARKERS):
                inner = word
                for marker in (*_SUBSTITUTION_MARKERS, ")"):
                    inner = inner.replace(marker, " ; ")
                _collect(inner, found, depth + 1)
        _unwrap(list(command.words), found, depth)


def _unwrap(words: list[str], found: list[SimpleCommand], depth: int) -> None:
    """Record `words` and every command it runs through keywords, wrappers, shells, eval and find."""
    while words:
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]
        if not words:
            return
        found.append(SimpleCommand(tuple(words)))
        name = os.path.basename(words[0])
        if name != words[0]:  # /bin/rm is rm as far as rules are concerned
            found.append(SimpleCommand((name, *words[1:])))
        if name in _KEYWORDS:
            words = words[1:]
        elif name in _WRAPPERS:
            words = _skip_wrapper(name, words, found, depth)
        else:
            _open_nested(name, words, found, depth)
            return


def _open_nested(name: str, words: list[str], found: list[SimpleCommand], depth: int) -> None:
    """Look inside `eval ...`, `sh -c ...` and `find -exec ...`."""
    if name == "eval":
        _collect(" ".join(words[1:]), found, depth + 1)
    elif name in _SHELLS:
        script = _shell_script(words)
        if script is not None:
            _collect(script, found, depth + 1)
    elif name == "find":
        for i, word in enumerate(words):
            if word in ("-exec", "-execdir", "-ok", "-okdir"):
                rest = words[i + 1 :]
                end = next((j for j, w in enumerate(rest) if w in (";", "+")), len(rest))
                _unwrap(rest[:end], found, depth + 1)


def _shell_script(words: list[str]) -> str | None:
    """The script of `sh -c SCRIPT` (also `bash -lc`, `sh -ec`), if that is how the shell is called."""
    seen_c = False
    for word in words[1:]:
        if word.startswith(("-", "+")) and not word.startswith("--"):
            seen_c = seen_c or "c" in word
        elif seen_c and not word.startswith("--"):
            return word
    return None


def _skip_wrapper(name: str, words: list[str], found: list[SimpleCommand], depth: int) -> list[str]:
    takes_value, positionals = _WRAPPERS[name]
    i = 1
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        option = words[i]
        i += 1
        if option == "--":
            break
        if option in takes_value and i < len(words):
            if name == "env" and option in ("-S", "--split-string"):
                _collect(words[i], found, depth + 1)
            i += 1
    return words[i + positionals :]
