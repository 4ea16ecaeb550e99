"""A small MCP server for the tests, written with the SDK's own server API (`MCPServer`).

    python demo_server.py              # stdio
    python demo_server.py --http PORT  # streamable HTTP on http://127.0.0.1:PORT/mcp
    python demo_server.py --sse PORT   # the older SSE transport on http://127.0.0.1:PORT/sse

Tools:
    echo(text)        -> the text (readOnlyHint: true)
    add(a, b)         -> {"sum": a + b} as structured output (and as JSON text)
    fail()            -> an isError result, "the demo tool failed on purpose"
    slow(seconds, marker="")  -> "slept N s" after sleeping (timeouts, cancellation: the marker
                      file says "started", then "done", or "cancelled" when the client cancels)
    big(chars)        -> a text of `chars` characters (for the size cap)
    pid()             -> the server's process id (for crash tests)
    spawn()           -> the pid of a `sleep 300` child (for process-group tests)
Prompt: greet(name). Resource: demo://readme (text).

With DEMO_BAD_TOOLS=1 the server also lists tools the Anthropic API would refuse (a name of 70
characters, a name with a dot); DEMO_STDERR=text writes that line to stderr at start;
DEMO_GARBAGE=1 writes a line that is not JSON-RPC to stdout before serving (stdio).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("demo", log_level="WARNING")  # its INFO lines would fill stderr


class Sum(BaseModel):
    sum: float


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def add(a: float, b: float) -> Sum:
    """Add two numbers."""
    return Sum(sum=a + b)


@server.tool()
def fail() -> str:
    """Always fail."""
    raise ToolError("the demo tool failed on purpose")


@server.tool()
async def slow(seconds: float, marker: str = "") -> str:
    """Sleep, then answer; `marker` (a file) gets "done", or "cancelled" if the client cancels."""
    if marker:
        Path(marker).write_text("started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        if marker:
            Path(marker).write_text("cancelled")
        raise
    if marker:
        Path(marker).write_text("done")
    return f"slept {seconds:g} s"


@server.tool()
def big(chars: int) -> str:
    """A long text."""
    return "x" * chars


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def spawn() -> int:
    """Start a child process that outlives this call (for process-group tests); its pid."""
    return subprocess.Popen(["sleep", "300"]).pid


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}."


@server.resource("demo://readme", mime_type="text/plain")
def readme() -> str:
    """The demo server's readme."""
    return "This is the demo server."


if os.environ.get("DEMO_BAD_TOOLS"):
    server.add_tool(echo, name="t" * 70, description="a name too long once prefixed")
    server.add_tool(echo, name="has.dot", description="a name the API refuses")


def main(argv: list[str]) -> None:
    if os.environ.get("DEMO_STDERR"):
        print(os.environ["DEMO_STDERR"], file=sys.stderr, flush=True)
    if os.environ.get("DEMO_GARBAGE"):
        print("this line is not JSON-RPC", flush=True)
    if len(argv) == 2 and argv[0] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
    elif len(argv) == 2 and argv[0] == "--sse":
        server.run("sse", host="127.0.0.1", port=int(argv[1]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
