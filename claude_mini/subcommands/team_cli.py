"""`claude-mini memory promote|demote|blame NAME`, `memory list --tier team`, and
`memory import --from claude-code|codex|gemini [--dry-run]`.

The actions are commands/team.py's (the REPL's /memory runs the same ones); the typer commands
here parse arguments and print through memory_cli's `_run`. memory_cli mounts them:

    memory_app.command("promote")(team_cli.promote_command)   # and demote, blame, import

Nothing here calls a model or imports the anthropic SDK.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from claude_mini.memory.imports import TOOLS
from claude_mini.memory.store import MemoryStore

if TYPE_CHECKING:
    from claude_mini.config import Config
from claude_mini.commands.team import (
    TeamCommandError,
    blame_lines,
    demote_lines,
    import_data,
    import_lines,
    promote_lines,
    team_for,
    team_list_data,
    team_list_lines,
)


# --- the typer commands ----------------------------------------------------------------------
def check_choice(option: str, value: str, choices: tuple[str, ...]) -> None:
    """A usage error (exit 2) naming the choices when `value` is not one of them."""
    if value not in choices:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}", param_hint=option)


NameArg = Annotated[str, typer.Argument(help="Filename or name (proposed/NAME for a proposal).")]


def _run_here(action: Callable[[Config, MemoryStore], list[str]]) -> None:
    """Run `action` on this project's settings and private memory folder and print its lines
    (memory_cli's `_run`: one line on stderr and an exit status for a refusal)."""
    from claude_mini.commands.memory import MemoryContext
    from claude_mini.subcommands.memory_cli import _run

    def run() -> list[str]:
        mc = MemoryContext.for_cwd()
        return action(mc.config, mc.store)

    _run(run)


def promote_command(name: NameArg) -> None:
    """Share a private memory with the team: checked for secrets and personal data, then written
    to the repository's team folder (.claude/memory/) for you to commit."""
    _run_here(lambda config, store: promote_lines(config, store, name))


def demote_command(
    name: Annotated[str, typer.Argument(help="A team memory's filename or name.")],
) -> None:
    """Move a team memory back into your private memory (the team file is deleted)."""
    _run_here(lambda config, store: demote_lines(config, store, name))


def blame_command(
    name: Annotated[str, typer.Argument(help="A team memory's filename or name.")],
) -> None:
    """Who saved a team memory, and the git history of its file."""
    _run_here(lambda config, _store: blame_lines(config, name))


def import_command(
    tool: Annotated[str, typer.Option("--from", metavar="TOOL", help="claude-code, codex or gemini.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would change.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Import another assistant's memory of this project as topic files (duplicates and secrets
    skipped, nothing overwritten)."""
    check_choice("--from", tool, TOOLS)

    def action(config: Config, store: MemoryStore) -> list[str]:
        data = import_data(config, store, tool, dry_run)
        return [json.dumps(data, indent=2)] if as_json else import_lines(data)

    _run_here(action)


__all__ = [
    "TeamCommandError",
    "blame_command",
    "demote_command",
    "import_command",
    "promote_command",
    "team_for",
    "team_list_data",
    "team_list_lines",
]
