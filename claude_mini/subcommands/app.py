"""`claude-mini <subcommand>`: scriptable views and maintenance that need no model."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from claude_mini.base.text import visible_controls
from claude_mini.commands.context import (
    builtin_command_names,
    catalog_lines,
    context_catalog,
    instructions_report,
)
from claude_mini.commands.sandbox import OFF_LINE, sandbox_for
from claude_mini.config import load_config
from claude_mini.memory.instructions import lint, load_instructions, to_json
from claude_mini.sandbox.status import status_data, status_lines
from claude_mini.skills.report import catalog_json
from claude_mini.subcommands.checkpoints_cli import checkpoints_app
from claude_mini.subcommands.hooks_cli import hooks_app
from claude_mini.subcommands.mcp_cli import mcp_app
from claude_mini.subcommands.memory_cli import memory_app

sub_app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # the root command\'s plain style, without Python types
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@sub_app.command("context")
def context_command(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    lint_: Annotated[
        bool, typer.Option("--lint", help="Report problems in the instruction files, commands and skills.")
    ] = False,
) -> None:
    """Show which instruction files (CLAUDE.md, rules, imports) are loaded, in order, and why;
    the custom commands and skills listed to the model."""
    config = load_config(Path.cwd())
    instructions = load_instructions(
        config.cwd,
        excludes=config.get("claudeMdExcludes") or (),
        trusted=config.trusted,
        claude_code_home=config.claude_code_home,
    )
    data = to_json(instructions)
    catalog, listing = context_catalog(config)
    builtin = builtin_command_names()
    data["skills"] = catalog_json(catalog, listing, builtin)
    if lint_:
        data["lint"] = lint(instructions, config.project_root) + data["skills"]["problems"]
    if as_json:
        print(json.dumps(data, indent=2, default=str))
        return
    lines = instructions_report(data) + catalog_lines(catalog, listing, builtin)
    if lint_:
        findings = data["lint"]
        lines.append(f"Lint: {len(findings)} finding(s)" + (":" if findings else "."))
        lines += [f"  {finding}" for finding in findings]
    print(visible_controls("\n".join(lines)))  # paths and file text come from the repository


@sub_app.command("sandbox")
def sandbox_command(
    action: Annotated[str, typer.Argument(help="status")] = "status",
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show what the Bash sandbox (bubblewrap) enforces here, what is missing and why."""
    if action != "status":
        print(f"claude-mini sandbox: unknown action {action!r}; use status.", file=sys.stderr)
        raise typer.Exit(2)
    box = sandbox_for(load_config(Path.cwd()))
    if box is None:
        data = {"enabled": False, "enforced": False}
        print(json.dumps(data, indent=2) if as_json else OFF_LINE)
        return
    try:
        print(json.dumps(status_data(box), indent=2) if as_json else visible_controls("\n".join(status_lines(box))))
    finally:
        asyncio.run(box.close())


@sub_app.callback()
def _group() -> None:
    """claude-mini maintenance commands."""


sub_app.add_typer(memory_app, name="memory")
sub_app.add_typer(hooks_app, name="hooks")
sub_app.add_typer(mcp_app, name="mcp")
sub_app.add_typer(checkpoints_app, name="checkpoints")
