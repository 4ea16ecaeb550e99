"""Every simple command a Bash line might run, found leniently: what deny and ask rules match.

`command_candidates` looks inside `$(...)`, backticks, `sh -c`, `eval`, `find -exec`, git
aliases and wrappers such as `sudo`, `xargs`, `env`, `timeout` (the catalogue in runners.py),
and marks a command whose real program cannot be known in advance as `opaque` (unseeable.py),
which callers treat as matching every Bash rule. Matching too much is the safe side here; the
strict view that lets a command run unasked is read_only.py's.
"""

from __future__ import annotations

import os
import re
import shlex

from claude_mini.shell.parse import ASSIGNMENT, SimpleCommand, input_problem, lenient_commands
from claude_mini.shell.runners import (
    AWK_RUNS,
    AWKS,
    BRACE_LIST,
    CODE_VARIABLES,
    COMMAND_STRING_OPTIONS,
    COMMAND_VARIABLES,
    COPIERS,
    GIT_COMMAND_KEYS,
    GIT_COMMAND_OPTIONS,
    GIT_EXEC_KEYS,
    GIT_RUNNING_SUBCOMMANDS,
    GIT_VALUE_OPTIONS,
    INLINE_CODE,
    JOINING_WRAPPERS,
    KEYWORDS,
    OPERAND_FIRST,
    PROGRAM_PATH,
    RUN_SUBCOMMANDS,
    RUNS_PROGRAMS,
    SED_RUNS,
    SHELLS,
    SSH_COMMAND_OPTION,
    STDIN_INTERPRETERS,
    WRAPPERS,
    interpreter,
    interpreter_options,
    is_code_option,
    reads_stdin_code,
    runs_arbitrary_code,
)
from claude_mini.shell.unseeable import GIT_COMMANDS, unseeable

