"""Connections to MCP servers over the official SDK (`mcp` 2.x): start, list tools, call, close.

Each server runs in one asyncio task of its own (`ServerConnection._run`): the SDK's transport
and `Client` contexts are anyio task groups and cancel scopes, which must be entered and exited
in the same task. That task connects, lists the tools (every page) and then waits until it is
told to stop or the server goes away. Calls come from other tasks (the agent's tool calls):
the SDK's dispatcher allows that, since a request only writes to a memory stream and waits
on a stream of its own, and a caller that is cancelled (Esc) or times out sends the server
`notifications/cancelled` (over streamable HTTP the SDK aborts the request's POST instead).

A server that fails to start, or stops answering later, becomes `status == "failed"` with a
one-line `error`, and the user gets ONE notice; the session goes on without its tools. A
stdio server's stderr never reaches the terminal: its last lines are kept for `error`. The
SDK's own log records (it logs a malformed message with a traceback) go to our debug log.

`import mcp` costs about a second, so the SDK is imported only when a server starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import re
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from claude_mini import __version__
from claude_mini.base.process_groups import group_gone, signal_group
from claude_mini.base.text import one_line
from claude_mini.signals import tool_group_ended, tool_group_started

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from mcp import Client
    from mcp.client._transport import TransportStreams

    from claude_mini.base.notices import NoticeChannel
    from claude_mini.mcp_servers.config import ServerSpec

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 30.0  # seconds from start to a listed tool set (MCP_TIMEOUT in Claude Code)
CLOSE_TIMEOUT = 10.0  # the SDK's stdio shutdown is bounded at about 6 s; HTTP sends one DELETE
CALL_GRACE = 5.0  # beyond a call's own timeout, in case the request cannot even be written
MAX_RESULT_CHARS = 100 * 1024  # text kept per call; the model sees far less (tools.py cuts it)
STDERR_KEPT = 8 * 1024  # bytes of a stdio server's stderr kept for `error`
ERROR_CHARS = 300  # a server's error or refusal, on one line: enough to act on, never a page
MAX_TOOL_PAGES = 100  # a server whose cursor never ends cannot hold the start forever
API_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what the Anthropic API accepts
SDK_LOGGERS = ("mcp", "client", "mcp_types", "httpx2")  # "client" is the SDK session's logger


class McpError(Exception):
    """A call or a connection failed; the message is one line for the user."""


@dataclass
class McpToolInfo:
    """One tool a server listed, as the API will be shown it."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any] = field(default_factory=dict)  # readOnlyHint, destructiveHint...


@dataclass
class CallOutcome:
    """A tool call's result: the MCP content blocks as dicts (text, image, resource_link, ...)."""

    content: list[dict[str, Any]]
    structured: Any | None
    is_error: bool


