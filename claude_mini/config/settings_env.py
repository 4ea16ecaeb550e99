"""The `env` key of the settings files: variables set for the whole session, as Claude Code does.

Every layer's `env` (user, project, local, flags, managed; an untrusted folder's project and local
files are filtered out before, like their hooks) is merged, higher layers winning, and set in the
process environment once when the session's runtime is built, so the tools, the hooks and the MCP
servers it starts inherit it, and so do the variables claude-mini reads itself
(BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, MAX_THINKING_TOKENS, ANTHROPIC_MODEL, ...).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from claude_mini.config.layers import SettingsLayer


def settings_env(layers: list[SettingsLayer]) -> tuple[dict[str, str], list[str]]:
    """(the merged `env` of `layers`, one line per value skipped); numbers and booleans become text."""
    merged: dict[str, str] = {}
    problems: list[str] = []
    for layer in layers:
        env: Any = layer.data.get("env")
        where = str(layer.path) if layer.path else "the command line"
        if env is None:
            continue
        if not isinstance(env, dict):
            problems.append(f"`env` in {where} is not an object of names and values; ignored. Fix the file.")
            continue
        for name, value in env.items():
            if isinstance(value, bool):
                value = str(value).lower()
            if not isinstance(value, (str, int, float)) or not name or "=" in name or "\0" in str(value):
                problems.append(f"`env.{name}` in {where} is not a text value; it was not set. Fix the file.")
                continue
            merged[name] = str(value)
    return merged, problems


def apply_settings_env(layers: list[SettingsLayer], environ: Mapping[str, str] | None = None) -> list[str]:
    """Set the merged `env` of `layers` in the process environment; the lines about skipped values."""
    values, problems = settings_env(layers)
    target = os.environ if environ is None else environ
    target.update(values)  # type: ignore[attr-defined]
    return problems


def with_settings_env(layers: list[SettingsLayer]) -> dict[str, str]:
    """The process environment as it will be once `apply_settings_env` ran (for reads before that)."""
    return {**os.environ, **settings_env(layers)[0]}


def thinking_budget(max_tokens: int, environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """Extended thinking for MAX_THINKING_TOKENS (Claude Code's variable): at least 1,024 tokens, below
    max_tokens; None when unset, zero or not a number."""
    raw = (os.environ if environ is None else environ).get("MAX_THINKING_TOKENS", "").strip()
    if not raw.isdigit() or int(raw) <= 0:
        return None
    return {"type": "enabled", "budget_tokens": max(1024, min(int(raw), max_tokens - 1))}
