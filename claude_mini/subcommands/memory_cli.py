"""`claude-mini memory ...`: look at, add, edit and repair memories.

The typer group parses arguments and prints; the actions are commands/memory.py's (the REPL's
/memory runs the same ones). A `MemoryCommandError` becomes one line on stderr and its exit status.
Nothing here calls a model or imports the anthropic SDK, so every command answers at once.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from claude_mini.commands import team as team_memory
from claude_mini.commands.memory import (
    MemoryContext,
    add_memory,
    both_tiers_doctor_data,
    both_tiers_doctor_lines,
    edit_memory,
    forget_memory,
    list_data,
    list_lines,
    set_auto_memory,
    show_text,
)
from claude_mini.subcommands import forget_cli, team_cli
from claude_mini.subcommands.memory_run import run_action

# --- the typer group -----------------------------------------------------------------------
memory_app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # the root command\'s plain style, without Python types
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Look at, add, edit and repair this project's memories.",
)


@memory_app.callback(invoke_without_command=True)
def _group(ctx: typer.Context) -> None:
    """Look at, add, edit and repair this project's memories (no command: list)."""
    if ctx.invoked_subcommand is None:
        run_action(lambda: list_lines(list_data(MemoryContext.for_cwd())))


@memory_app.command("list")
def list_command(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    scores: Annotated[bool, typer.Option("--scores", help="Keep-scores used by `memory gc`.")] = False,
    tier: Annotated[str, typer.Option("--tier", help="private, team (with who saved each and when) or all.")] = "all",
) -> None:
    """Instruction files and memory files: type, size, age, description; the team's too."""
    team_cli.check_choice("--tier", tier, ("all", "private", "team"))
    if scores:
        forget_cli.scores_command(as_json)
        return

    def action() -> list[str]:
        mc = MemoryContext.for_cwd()
        if tier == "team":
            data = team_memory.team_list_data(team_memory.team_for(mc.config))
            return [json.dumps(data, indent=2)] if as_json else team_memory.team_list_lines(data)
        data = list_data(mc)
        if tier == "private":
            data["team"] = None
        return [json.dumps(data, indent=2)] if as_json else list_lines(data)

    run_action(action)


@memory_app.command("show")
def show_command(name: Annotated[str, typer.Argument(help="Filename or name; MEMORY.md for the index.")]) -> None:
    """Print one memory file."""
    run_action(lambda: [show_text(MemoryContext.for_cwd().store, name).rstrip("\n")])


@memory_app.command("edit")
def edit_command(name: Annotated[str, typer.Argument(help="Filename or name; MEMORY.md for the index.")]) -> None:
    """Open a memory in $VISUAL / $EDITOR."""
    run_action(lambda: edit_memory(MemoryContext.for_cwd().store, name))


@memory_app.command("add")
def add_command(
    text: Annotated[list[str], typer.Argument(help="The memory, in plain words.")],
    type_: Annotated[str, typer.Option("--type", "-t", help="user, feedback, project or reference.")] = "project",
    why: Annotated[str | None, typer.Option("--why", help="The reason behind it (**Why:** line).")] = None,
    how: Annotated[str | None, typer.Option("--how", help="When it applies (**How to apply:** line).")] = None,
    supersedes: Annotated[
        str | None,
        typer.Option(
            "--supersedes",
            metavar="FILE",
            help="The memory this one corrects: marked superseded_by it, no longer recalled.",
        ),
    ] = None,
) -> None:
    """Save a memory now, without a model call (name and description come from the text)."""
    run_action(lambda: add_memory(MemoryContext.for_cwd(), " ".join(text), type_, why, how, supersedes))


@memory_app.command("forget")
def forget_command(
    name: Annotated[str, typer.Argument(help="Filename or name (an archived one with --purge).")],
    purge: Annotated[
        bool, typer.Option("--purge", help="Delete it for good, and its archived copies that hold secrets.")
    ] = False,
) -> None:
    """Move a memory to archive/ and drop its index line (asks to purge one that held a secret)."""
    run_action(lambda: forget_memory(MemoryContext.for_cwd().store, name, purge=purge, ask=forget_cli.terminal_ask()))


@memory_app.command("path")
def path_command() -> None:
    """Print the memory folder of this project."""
    run_action(lambda: [str(MemoryContext.for_cwd().store.root)])


@memory_app.command("on")
def on_command() -> None:
    """Turn auto memory on (user settings; CLAUDE_MINI_DISABLE_AUTO_MEMORY=1 still wins)."""
    run_action(lambda: set_auto_memory(True))


@memory_app.command("off")
def off_command() -> None:
    """Turn auto memory off (the memory section, recall and extraction stop)."""
    run_action(lambda: set_auto_memory(False))


@memory_app.command("doctor")
def doctor_command(
    apply_fix: Annotated[bool, typer.Option("--fix", help="Repair what is mechanical.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Find index lines without files, unindexed files, broken frontmatter, vague descriptions;
    list stale memories (naming files, folders or commands that are gone)."""
    result: dict[str, Any] = {}

    def action() -> list[str]:
        result.update(both_tiers_doctor_data(MemoryContext.for_cwd(), apply_fix))
        return [json.dumps(result, indent=2)] if as_json else both_tiers_doctor_lines(result)

    run_action(action)
    if not result.get("ok", True):
        raise typer.Exit(1)


# Forgetting (memory/maintenance/forget.py) brings its own actions in subcommands/forget_cli.py.
memory_app.command("gc")(forget_cli.gc_command)
memory_app.command("restore")(forget_cli.restore_command)
# The team tier (memory/team/) and imports from other assistants: subcommands/team_cli.py.
memory_app.command("promote")(team_cli.promote_command)
memory_app.command("demote")(team_cli.demote_command)
memory_app.command("blame")(team_cli.blame_command)
memory_app.command("import")(team_cli.import_command)
