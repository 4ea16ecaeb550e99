"""MCP server configuration for `claude-mini mcp list|get|add|remove`: the servers of the three scopes,
in Claude Code's formats.

Listings never show env or header values, and connect to nothing unless asked: `check_servers`
starts the servers a session would start (never an unapproved one) and reports each one's status
and tools. subcommands/mcp_cli.py parses arguments and prints.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from claude_mini.mcp_servers.config import (
    MCP_JSON,
    SCOPES,
    TRANSPORTS,
    IgnoredServer,
    ServerSet,
    ServerSpec,
    approve,
    edit_settings,
    scope_file,
    written_servers,
)

if TYPE_CHECKING:
    from claude_mini.config import Config

NAME_SHAPE = re.compile(r"[A-Za-z0-9_-]+")  # Claude Code's rule for `mcp add`
NOT_CONNECTED = "(Configuration only: this command does not connect; a session starts the servers.)"
CHECK_SECONDS = 10.0  # `mcp list --check`: how long each server may take to connect


class McpCommandError(Exception):
    """One line for the user and the exit status: 2 for bad input, 1 for a failure."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def check_servers(specs: list[ServerSpec], config: Config) -> dict[str, dict[str, Any]]:
    """Connect to each server (only those a session would start: never an unapproved or untrusted
    one), then close them: name -> {"status", "error", "tools"}."""
    import asyncio

    from claude_mini.mcp_servers.client import McpManager
    from claude_mini.notices import NoticeChannel

    async def go() -> dict[str, dict[str, Any]]:
        manager = McpManager(list(specs), NoticeChannel(), cwd=str(config.cwd), connect_timeout=CHECK_SECONDS)
        manager.start()
        try:
            await manager.wait_ready(CHECK_SECONDS)
            return {
                name: {"status": c.status, "error": c.error, "tools": [tool.name for tool in c.tools]}
                for name, c in manager.connections.items()
            }
        finally:
            await manager.close()

    return asyncio.run(go()) if specs else {}


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
        rows = [(server, _health(health[server.name]) if id(server) in started else state) for server, state in rows]
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


def _health(state: dict[str, Any]) -> str:
    if state["status"] == "connected":
        return f"connected ({len(state['tools'])} tools)"
    if state["status"] == "connecting":
        return f"still connecting after {CHECK_SECONDS:g} s"
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
