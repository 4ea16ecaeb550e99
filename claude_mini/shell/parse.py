"""A Bash line parsed into its simple commands; the constructs the strict parser refuses.

One prescan tracks quoting the way bash does, then `shlex` (posix, punctuation_chars) splits
the text. Two modes over that one tokenizer:

- `parse_command` is strict and denies by default: anything that cannot be analysed exactly
  is refused with a ShellSyntaxError saying why (substitutions, `$` expansions, subshells,
  redirections to files, here-documents, background jobs). The read-only check (read_only.py)
  and Bash allow rules (permissions/bash.py) are matched on what it returns.
- `lenient_commands` refuses nothing: a substitution stays whole inside its word, for the
  candidate finder (candidates.py) to open.

Decisions a reviewer may want to argue with:
- `N>&M` descriptor duplication and redirection to /dev/null are allowed; every
  other redirection is refused, `<` from a file included (pass the file as an
  argument instead).
- `$VAR`, `${...}`, `$'...'` are refused: the command we would check is not the
  one that runs. A `$` before whitespace, a closing quote or the end is literal.
- Lines holding control characters (other than tab and newline), private-use,
  format (zero-width, bidi), surrogate or unassigned code points are refused:
  the parser uses private-use characters internally, and such characters make
  what a person reads differ from what bash runs. Only ASCII digits count as
  descriptor numbers (`2>`), as in bash.
- Lines over MAX_COMMAND_CHARS are refused, so a check costs at most a few
  milliseconds; every step is linear in the length of the line.
"""

from __future__ import annotations

import re
import shlex
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
# A `VAR=value` word before a command (read_only.py refuses it, candidates.py looks into its value).
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_EXPANSION = re.compile(r"\$(\{[^}]*\}?|[A-Za-z_][A-Za-z0-9_]*|.)")
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


def lenient_commands(cmd: str) -> list[SimpleCommand]:
    """The simple commands of a line as far as they can be told, refusing nothing: a substitution
    stays whole inside its word (marked as expanded), for the candidate finder to open."""
    text, _ = _Prescan(cmd, lenient=True).run()
    try:
        tokens = _split(text)
    except ValueError:
        tokens = text.split()
    return _segments(tokens, strict=False)
