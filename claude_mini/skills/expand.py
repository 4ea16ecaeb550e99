"""A command's or skill's body -> the text sent: arguments, `!` shell snippets, placeholders.

    substitute_arguments(body, args)        $ARGUMENTS, $ARGUMENTS[N], $N, ${CLAUDE_SKILL_DIR}, ...
    shell_snippets(body)                    the commands of !`cmd` and ```! blocks
    await expand_body(body, args, run_shell=...)   both, the snippets' output inlined

Safety: the snippets are found in the body as written, so text that arrives through the
arguments never becomes a snippet of its own. Inside a snippet the placeholders are filled
in as Claude Code does (`!`git log -n $0``), and the command that results is what the
permission check judges (a `; rm -rf ~` in an argument makes it a command that asks).
Substitution is one pass, so an argument holding `$1` or a snippet printing `$ARGUMENTS`
stays as it is.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable
from pathlib import Path


class ExpansionError(Exception):
    """One line: why the command was not sent (a `!` line denied or failed)."""


ShellRunner = Callable[[str], Awaitable[str]]  # runs one snippet; returns its output; raises ExpansionError

# `\$` before a placeholder keeps it literal. `$N` is `$ARGUMENTS[N]` (0-based, Claude Code's current
# documentation and 2.1.197's behaviour) only before a non-word character: `$2xl` stays as written.
_PLACEHOLDER = re.compile(
    r"(?P<escape>\\?)(?P<all>\$(?:ARGUMENTS\[(?P<index>\d+)\]|ARGUMENTS\b|(?P<digit>\d+)(?!\w)"
    r"|\{(?P<var>CLAUDE_SKILL_DIR|CLAUDE_SESSION_ID)\}))"
)
EMPTY_OUTPUT = "(Bash completed with no output)"  # what a `!` snippet with no output becomes (Claude Code)
# !`cmd` after a space or at a line's start (not "Hello!`x`"), or a ```! fenced block.
_SNIPPET = re.compile(
    r"^```![ \t]*\r?\n(?P<block>.*?)^```[ \t]*$|(?<!\S)!`(?P<inline>[^`\n]+)`",
    re.M | re.S,
)


def _split_args(args: str) -> list[str]:
    """The arguments split shell-style, quotes removed; unbalanced quotes: split on spaces."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def _fill(text: str, args: str, argv: list[str], variables: dict[str, str]) -> tuple[str, bool]:
    """`text` with its placeholders filled in, and whether it had an argument placeholder."""
    found = False

    def one(m: re.Match[str]) -> str:
        nonlocal found
        if m["escape"]:
            return m["all"]
        if m["var"]:
            return variables.get(m["var"], m["all"])
        found = True
        if m["index"] is not None or m["digit"] is not None:
            i = int(m["index"] if m["index"] is not None else m["digit"])
            return argv[i] if i < len(argv) else m["all"]
        return args

    return _PLACEHOLDER.sub(one, text), found


def _variables(skill_dir: Path | None, session_id: str) -> dict[str, str]:
    """The ${...} values known; an unknown one stays literal."""
    out = {"CLAUDE_SKILL_DIR": str(skill_dir)} if skill_dir is not None else {}
    if session_id:
        out["CLAUDE_SESSION_ID"] = session_id
    return out


def _with_arguments(text: str, args: str, found: bool) -> str:
    """Claude Code's rule: arguments given to a body that never asks for them are appended."""
    return f"{text}\n\nARGUMENTS: {args}" if args and not found else text


def substitute_arguments(body: str, args: str, *, skill_dir: Path | None = None, session_id: str = "") -> str:
    """$ARGUMENTS (raw), $ARGUMENTS[N] (0-based, shell-split), $N (the same, before a non-word
    character), \\$ escapes a placeholder, ${CLAUDE_SKILL_DIR},
    ${CLAUDE_SESSION_ID}; an index with no argument stays literal; a body with no argument placeholder and
    non-empty args gets "\\n\\nARGUMENTS: <args>" appended."""
    text, found = _fill(body, args, _split_args(args), _variables(skill_dir, session_id))
    return _with_arguments(text, args, found)


def shell_snippets(body: str) -> list[str]:
    """The commands of !`cmd` (inline) and ```! fenced blocks, in body order."""
    return [_command(m) for m in _SNIPPET.finditer(body)]


def _command(m: re.Match[str]) -> str:
    return m["inline"] if m["inline"] is not None else m["block"].rstrip("\r\n")


async def expand_body(
    body: str, args: str, *, run_shell: ShellRunner, skill_dir: Path | None = None, session_id: str = ""
) -> str:
    """Arguments substituted, then every snippet of the ORIGINAL body (its placeholders filled in) run in
    order and replaced by its output. Text that arrives through the arguments never becomes a snippet."""
    argv, variables = _split_args(args), _variables(skill_dir, session_id)
    pieces: list[str] = []
    found_any, start = False, 0
    for m in _SNIPPET.finditer(body):
        text, found = _fill(body[start : m.start()], args, argv, variables)
        command, in_command = _fill(_command(m), args, argv, variables)
        pieces += [text, (await run_shell(command)).rstrip("\n") or EMPTY_OUTPUT]
        found_any, start = found_any or found or in_command, m.end()
    text, found = _fill(body[start:], args, argv, variables)
    return _with_arguments("".join([*pieces, text]), args, found_any or found)
