"""Claude Code's `--settings` and `--mcp-config` values: a JSON file's path or the JSON itself.

Both flags take either form, as Claude Code's do: a value starting with `{` is JSON text, anything
else is a file. A value that cannot be used is a `FlagValueError` whose message is the one line
the CLI prints before it exits with the usage status (nothing has started yet).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_mini.base.safe_read import Unreadable, read_text_file
from claude_mini.config.json_text import json_kind, parse_json
from claude_mini.config.layers import SETTINGS_MAX_BYTES


class FlagValueError(Exception):
    """A --settings or --mcp-config value that is neither a readable JSON file nor JSON text."""


def read_flag_json(value: str, flag: str) -> tuple[str, dict[str, Any]]:
    """(label, object) for one flag value: the file's absolute path, or "<flag> JSON" for JSON text."""
    if value.lstrip().startswith("{"):
        label, text = f"{flag} JSON", value
    else:
        path = Path(value).expanduser().absolute()
        label = str(path)
        try:
            text = read_text_file(path, SETTINGS_MAX_BYTES)
        except (OSError, Unreadable) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise FlagValueError(f"{flag} {value}: {why}. Give a JSON file's path or the JSON itself.") from None
    data, problem = parse_json(text)
    if problem:
        raise FlagValueError(f"{label} {problem}. Nothing was started; fix it and run again.")
    if not isinstance(data, dict):
        raise FlagValueError(f"{label} is {json_kind(data)}, not a JSON object. Nothing was started.")
    return label, data


def mcp_config_servers(values: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(label, its `mcpServers` object) for each --mcp-config value, in the order given."""
    out = []
    for value in values:
        label, data = read_flag_json(value, "--mcp-config")
        servers = data.get("mcpServers")
        if not isinstance(servers, dict):
            raise FlagValueError(f'{label} has no "mcpServers" object (the shape of .mcp.json). Nothing was started.')
        out.append((label, servers))
    return out
