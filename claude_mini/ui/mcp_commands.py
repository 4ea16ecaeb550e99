"""`/mcp` (the session's MCP servers: status, tools, last error; reconnect one) and the servers'
prompts as slash commands, `/mcp__<server>__<prompt> args`.

    /mcp                   every configured server: status, scope, transport, tools, last error;
                           the servers not started and why
    /mcp NAME              that server's tools (and its prompts and resources)
    /mcp reconnect NAME    close and connect again

A connected server's prompts are listed once per connection (`mcp_servers.extras`) and
put in the session's command table then, so /help and completion show them and a prompt command is a
lookup. Its arguments are the words after it: `key=value` for a declared argument, the other
words in the declared order, the last argument taking the rest. Its messages' text is sent as
the user's message. Env and header values are never shown (`ServerSpec.redacted`).
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from claude_mini.command_table import Command, CommandTable
from claude_mini.commands.mcp import prompt_command_name, server_report, servers_report, unknown_server
from claude_mini.mcp_servers import extras
from claude_mini.mcp_servers.client import McpError
from claude_mini.mcp_servers.config import load_servers
from claude_mini.mcp_servers.lifecycle import McpPart
from claude_mini.ui.commands import CommandContext, command, print_lines, session_table

if TYPE_CHECKING:
    from claude_mini.mcp_servers.client import ServerConnection
    from claude_mini.mcp_servers.extras import Listing, PromptInfo
    from claude_mini.runtime import Runtime

log = logging.getLogger(__name__)
PROMPT_SOURCE = "mcp:"  # a server's prompts are the table's source `mcp:<server>`


def mcp_part(runtime: Runtime | None) -> McpPart | None:
    """The runtime's MCP part (None when no server starts: the SDK was never imported)."""
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
    register_prompts(ctx.commands, connection, await _listed(connection))
    tools = len(connection.tools)
    if not hook.fixed:
        when = "its tools are in the next request"
    elif name in hook.listed:
        when = (
            "this conversation keeps the tool list it started with (the prompt cache); a change in "
            "its tools takes effect at the next /clear or /compact"
        )
    else:
        when = "its tools join at the start of the next turn"
    print_lines(ctx, [f"MCP server {name} connected ({tools} tool{'s' * (tools != 1)}); {when}."])


async def _listed(connection: ServerConnection) -> Listing | None:
    return await extras.listing(connection)


def register_prompts(table: CommandTable, connection: ServerConnection, found: Listing | None) -> None:
    """Make the connection's prompts slash commands of the session's `table` (those of its previous
    connection go)."""
    server = connection.spec.name
    source = f"{PROMPT_SOURCE}{server}"
    made: dict[str, Command] = {}
    for prompt in found.prompts if found is not None else []:
        name = prompt_command_name(prompt).lower()  # the table looks names up in lower case
        if table.owner(name) not in (None, source):
            continue  # never replace a command of the program's own
        summary = prompt.description.strip().splitlines()[0] if prompt.description.strip() else "A prompt"
        usage = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)
        made[name] = Command(name, f"{summary.rstrip('.')}. (MCP prompt of {server})", _prompt_runner(prompt), usage)
    if made:
        table.put(source, made.values())
    else:
        table.drop(source)


def _prompt_runner(prompt: PromptInfo) -> Callable[[CommandContext], Awaitable[None]]:
    async def run(ctx: CommandContext) -> None:
        await run_prompt(ctx, prompt)

    return run


async def run_prompt(ctx: CommandContext, prompt: PromptInfo) -> None:
    """Get the prompt with the typed arguments and send its text as the user's message."""
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
        register_prompts(session_table(runtime), connection, found)
        if found is not None and found.problem:
            runtime.notices.say(found.problem, "warning", once=True)

    await asyncio.gather(*(one(c) for c in hook.manager.connections.values()))


async def find_prompt_command(name: str, runtime: Runtime) -> Command | None:
    """The prompt command `/name`, once the servers still connecting are ready (a prompt
    command typed before they are registered waits for them rather than being unknown)."""
    await warm_listings(runtime)
    return session_table(runtime).find(name)


def resource_mentions(runtime: Runtime | None) -> list[tuple[str, str]]:
    """`server:uri` and a short description of every resource listed so far (no request)."""
    out: list[tuple[str, str]] = []
    for connection in connections(runtime).values():
        found = extras.cached(connection)
        for resource in found.resources if found is not None else []:
            out.append((f"{resource.server}:{resource.uri}", resource.name or resource.description))
    return out
