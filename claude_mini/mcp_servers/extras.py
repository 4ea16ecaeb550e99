"""An MCP server's prompts and resources, read over its `ServerConnection` (the REPL's
`/mcp__server__prompt` commands and `@server:uri` mentions).

Read-only requests, sent from the caller's task as tool calls are (client.py). A connection's
prompts and resources are listed once per connection (`listing`) and kept with it, so
completion and /help read them without a request; a reconnect lists them again.
"""

from __future__ import annotations

import base64
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from claude_mini.base.text import one_line
from claude_mini.mcp_servers.client import McpError

if TYPE_CHECKING:
    from claude_mini.mcp_servers.client import ServerConnection

REQUEST_TIMEOUT = 10.0  # seconds for one list, get or read
MAX_PAGES = 20  # a cursor that never ends cannot hold the REPL
MAX_RESOURCE_CHARS = 100_000  # as an attached file


@dataclass(frozen=True)
class PromptArg:
    """One argument a prompt declares."""

    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class PromptInfo:
    """A prompt a server offers."""

    server: str
    name: str
    description: str = ""
    arguments: tuple[PromptArg, ...] = ()


@dataclass(frozen=True)
class ResourceInfo:
    """A resource a server lists."""

    server: str
    uri: str
    name: str = ""
    description: str = ""


@dataclass
class Listing:
    """A connection's prompts and resources, as listed after it connected."""

    client: Any  # the SDK client they were listed on: a reconnect makes a new one
    prompts: list[PromptInfo] = field(default_factory=list)
    resources: list[ResourceInfo] = field(default_factory=list)
    problem: str = ""


_listings: weakref.WeakKeyDictionary[ServerConnection, Listing] = weakref.WeakKeyDictionary()


def cached(connection: ServerConnection) -> Listing | None:
    """The connection's listing if it was made on its current connection (no request)."""
    found = _listings.get(connection)
    client = connection._client  # noqa: SLF001 - client.py keeps its SDK client private
    return found if found is not None and client is not None and found.client is client else None


async def listing(connection: ServerConnection) -> Listing | None:
    """The connection's prompts and resources, listed now if not yet on this connection;
    None when it is not connected. A server that fails to list them has an empty listing
    whose `problem` says why (one line)."""
    found = cached(connection)
    client = connection._client  # noqa: SLF001
    if found is not None or client is None or connection.status != "connected":
        return found
    found = Listing(client)
    try:
        found.prompts = await _prompts(connection, client)
        found.resources = await _resources(connection, client)
    except McpError as exc:
        found.problem = str(exc)
    _listings[connection] = found
    return found


async def _prompts(connection: ServerConnection, client: Any) -> list[PromptInfo]:
    if client.server_capabilities.prompts is None:
        return []
    name = connection.spec.name
    pages = await _pages(connection, "list its prompts", lambda cursor: client.list_prompts(cursor=cursor))
    return [
        PromptInfo(
            name,
            p.name,
            p.description or "",
            tuple(PromptArg(a.name, a.description or "", bool(a.required)) for a in p.arguments or ()),
        )
        for page in pages
        for p in page.prompts
    ]


async def _resources(connection: ServerConnection, client: Any) -> list[ResourceInfo]:
    if client.server_capabilities.resources is None:
        return []
    name = connection.spec.name
    pages = await _pages(connection, "list its resources", lambda cursor: client.list_resources(cursor=cursor))
    return [ResourceInfo(name, str(r.uri), r.name or "", r.description or "") for page in pages for r in page.resources]


async def _pages(connection: ServerConnection, what: str, fetch: Any) -> list[Any]:
    pages: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await _request(connection, what, fetch(cursor))
        pages.append(page)
        cursor = page.next_cursor
        if not cursor:
            break
    return pages


async def _request(connection: ServerConnection, what: str, request: Any) -> Any:
    """Await one SDK request; its failure is an McpError of one line."""
    import anyio

    name = connection.spec.name
    try:
        with anyio.fail_after(REQUEST_TIMEOUT):
            return await request
    except TimeoutError:
        raise McpError(f"MCP server {name} did not {what} within {REQUEST_TIMEOUT:g} s") from None
    except Exception as exc:
        text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        raise McpError(f"MCP server {name} could not {what}: {one_line(text, 200)}") from None


def _client(connection: ServerConnection) -> Any:
    client = connection._client  # noqa: SLF001
    if client is None or connection.status != "connected":
        error = f" ({connection.error})" if connection.error else ""
        raise McpError(f"MCP server {connection.spec.name} is {connection.status}, not connected{error}")
    return client


async def get_prompt(connection: ServerConnection, prompt: str, arguments: dict[str, str]) -> str:
    """The prompt's messages as one text (each message's text, resources' text, a note for the rest)."""
    client = _client(connection)
    result = await _request(connection, f"give its prompt {prompt}", client.get_prompt(prompt, arguments))
    return "\n\n".join(filter(None, (_block_text(message.content) for message in result.messages)))


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind == "resource":
        return _contents_text(block.resource)
    if kind == "resource_link":
        return f"[resource {block.uri}]"
    return f"[{kind or 'content'} not shown]"


async def read_resource(connection: ServerConnection, uri: str) -> str:
    """The resource's text (binary contents as a note), cut at MAX_RESOURCE_CHARS with a note."""
    client = _client(connection)
    result = await _request(connection, f"read {uri}", client.read_resource(uri))
    text = "\n".join(_contents_text(contents) for contents in result.contents)
    if len(text) > MAX_RESOURCE_CHARS:
        text = (
            text[:MAX_RESOURCE_CHARS] + f"\n[truncated: the first {MAX_RESOURCE_CHARS:,} of {len(text):,} characters]"
        )
    return text


def _contents_text(contents: Any) -> str:
    text = getattr(contents, "text", None)
    if isinstance(text, str):
        return text
    blob = getattr(contents, "blob", "") or ""
    size = len(base64.b64decode(blob, validate=False)) if blob else 0
    mime = getattr(contents, "mime_type", None) or "binary"
    return f"[{mime} data of {size:,} bytes from {getattr(contents, 'uri', '')}, not shown]"
