"""Slash commands: a registry where one command is one small function with its help text.

    @command("cost", help="Tokens and dollars of this session, by purpose.")
    def show_cost(ctx: CommandContext) -> None:
        ctx.console.print(...)

A command gets a `CommandContext`: the runtime, the console, its argument
string and the REPL as `host` (to run a turn, ask the user, exit). It may be a
plain or an async function. To add a command from another part of the program,
put it in a module whose file name ends in `_commands.py` anywhere in the
package (e.g. `claude_mini/memory/memory_commands.py`): `discover_commands`
imports such modules (in the background at start-up, and before a command
runs), so adding `/memory` is a one-file change.

This module is the registry only. The REPL's own commands live next to it, one
module per group, and are registered on the registry's first use, before the
background discovery, so completion lists them from the first keystroke:

    help_commands.py        /help
    session_commands.py     /clear /resume /exit
    rewind_commands.py      /rewind (also Esc Esc on an empty prompt)
    context_commands.py     /context /cost /status /config /model
    permission_commands.py  /permissions
    init_commands.py        /init

The memory layers' commands (compact_commands.py, dream_commands.py,
memory_commands.py) are found by discovery like any other.
"""

from __future__ import annotations

import asyncio
import difflib
import importlib
import inspect
import re
import threading
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

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

    @property
    def rt(self) -> Runtime:
        """The runtime (commands that declare `needs_runtime` always have one)."""
        assert self.runtime is not None, "this command was registered with needs_runtime=False"
        return self.runtime


@dataclass(frozen=True)
class Command:
    """One registered slash command."""

    name: str
    help: str
    run: CommandFn
    usage: str = ""
    aliases: tuple[str, ...] = ()
    needs_runtime: bool = True


COMMANDS: dict[str, Command] = {}
BUILTIN_MODULES = tuple(
    f"claude_mini.ui.{name}_commands" for name in ("help", "session", "rewind", "context", "permission", "init")
)
_discovered: set[Path] = set()
_discovering = threading.Lock()


def command(
    name: str, *, help: str, usage: str = "", aliases: Sequence[str] = (), needs_runtime: bool = True
) -> Callable[[CommandFn], CommandFn]:
    """Register the decorated function as `/name` (a later registration of the same name wins)."""

    def register(fn: CommandFn) -> CommandFn:
        COMMANDS[name] = Command(name, help, fn, usage, tuple(aliases), needs_runtime)
        return fn

    return register


def _registry() -> dict[str, Command]:
    """COMMANDS, with the built-in commands in it (importing a module already imported is a lookup)."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    return COMMANDS


def discover_commands(root: Path | None = None, package: str = "claude_mini") -> list[str]:
    """Import every `*_commands.py` module under `root` (the package folder) once.

    The built-in commands are registered first, so a plug-in may replace one.
    Returns one line per module that failed to import; the others still register.
    """
    _registry()
    root = (root or Path(__file__).resolve().parent.parent).resolve()
    with _discovering:  # a command typed while the start-up thread discovers waits for it
        if root in _discovered:
            return []
        problems = []
        for path in sorted(root.rglob("*_commands.py")):
            module = ".".join([package, *path.relative_to(root).with_suffix("").parts])
            try:
                importlib.import_module(module)
            except Exception as exc:  # one broken plug-in must not take the REPL down
                problems.append(f"Slash commands in {module} are unavailable: {type(exc).__name__}: {exc}")
        _discovered.add(root)
    return problems


def all_commands() -> list[Command]:
    """Registered commands sorted by name."""
    commands = _registry()
    return [commands[name] for name in sorted(commands)]


def find_command(name: str) -> Command | None:
    """The command called `name` or having it as an alias."""
    name, commands = name.lower(), _registry()
    return commands.get(name) or next((c for c in commands.values() if name in c.aliases), None)


def _unique_prefix(name: str) -> Command | None:
    """`/co` is not a command, but `/cos` can only be /cost."""
    matches = [c for c in _registry().values() if c.name.startswith(name.lower())]
    return matches[0] if len(matches) == 1 else None


def is_command(text: str) -> bool:
    """Whether the input is a slash command (`/usr/bin/x is broken` is a message)."""
    first = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    # A custom command's name may hold a `.` or start with a digit (`/v1.2-notes`): registered, it counts.
    return bool(_COMMAND_WORD.match(first)) or (first.startswith("/") and first[1:].lower() in _registry())


def unknown_hint(name: str, runtime: Runtime | None = None) -> str:
    """`Unknown command /hlep. Did you mean /help?`; a custom command or skill added after the
    conversation started says when it becomes a command."""
    if runtime is not None:
        from claude_mini.ui.skill_commands import late_hint

        if (late := late_hint(runtime, name)) is not None:
            return late
    commands = _registry()
    names = [*commands, *(a for c in commands.values() for a in c.aliases)]
    close = difflib.get_close_matches(name.lower(), names, n=1, cutoff=0.5)
    tip = f"Did you mean /{close[0]}?" if close else "Type /help for the list."
    return f"Unknown command /{name}. {tip}"


async def run_command(
    line: str,
    host: CommandHost,
    console: Console,
    get_runtime: Callable[[], Awaitable[Runtime]],
    *,
    debug: bool = False,
) -> None:
    """Run one `/name args` line; a failing command prints one line and the REPL goes on."""
    for problem in discover_commands():
        console.print(problem, style="yellow", markup=False)
    name, _, args = line.strip()[1:].partition(" ")
    cmd = find_command(name) or _unique_prefix(name)
    if cmd is None and name.lower().startswith("mcp__"):  # an MCP prompt of a server still connecting
        from claude_mini.ui.mcp_commands import find_prompt_command

        cmd = await find_prompt_command(name, await get_runtime())
    if cmd is None:
        try:
            runtime = await get_runtime()
        except Exception:  # a runtime that cannot be built is reported where it is needed
            runtime = None
        console.print(unknown_hint(name, runtime), style="yellow", markup=False)
        return
    runtime = await get_runtime() if cmd.needs_runtime else None  # start-up failures are not ours
    try:
        result = cmd.run(CommandContext(host, runtime, console, args.strip()))
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
    """Print each line as it is (no markup, no highlighting)."""
    for line in lines:
        ctx.console.print(line, markup=False, highlight=False)
