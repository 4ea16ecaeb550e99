"""MCP tools as claude-mini tools: `mcp__<server>__<tool>`, in a fixed order, results as text.

The tool list is the first part of the prompt-cache prefix (DESIGN.md section 6), so the
MCP tools come after the built-ins, servers sorted by name, each server's tools by name,
and the list changes only where the prefix is rebuilt anyway (`McpPart`, lifecycle.py).

A result becomes the text the model reads: text blocks as they are, structured content as
JSON when no text says it, an image or audio block as a one-line note (claude-mini sends
the model text only), a resource link or embedded resource by its URI (and its text, if
any). `isError` makes an error result. Long output is cut as Bash's is, with a note.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from claude_mini.base.text import clip
from claude_mini.tools.base import ToolContext, ToolError, ToolResult, cut_with_note

if TYPE_CHECKING:
    from claude_mini.mcp_servers.client import CallOutcome, McpToolInfo, ServerConnection

MAX_OUTPUT_CHARS = 30_000  # as Bash's
MAX_DESCRIPTION_CHARS = 2_048  # a server's essay of a description would fill every request
DEFAULT_CALL_TIMEOUT = 120.0  # seconds; `MCP_TOOL_TIMEOUT` (milliseconds, Claude Code's) overrides
PREFIX = "mcp__"


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, the name the model and permission rules use."""
    return f"{PREFIX}{server}__{tool}"


def is_mcp_tool(name: str) -> bool:
    return name.startswith(PREFIX)


class McpTool:
    """One tool of a connected MCP server, called through its connection."""

    def __init__(
        self, connection: ServerConnection, info: McpToolInfo, *, timeout: float, read_only: bool = False
    ) -> None:
        self.connection = connection
        self.info = info
        self.name = tool_name(info.server, info.name)
        description = (info.description or "").strip() or f"The {info.name} tool of the MCP server {info.server}."
        self.description = clip(description, MAX_DESCRIPTION_CHARS)
        self.input_schema = info.input_schema
        self.read_only = read_only  # its readOnlyHint, where a setting trusts hints
        self.timeout = timeout

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """Only the server can tell whether a call would fail."""

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the tool on its server; a failure of the server or the call is a ToolError."""
        from claude_mini.mcp_servers.client import McpError

        try:
            outcome = await self.connection.call(self.info.name, input, timeout=self.timeout)
        except McpError as exc:
            raise ToolError(str(exc)) from None
        return to_result(outcome)


def to_result(outcome: CallOutcome) -> ToolResult:
    """The model's view of an MCP call's result."""
    parts = [text for block in outcome.content if (text := block_text(block))]
    has_text = any(block.get("type") == "text" for block in outcome.content)
    if outcome.structured is not None and not has_text:
        parts.append(json.dumps(outcome.structured, ensure_ascii=False, indent=2))
    text = "\n".join(parts) or (
        "(the tool returned an error and no text)" if outcome.is_error else "(the tool returned no content)"
    )
    return ToolResult(cut(text), is_error=outcome.is_error)


def block_text(block: dict[str, Any]) -> str:
    """One MCP content block as text for the model."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(str(block.get("data", ""))) * 3 // 4
        return (
            f"[{kind} ({block.get('mimeType', 'unknown type')}, about {size:,} bytes) not shown: "
            "claude-mini passes text only]"
        )
    if kind == "resource_link":
        name = f" ({block['name']})" if block.get("name") else ""
        return f"[resource link: {block.get('uri', '?')}{name}]"
    if kind == "resource":
        resource = block.get("resource") or {}
        head = f"[resource: {resource.get('uri', '?')}]"
        return f"{head}\n{resource['text']}" if isinstance(resource.get("text"), str) else head
    return f"[a {kind or 'content'} block claude-mini does not show]"


def cut(text: str) -> str:
    """Text within MAX_OUTPUT_CHARS, with a note of what was cut (as Bash's output)."""
    return cut_with_note(text, MAX_OUTPUT_CHARS, "of the tool's output")


def ordered_tools(
    connections: dict[str, ServerConnection], *, timeout: float, trust_read_only_hints: bool
) -> list[McpTool]:
    """The tools of every connected server: servers by name, each server's tools by name."""
    tools = []
    for server in sorted(connections):
        connection = connections[server]
        if connection.status != "connected":
            continue
        for info in sorted(connection.tools, key=lambda t: t.name):
            hinted = bool((info.annotations or {}).get("readOnlyHint")) and trust_read_only_hints
            tools.append(McpTool(connection, info, timeout=timeout, read_only=hinted))
    return tools
