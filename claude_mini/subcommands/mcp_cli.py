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
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core

from claude_mini.mcp_servers.config import (
    MCP_JSON,
    SCOPES,
    TRANSPORTS,
    IgnoredServer,
    ServerSet,
    ServerSpec,
    approve,
    edit_settings,
    load_servers,
    scope_file,
    written_servers,
)

if TYPE_CHECKING:
    from claude_mini.config import Config

NAME_SHAPE = re.compile(r"[A-Za-z0-9_-]+")  # Claude Code's rule for `mcp add`
VARIADIC_OPTIONS = ("-e", "--env", "-H", "--header")
NOT_CONNECTED = "(Configuration only: this command does not connect; a session starts the servers.)"


class McpCommandError(Exception):
    """One line for the user and the exit status: 2 for bad input, 1 for a failure."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


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
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="The MCP servers: .mcp.json (project), settings mcpServers (user, local).",
)


def _run(action: Callable[[], list[str]]) -> None:
    """Print an action's lines; an McpCommandError or SettingsEditError becomes one line and its status."""
    from claude_mini.cli import say
    from claude_mini.config import SettingsEditError
    from claude_mini.ui.safe_text import visible_controls

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
    from claude_mini.cli import say
    from claude_mini.config import load_config

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


def check_servers(specs: list[ServerSpec], config: Config) -> dict[str, dict[str, Any]]:
    """Connect to each server (only those a session would start: never an unapproved or untrusted
    one), then close them: name -> {"status", "error", "tools"}."""
    import asyncio

    from claude_mini.mcp_servers.client import McpManager
    from claude_mini.notices import NoticeChannel

    async def go() -> dict[str, dict[str, Any]]:
        wait = _check_wait(config)
        manager = McpManager(list(specs), NoticeChannel(), cwd=str(config.cwd), connect_timeout=wait)
        manager.start()
        try:
            await manager.wait_ready(wait)
            return {
                name: {"status": c.status, "error": c.error, "tools": [tool.name for tool in c.tools]}
                for name, c in manager.connections.items()
            }
        finally:
            await manager.close()

    return asyncio.run(go()) if specs else {}


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


# ---- the actions (plain functions returning lines)


def _target(server: ServerSpec | IgnoredServer) -> tuple[str, str]:
    """(transport, command line or URL) as written."""
    shown = server.redacted()
    if shown["transport"] == "stdio":
        return "stdio", " ".join([shown["command"], *shown["args"]])
    return shown["transport"], shown["url"]


def _states(found: ServerSet, config: Config) -> list[tuple[ServerSpec | IgnoredServer, str]]:
    """Every listed server with its state, by name, then in scope precedence."""
    from claude_mini.mcp_servers.config import local_settings_file

    rows: list[tuple[ServerSpec | IgnoredServer, str]] = []
    rows += [(spec, "approved" if spec.scope == "project" else "active") for spec in found.servers]
    rows += [
        (
            spec,
            f'pending approval: add "{spec.name}" to enabledMcpjsonServers in '
            f"{local_settings_file(config)} to start it",
        )
        for spec in found.pending_approval
    ]
    rows += [(server, f"not started: {server.why}") for server in found.ignored]
    return sorted(rows, key=lambda row: (row[0].name, SCOPES.index(row[0].scope)))


