"""What an untrusted folder's settings may do: the allow-list that filters project and local layers.

Until the user trusts the project folder (`trust.py`, or `--trust-folder`), the project
and local files keep only what cannot widen what runs, where data goes or what it costs
(`UNTRUSTED_COST_KEYS`): `untrusted_part` is an allow-list, so a setting added later is
ignored in untrusted folders until it is deliberately listed there (hooks, MCP servers,
env, helper commands and base URLs must never be).
"""

from __future__ import annotations

import json
from typing import Any

from claude_mini import trust
from claude_mini.base.text import clip
from claude_mini.config.layers import SettingsLayer

UNTRUSTED_SOURCES = ("project", "local")
# Keys that decide what the user pays: which model answers, how many tokens a request may produce
# or carry, how often side requests (recall, extraction, compaction, dreaming) run. A repository
# choosing them is cost amplification (four requests to opus for "hello"), so untrusted
# they are ignored like allow rules, each named with its value. Left on the allow-list: latency
# knobs that add no request (recall.waitMs/timeoutMs/holdMs, memory.extractWaitSeconds) and
# switches that only turn work off (autoMemoryEnabled false). `subagents.*` (turns, tokens,
# depth) was never on it.
UNTRUSTED_COST_KEYS = (
    "model",
    "smallModel",
    "maxTokens",
    "contextWindow",
    "autoCompact",
    "autoCompactThreshold",
    "recall.strategy",
    "recall.draftPauseMs",
    "memory.extractEvery",
    "memory.extractGate",
    "memory.extractBatchTurns",
    "memory.autoDream",
    "memory.dreamMaxTurns",
)
# Top-level keys an untrusted project may set: none of them changes what runs, where data goes or
# what it costs. Groups list their keys one by one, so a new key is ignored until someone decides
# it is safe.
_SAFE_KEYS = frozenset({"$schema", "claudeMdExcludes"})
_SAFE_GROUPS = {
    "recall": frozenset({"waitMs", "timeoutMs", "holdMs"}),
    "memory": frozenset({"mode", "extractWaitSeconds", "halfLifeDays", "maxFiles", "autoGc"}),
}
# Permission keys that only narrow; defaultMode is kept only for these modes.
_NARROWING_PERMISSION_KEYS = frozenset({"deny", "ask", "disableBypassPermissionsMode"})
_NARROWING_MODES = ("default", "plan")


def untrusted_part(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(what an untrusted project or local settings file may set, each ignored item named)."""
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in data.items():
        if key in UNTRUSTED_COST_KEYS:
            ignored.append(f"{key} {shown_value(value)}")
        elif key == "permissions" and isinstance(value, dict):
            kept[key] = _narrowing_permissions(value, ignored)
        elif key == "claudeMdExcludes" and isinstance(value, list):
            kept[key] = trust.RepositoryOnly(value)  # it may hide the repository's own files only
        elif key == "permissions" or key in _SAFE_KEYS:
            kept[key] = value  # a permissions value of the wrong type is the policy's to report
        elif key == "autoMemoryEnabled":  # may turn memory off, not back on against the user's choice
            _keep_unless(kept, ignored, key, value, value is not False)
        elif key in _SAFE_GROUPS and isinstance(value, dict):
            kept[key] = _safe_group_part(key, value, ignored)
        elif key == "hooks" and isinstance(value, dict) and value:
            ignored.append(f"hooks {shown_value(list(value))}")  # which events: the user knows their hooks so
        else:
            ignored.append(key)
    return kept, ignored


def _safe_group_part(group: str, value: dict[str, Any], ignored: list[str]) -> dict[str, Any]:
    """The allowed keys of an untrusted `recall`/`memory` object; the rest named (cost keys with values)."""
    kept: dict[str, Any] = {}
    for key, item in value.items():
        dotted = f"{group}.{key}"
        if key in _SAFE_GROUPS[group]:
            kept[key] = item
        else:
            ignored.append(f"{dotted} {shown_value(item)}" if dotted in UNTRUSTED_COST_KEYS else dotted)
    return kept


def _keep_unless(kept: dict[str, Any], ignored: list[str], key: str, value: Any, widening: bool) -> None:
    if widening:
        ignored.append(f"{key} {shown_value(value)}")
    else:
        kept[key] = value


def _narrowing_permissions(perms: dict[str, Any], ignored: list[str]) -> dict[str, Any]:
    """The deny/ask part of an untrusted `permissions` object; allow rules and the rest are named."""
    kept = {k: v for k, v in perms.items() if k in _NARROWING_PERMISSION_KEYS}
    for key, value in perms.items():
        if key == "defaultMode" and value in _NARROWING_MODES:
            kept[key] = value
        elif key not in _NARROWING_PERMISSION_KEYS and value not in ([], None, ""):
            ignored.append(f"permissions.{key} {shown_value(value)}")
    return kept


def shown_value(value: Any, limit: int = 120) -> str:
    """A setting's value on one short line (a list as `a, b`; odd characters escaped)."""
    items = value if isinstance(value, list) else [value]
    text = ", ".join(item if isinstance(item, str) else json.dumps(item) for item in items)
    # No newline or terminal escape may reach the one line.
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return clip(text, limit)


def untrusted_notice(ignored: dict[str, list[str]]) -> str:
    """The one line naming what an untrusted folder's settings tried and what was kept."""
    parts = " and ".join(f"{path} ({'; '.join(items)})" for path, items in ignored.items())
    return (
        f"Ignored untrusted settings in {parts}: this folder is not trusted. Their deny and ask "
        "rules still apply; to use the rest, run claude-mini here and trust the folder, "
        "or pass --trust-folder."
    )


def trusted_layers(layers: list[SettingsLayer], trusted: bool) -> tuple[list[SettingsLayer], dict[str, list[str]]]:
    """The layers as they apply: untrusted project/local ones cut to `untrusted_part`."""
    if trusted:
        return list(layers), {}
    out, ignored = [], {}
    for layer in layers:
        if layer.source in UNTRUSTED_SOURCES:
            data, dropped = untrusted_part(layer.data)
            layer = SettingsLayer(layer.source, layer.path, data)
            if dropped:
                ignored[str(layer.path)] = dropped
        out.append(layer)
    return out, ignored
