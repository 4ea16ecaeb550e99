"""`claude-mini mcp list|get|add|remove`: the MCP servers of the three scopes, in Claude Code's formats.

    claude-mini mcp add [-s local|project|user] [-e KEY=VALUE...] NAME -- COMMAND ARGS...
    claude-mini mcp add --transport http|sse [-H 'Name: value'...] NAME URL

As in Claude Code, `-e` and `-H` take every following word up to the next option (so `--` ends
them before the command), the default scope is local, and a project server goes to `.mcp.json`
pretty-printed. Listings never show env or header values, and connect to nothing unless asked:
`mcp list --check` starts the servers a session would start (never an unapproved one) and
shows each one's status and tools.
One difference: `add --scope project` also records your approval of the server in
`.claude/settings.local.json` (you wrote it); Claude Code leaves it pending until you start it.
The actions are commands/mcp.py's; the typer commands here parse arguments and print.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core

from claude_mini.base.notices import say
from claude_mini.base.text import visible_controls
from claude_mini.commands.mcp import (
    McpCommandError,
    add,
    check_servers,
    get_lines,
    list_lines,
    remove,
)
from claude_mini.config import load_config
from claude_mini.config.edit import SettingsEditError
from claude_mini.mcp_servers.config import (
    load_servers,
)

if TYPE_CHECKING:
    from claude_mini.config import Config

VARIADIC_OPTIONS = ("-e", "--env", "-H", "--header")


class _VariadicOptionsCommand(typer.core.TyperCommand):
    """`-e A=1 B=2` means `-e A=1 -e B=2`, as Claude Code (commander) reads variadic options."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer vendors click
        return super().parse_args(ctx, spread_variadic(args))


def spread_variadic(args: list[str]) -> list[str]:
    """Each word after `-e`/`-H` up to the next word starting with `-` (or `--`) gets its own flag."""
    out: list[str] = []
    flag = None
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        if flag is not None and not arg.startswith("-"):
            out += [flag, arg]
            continue
        if arg in VARIADIC_OPTIONS:
            flag = arg
            if i + 1 < len(args) and not args[i + 1].startswith("-"):
                continue  # its first value follows, with the flag written once
        else:
            flag = None
        out.append(arg)
    return out


mcp_app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # the root command\'s plain style, without Python types
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="The MCP servers: .mcp.json (project), settings mcpServers (user, local).",
)


def _run(action: Callable[[], list[str]]) -> None:
    """Print an action's lines; an McpCommandError or SettingsEditError becomes one line and its status."""
    try:
        lines = action()
    except McpCommandError as exc:
        say(str(exc))
        raise typer.Exit(exc.code) from None
    except SettingsEditError as exc:
        say(str(exc))
        raise typer.Exit(1) from None
    for line in lines:
        print(visible_controls(line))  # names, commands and paths come from files a repository may ship


def _config(trust_folder: bool = False, *, listing: bool = True) -> Config:
    """This folder's settings; a listing says their warnings (a file that could not be read has no
    servers to list), an edit does not: it reads its file again and says what stops it."""
    config = load_config(Path.cwd(), trust_folder=trust_folder)
    for warning in config.warnings if listing else ():
        say(warning)
    return config


TrustFlag = Annotated[
    bool, typer.Option("--trust-folder", help="As if this folder were trusted (as that flag makes a session).")
]


@mcp_app.command("list")
def list_servers(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Connect to the servers a session would start (waiting as a session does: "
            "mcp.connectTimeoutMs, 10 s by default) and show their status and tools.",
        ),
    ] = False,
    trust_folder: TrustFlag = False,
) -> None:
    """Every server: name, command or URL, transport, scope, and whether a session starts it."""
    import json

    config = _config(trust_folder)
    found = load_servers(config)
    health = check_servers(found.servers, config) if check else None
    if as_json:
        data = found.to_json()
        for server in data["servers"]:
            server.update((health or {}).get(server["name"], {}))
        _run(lambda: [json.dumps(data, indent=2)])
    else:
        _run(lambda: list_lines(found, config, health))


@mcp_app.command("get")
def get_server(
    name: Annotated[str, typer.Argument(help="The server's name.")], trust_folder: TrustFlag = False
) -> None:
    """One server in detail (env and header values are not shown)."""
    config = _config(trust_folder)
    _run(lambda: get_lines(load_servers(config), config, name))


@mcp_app.command("add", cls=_VariadicOptionsCommand)
def add_server(
    name: Annotated[str, typer.Argument(help="The server's name (letters, digits, - and _).")],
    command_or_url: Annotated[
        str, typer.Argument(metavar="COMMAND_OR_URL", help="The command (stdio) or the URL (http, sse).")
    ],
    args: Annotated[list[str] | None, typer.Argument(help="The command's arguments (after --).")] = None,
    scope: Annotated[str, typer.Option("-s", "--scope", help="local (default), project or user.")] = "local",
    transport: Annotated[str, typer.Option("-t", "--transport", help="stdio (default), http or sse.")] = "stdio",
    env: Annotated[list[str] | None, typer.Option("-e", "--env", help="KEY=VALUE for a stdio server.")] = None,
    header: Annotated[list[str] | None, typer.Option("-H", "--header", help="'Name: value' for http/sse.")] = None,
) -> None:
    """Add a server: `mcp add NAME -- COMMAND ARGS...` or `mcp add --transport http NAME URL`."""
    _run(
        lambda: add(
            _config(listing=False),
            name,
            command_or_url,
            args or [],
            scope=scope,
            transport=transport,
            env=env or [],
            headers=header or [],
        )
    )


@mcp_app.command("remove")
def remove_server(
    name: Annotated[str, typer.Argument(help="The server's name.")],
    scope: Annotated[
        str | None, typer.Option("-s", "--scope", help="local, project or user; needed when the name is in several.")
    ] = None,
) -> None:
    """Remove a server from the file of its scope."""
    _run(lambda: remove(_config(listing=False), name, scope))
