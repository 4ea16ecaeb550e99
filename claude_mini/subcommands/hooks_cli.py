"""`claude-mini hooks list [--json]`: every hook of the settings files, what runs and what does not.

The REPL's `/hooks` (ui/hooks_commands.py) prints the same report (commands/hooks.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from claude_mini.base.notices import say
from claude_mini.commands.hooks import hooks_data, hooks_lines
from claude_mini.config import load_config

hooks_app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # the root command\'s plain style, without Python types
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="The hooks from the settings files (Claude Code's `hooks` key).",
)


@hooks_app.command("list")
def list_hooks(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    trust_folder: Annotated[
        bool, typer.Option("--trust-folder", help="List as if this folder were trusted (as that flag makes a session).")
    ] = False,
) -> None:
    """Every hook by event (matcher, command, timeout, file), the ones that do not run and why, problems."""
    config = load_config(Path.cwd(), trust_folder=trust_folder)
    for warning in config.warnings:  # a settings file that could not be read has no hooks to list
        say(warning)
    if as_json:
        print(json.dumps(hooks_data(config), indent=2))
    else:
        print("\n".join(hooks_lines(config)))
