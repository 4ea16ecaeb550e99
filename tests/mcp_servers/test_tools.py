"""MCP tools as claude-mini tools (mcp_servers/tools.py): names, the fixed order, results as text."""

from __future__ import annotations

import json
from types import SimpleNamespace

from claude_mini.mcp_servers.tools import MAX_OUTPUT_CHARS, cut, ordered_tools, to_result, tool_name


def outcome(*content, structured=None, is_error=False):
    return SimpleNamespace(content=list(content), structured=structured, is_error=is_error)


def info(server, name, description="", annotations=None):
    return SimpleNamespace(
        server=server,
        name=name,
        description=description,
        input_schema={"type": "object", "properties": {}},
        annotations=annotations or {},
    )


def test_text_structured_media_and_resources_become_text():
    result = to_result(
        outcome(
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "aGVsbG8gd29ybGQh"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
            {"type": "resource", "resource": {"uri": "mem://n", "text": "body"}},
        )
    )
    assert result.content.splitlines() == [
        "hello",
        "[image (image/png, about 12 bytes) not shown: claude-mini passes text only]",
        "[resource link: file:///a.txt (a)]",
        "[resource: mem://n]",
        "body",
    ]
    assert not result.is_error


def test_structured_content_is_shown_only_when_no_text_says_it():
    assert json.loads(to_result(outcome(structured={"sum": 3})).content) == {"sum": 3}
    assert to_result(outcome({"type": "text", "text": "3"}, structured={"sum": 3})).content == "3"


def test_an_error_result_is_an_error_and_never_empty():
    result = to_result(outcome(is_error=True))
    assert result.is_error and result.content == "(the tool returned an error and no text)"


def test_long_output_is_cut_with_a_note():
    text = cut("x" * (MAX_OUTPUT_CHARS + 10))
    assert text.startswith("x" * MAX_OUTPUT_CHARS) and text.endswith(
        "10 more characters of the tool's output were cut]"
    )


def test_the_order_is_servers_by_name_then_tools_by_name_and_only_connected_servers():
    connections = {
        "zeta": SimpleNamespace(status="connected", tools=[info("zeta", "b"), info("zeta", "a")]),
        "alpha": SimpleNamespace(status="connected", tools=[info("alpha", "run", annotations={"readOnlyHint": True})]),
        "down": SimpleNamespace(status="failed", tools=[info("down", "x")]),
    }
    tools = ordered_tools(connections, timeout=5, trust_read_only_hints=True)
    assert [t.name for t in tools] == ["mcp__alpha__run", "mcp__zeta__a", "mcp__zeta__b"]
    assert [t.read_only for t in tools] == [True, False, False]
    assert not ordered_tools(connections, timeout=5, trust_read_only_hints=False)[0].read_only
    assert tool_name("s", "t") == "mcp__s__t"
