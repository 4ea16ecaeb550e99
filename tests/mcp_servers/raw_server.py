"""A small MCP server speaking JSON-RPC over stdio by hand, so it can list tools the SDK's own
server API would never produce: one good tool and, with RAW_BAD_TOOLS=1, tools whose input
schema the SDK's client cannot read (`{"type": "array"}`, no schema) or that is not valid JSON
schema (`{"type": 5}` inside).

    python raw_server.py

Tools: good(x) -> "good: <x>"; the bad ones, when listed, answer like good.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

GOOD = {
    "name": "good",
    "description": "Say x back.",
    "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
}
BAD = [
    {"name": "listy", "description": "Its schema is an array.", "inputSchema": {"type": "array"}},
    {"name": "bare", "description": "It has no schema."},
    {
        "name": "typo",
        "description": "Its schema is not JSON schema.",
        "inputSchema": {"type": "object", "properties": {"x": {"type": 5}}},
    },
]


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    """The response to one message (None for a notification)."""
    method, ident = request.get("method"), request.get("id")
    if ident is None:
        return None
    if method == "initialize":
        version = request.get("params", {}).get("protocolVersion", "2025-11-25")
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [GOOD, *(BAD if os.environ.get("RAW_BAD_TOOLS") else [])]}
    elif method == "tools/call":
        arguments = request.get("params", {}).get("arguments") or {}
        result = {"content": [{"type": "text", "text": f"good: {arguments.get('x', '')}"}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        response = answer(json.loads(line))
        if response is not None:
            sys.stdout.write(json.dumps(response) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
