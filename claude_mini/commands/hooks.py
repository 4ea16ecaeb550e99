"""The hooks of the settings files, for `claude-mini hooks list` and the REPL's /hooks: every hook by
event (matcher, command, timeout, file), the ones that do not run and why, the problems."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from claude_mini.hooks.config import hooks_report, load_hooks

if TYPE_CHECKING:
    from claude_mini.config import Config


def hooks_lines(config: Config) -> list[str]:
    """The report as lines (hooks/config.py's `hooks_report`)."""
    return hooks_report(load_hooks(config), config)


def hooks_data(config: Config) -> dict[str, Any]:
    """The same for `--json`."""
    return load_hooks(config).to_json()