class ServerConnection:
    """One MCP server: its SDK contexts live in a task of their own; calls come from anywhere."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        notices: NoticeChannel | None = None,
        cwd: str | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self.spec = spec
        self.status = "connecting"  # "connecting" | "connected" | "failed" | "closed"
        self.error = ""  # the last error, one line
        self.tools: list[McpToolInfo] = []
        self.problems: list[str] = []  # tools skipped, malformed messages: one line each
        self._notices = notices
        self._cwd = cwd or os.getcwd()
        self._connect_timeout = connect_timeout
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._life: Any = None  # the anyio CancelScope around the connection, once it runs
        self._ready = asyncio.Event()  # connected or failed
        self._end = asyncio.Event()  # stop, or the server went away
        self._stopping = False
        self._stderr = bytearray()
        self._protocol = ""  # the protocol version agreed on, once the handshake is done

    # -- lifetime

    def start(self) -> None:
        """Connect in the background (needs a running loop); nothing to do if already running."""
        if self._task is not None and not self._task.done():
            return
        self.status, self.error, self.tools, self.problems = "connecting", "", [], []
        self._ready, self._end, self._stopping, self._life = asyncio.Event(), asyncio.Event(), False, None
        self._protocol = ""
        self._stderr.clear()
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp server {self.spec.name}")

    async def wait_ready(self) -> None:
        """Until the server is connected or has failed."""
        await self._ready.wait()

    async def reconnect(self) -> None:
        """Close the connection and start again; returns when it is connected or failed."""
        await self._stop()
        self.start()
        await self.wait_ready()

    async def close(self) -> None:
        """End the connection: a stdio server is stopped by the SDK, then what is left of its
        process group (children it started) by `end_process_group`."""
        await self._stop()
        self.status = "closed"

    async def _stop(self) -> None:
        task = self._task
        if task is None or task.done():
            return
        self._stopping = True
        if self.status == "connected":
            self._end.set()  # leave the contexts in order: HTTP sends its DELETE, stdio stops the server
        elif self._life is not None:
            self._life.cancel()  # still connecting: no handshake to wait for
        else:
            task.cancel()  # still importing the SDK: nothing entered yet
        await asyncio.wait({task}, timeout=CLOSE_TIMEOUT)  # neither raises nor cancels
        if not task.done():
            task.cancel()
            await asyncio.wait({task})

    async def _run(self) -> None:
        """The connection's own task: every SDK context is entered and left here."""
        try:
            await self._connect_and_wait()
        except Exception as exc:
            self._fail(describe(exc, self.spec) + self._stderr_note())
        finally:
            self._client = None
            self._ready.set()

    async def _connect_and_wait(self) -> None:
        await asyncio.to_thread(import_sdk)  # about a second: not on the event loop, which draws the REPL
        import anyio
        from mcp import Client, Implementation

        async with anyio.create_task_group() as group:  # the stderr reader
            with anyio.CancelScope(deadline=anyio.current_time() + self._connect_timeout) as life:
                self._life = life
                async with Client(
                    self._transport(group),
                    mode="auto",
                    cache=None,
                    message_handler=self._on_message,
                    client_info=Implementation(name="claude-mini", version=__version__),
                ) as client:
                    self._protocol = client.session.protocol_version or ""
                    tools = await self._list_tools(client)
                    life.deadline = math.inf
                    self.tools, self._client, self.status = tools, client, "connected"
                    self._ready.set()
                    await self._end.wait()
                    self._client = None
            group.cancel_scope.cancel()
        if self._stopping:
            return
        if life.cancelled_caught and self.status == "connecting":
            self._fail(f"no answer within {self._connect_timeout:g} s{self._stderr_note()}")
        elif self.status == "connected":
            self._fail(f"the server closed the connection{self._stderr_note()}")

    @contextlib.asynccontextmanager
    async def _transport(self, group: TaskGroup) -> AsyncIterator[TransportStreams]:
        """The SDK transport for the spec, its read stream watched for the end of the connection."""
        spec = self.spec
        if spec.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            read_fd, write_fd = os.pipe()
            errlog = open(write_fd, "w", encoding="utf-8", errors="replace")  # noqa: SIM115
            group.start_soon(self._read_stderr, read_fd)
            params = StdioServerParameters(
                command=spec.command, args=list(spec.args), env={**os.environ, **spec.env}, cwd=self._cwd
            )
            transport = stdio_client(params, errlog=errlog)
            group_id = None
            try:
                async with transport as (read, write):
                    errlog.close()  # the server has its own copy: its exit ends the reader
                    group_id = server_pid(transport)
                    if group_id is not None:  # SIGTERM to claude-mini, or its death, ends it too
                        tool_group_started(group_id)
                    yield _WatchedStream(read, self._on_end_of_stream, self._screen), write
            finally:
                errlog.close()
                if group_id is not None:
                    try:
                        await end_process_group(group_id)
                    finally:
                        tool_group_ended(group_id)
        elif spec.transport == "http":
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            timeout = httpx2.Timeout(30.0, read=300.0)  # the SDK's own defaults
            async with (
                httpx2.AsyncClient(headers=dict(spec.headers), timeout=timeout) as http,
                streamable_http_client(spec.url, http_client=http) as (read, write),
            ):
                yield _WatchedStream(read, self._on_end_of_stream, self._screen), write
        elif spec.transport == "sse":
            from mcp.client.sse import sse_client

            async with sse_client(spec.url, headers=dict(spec.headers)) as (read, write):
                yield _WatchedStream(read, self._on_end_of_stream, self._screen), write
        else:
            raise McpError(f"unknown transport {spec.transport!r} (stdio, http or sse)")

    async def _read_stderr(self, fd: int) -> None:
        """Keep the last STDERR_KEPT bytes of the server's stderr; the pipe never fills."""
        import anyio

        os.set_blocking(fd, False)
        try:
            while True:
                await anyio.wait_readable(fd)
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    return
                self._keep_stderr(chunk)
        finally:
            with contextlib.suppress(OSError):  # what is already in the pipe: the last words of a crash
                while chunk := os.read(fd, 65536):
                    self._keep_stderr(chunk)
            os.close(fd)

    def _keep_stderr(self, chunk: bytes) -> None:
        self._stderr += chunk
        del self._stderr[:-STDERR_KEPT]

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last lines the server wrote to stderr (stdio servers)."""
        text = self._stderr.decode("utf-8", errors="replace")
        return [line for line in text.splitlines() if line.strip()][-lines:]

    def _stderr_note(self) -> str:
        tail = self.stderr_tail(1)
        return f" (its stderr: {one_line(tail[0], 200)})" if tail else ""

    def _screen(self, item: Any) -> None:
        """A tools/list page loses the tools the SDK could not read, one problem line each: the
        SDK checks a page whole, so one bad tool would fail the listing, and the server with it."""
        result = getattr(getattr(item, "message", None), "result", None)
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            return  # only a tools/list result has `tools`
        kept = []
        for tool in result["tools"]:
            why = unreadable_tool(tool, result, self._protocol)
            if not why:
                kept.append(tool)
                continue
            name = tool.get("name") if isinstance(tool, dict) else None
            shown = repr(one_line(name, 80)) if isinstance(name, str) else "without a name"
            self._problem(f"MCP server {self.spec.name}: tool {shown} skipped: {why}")
        result["tools"] = kept

    def _on_end_of_stream(self) -> None:
        """The server closed its side (a crash, an exit): the connection's task winds down."""
        if not self._stopping:
            self._end.set()

    async def _on_message(self, message: Any) -> None:
        """Server notifications are not used (the tool list is fixed for the prompt cache);
        a message the SDK could not read is one problem line, said once. Other transport errors
        end in a failed call or connection, which says so."""
        if isinstance(message, ValueError):  # a line that is not JSON-RPC (pydantic's errors are ValueErrors)
            self._problem(
                f"MCP server {self.spec.name} sent a message that is not valid MCP "
                f"({one_line(str(message), 120)}); it was ignored"
            )

    def _problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems.append(text)
            if self._notices is not None:
                self._notices.say(text, "warning", once=True)

    def _fail(self, reason: str) -> None:
        """The first failure of a connection is its error and its one notice."""
        if self._stopping or self.status in ("failed", "closed"):
            return
        self.status, self.error = "failed", one_line(reason, ERROR_CHARS)
        self._end.set()
        if self._notices is not None:
            self._notices.say(
                f"MCP server {self.spec.name} failed: {self.error}; the session goes on "
                "without its tools (/mcp shows it)",
                "warning",
            )

    # -- tools

    async def _list_tools(self, client: Client) -> list[McpToolInfo]:
        """Every page of the server's tools, minus those the API would refuse (one problem each)."""
        capabilities = client.server_capabilities
        if capabilities.tools is None:
            return []
        tools: list[McpToolInfo] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                info = McpToolInfo(
                    self.spec.name,
                    tool.name,
                    tool.description or "",
                    tool.input_schema,
                    tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {},
                )
                why = refusal(info, {t.name for t in tools})
                if why:
                    self._problem(f"MCP server {self.spec.name}: tool {one_line(tool.name, 80)!r} skipped: {why}")
                else:
                    tools.append(info)
            cursor = page.next_cursor
            if not cursor:
                break
        else:
            self._problem(
                f"MCP server {self.spec.name} listed more than {MAX_TOOL_PAGES} pages of tools; the rest were skipped"
            )
        return tools

    # -- calls

    async def call(self, tool: str, arguments: dict[str, Any], *, timeout: float) -> CallOutcome:
        """Call `tool`; raises McpError (one line) on a timeout, a refusal or a lost server.
        Cancelling the caller cancels the request on the server; the connection stays usable."""
        import anyio
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        name = self.spec.name
        client = self._client
        if client is None or self.status != "connected":
            raise McpError(self._unavailable())
        timed_out = McpError(f"MCP server {name} tool {tool} timed out after {timeout:g} s")
        try:
            with anyio.fail_after(timeout + CALL_GRACE):
                result = await client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except TimeoutError:
            raise timed_out from None
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise timed_out from None
            if exc.code == CONNECTION_CLOSED:
                self._fail(f"the server closed the connection during a call to {tool}{self._stderr_note()}")
                raise McpError(self._unavailable()) from None
            raise McpError(
                f"MCP server {name} refused the call to {tool}: {one_line(exc.message, ERROR_CHARS)}"
            ) from None
        except Exception as exc:  # a result the SDK could not read, or that breaks the tool's output schema
            raise McpError(
                f"MCP server {name} sent a result for {tool} that cannot be used: "
                f"{one_line(str(exc) or type(exc).__name__, ERROR_CHARS)}"
            ) from None
        return capped_outcome(
            [block.model_dump(by_alias=True, mode="json", exclude_none=True) for block in result.content],
            result.structured_content,
            bool(result.is_error),
        )

    def _unavailable(self) -> str:
        name = self.spec.name
        if self.status == "failed":
            return f"MCP server {name} is not connected ({self.error}); /mcp reconnect {name} to try again"
        return f"MCP server {name} is {self.status}, not connected"


