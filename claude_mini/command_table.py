"""One session's slash commands: a `CommandTable` the runtime owns, and the discovery of built-ins.

    Command          one slash command: name, help, usage, aliases and the function that runs it
    CommandTable     the session's commands by source: "builtin", "skills", "mcp:<server>"; a
                     /clear or another session replaces its sources, nothing is process-wide
    discover(root)   the built-in commands: every `Command` defined in a `*_commands.py` module
                     under the package folder (the REPL's own first), and the modules that failed

The table knows nothing of a front end: a command's `run` takes whatever context the front end
gives it (the REPL's `CommandContext`). It imports nothing else of the project.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUILTIN = "builtin"
SKILLS = "skills"
# The REPL's own commands, found first so a plug-in module may replace one.
BUILTIN_MODULES = tuple(
    f"claude_mini.ui.{name}_commands" for name in ("help", "session", "rewind", "context", "permission", "init")
)
_importing = threading.Lock()  # the start-up thread and a typed command may discover at once


@dataclass(frozen=True)
class Command:
    """One slash command; calling it runs it (a decorated function stays callable)."""

    name: str
    help: str
    run: Callable[[Any], Awaitable[None] | None]
    usage: str = ""
    aliases: tuple[str, ...] = ()
    needs_runtime: bool = True

    def __call__(self, ctx: Any) -> Awaitable[None] | None:
        """Run the command with the front end's context."""
        return self.run(ctx)


@dataclass(frozen=True)
class Discovered:
    """The built-in commands, later ones replacing earlier ones of the same name, and one line per
    `*_commands.py` module that failed to import."""

    commands: tuple[Command, ...]
    problems: tuple[str, ...]


class CommandTable:
    """One session's slash commands, by source; a later source wins a name two sources share.

    Each change replaces the mapping (copy on write): the REPL's completion reads the table from
    its own thread while the event loop registers a server's prompts.
    """

    def __init__(self) -> None:
        self._sources: dict[str, dict[str, Command]] = {}
        self._origins: dict[str, object] = {}

    def put(self, source: str, commands: Iterable[Command], origin: object = None) -> None:
        """Put `commands` in place of what `source` had; `origin` records what they were made from."""
        self._sources = {**self._sources, source: {c.name: c for c in commands}}
        self._origins = {**self._origins, source: origin}

    def drop(self, source: str) -> None:
        """Forget `source`'s commands (a server whose prompts are gone)."""
        self._sources = {k: v for k, v in self._sources.items() if k != source}
        self._origins = {k: v for k, v in self._origins.items() if k != source}

    def has(self, source: str) -> bool:
        """Whether `source` was ever set (and not dropped)."""
        return source in self._sources

    def origin(self, source: str) -> object:
        """What `source`'s commands were made from (a skill catalog), None if unknown."""
        return self._origins.get(source)

    def names_of(self, source: str) -> set[str]:
        """The names and aliases of `source`'s commands, lower case."""
        return {n.lower() for c in self._sources.get(source, {}).values() for n in (c.name, *c.aliases)}

    def owner(self, name: str) -> str | None:
        """The source whose command is called `name` (exactly)."""
        return next((s for s, cmds in reversed(self._sources.items()) if name in cmds), None)

    def _merged(self) -> dict[str, Command]:
        merged: dict[str, Command] = {}
        for commands in self._sources.values():
            merged.update(commands)
        return merged

    def all(self) -> list[Command]:
        """Every command, sorted by name."""
        merged = self._merged()
        return [merged[name] for name in sorted(merged)]

    def find(self, name: str) -> Command | None:
        """The command called `name` or having it as an alias."""
        name, merged = name.lower(), self._merged()
        return merged.get(name) or next((c for c in merged.values() if name in c.aliases), None)

    def unique_prefix(self, name: str) -> Command | None:
        """`/co` is not a command, but `/cos` can only be /cost."""
        matches = [c for c in self._merged().values() if c.name.startswith(name.lower())]
        return matches[0] if len(matches) == 1 else None

    def __contains__(self, name: object) -> bool:
        return name in self._merged()


def builtin_table() -> CommandTable:
    """A table holding only the built-in commands (before a runtime exists, or for print mode)."""
    table = CommandTable()
    table.put(BUILTIN, discover().commands)
    return table


def discover(root: Path | None = None, package: str = "claude_mini") -> Discovered:
    """The `Command`s of every `*_commands.py` module under `root` (the package folder), read once."""
    return _discover((root or Path(__file__).resolve().parent).resolve(), package)


@functools.cache
def _discover(root: Path, package: str) -> Discovered:
    found: dict[str, Command] = {}
    problems: list[str] = []
    plugins = [
        ".".join([package, *p.relative_to(root).with_suffix("").parts]) for p in sorted(root.rglob("*_commands.py"))
    ]
    with _importing:
        for module_name in dict.fromkeys([*BUILTIN_MODULES, *plugins]):
            try:
                module = importlib.import_module(module_name)
            except Exception as exc:  # one broken plug-in must not take the REPL down
                problems.append(f"Slash commands in {module_name} are unavailable: {type(exc).__name__}: {exc}")
                continue
            for value in vars(module).values():  # the commands this module defines, not ones it imports
                if isinstance(value, Command) and value.run.__module__ == module_name:
                    found[value.name] = value
    return Discovered(tuple(found.values()), tuple(problems))
