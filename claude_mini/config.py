"""Configuration: layered settings.json files, environment and flags -> one `Config`.

Precedence, lowest to highest (DESIGN.md section 4): user settings, project
`.claude/settings.json`, local `.claude/settings.local.json`, command-line
flags, managed settings (always wins). Permission rules are not merged here:
the layers are kept so `agent/permissions.py` can let deny win and keep
managed rules unbreakable.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_mini import paths

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_SMALL_MODEL = "claude-haiku-4-5"
DEFAULT_MAX_TOKENS = 32000


class ConfigError(Exception):
    """A bad setting or flag value; shown to the user as a usage error."""


@dataclass
class SettingsLayer:
    """One settings source: its name, the file it came from (if any) and its data."""

    source: str
    path: Path | None
    data: dict[str, Any]


@dataclass
class Config:
    """Everything a session needs to know about how it was asked to run."""

    cwd: Path
    project_root: Path
    model: str = DEFAULT_MODEL
    small_model: str = DEFAULT_SMALL_MODEL
    max_tokens: int = DEFAULT_MAX_TOKENS
    permission_mode: str | None = None  # from --permission-mode; else the policy reads defaultMode
    append_system_prompt: str = ""
    max_turns: int | None = None
    debug: bool = False
    layers: list[SettingsLayer] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def get(self, dotted: str, default: Any = None) -> Any:
        """A merged setting by dotted key, e.g. `recall.strategy`."""
        node: Any = self.settings
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    @property
    def auto_memory(self) -> bool:
        """Auto memory (layers 2-4) is on unless the setting or CLAUDE_MINI_DISABLE_AUTO_MEMORY=1 says off."""
        if os.environ.get("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "").strip() in ("1", "true", "yes"):
            return False
        return self.settings.get("autoMemoryEnabled", True) is not False

    def permission_layers(self) -> list[tuple[str, dict[str, Any], str | None]]:
        """(source, permissions dict, file) per layer, lowest precedence first."""
        out = []
        for layer in self.layers:
            perms = layer.data.get("permissions")
            if isinstance(perms, dict):
                out.append((layer.source, perms, str(layer.path) if layer.path else None))
        return out


def read_settings_file(path: Path, warnings: list[str]) -> dict[str, Any]:
    """A settings file as a dict; a missing file is empty, a broken one is skipped with a warning."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"Skipped settings file {path}: {exc}. Other settings still apply.")
        return {}
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        warnings.append(
            f"Skipped settings file {path}: invalid JSON at line {exc.lineno} ({exc.msg}). "
            "Other settings still apply; fix the file to use it."
        )
        return {}
    if not isinstance(data, dict):
        warnings.append(f"Skipped settings file {path}: expected a JSON object.")
        return {}
    return data


def settings_files(cwd: Path, project_root: Path) -> list[tuple[str, Path]]:
    """The settings files in precedence order, lowest first, without the flags layer."""
    return [
        ("user", paths.home_dir() / "settings.json"),
        ("project", project_root / ".claude" / "settings.json"),
        ("local", project_root / ".claude" / "settings.local.json"),
        ("managed", paths.managed_dir() / "settings.json"),
    ]


def merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge two settings dicts; `top` wins, nested dicts merge, lists are replaced."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def _record_origins(origins: dict[str, str], data: dict[str, Any], label: str, prefix="") -> None:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            _record_origins(origins, value, label, dotted + ".")
        else:
            origins[dotted] = label


def load_config(cwd: Path, flags: dict[str, Any] | None = None, **options: Any) -> Config:
    """Build the session's Config from files, environment and command-line flags.

    `flags` is a settings-shaped dict (e.g. `{"model": ..., "permissions": {...}}`)
    that sits between the local and managed layers; `options` set Config fields
    that are not settings (debug, max_turns, append_system_prompt).
    """
    cwd = cwd.resolve()
    project_root = paths.git_root(cwd) or cwd
    warnings: list[str] = []
    layers: list[SettingsLayer] = []
    for source, path in settings_files(cwd, project_root):
        if source == "managed" and flags:
            layers.append(SettingsLayer("flags", None, flags))
        data = read_settings_file(path, warnings)
        if data:
            layers.append(SettingsLayer(source, path, data))
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for layer in layers:
        merged = merge(merged, layer.data)
        label = str(layer.path) if layer.path else "command line"
        _record_origins(origins, layer.data, label)
    config = Config(cwd=cwd, project_root=project_root, layers=layers, settings=merged,
                    origins=origins, warnings=warnings, **options)
    _apply_settings(config, flags or {})
    return config


def _apply_settings(config: Config, flags: dict[str, Any]) -> None:
    """Resolve the typed fields from merged settings, env and flags."""
    managed = next((layer.data for layer in config.layers if layer.source == "managed"), {})
    env = os.environ
    config.model = (
        managed.get("model") or flags.get("model") or env.get("CLAUDE_MINI_MODEL")
        or config.settings.get("model") or DEFAULT_MODEL
    )
    config.small_model = (
        managed.get("smallModel") or flags.get("smallModel")
        or env.get("CLAUDE_MINI_SMALL_MODEL") or config.settings.get("smallModel")
        or DEFAULT_SMALL_MODEL
    )
    config.permission_mode = (flags.get("permissions") or {}).get("defaultMode")
    max_tokens = config.settings.get("maxTokens")
    if isinstance(max_tokens, int) and max_tokens > 0:
        config.max_tokens = max_tokens