class McpManager:
    """The session's MCP servers: started in the background, closed together."""

    def __init__(
        self,
        specs: list[ServerSpec],
        notices: NoticeChannel,
        *,
        cwd: str | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self.notices = notices
        self.cwd, self.connect_timeout = cwd, connect_timeout
        self.connections: dict[str, ServerConnection] = {spec.name: self._connection(spec) for spec in specs}
        self._started = False

    def _connection(self, spec: ServerSpec) -> ServerConnection:
        return ServerConnection(spec, notices=self.notices, cwd=self.cwd, connect_timeout=self.connect_timeout)

    async def update(self, specs: list[ServerSpec]) -> tuple[list[str], list[str]]:
        """The servers become `specs` (the settings changed mid-session): new or changed ones start
        connecting, removed or changed ones are closed; returns (started, stopped) names."""
        wanted = {spec.name: spec for spec in specs}
        stopped = [name for name, c in self.connections.items() if wanted.get(name) != c.spec]
        await asyncio.gather(*(self.connections.pop(name).close() for name in stopped))
        started = [name for name in wanted if name not in self.connections]
        for name in started:
            self.connections[name] = self._connection(wanted[name])
            if self._started:
                self.connections[name].start()
        return sorted(started), sorted(stopped)

    def start(self) -> None:
        """Every server connects in the background; a second call does nothing."""
        if self._started:
            return
        self._started = True
        for connection in self.connections.values():
            connection.start()

    async def wait_ready(self, seconds: float) -> None:
        """Until every server is connected or failed, or `seconds` have passed."""
        waits = [asyncio.ensure_future(c.wait_ready()) for c in self.connections.values() if c.status == "connecting"]
        if not waits:
            return
        try:
            await asyncio.wait(waits, timeout=seconds)
        finally:
            for wait in waits:
                wait.cancel()

    async def close(self) -> None:
        """End every server."""
        await asyncio.gather(*(c.close() for c in self.connections.values()))


class _WatchedStream:
    """The transport's read stream, telling the connection when it ends (the server is gone)
    and letting it screen each message first."""

    def __init__(self, inner: Any, on_end: Any, screen: Any) -> None:
        self._inner = inner
        self._on_end = on_end
        self._screen = screen  # sees (and may mend) every message before the SDK reads it

    @property
    def last_context(self) -> Any:  # the SDK's dispatcher reads it by getattr
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise
        self._screen(item)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def server_pid(transport: Any) -> int | None:
    """The pid of the process `stdio_client` started (None if this SDK hides it).

    The SDK starts a server in a session of its own but kills that process group only when
    the server outlives its 2 s grace after stdin closes; a server that exits in time leaves
    its children running. Its pid is the group's id; the SDK does not expose the process,
    so it is read from the transport generator's frame, suspended at its `yield`."""
    frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
    pid = getattr(frame.f_locals.get("process") if frame is not None else None, "pid", None)
    return pid if isinstance(pid, int) else None


async def end_process_group(group_id: int) -> None:
    """SIGTERM what is left of a stdio server's process group, SIGKILL it if it is still there
    a second later (a zombie nobody reaps does not count). Linux does not reuse a pid still in
    use as a group id, so this cannot hit a stranger."""
    if not hasattr(os, "killpg"):
        return
    signal_group(group_id, signal.SIGTERM)
    try:
        await asyncio.wait_for(group_gone(group_id), 1.0)
    except TimeoutError:
        signal_group(group_id, signal.SIGKILL)


def refusal(info: McpToolInfo, taken: set[str]) -> str:
    """Why the API would refuse this tool ('' if it would not)."""
    full = f"mcp__{info.server}__{info.name}"
    if not API_TOOL_NAME.match(full):
        if len(full) > 64:
            return f"its name {full[:70]}… is longer than the API's 64 characters"
        return f"its name {one_line(full, 80)} has characters the API refuses (letters, digits, _ and - only)"
    if info.name in taken:
        return "the server listed it twice"
    schema = info.input_schema
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "its input schema is not a JSON schema of type object"
    from jsonschema import SchemaError  # type: ignore[import-untyped]
    from jsonschema.validators import validator_for  # type: ignore[import-untyped]

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        return f"its input schema is not valid JSON schema ({one_line(exc.message, 120)})"
    return ""


def unreadable_tool(tool: Any, page: dict[str, Any], version: str) -> str:
    """Why the SDK would refuse this entry of a tools/list `page` ('' if it would not): the
    page with this tool alone, checked against the agreed protocol version's wire format (before
    the handshake, the version the SDK assumes too) and the SDK's own Tool model. What is wrong
    with the page itself is not the tool's fault and is left to the SDK."""
    from mcp_types import Tool
    from mcp_types.methods import validate_server_result
    from pydantic import ValidationError

    try:
        validate_server_result("tools/list", version or "2025-11-25", {**page, "tools": [tool]})
    except ValidationError as exc:
        if why := validation_problem(exc, ("tools", 0)):
            return why
    except (KeyError, ValueError):  # a version without a wire format here: the model still checks
        pass
    try:
        Tool.model_validate(tool)
    except ValidationError as exc:
        return validation_problem(exc, ()) or "its definition is not valid MCP"
    return ""


def validation_problem(exc: Any, prefix: tuple[Any, ...]) -> str:
    """The first thing pydantic found wrong below `prefix` (the tool), in a few words ('' if none)."""
    mine = [e for e in exc.errors() if tuple(e.get("loc", ()))[: len(prefix)] == prefix]
    if not mine:
        return ""
    first = mine[0]
    where = [str(part) for part in tuple(first.get("loc", ()))[len(prefix) :]]
    message = one_line(first.get("msg", ""), 120)
    if where in (["inputSchema"], ["input_schema"]) and first.get("type") == "missing":
        return "it has no input schema"
    if where[:1] in (["inputSchema"], ["input_schema"]):
        inside = ".".join(where[1:])
        return f"its input schema is not valid ({inside + ': ' if inside else ''}{message})"
    return f"its definition is not valid MCP ({'.'.join(where) or 'tool'}: {message})"


def capped_outcome(content: list[dict[str, Any]], structured: Any, is_error: bool) -> CallOutcome:
    """At most MAX_RESULT_CHARS of text (text blocks, embedded resources, structured content),
    with a note of what was dropped."""
    budget, dropped = MAX_RESULT_CHARS, 0
    for block in content:
        holder = block.get("resource") if block.get("type") == "resource" else block
        text = holder.get("text") if isinstance(holder, dict) else None
        if isinstance(text, str) and holder is not None:
            if len(text) > budget:
                holder["text"], dropped = text[:budget], dropped + len(text) - budget
            budget = max(0, budget - len(text))
    if structured is not None and len(json.dumps(structured, default=str)) > MAX_RESULT_CHARS:
        structured, dropped = None, dropped + 1
    if dropped:
        content.append(
            {
                "type": "text",
                "text": f"[claude-mini kept {MAX_RESULT_CHARS:,} characters of this MCP result; the rest was dropped]",
            }
        )
    return CallOutcome(content, structured, is_error)


def describe(exc: BaseException, spec: ServerSpec) -> str:
    """One line for why a connection failed, from the innermost real error of a task group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError) and spec.transport == "stdio":
        return f"cannot start {spec.command!r}: no such command"
    if isinstance(exc, OSError) and spec.transport == "stdio":
        return f"cannot start {spec.command!r}: {exc.strerror or exc}"
    import httpx2
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "the server closed the connection before it was ready"
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if spec.transport != "stdio" and isinstance(exc, httpx2.TransportError):
        return one_line(f"cannot reach {spec.url.split('?')[0]}: {text}", ERROR_CHARS)
    return one_line(f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text, ERROR_CHARS)


def import_sdk() -> None:
    """Import the parts of the SDK a connection uses (once; safe from any thread)."""
    import httpx2  # noqa: F401
    import jsonschema  # noqa: F401
    import mcp  # noqa: F401
    import mcp.client.sse  # noqa: F401
    import mcp.client.stdio  # noqa: F401
    import mcp.client.streamable_http  # noqa: F401

    route_sdk_logs()


class _ToDebugLog(logging.Handler):
    """The SDK's log records as one line each in claude-mini's debug log (no tracebacks)."""

    def emit(self, record: logging.LogRecord) -> None:
        log.debug("%s: %s", record.name, one_line(record.getMessage(), ERROR_CHARS))


def route_sdk_logs() -> None:
    """Without this, logging's last resort would print the SDK's warnings (a malformed message,
    with its traceback) onto the user's terminal."""
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(h, _ToDebugLog) for h in logger.handlers):
            logger.addHandler(_ToDebugLog())
            logger.propagate = False
