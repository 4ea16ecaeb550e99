"""`/mcp` (the session's MCP servers: status, tools, last error; reconnect one) and the servers'
prompts as slash commands, `/mcp__<server>__<prompt> args`.

    /mcp                   every configured server: status, scope, transport, tools, last error;
                           the servers not started and why
    /mcp NAME              that server's tools (and its prompts and resources)
    /mcp reconnect NAME    close and connect again

A connected server's prompts are listed once per connection (`mcp_servers.extras`) and
registered as commands then, so /help and completion show them and a prompt command is a
lookup. Its arguments are the words after it: `key=value` for a declared argument, the other
words in the declared order, the last argument taking the rest. Its messages' text is sent as
the user's message. Env and header values are never shown (`ServerSpec.redacted`).
"""

from __future__ import annotations

import asyncio
import logging
import re
import shlex
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from claude_mini.ui.commands import COMMANDS, Command, CommandContext, command, print_lines

if TYPE_CHECKING:
    from claude_mini.mcp_servers.client import ServerConnection
    from claude_mini.mcp_servers.config import ServerSet
    from claude_mini.mcp_servers.extras import Listing, PromptInfo
    from claude_mini.mcp_servers.lifecycle import McpPart
    from claude_mini.runtime import Runtime

log = logging.getLogger(__name__)
PROMPT_PREFIX = "mcp__"
_NOT_A_NAME = re.compile(r"[^\w-]")
_prompt_commands: dict[str, set[str]] = {}  # server -> the command names registered for its prompts


def mcp_part(runtime: Runtime | None) -> McpPart | None:
    """The runtime's MCP part (None when no server starts: the SDK was never imported)."""
    from claude_mini.mcp_servers.lifecycle import McpPart

    return runtime.lifecycle.find(McpPart) if runtime is not None else None


def connections(runtime: Runtime | None) -> dict[str, ServerConnection]:
    """The session's server connections by name."""
    hook = mcp_part(runtime)
    return hook.manager.connections if hook is not None else {}


# ---- /mcp


@command(
    "mcp",
    help="MCP servers: status, tools and last error; /mcp NAME lists its tools; /mcp reconnect NAME.",
    usage="[NAME | reconnect NAME]",
)
async def show_mcp(ctx: CommandContext) -> None:
    """The overview, one server's tools, or a reconnect."""
    from claude_mini.mcp_servers.config import load_servers

    words = ctx.args.split()
    conns = connections(ctx.rt)
    if not words:
        print_lines(ctx, servers_report(load_servers(ctx.rt.config), conns))
    elif words[0] == "reconnect" and len(words) == 2:
        await reconnect(ctx, words[1])
    elif len(words) == 1 and words[0] in conns:
        connection = conns[words[0]]
        found = await _listed(connection)
        print_lines(ctx, server_report(connection, found))
    else:
        name = words[1] if words[0] == "reconnect" and len(words) > 1 else words[0]
        print_lines(ctx, [unknown_server(name, conns)])


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


async def reconnect(ctx: CommandContext, name: str) -> None:
    """/mcp reconnect NAME: close, connect, say the outcome and when its tools join."""
    hook = mcp_part(ctx.rt)
    conns = connections(ctx.rt)
    if hook is None or name not in conns:
        print_lines(ctx, [unknown_server(name, conns)])
        return
    connection = conns[name]
    print_lines(ctx, [f"Reconnecting MCP server {name}…"])
    await connection.reconnect()
    if connection.status != "connected":
        print_lines(ctx, [f"✗ MCP server {name} {connection.status}: {connection.error or 'no reason given'}"])
        return
    register_prompts(connection, await _listed(connection))
    tools = len(connection.tools)
    if not hook.fixed:
        when = "its tools are in the next request"
    elif name in hook.listed:
        when = (
            "this conversation keeps the tool list it started with (the prompt cache); a change in "
            "its tools takes effect at the next /clear or /compact"
        )
    else:
        when = (
            "its tools join at the next /clear or /compact (this conversation's tool list is fixed "
            "for the prompt cache)"
        )
    print_lines(ctx, [f"MCP server {name} connected ({tools} tool{'s' * (tools != 1)}); {when}."])


async def _listed(connection: ServerConnection) -> Listing | None:
    from claude_mini.mcp_servers import extras

    return await extras.listing(connection)


# ---- prompts as slash commands


def prompt_command_name(prompt: PromptInfo) -> str:
    """`mcp__server__prompt`, with characters a command word cannot hold as `_`."""
    return _NOT_A_NAME.sub("_", f"{PROMPT_PREFIX}{prompt.server}__{prompt.name}")


