"""MCP server configuration for `claude-mini mcp list|get|add|remove`: the servers of the three scopes,
in Claude Code's formats.

Listings never show env or header values, and connect to nothing unless asked: `check_servers`
starts the servers a session would start (never an unapproved one) and reports each one's status
and tools. subcommands/mcp_cli.py parses arguments and prints. The REPL's /mcp reports a live
session's connections with `servers_report` and `server_report`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from claude_mini.base.notices import NoticeChannel
from claude_mini.mcp_servers.client import McpManager
from claude_mini.mcp_servers.config import (
    FLAG_SCOPE,
    MCP_JSON,
    SCOPES,
    TRANSPORTS,
    IgnoredServer,
    ServerSet,
    ServerSpec,
    approve,
    edit_settings,
    local_settings_file,
    scope_file,
    written_servers,
)
from claude_mini.mcp_servers.lifecycle import McpSettings

if TYPE_CHECKING:
    from claude_mini.config import Config
    from claude_mini.mcp_servers.client import ServerConnection
    from claude_mini.mcp_servers.extras import Listing, PromptInfo

NAME_SHAPE = re.compile(r"[A-Za-z0-9_-]+")  # Claude Code's rule for `mcp add`
NOT_CONNECTED = "(Configuration only: this command does not connect; a session starts the servers.)"


class McpCommandError(Exception):
    """One line for the user and the exit status: 2 for bad input, 1 for a failure."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def check_servers(specs: list[ServerSpec], config: Config) -> dict[str, dict[str, Any]]:
    """Connect to each server (only those a session would start: never an unapproved or untrusted
    one), then close them: name -> {"status", "error", "tools"}."""
    import asyncio

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


# ---- the actions (plain functions returning lines)


def _target(server: ServerSpec | IgnoredServer) -> tuple[str, str]:
    """(transport, command line or URL) as written."""
    shown = server.redacted()
    if shown["transport"] == "stdio":
        return "stdio", " ".join([shown["command"], *shown["args"]])
    return shown["transport"], shown["url"]


def _states(found: ServerSet, config: Config) -> list[tuple[ServerSpec | IgnoredServer, str]]:
    """Every listed server with its state, by name, then in scope precedence."""
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
    return sorted(rows, key=lambda row: (row[0].name, (FLAG_SCOPE, *SCOPES).index(row[0].scope)))


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


# ---- the REPL's /mcp: a live session's servers

PROMPT_PREFIX = "mcp__"
_NOT_A_NAME = re.compile(r"[^\w-]")


def unknown_server(name: str, conns: dict[str, ServerConnection]) -> str:
    """One line for a name that is not one of the session's servers."""
    known = ", ".join(sorted(conns)) or "none"
    return f"No MCP server {name!r} in this session (servers: {known}). Usage: /mcp [NAME | reconnect NAME]"


def servers_report(found: ServerSet, conns: dict[str, ServerConnection]) -> list[str]:
    """/mcp: the servers started (status, scope, transport, tools, last error), then the others."""
    lines: list[str] = []
    if conns:
        lines.append("MCP servers:")
        width = max(len(name) for name in conns)
        for name, connection in sorted(conns.items()):
            spec = connection.spec
            tools = f"{len(connection.tools)} tool{'s' * (len(connection.tools) != 1)}"
            lines.append(
                f"  {name:<{width}}  {connection.status:<10}  {spec.scope:<7}  {spec.transport:<5}  "
                f"{tools if connection.status == 'connected' else ''}".rstrip()
            )
            if connection.error:
                lines.append(f"  {'':<{width}}  last error: {connection.error}")
    not_started = [
        (spec.name, spec.scope, "waiting for your approval (start claude-mini here to answer)")
        for spec in found.pending_approval
    ]
    not_started += [(server.name, server.scope, server.why) for server in found.ignored]
    if not_started:
        lines.append("Not started:")
        lines += [f"  {name}  ({scope}): {why}" for name, scope, why in not_started]
    lines += [f"⚠ {problem}" for problem in found.problems]
    if not lines:
        return ["No MCP servers are configured. Add one with `claude-mini mcp add` or in .mcp.json."]
    if conns:
        lines.append("/mcp NAME lists a server's tools; /mcp reconnect NAME connects it again.")
    return lines


def server_report(connection: ServerConnection, found: Listing | None) -> list[str]:
    """/mcp NAME: what the server runs (secrets masked), its status, tools, prompts and resources."""
    spec = connection.spec
    shown = spec.redacted()
    target = " ".join([shown["command"], *shown["args"]]) if spec.transport == "stdio" else shown["url"]
    lines = [f"{spec.name}: {connection.status} · {spec.scope} ({spec.file}) · {spec.transport} · {target}"]
    secrets = shown.get("env") or shown.get("headers") or {}
    if secrets:
        lines.append(
            f"  {'env' if spec.transport == 'stdio' else 'headers'}: "
            + ", ".join(f"{key}={value}" for key, value in secrets.items())
        )
    if connection.error:
        lines.append(f"  last error: {connection.error}")
    lines += [f"  ⚠ {problem}" for problem in connection.problems]
    if connection.status != "connected":
        return lines
    lines.append(f"Tools ({len(connection.tools)}):" if connection.tools else "Tools: none")
    for tool in connection.tools:
        description = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        hint = "  (read-only)" if tool.annotations.get("readOnlyHint") else ""
        lines.append(f"  mcp__{spec.name}__{tool.name}  {description}{hint}".rstrip())
    if found is not None:
        if found.prompts:
            lines.append("Prompts: " + ", ".join(f"/{prompt_command_name(p)}" for p in found.prompts))
        if found.resources:
            lines.append("Resources: " + ", ".join(f"@{r.server}:{r.uri}" for r in found.resources))
        if found.problem:
            lines.append(f"  ⚠ {found.problem}")
    return lines


def prompt_command_name(prompt: PromptInfo) -> str:
    """`mcp__server__prompt`, with characters a command word cannot hold as `_`."""
    return _NOT_A_NAME.sub("_", f"{PROMPT_PREFIX}{prompt.server}__{prompt.name}")
