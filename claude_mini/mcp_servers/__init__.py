"""MCP servers (Model Context Protocol) over the official `mcp` SDK, in Claude Code's formats.

    config.py     load_servers(config) -> ServerSet: project .mcp.json, user and local
                  `mcpServers`, ${VAR} expansion, trust and the user's approval; approve()
    client.py     ServerConnection, McpManager: each server in a task of its own (stdio, HTTP,
                  SSE), connected in the background; tools (one the SDK or the API would
                  refuse is skipped alone, one line), calls with a timeout, reconnect
    tools.py      McpTool: `mcp__<server>__<tool>` as a claude-mini tool, results as text, the
                  fixed order (built-ins, servers by name, tools by name)
    lifecycle.py  McpPart: servers started at session start, the tool list fixed where the
                  prompt cache allows (a conversation's first request, /clear, /compact)

runtime.mcp_servers() adds the part only when a server would start; the SDK (about 1 s to
import) is never loaded otherwise.
"""
