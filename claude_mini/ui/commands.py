"""Slash commands in the REPL: one command is one small function with its help text.

    @command("cost", help="Tokens and dollars of this session, by purpose.")
    def show_cost(ctx: CommandContext) -> None:
        ctx.console.print(...)

A command gets a `CommandContext`: the runtime, the console, its argument
string, the session's command table and the REPL as `host` (to run a turn, ask
the user, exit). It may be a plain or an async function. `@command` makes the
function a `Command` (still callable); to add one from another part of the
program, put it in a module whose file name ends in `_commands.py` anywhere in
the package: `command_table.discover` imports such modules once (in the
background at start-up), so adding a command is a one-file change.

There is no process-wide registry: each session's runtime owns a `CommandTable`
(claude_mini/command_table.py) holding the built-ins, its custom commands and
skills (skill_commands.py) and its MCP servers' prompts (mcp_commands.py);
completion, /help and dispatch read that table. The REPL's own commands live
next to this module, one module per group, found first:

    help_commands.py        /help
    session_commands.py     /clear /resume /exit
    rewind_commands.py      /rewind (also Esc Esc on an empty prompt)
    context_commands.py     /context /cost /status /config /model
    permission_commands.py  /permissions
    init_commands.py        /init

The others (compact, dream, memory, mcp, skills, ...) are found by discovery like any other.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import re
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from claude_mini.command_table import BUILTIN, Command, CommandTable, builtin_table, discover
from claude_mini.commands.skills import late_hint

if TYPE_CHECKING:
    from rich.console import Console

    from claude_mini.runtime import Runtime

T = TypeVar("T")
CommandFn = Callable[["CommandContext"], Awaitable[None] | None]
_COMMAND_WORD = re.compile(r"^/[A-Za-z][\w:-]*$")


class CommandHost(Protocol):
    """What commands may ask of the REPL (they tell the user things through `rt.notices`)."""

    async def run_turn(self, text: str) -> None:
        """Send `text` to the model as a user turn, rendered like any other."""

    async def cancellable(self, work: Awaitable[T], status: str) -> T:
        """Await `work` as a turn runs: Esc or Ctrl-C cancels it (CancelledError), `status` shows."""

    async def choose(self, message: str, options: Sequence[tuple[str, str]]) -> str | None:
        """Let the user pick one `(value, label)`; None when they cancel."""

    def request_exit(self) -> None:
        """Leave the REPL after this command."""

    def session_changed(self) -> None:
        """The runtime now holds another session (after /clear or /resume)."""

    def put_in_input(self, text: str) -> None:
        """Start the next prompt with `text` in it, to edit or send (a rewound message)."""


@dataclass
class CommandContext:
    """Everything one command invocation may use."""

    host: CommandHost
    runtime: Runtime | None
    console: Console
    args: str = ""
    table: CommandTable | None = None  # the session's commands (/help lists them)

    @property
    def rt(self) -> Runtime:
        """The runtime (commands that declare `needs_runtime` always have one)."""
        assert self.runtime is not None, "this command was registered with needs_runtime=False"
        return self.runtime

    @property
    def commands(self) -> CommandTable:
        """The session's command table."""
        return self.table if self.table is not None else session_table(self.runtime)


def command(
    name: str, *, help: str, usage: str = "", aliases: Sequence[str] = (), needs_runtime: bool = True
) -> Callable[[CommandFn], Command]:
    """Make the decorated function the built-in `/name` (found by `command_table.discover`; a later
    module's command of the same name wins)."""

    def make(fn: CommandFn) -> Command:
        return Command(name, help, fn, usage, tuple(aliases), needs_runtime)

    return make


def session_table(runtime: Runtime | None) -> CommandTable:
    """The session's command table, the built-ins in it; only the built-ins before a runtime exists."""
    if runtime is None:
        return builtin_table()
    table = runtime.commands
    if not table.has(BUILTIN):
        table.put(BUILTIN, discover().commands)
    return table


def is_command(text: str, table: CommandTable) -> bool:
    """Whether the input is a slash command (`/usr/bin/x is broken` is a message)."""
    first = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    # A custom command's name may hold a `.` or start with a digit (`/v1.2-notes`): registered, it counts.
    return bool(_COMMAND_WORD.match(first)) or (first.startswith("/") and first[1:].lower() in table)


def unknown_hint(name: str, table: CommandTable, runtime: Runtime | None = None) -> str:
    """`Unknown command /hlep. Did you mean /help?`; a custom command or skill added after the
    conversation started says when it becomes a command."""
    if runtime is not None and (late := late_hint(runtime, name)) is not None:
        return late
    names = [n for c in table.all() for n in (c.name, *c.aliases)]
    close = difflib.get_close_matches(name.lower(), names, n=1, cutoff=0.5)
    tip = f"Did you mean /{close[0]}?" if close else "Type /help for the list."
    return f"Unknown command /{name}. {tip}"


async def run_command(
    line: str,
    host: CommandHost,
    console: Console,
    get_runtime: Callable[[], Awaitable[Runtime]],
    table: CommandTable,
    *,
    debug: bool = False,
) -> None:
    """Run one `/name args` line from the session's `table`; a failing command prints one line and
    the REPL goes on."""
    name, _, args = line.strip()[1:].partition(" ")
    cmd = table.find(name) or table.unique_prefix(name)
    if cmd is None and name.lower().startswith("mcp__"):  # an MCP prompt of a server still connecting
        from claude_mini.ui.mcp_commands import find_prompt_command  # startup: MCP loads after the first paint

        cmd = await find_prompt_command(name, await get_runtime())
    if cmd is None:
        try:
            runtime = await get_runtime()
        except Exception:  # a runtime that cannot be built is reported where it is needed
            runtime = None
        console.print(unknown_hint(name, table, runtime), style="yellow", markup=False)
        return
    runtime = await get_runtime() if cmd.needs_runtime else None  # start-up failures are not ours
    try:
        result = cmd.run(CommandContext(host, runtime, console, args.strip(), table))
        if inspect.isawaitable(result):
            await result
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if debug:
            console.print(traceback.format_exc(), markup=False, highlight=False)
        console.print(
            f"✗ /{cmd.name} failed: {type(exc).__name__}: {' '.join(str(exc).split())}. The session is unchanged.",
            style="red",
            markup=False,
        )


# ---------------------------------------------------------------- for commands


def print_lines(ctx: CommandContext, lines: Sequence[str]) -> None:
    """Print each line as it is (no markup, no highlighting), CLI commands named as the REPL's."""
    for line in lines:
        ctx.console.print(repl_wording(line), markup=False, highlight=False)


# Texts shared with the CLI name its commands; in the REPL the slash command that does the same is
# named instead (`/memory restore NAME`, not `claude-mini memory restore NAME`).
_CLI_COMMAND = re.compile(r"\bclaude-mini (memory|hooks list|mcp list)\b")
_REPL_COMMAND = {"memory": "/memory", "hooks list": "/hooks", "mcp list": "/mcp"}


def repl_wording(text: str) -> str:
    """`text` with each CLI command that has a slash command named as that slash command."""
    return _CLI_COMMAND.sub(lambda m: _REPL_COMMAND[m.group(1)], text)
