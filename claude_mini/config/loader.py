"""The typed `Config` and `load_config`, which builds it from the settings layers, environment and flags."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_mini import trust
from claude_mini.base import paths
from claude_mini.config.checkpoint_settings import CheckpointSettings, checkpoint_settings
from claude_mini.config.layers import SettingsLayer, merge, read_settings_file, settings_files
from claude_mini.config.managed import permission_key_warnings, read_managed_file
from claude_mini.config.memory_settings import MemorySettings, memory_settings
from claude_mini.config.models import DEFAULT_MAX_TOKENS, DEFAULT_MODEL, DEFAULT_SMALL_MODEL, model_named
from claude_mini.config.settings_env import with_settings_env
from claude_mini.config.untrusted import trusted_layers, untrusted_notice


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
    system_prompt: str | None = None  # --system-prompt: replaces the built-in instructions
    verbose: bool = False  # --verbose (Claude Code's): print mode shows each tool call on stderr
    mcp_configs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # --mcp-config: (label, servers)
    strict_mcp_config: bool = False  # --strict-mcp-config: only the --mcp-config servers start
    max_turns: int | None = None
    debug: bool = False
    layers: list[SettingsLayer] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    trusted: bool = False  # may project/local settings widen permissions, may imports leave the repo
    trusted_for_run: bool = False  # --trust-folder, or a "yes" that could not be recorded
    ignored: dict[str, list[str]] = field(default_factory=dict)  # untrusted file -> items ignored
    managed_error: str | None = None  # the managed file is broken: every tool is denied
    raw_layers: list[SettingsLayer] = field(default_factory=list, repr=False)  # before the trust filter
    flags: dict[str, Any] = field(default_factory=dict, repr=False)
    claude_code_home: Path | None = None  # ~/.claude, read below claude-mini's own user files (None: off)
    _untrusted_line: str | None = field(default=None, repr=False)

    def get(self, dotted: str, default: Any = None) -> Any:
        """A merged setting by dotted key, e.g. `recall.strategy`."""
        node: Any = self.settings
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    @property
    def memory(self) -> MemorySettings:
        """The memory layers' settings, validated from the merged settings and the model.

        Validated at each access (a few dictionary lookups), so a change of the merged
        settings or of the model during a session (a folder trusted, /model) is seen at once.
        """
        return memory_settings(self.settings, self.model)

    @property
    def checkpoints(self) -> CheckpointSettings:
        """The file checkpoints' settings (rewind/store.py), validated at each access like `memory`."""
        return checkpoint_settings(self.settings)

    @property
    def auto_memory(self) -> bool:
        """Auto memory (layers 2-4) is on unless the setting or CLAUDE_MINI_DISABLE_AUTO_MEMORY=1 says off."""
        if os.environ.get("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "").strip() in ("1", "true", "yes"):
            return False
        return self.settings.get("autoMemoryEnabled", True) is not False

    def grant_trust(self, *, this_run_only: bool = False) -> None:
        """Trust the project folder now (the REPL's "yes"): re-merge the settings unfiltered."""
        self.trusted = True
        self.trusted_for_run = self.trusted_for_run or this_run_only
        _assemble(self)

    def additional_directories(self) -> list[Path]:
        """The existing folders `permissions.additionalDirectories` (and --add-dir) add, each once;
        relative ones are relative to the project root, as the permission rules read them."""
        found: list[Path] = []
        for _, perms, _ in self.permission_layers():
            for folder in perms.get("additionalDirectories") or []:
                path = (
                    Path(os.path.abspath(self.project_root / Path(folder).expanduser()))
                    if isinstance(folder, str)
                    else None
                )
                if path is not None and path.is_dir() and path not in found:
                    found.append(path)
        return found

    def permission_layers(self) -> list[tuple[str, dict[str, Any], str | None]]:
        """(source, permissions dict, file) per layer, lowest precedence first."""
        out = []
        for layer in self.layers:
            perms = layer.data.get("permissions")
            if isinstance(perms, dict):
                out.append((layer.source, perms, str(layer.path) if layer.path else None))
        return out


def _record_origins(origins: dict[str, str], data: dict[str, Any], label: str, prefix: str = "") -> None:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            _record_origins(origins, value, label, dotted + ".")
        else:
            origins[dotted] = label


def load_config(
    cwd: Path,
    flags: dict[str, Any] | None = None,
    *,
    trust_folder: bool = False,
    settings_flag: tuple[str, dict[str, Any]] | None = None,
    **options: Any,
) -> Config:
    """Build the session's Config from files, environment and command-line flags.

    `flags` is a settings-shaped dict (e.g. `{"model": ..., "permissions": {...}}`)
    that sits between the local and managed layers; `trust_folder` (--trust-folder)
    trusts the project folder for this run; `settings_flag` is --settings' (label, object), a
    layer just below the other flags; `options` set Config fields that are not settings
    (debug, max_turns, append_system_prompt, ...).
    """
    cwd = cwd.resolve()
    project_root = paths.checkout_root(cwd) or cwd
    warnings: list[str] = []
    layers: list[SettingsLayer] = []
    managed_error = None
    for source, path in settings_files(cwd, project_root):
        if source == "managed" and settings_flag:
            label, data = settings_flag
            layers.append(SettingsLayer("flags", None if label.startswith("--") else Path(label), data))
        if source == "managed" and flags:
            layers.append(SettingsLayer("flags", None, flags))
        if source == "managed":
            data, managed_error = read_managed_file(path)
        else:
            data = read_settings_file(path, warnings)
        if data:
            layers.append(SettingsLayer(source, path, data))
    if managed_error:
        warnings.append(managed_error)
    claude_code_home = claude_code_home_for(layers)
    if claude_code_home is not None:  # Claude Code's user settings: the lowest layer
        data = read_settings_file(claude_code_home / "settings.json", warnings)
        if data:
            layers.insert(0, SettingsLayer("user", claude_code_home / "settings.json", data))
    record = trust.load_record()
    if record.problem:
        warnings.append(record.problem)
    trusted = trust_folder or record.covering(project_root) is not None
    warnings.extend(permission_key_warnings(layers, trusted))
    config = Config(
        cwd=cwd,
        project_root=project_root,
        warnings=warnings,
        trusted=trusted,
        trusted_for_run=trust_folder,
        managed_error=managed_error,
        raw_layers=layers,
        flags=flags or {},
        claude_code_home=claude_code_home,
        **options,
    )
    _assemble(config)
    return config


def claude_code_home_for(layers: list[SettingsLayer]) -> Path | None:
    """Claude Code's user folder when it is read: it exists, is not claude-mini's own home, and no
    claude-mini settings layer says `"useClaudeCodeHome": false` (the highest that sets it wins)."""
    use = True
    for layer in layers:
        value = layer.data.get("useClaudeCodeHome")
        if isinstance(value, bool):
            use = value
    folder = paths.claude_code_dir()
    if not use or not folder.is_dir() or os.path.realpath(folder) == os.path.realpath(paths.home_dir()):
        return None
    return folder


def _assemble(config: Config) -> None:
    """Layers (trust-filtered), merged settings, origins and typed fields from `raw_layers`."""
    merge_layers(config)
    _apply_settings(config, config.flags)


def merge_layers(config: Config) -> None:
    """Layers (trust-filtered), merged settings and origins from `raw_layers`."""
    config.layers, config.ignored = trusted_layers(config.raw_layers, config.trusted)
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for layer in config.layers:
        merged = merge(merged, layer.data)
        label = str(layer.path) if layer.path else "command line"
        _record_origins(origins, layer.data, label)
    config.settings, config.origins = merged, origins
    if config._untrusted_line in config.warnings:
        config.warnings.remove(config._untrusted_line)
    config._untrusted_line = untrusted_notice(config.ignored) if config.ignored else None
    if config._untrusted_line:
        config.warnings.append(config._untrusted_line)


def _named(model: Any) -> Any:
    """An alias (`opus`) as its current id; anything else as written (a bad type is validated later)."""
    return model_named(model) if isinstance(model, str) else model


def _apply_settings(config: Config, flags: dict[str, Any]) -> None:
    """Resolve the typed fields from merged settings, env and flags."""
    managed = next((layer.data for layer in config.layers if layer.source == "managed"), {})
    env = with_settings_env(config.layers)  # a settings file's `env` counts as the environment does
    config.model = _named(
        managed.get("model")
        or flags.get("model")
        or env.get("CLAUDE_MINI_MODEL")
        or env.get("ANTHROPIC_MODEL")  # Claude Code's name for it
        or config.settings.get("model")
        or DEFAULT_MODEL
    )
    config.small_model = _named(
        managed.get("smallModel")
        or flags.get("smallModel")
        or env.get("CLAUDE_MINI_SMALL_MODEL")
        or env.get("ANTHROPIC_SMALL_FAST_MODEL")
        or config.settings.get("smallModel")
        or DEFAULT_SMALL_MODEL
    )
    config.permission_mode = (flags.get("permissions") or {}).get("defaultMode")
    max_tokens = config.settings.get("maxTokens")
    if isinstance(max_tokens, int) and max_tokens > 0:
        config.max_tokens = max_tokens