def register_prompts(connection: ServerConnection, found: Listing | None) -> None:
    """Make the connection's prompts slash commands (those of its previous connection go)."""
    server = connection.spec.name
    for name in _prompt_commands.pop(server, set()):
        COMMANDS.pop(name, None)
    names: set[str] = set()
    for prompt in found.prompts if found is not None else []:
        name = prompt_command_name(prompt).lower()  # find_command looks names up in lower case
        if name in COMMANDS and name not in names:
            continue  # never replace a command of the program's own
        summary = prompt.description.strip().splitlines()[0] if prompt.description.strip() else "A prompt"
        usage = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)
        command(name, help=f"{summary.rstrip('.')}. (MCP prompt of {server})", usage=usage)(_prompt_runner(prompt))
        names.add(name)
    _prompt_commands[server] = names


def _prompt_runner(prompt: PromptInfo) -> Callable[[CommandContext], Awaitable[None]]:
    async def run(ctx: CommandContext) -> None:
        await run_prompt(ctx, prompt)

    return run


async def run_prompt(ctx: CommandContext, prompt: PromptInfo) -> None:
    """Get the prompt with the typed arguments and send its text as the user's message."""
    from claude_mini.mcp_servers import extras
    from claude_mini.mcp_servers.client import McpError

    connection = connections(ctx.rt).get(prompt.server)
    try:
        arguments = prompt_arguments(prompt, ctx.args)
        if connection is None:
            raise McpError(f"MCP server {prompt.server} is not in this session")
        text = await extras.get_prompt(connection, prompt.name, arguments)
    except (ValueError, McpError) as exc:
        ctx.console.print(f"✗ {exc}", style="red", markup=False, highlight=False)
        return
    if not text.strip():
        ctx.console.print(
            f"✗ MCP prompt {prompt.name} of {prompt.server} has no text to send.",
            style="red",
            markup=False,
            highlight=False,
        )
        return
    await ctx.host.run_turn(text)


def prompt_arguments(prompt: PromptInfo, args: str) -> dict[str, str]:
    """`key=value` words for declared arguments, the other words to the rest in declared order
    (the last one takes every word left). ValueError (one line) for a missing required one."""
    try:
        words = shlex.split(args)
    except ValueError:  # an unbalanced quote: plain words
        words = args.split()
    declared = [a.name for a in prompt.arguments]
    named: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key in declared:
            named[key] = value
        else:
            positional.append(word)
    free = [name for name in declared if name not in named]
    for i, name in enumerate(free):
        if i >= len(positional):
            break
        named[name] = " ".join(positional[i:]) if i == len(free) - 1 else positional[i]
    if positional and not free:
        raise ValueError(
            f"/{prompt_command_name(prompt)} takes no more arguments than "
            f"{', '.join(declared) or 'none'}; got {' '.join(positional)!r}"
        )
    missing = [a.name for a in prompt.arguments if a.required and a.name not in named]
    if missing:
        usage = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)
        raise ValueError(
            f"/{prompt_command_name(prompt)} needs {', '.join(missing)}. Usage: /{prompt_command_name(prompt)} {usage}"
        )
    return named


async def warm_listings(runtime: Runtime) -> None:
    """Once the servers connect: list their prompts and resources (for completion, /help and
    the prompt commands). A server that cannot list them is one warning."""
    hook = mcp_part(runtime)
    if hook is None:
        return
    hook.manager.start()  # idempotent; the session start may not have run yet

    async def one(connection: ServerConnection) -> None:
        await connection.wait_ready()
        try:
            found = await _listed(connection)
        except Exception as exc:  # background work: a bug here must not reach the terminal as a traceback
            log.debug("listing MCP server %s failed: %r", connection.spec.name, exc)
            return
        register_prompts(connection, found)
        if found is not None and found.problem:
            runtime.notices.say(found.problem, "warning", once=True)

    await asyncio.gather(*(one(c) for c in hook.manager.connections.values()))


async def find_prompt_command(name: str, runtime: Runtime) -> Command | None:
    """The prompt command `/name`, once the servers still connecting are ready (a prompt
    command typed before they are registered waits for them rather than being unknown)."""
    await warm_listings(runtime)
    return COMMANDS.get(name.lower())


def resource_mentions(runtime: Runtime | None) -> list[tuple[str, str]]:
    """`server:uri` and a short description of every resource listed so far (no request)."""
    from claude_mini.mcp_servers import extras

    out: list[tuple[str, str]] = []
    for connection in connections(runtime).values():
        found = extras.cached(connection)
        for resource in found.resources if found is not None else []:
            out.append((f"{resource.server}:{resource.uri}", resource.name or resource.description))
    return out