def list_lines(found: ServerSet, config: Config, health: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """`mcp list`: one line per server, `name: target (transport, scope) - state`, then problems;
    with `health` (--check), a started server's state is its connection's."""
    rows = _states(found, config)
    if health is not None:
        started = {id(spec) for spec in found.servers}
        rows = [
            (server, _health(health[server.name], config) if id(server) in started else state) for server, state in rows
        ]
    if not rows and not found.problems:
        return [
            f"No MCP servers. Add one with `claude-mini mcp add NAME -- COMMAND ARGS...`, or write "
            f"{config.project_root / MCP_JSON} (shared with the project) in Claude Code's format."
        ]
    lines = []
    for server, state in rows:
        transport, target = _target(server)
        lines.append(f"{server.name}: {target} ({transport}, {server.scope}) - {state}")
    if found.problems:
        lines.append(f"Problems ({len(found.problems)}):")
        lines += [f"  {problem}" for problem in found.problems]
    return [*lines] if health is not None else [*lines, NOT_CONNECTED]


def _check_wait(config: Config) -> float:
    """Seconds `--check` lets the servers connect: a session's own wait (mcp.connectTimeoutMs or
    MCP_TIMEOUT), so a server slow to start on a loaded machine is seen as a session sees it."""
    from claude_mini.mcp_servers.lifecycle import McpSettings

    return McpSettings.read(config).connect_wait


def _health(state: dict[str, Any], config: Config) -> str:
    if state["status"] == "connected":
        return f"connected ({len(state['tools'])} tools)"
    if state["status"] == "connecting":
        return f"still connecting after {_check_wait(config):g} s"
    return f"{state['status']}: {state['error'] or 'no reason given'}"


def get_lines(found: ServerSet, config: Config, name: str) -> list[str]:
    """`mcp get NAME`: each definition of the name (the one that wins first), values masked."""
    rows = [row for row in _states(found, config) if row[0].name == name]
    if not rows:
        raise McpCommandError(_not_found(found, name))
    lines: list[str] = []
    for server, state in rows:
        shown = server.redacted()
        lines += [
            f"{name}:",
            f"  Scope: {server.scope} ({server.file})",
            f"  Status: {state}",
            f"  Type: {shown['transport']}",
        ]
        if shown["transport"] == "stdio":
            lines += [
                f"  Command: {shown['command']}",
                f"  Args: {' '.join(shown['args']) or '(none)'}",
                "  Environment: " + (" ".join(f"{key}={value}" for key, value in shown["env"].items()) or "(none)"),
            ]
        else:
            lines += [
                f"  URL: {shown['url']}",
                "  Headers: " + (", ".join(f"{key}: {value}" for key, value in shown["headers"].items()) or "(none)"),
            ]
        lines += [f"  To remove it: claude-mini mcp remove {name} --scope {server.scope}", ""]
    return [*lines[:-1], NOT_CONNECTED]


def _not_found(found: ServerSet, name: str) -> str:
    broken = [problem for problem in found.problems if f'MCP server "{name}"' in problem]
    if broken:
        return broken[0]
    listed: list[ServerSpec | IgnoredServer] = [*found.servers, *found.pending_approval, *found.ignored]
    names = sorted({server.name for server in listed})
    return f'no MCP server named "{name}"' + (
        f"; configured: {', '.join(names)}." if names else "; none is configured (see `claude-mini mcp add -h`)."
    )


def add(
    config: Config,
    name: str,
    command_or_url: str,
    args: list[str],
    *,
    scope: str,
    transport: str,
    env: list[str],
    headers: list[str],
) -> list[str]:
    """`mcp add`: the entry written to its scope's file in Claude Code's shape; lines saying what was done."""
    transport = "http" if transport == "streamable-http" else transport
    entry = _entry(name, command_or_url, args, scope, transport, env, headers)
    path = scope_file(config, scope)
    notes = []
    if transport == "stdio" and re.match(r"https?://", command_or_url):
        notes.append(
            f"Note: {command_or_url} looks like a URL but was added as a command to run; for "
            f"an HTTP server: claude-mini mcp remove {name} --scope {scope}, then "
            f"claude-mini mcp add --transport http {name} {command_or_url}"
        )

    def change(data: dict[str, Any]) -> None:
        servers = data.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise McpCommandError(f"mcpServers in {path} is not an object; fix the file, then try again.")
        if name in servers:
            raise McpCommandError(
                f'an MCP server named "{name}" is already in {path} ({scope} scope); '
                f"remove it first with claude-mini mcp remove {name} --scope {scope}."
            )
        servers[name] = entry

    edit_settings(config, path, change, source=scope)
    what = command_or_url if transport != "stdio" else " ".join([command_or_url, *args])
    lines = [f"Added {transport} MCP server {name} ({what}) to the {scope} scope: {path}"]
    if scope == "project":
        approve(config, [name], approved=True)
        lines.append(f"Approved it for you in {scope_file(config, 'local')} (teammates are asked).")
    if scope != "user" and not config.trusted:
        lines.append(
            "This folder is not trusted: the server starts once you trust it "
            "(run claude-mini here), or with --trust-folder."
        )
    return lines + notes


def _entry(
    name: str, command_or_url: str, args: list[str], scope: str, transport: str, env: list[str], headers: list[str]
) -> dict[str, Any]:
    """The JSON entry, or McpCommandError (status 2) for input Claude Code refuses too."""
    if scope not in SCOPES:
        raise McpCommandError(f"unknown scope {scope!r}: use local, project or user.", 2)
    if transport not in TRANSPORTS:
        raise McpCommandError(f"unknown transport {transport!r}: use stdio, http or sse.", 2)
    if not NAME_SHAPE.fullmatch(name):
        raise McpCommandError(f"invalid server name {name!r}: use letters, digits, - and _ only.", 2)
    if transport != "stdio":
        if args or env:
            raise McpCommandError(
                f"an {transport} server takes a URL and headers (-H), not "
                "arguments or -e; for a command, leave out --transport.",
                2,
            )
        entry: dict[str, Any] = {"type": transport, "url": command_or_url}
        if headers:
            entry["headers"] = dict(_header(text) for text in headers)
        return entry
    if headers:
        raise McpCommandError("headers (-H) are for http and sse servers; a stdio server takes -e KEY=VALUE.", 2)
    return {"type": "stdio", "command": command_or_url, "args": args, "env": dict(_env(text) for text in env)}


def _env(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise McpCommandError(f"invalid environment variable {text!r}: write -e KEY=VALUE.", 2)
    return key, value


def _header(text: str) -> tuple[str, str]:
    key, sep, value = text.partition(":")
    if not sep or not key.strip():
        raise McpCommandError(f"invalid header {text!r}: write -H 'Name: value'.", 2)
    return key.strip(), value.strip()


def remove(config: Config, name: str, scope: str | None) -> list[str]:
    """`mcp remove`: the entry deleted from its scope's file; the scope is needed when the name is in several."""
    if scope is not None and scope not in SCOPES:
        raise McpCommandError(f"unknown scope {scope!r}: use local, project or user.", 2)
    holding = [where for where in SCOPES if name in _written(config, where)]
    if scope is None and len(holding) > 1:
        raise McpCommandError(
            f'"{name}" is in several scopes ({", ".join(holding)}): say which with '
            f"--scope, e.g. claude-mini mcp remove {name} --scope {holding[0]}."
        )
    if not holding or (scope is not None and scope not in holding):
        where = f"the {scope} scope ({scope_file(config, scope)})" if scope else "any scope"
        raise McpCommandError(f'no MCP server named "{name}" in {where}; `claude-mini mcp list` shows them.')
    scope = scope or holding[0]
    path = scope_file(config, scope)
    edit_settings(config, path, lambda data: data["mcpServers"].pop(name), source=scope)
    return [f"Removed MCP server {name} from the {scope} scope: {path}"]


def _written(config: Config, scope: str) -> dict[str, Any]:
    """A scope's `mcpServers` as written (malformed entries included: they may be removed too)."""
    return written_servers(config, scope, [])[1]
