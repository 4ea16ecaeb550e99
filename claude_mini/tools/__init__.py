"""Coding tools the model calls: Read, Write, Edit, Bash, Grep, Glob, TodoWrite (its todo list), and
BashOutput and KillShell (background shells).

Each tool lives in its own module; `registry.default_tools()` lists them in
the fixed order the prompt cache relies on. This module re-exports the seam
from `base` and holds the small input-parsing helpers every tool shares.
Models sometimes send numbers or booleans as strings, so the helpers accept
"10" and "true" rather than failing the call.
"""

from __future__ import annotations

from typing import Any

from claude_mini.tools.base import Tool, ToolContext, ToolError, ToolResult, tool_spec

__all__ = [
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "bool_arg",
    "int_arg",
    "opt_str_arg",
    "str_arg",
    "tool_spec",
]


def str_arg(input: dict[str, Any], key: str, *, allow_empty: bool = False) -> str:
    """The required string parameter `key`, or a ToolError naming what is wrong."""
    value = input.get(key)
    if value is None:
        raise ToolError(f"Missing required parameter `{key}`.")
    if not isinstance(value, str):
        raise ToolError(f"Parameter `{key}` must be a string, got {type(value).__name__}.")
    if not value and not allow_empty:
        raise ToolError(f"Parameter `{key}` must not be empty.")
    return value


def opt_str_arg(input: dict[str, Any], key: str) -> str | None:
    """The optional string parameter `key`; empty strings count as absent."""
    value = input.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolError(f"Parameter `{key}` must be a string, got {type(value).__name__}.")
    return value


def int_arg(
    input: dict[str, Any],
    key: str,
    default: int | None = None,
    *,
    minimum: int | None = None,
) -> int | None:
    """The optional integer parameter `key` (default when absent), checked against `minimum`."""
    value = input.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise ToolError(f"Parameter `{key}` must be an integer, got {value!r}.")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ToolError(f"Parameter `{key}` must be an integer, got {value!r}.") from None
    if minimum is not None and number < minimum:
        raise ToolError(f"Parameter `{key}` must be at least {minimum}, got {number}.")
    return number


def bool_arg(input: dict[str, Any], key: str, default: bool = False) -> bool:
    """The optional boolean parameter `key`, accepting "true"/"false" strings too."""
    value = input.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    if isinstance(value, int):
        return bool(value)
    raise ToolError(f"Parameter `{key}` must be true or false, got {value!r}.")