# How deep substitutions, `sh -c`, wrappers and aliases are opened inside one another.
_MAX_DEPTH = 5
# At most this many positions are tried as the start of a wrapper's command.
_MAX_WRAPPER_STARTS = 8
_SUBSTITUTION_MARKERS = ("$(", "`", "<(", ">(")
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
            if name in COPIERS and len(operands) >= 2:
                written.add(os.path.normpath(operands[-1]))
                for source in operands[:-1]:
                    if PROGRAM_PATH.search(source):
                        self.add([os.path.basename(source)], stdin=False)
            elif name == "tee":
                written.update(os.path.normpath(w) for w in operands)
        if not written:
            return
        for command in list(self.found):
            name = os.path.basename(command.words[0])
            runs = [command.words[0]] if "/" in command.words[0] else []
            if name in ("source", ".") or interpreter(name) in SHELLS or interpreter(name) in INLINE_CODE:
                runs += command.words[1:]
            if hit := next((w for w in runs if os.path.normpath(w) in written), None):
                self.add(list(command.words), f"it runs {hit}, which the same line writes")

    def full(self, depth: int) -> bool:
        return depth > _MAX_DEPTH or len(self.found) >= _MAX_CANDIDATES

    def collect(self, cmd: str, depth: int) -> None:
        """Record every command of the shell text `cmd`."""
        if self.full(depth):
            return
        for command in lenient_commands(cmd):
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
            self.add(words, self._unknowable(words[0], glob_name and name not in KEYWORDS), stdin, origin)
            if unseen := unseeable(words):
                self.add(words, unseen)
            glob_name = False
            if stdin and name in STDIN_INTERPRETERS:
                self.add(words, f"{name} reads commands from its input, which cannot be read in advance")
            if (name in AWKS or name in ("make", "gmake", "sed", "gsed") or runs_arbitrary_code(name)) and any(
                reads_stdin_code(w) for w in words[1:]
            ):
                self.add(words, f"{name} reads its program from input, which cannot be read in advance")
            if name == "sqlite3" and any(w.lstrip().startswith((".shell", ".system")) for w in words[1:]):
                self.add(words, "sqlite3 .shell runs a command")
            if name != words[0]:  # /bin/rm is rm as far as rules are concerned
                self.add([name, *words[1:]], stdin=stdin)
            if name in KEYWORDS:
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
            if any(SSH_COMMAND_OPTION.search(w) for w in words[1:]):
                self.add(words, f"{name} passes an ssh option that runs a command (ProxyCommand, LocalCommand)")
            if name in WRAPPERS or (len(words) > 1 and words[1] in RUN_SUBCOMMANDS.get(name, ())):
                if interpreter(name) in INLINE_CODE:  # gdb -ex 'shell ...' as well as gdb --args cmd
                    self._inline_code(interpreter(name), words, stdin)
                self._wrapped(name, words, depth + 1)
            else:
                self._nested(name, words, depth, stdin)
            return

    def _assignments(self, words: list[str], depth: int) -> list[str]:
        """Drop `VAR=value` words before a command: a value that is a command (`GIT_PAGER=cat`) is
        looked into; one that changes what code runs (`LD_PRELOAD`, `HOME`) makes the line unknowable."""
        start = 0  # an index, not repeated slicing: 20,000 assignments were quadratic
        while start < len(words) and ASSIGNMENT.match(words[start]):
            name, _, value = words[start].partition("=")
            if COMMAND_VARIABLES.match(name):
                self.collect(value.lstrip("|!"), depth + 1)
            elif CODE_VARIABLES.match(words[start]):
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
        if glob_name or any(ch in name for ch in "*?[") or BRACE_LIST.search(name) or name == "{}":
            return "the command's name is a wildcard or brace list the shell expands"
        return None

    def _wrapped(self, name: str, words: list[str], depth: int) -> None:
        """The commands a wrapper may run: from every word that could start the command."""
        start = 2 if len(words) > 1 and words[1] in RUN_SUBCOMMANDS.get(name, ()) else 1
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
            first_operand = name in OPERAND_FIRST and all(a.startswith("-") for a in args[:i])
            # `-v "$PWD:/app"`, `ssh $HOST`: an option's value or the wrapper's own operand, not a command
            if not ((follows_option and ("$" in word or _looks_like_value(word))) or first_operand):
                self.unwrap(list(args[i:]), depth)
                if name in JOINING_WRAPPERS:
                    self.collect(" ".join(args[i:]), depth)
            # The next word may still be the command if this one was an option's value (`-u root`)
            # or a wrapper's own operand (`timeout 5`, `flock /tmp/lock`, `ssh user@host`).
            if not (follows_option or first_operand or _looks_like_value(word)):
                break
        if name == "xargs":  # its input becomes arguments: of a shell or env, they are commands
            command = next((os.path.basename(w) for w in args if not w.startswith("-")), None)
            if (
                command in SHELLS
                or command in ("env", "eval", "exec", "sudo", "xargs", "nohup")
                or (command is not None and interpreter(command) in INLINE_CODE)
            ):
                self.add(words, "xargs runs a command built from its input")

    def _nested(self, name: str, words: list[str], depth: int, stdin: bool) -> None:
        """Look inside `eval`, shells, interpreters with inline code, find -exec, trap and git."""
        base = interpreter(name)
        if name == "eval":
            self.collect(" ".join(words[1:]), depth + 1)
        elif name == "trap" and len(words) > 1:
            self.collect(words[1], depth + 1)
        elif interpreter(name) in SHELLS:  # bash5.2 is bash
            self._shell(name, words, depth, stdin)
        elif base in INLINE_CODE:
            self._inline_code(base, words, stdin)
        elif name in RUNS_PROGRAMS:
            self._runs_programs(name, words)
        elif name in ("source", ".") and len(words) > 1 and reads_stdin_code(words[1]):
            self.add(words, f"{name} reads its commands from input, which cannot be read in advance")
        elif name in AWKS and AWK_RUNS.search(" ".join(w for w in words[1:] if not w.startswith("-"))):
            self.add(words, f"{name} runs commands from its program (system, pipes)")
        elif name in ("sed", "gsed") and any(SED_RUNS.search(w) for w in words[1:]):
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
        letters, long_names = INLINE_CODE[base]
        inline = next((w for w in interpreter_options(words) if is_code_option(w, letters, long_names)), None)
        operands = _operands(words[1:])
        if inline is not None:
            self.add(words, f"{words[0]} {inline} runs inline code")
        elif (stdin and not operands and "-m" not in words) or (operands and reads_stdin_code(operands[0])):
            self.add(words, f"{words[0]} runs code from its input, which cannot be read in advance")

    def _runs_programs(self, name: str, words: list[str]) -> None:
        letters, long_names = RUNS_PROGRAMS[name]
        option = next((w for w in words[1:] if is_code_option(w, letters, long_names)), None)
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
            if option in GIT_VALUE_OPTIONS and not has_value:
                value = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            i += 1
            if option == "-c":
                key, _, setting = value.partition("=")
                if key.lower().startswith("alias."):
                    aliases[key[6:].lower()] = setting
                elif GIT_COMMAND_KEYS.match(key.lower()):
                    self.collect(setting.lstrip("!"), depth + 1)  # core.editor=true, core.pager=less
                elif GIT_EXEC_KEYS.match(key.lower()):
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
        if rest and rest[0] not in GIT_COMMANDS:
            self.add(
                ["git", *rest], f"git {rest[0]} may be an alias from git's configuration, which can run any command"
            )
        self._git_subcommand(rest, depth)

    def _git_subcommand(self, rest: list[str], depth: int) -> None:
        """Commands a git subcommand runs itself: `rebase --exec`, `bisect run`, `submodule foreach`."""
        runner = GIT_RUNNING_SUBCOMMANDS.get(rest[0])
        if runner and runner in rest:
            self.collect(" ".join(shlex.quote(w) for w in rest[rest.index(runner) + 1 :]), depth)
        options = GIT_COMMAND_OPTIONS.get(rest[0], frozenset())
        for word in rest[1:]:
            if is_code_option(
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
    if option in COMMAND_STRING_OPTIONS:
        return value if has_value else following
    if name != "env":
        return None
    if option.startswith("--") and len(option) > 3 and "--split-string".startswith(option):
        return value if has_value else following
    if word.startswith("-") and not word.startswith("--") and "S" in word:
        rest = word[word.index("S") + 1 :]
        return rest or following
    return None


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
