"""Configuration: layered settings.json files, environment and flags -> one `Config`.

Precedence, lowest to highest (DESIGN.md section 4): user settings, project
`.claude/settings.json`, local `.claude/settings.local.json`, command-line
flags, managed settings (always wins). Permission rules are not merged here:
the layers are kept so `permissions/policy.py` can let deny win and keep
managed rules unbreakable.

Two safety decisions live here, so no other module ever sees what they remove
(DESIGN.md sections 7 and 8):
- Until the user trusts the project folder (`trust.py`, or `--trust-folder`),
  the project and local files keep only what cannot widen what runs, where
  data goes or what it costs (`UNTRUSTED_COST_KEYS`): `untrusted_part` is an
  allow-list, so a setting added later is ignored in untrusted folders until it
  is deliberately listed there (hooks, MCP servers, env, helper commands and
  base URLs must never be).
- A managed file that exists but cannot be read, parsed, has wrong types or an
  unknown `permissions` key (a misspelt `deny`) sets `Config.managed_error`;
  `runtime.make_policy` then denies every tool.

The memory layers' settings (`recall.*`, `memory.*`, `contextWindow`, `autoCompact`,
`autoCompactThreshold`) are validated here and nowhere else: `Config.memory` gives
them typed, one dataclass per layer, each bad value replaced by its default and
named once in `MemorySettings.problems`, which `runtime.build_runtime` says. So is
`checkpoints.maxSessionMB` (`Config.checkpoints`, the file checkpoints of /rewind).
"""

from __future__ import annotations

import difflib
import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_mini import trust
from claude_mini.base import paths
from claude_mini.base.safe_read import Unreadable, read_text_file
from claude_mini.base.text import clip

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_SMALL_MODEL = "claude-haiku-4-5"
# The families a command's, skill's or agent file's `model:` may name, as Claude Code's files do.
MODEL_ALIASES = {"haiku": DEFAULT_SMALL_MODEL, "sonnet": DEFAULT_MODEL, "opus": "claude-opus-4-6"}


def model_named(name: str | None) -> str | None:
    """The model id a file's `model:` names: an alias's id, an id as written, None for none."""
    return MODEL_ALIASES.get(name.lower(), name) if name else None


DEFAULT_MAX_TOKENS = 32000
SETTINGS_MAX_BYTES = 2_000_000  # a settings file or .mcp.json larger than this is refused, not read


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
    trusted: bool = False  # may project/local settings widen permissions, may imports leave the repo
    trusted_for_run: bool = False  # --trust-folder, or a "yes" that could not be recorded
    ignored: dict[str, list[str]] = field(default_factory=dict)  # untrusted file -> items ignored
    managed_error: str | None = None  # the managed file is broken: every tool is denied
    raw_layers: list[SettingsLayer] = field(default_factory=list, repr=False)  # before the trust filter
    flags: dict[str, Any] = field(default_factory=dict, repr=False)
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

    def permission_layers(self) -> list[tuple[str, dict[str, Any], str | None]]:
        """(source, permissions dict, file) per layer, lowest precedence first."""
        out = []
        for layer in self.layers:
            perms = layer.data.get("permissions")
            if isinstance(perms, dict):
                out.append((layer.source, perms, str(layer.path) if layer.path else None))
        return out


def read_settings_file(path: Path, warnings: list[str]) -> dict[str, Any]:
    """A settings file as a dict; a missing file is empty, a broken one is skipped with a warning.

    Read through safe_read: a link to /dev/zero, a FIFO or a 10 GB file is one line, never a
    MemoryError or a hang.
    """
    try:
        text = read_text_file(path, SETTINGS_MAX_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, Unreadable) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        warnings.append(
            f"Skipped settings file {path}: {why}. Other settings still apply; make it a regular JSON file to use it."
        )
        return {}
    if not text.strip():
        return {}
    data, problem = parse_json(text)
    if problem:
        warnings.append(
            f"Skipped settings file {path}: it {problem}. Other settings still apply; fix the file to use it."
        )
        return {}
    if not isinstance(data, dict):
        warnings.append(f"Skipped settings file {path}: expected a JSON object.")
        return {}
    return data


class SettingsEditError(Exception):
    """A settings file could not be changed; the message says why and that it was left as it was."""


PERMISSION_LISTS = ("allow", "ask", "deny")


def remove_permission_rule(config: Config, path: Path, rule: str) -> list[str]:
    """Delete `rule` from `permissions.allow/ask/deny` of the settings file `path`, as Claude
    Code's /permissions does; returns the lists it was in. The file is rewritten atomically
    with its other keys kept (its formatting is not), and this session's settings follow it;
    the typed fields the session may have changed since it started (the model of /model or
    of the offline fallback) are left alone."""
    from claude_mini.base.fileutil import atomic_write

    target = path.resolve()  # a linked settings file stays linked
    data = _read_for_edit(target)
    perms = data.get("permissions")
    if not isinstance(perms, dict):
        return []
    lists = [kind for kind in PERMISSION_LISTS if isinstance(perms.get(kind), list) and rule in _stripped(perms[kind])]
    if not lists:
        return []
    for kind in lists:
        perms[kind] = [text for text in perms[kind] if not (isinstance(text, str) and text.strip() == rule)]
    try:
        atomic_write(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise SettingsEditError(f"cannot write {path}: {exc.strerror or exc}; it was left unchanged") from None
    for layer in config.raw_layers:
        if layer.path == path:
            layer.data = data
    _merge_layers(config)
    return lists


def _stripped(texts: list[Any]) -> list[str]:
    return [text.strip() for text in texts if isinstance(text, str)]


def _read_for_edit(path: Path) -> dict[str, Any]:
    """A settings file about to be edited: any problem stops the edit (nothing is written)."""
    try:
        text = read_text_file(path, SETTINGS_MAX_BYTES)
    except (OSError, Unreadable) as exc:
        raise SettingsEditError(f"cannot read {path}: {exc}; it was left unchanged") from None
    data, problem = parse_json(text) if text.strip() else ({}, None)
    if problem or not isinstance(data, dict):
        raise SettingsEditError(
            f"{path} {problem or 'is not a JSON object'}; it was left unchanged: fix it, then try again"
        )
    return data


class _DuplicateKey(ValueError):
    """A JSON object names one key twice (json.loads would keep the last silently)."""


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """object_pairs_hook: the object as a dict, or _DuplicateKey naming the repeated key."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def json_kind(value: Any) -> str:
    """A JSON value's kind in words, for messages about a setting: `a string`, `a list`, `null`."""
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "true or false",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def json_shown(value: Any, limit: int = 80) -> str:
    """A setting's value as JSON on one short line (ASCII only: no control character gets out)."""
    return clip(json.dumps(value, ensure_ascii=True, default=str), limit)


def parse_json(text: str, *, unique_keys: bool = False) -> tuple[Any, str | None]:
    """(data, None), or (None, why the text is not usable JSON) in words for a one-line message.

    Besides syntax errors, json.loads raises RecursionError on deep nesting (`[[[[...`)
    and ValueError on a huge integer; both are reported, never raised.
    """
    hook = _reject_duplicates if unique_keys else None
    try:
        return json.loads(text, object_pairs_hook=hook), None
    except json.JSONDecodeError as exc:
        return None, f"is not valid JSON (line {exc.lineno}: {exc.msg})"
    except _DuplicateKey as exc:
        return None, f"names the key {json.dumps(str(exc))} twice in one object"
    except RecursionError:
        return None, "is nested too deeply to read"
    except ValueError as exc:
        return None, f"is not usable JSON ({str(exc).split(':')[0]})"


def read_managed_file(path: Path) -> tuple[dict[str, Any], str | None]:
    """The managed settings and, if the file exists but cannot be used, why every tool is denied.

    A link to a missing file exists and fails closed: only no entry at all means "no managed settings".
    """
    try:
        text = read_text_file(path, SETTINGS_MAX_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.lexists(path):
            return {}, _managed_broken(path, "is a link to a file that does not exist")
        return {}, None
    except Unreadable as exc:
        return {}, _managed_broken(path, f"cannot be read ({exc})")
    except OSError as exc:
        return {}, _managed_broken(path, f"cannot be read ({exc.strerror or exc})")
    if not text.strip():
        return {}, _managed_broken(path, "is empty")
    data, problem = parse_json(text, unique_keys=True)
    if problem:
        return {}, _managed_broken(path, problem)
    problem = managed_type_problem(data)
    if problem:
        return {}, _managed_broken(path, problem)
    return data, None


def _managed_broken(path: Path, what: str) -> str:
    """The one line shown when the managed settings fail closed."""
    return (
        f"Managed settings {path} {what}: every tool is denied until it is fixed, so the "
        "organisation's rules cannot be dropped; ask whoever manages this machine to fix it."
    )


def managed_type_problem(data: Any) -> str | None:
    """What is wrong with the shape of managed settings (only what decides what may run), or None."""
    if not isinstance(data, dict):
        return "is not a JSON object"
    for key in ("model", "smallModel"):
        if key in data and not isinstance(data[key], str):
            return f'has "{key}" that is not a string'
    if "permissions" not in data:
        return None
    perms = data["permissions"]
    if not isinstance(perms, dict):
        return 'has "permissions" that is not an object'
    unknown = unknown_permission_key(perms)
    if unknown is not None:  # a misspelt "deny" must not drop the organisation's rules silently
        return f"has the unknown key {permission_key_named(unknown)}"
    for key in ("allow", "deny", "ask", "additionalDirectories"):
        value = perms.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return f'has "permissions.{key}" that is not a list of strings'
    return _managed_mode_problem(perms)


# The keys of a `permissions` object, as Claude Code's settings reference lists them
# (`disableAutoMode` turns off a mode claude-mini does not have: known, and nothing to do).
PERMISSION_KEYS = (
    "allow",
    "ask",
    "deny",
    "additionalDirectories",
    "defaultMode",
    "disableBypassPermissionsMode",
    "disableAutoMode",
)


def unknown_permission_key(perms: Mapping[str, Any]) -> str | None:
    """The first key of a `permissions` object that is none of PERMISSION_KEYS (a typo), else None."""
    return next((key for key in perms if key not in PERMISSION_KEYS), None)


def permission_key_named(key: str) -> str:
    """An unknown permissions key for a one-line message: quoted, the likely key, the known ones."""
    close = difflib.get_close_matches(key, PERMISSION_KEYS, n=1, cutoff=0.6)
    hint = f" (did you mean {json.dumps(close[0])}?)" if close else ""
    return f"{json.dumps('permissions.' + key)}{hint}; the keys are {', '.join(PERMISSION_KEYS)}"


def permission_key_warnings(layers: list[SettingsLayer], trusted: bool) -> list[str]:
    """One warning per unknown `permissions` key outside the managed file (which fails closed instead).

    An untrusted project's keys are left out: the untrusted notice names them already.
    """
    warnings = []
    for layer in layers:
        perms = layer.data.get("permissions")
        if (
            layer.source == "managed"
            or not isinstance(perms, dict)
            or (layer.source in UNTRUSTED_SOURCES and not trusted)
        ):
            continue
        for key in perms:
            if key not in PERMISSION_KEYS:
                where = layer.path or "the command line"
                warnings.append(
                    f"Ignored the unknown key {permission_key_named(key)} in {where}; "
                    "its other settings still apply: fix the key to use it."
                )
    return warnings


def _managed_mode_problem(perms: dict[str, Any]) -> str | None:
    """A defaultMode or disableBypassPermissionsMode the policy could only ignore."""
    from claude_mini.permissions import MODES

    mode = perms.get("defaultMode")
    if mode is not None and mode not in MODES:
        return f'has "permissions.defaultMode" {json.dumps(mode)}, not one of {", ".join(MODES)}'
    bypass = perms.get("disableBypassPermissionsMode", "disable")
    if bypass != "disable":  # any other value (null too) would silently leave bypass allowed
        return (
            f'has "permissions.disableBypassPermissionsMode" {_shown(json.dumps(bypass))}; the only value is "disable"'
        )
    return None


# ---- what an untrusted folder's settings may do

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
            ignored.append(f"{key} {_shown(value)}")
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
            ignored.append(f"hooks {_shown(list(value))}")  # which events: the user knows their hooks so
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
            ignored.append(f"{dotted} {_shown(item)}" if dotted in UNTRUSTED_COST_KEYS else dotted)
    return kept


def _keep_unless(kept: dict[str, Any], ignored: list[str], key: str, value: Any, widening: bool) -> None:
    if widening:
        ignored.append(f"{key} {_shown(value)}")
    else:
        kept[key] = value


def _narrowing_permissions(perms: dict[str, Any], ignored: list[str]) -> dict[str, Any]:
    """The deny/ask part of an untrusted `permissions` object; allow rules and the rest are named."""
    kept = {k: v for k, v in perms.items() if k in _NARROWING_PERMISSION_KEYS}
    for key, value in perms.items():
        if key == "defaultMode" and value in _NARROWING_MODES:
            kept[key] = value
        elif key not in _NARROWING_PERMISSION_KEYS and value not in ([], None, ""):
            ignored.append(f"permissions.{key} {_shown(value)}")
    return kept


def _shown(value: Any, limit: int = 120) -> str:
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


def _record_origins(origins: dict[str, str], data: dict[str, Any], label: str, prefix: str = "") -> None:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            _record_origins(origins, value, label, dotted + ".")
        else:
            origins[dotted] = label


def load_config(
    cwd: Path, flags: dict[str, Any] | None = None, *, trust_folder: bool = False, **options: Any
) -> Config:
    """Build the session's Config from files, environment and command-line flags.

    `flags` is a settings-shaped dict (e.g. `{"model": ..., "permissions": {...}}`)
    that sits between the local and managed layers; `trust_folder` (--trust-folder)
    trusts the project folder for this run; `options` set Config fields that are
    not settings (debug, max_turns, append_system_prompt).
    """
    cwd = cwd.resolve()
    project_root = paths.checkout_root(cwd) or cwd
    warnings: list[str] = []
    layers: list[SettingsLayer] = []
    managed_error = None
    for source, path in settings_files(cwd, project_root):
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
        **options,
    )
    _assemble(config)
    return config


def _assemble(config: Config) -> None:
    """Layers (trust-filtered), merged settings, origins and typed fields from `raw_layers`."""
    _merge_layers(config)
    _apply_settings(config, config.flags)


def _merge_layers(config: Config) -> None:
    """Layers (trust-filtered), merged settings and origins from `raw_layers`."""
    config.layers, config.ignored = _trusted_layers(config.raw_layers, config.trusted)
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


def _trusted_layers(layers: list[SettingsLayer], trusted: bool) -> tuple[list[SettingsLayer], dict[str, list[str]]]:
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


def _apply_settings(config: Config, flags: dict[str, Any]) -> None:
    """Resolve the typed fields from merged settings, env and flags."""
    managed = next((layer.data for layer in config.layers if layer.source == "managed"), {})
    env = os.environ
    config.model = (
        managed.get("model")
        or flags.get("model")
        or env.get("CLAUDE_MINI_MODEL")
        or config.settings.get("model")
        or DEFAULT_MODEL
    )
    config.small_model = (
        managed.get("smallModel")
        or flags.get("smallModel")
        or env.get("CLAUDE_MINI_SMALL_MODEL")
        or config.settings.get("smallModel")
        or DEFAULT_SMALL_MODEL
    )
    config.permission_mode = (flags.get("permissions") or {}).get("defaultMode")
    max_tokens = config.settings.get("maxTokens")
    if isinstance(max_tokens, int) and max_tokens > 0:
        config.max_tokens = max_tokens


# ---- the memory layers' settings (DESIGN.md sections 4 and 5), validated in one place

RECALL_STRATEGIES = ("model", "lexical", "off")
RECALL_TIMEOUT_MS = 10_000
# The longest recall holds a turn, at each of two points: before the first request, for the
# local (lexical) pass (a warm pass takes milliseconds; a new process with 10,000 memories loads
# its on-disk index in about half a second, and then its matches join the first tool result);
# and at the first tool result, for a side-model selection still in flight.
RECALL_HOLD_MS = 300
RECALL_DRAFT_PAUSE_MS = 800  # the REPL starts recall this long after the last keystroke
EXTRACT_EVERY = 1
EXTRACT_BATCH_TURNS = 5
EXTRACT_WAIT_SECONDS = 60.0
HALF_LIFE_DAYS = 30.0
MAX_MEMORY_FILES = 200  # Claude Code's hard cap on memory files
DREAM_MAX_TURNS = 8
DREAM_MIN_HOURS = 24.0  # automatic dreaming: at most once a day...
DREAM_MIN_SESSIONS = 5  # ...and after this many sessions
AUTOCOMPACT_ENV = "CLAUDE_MINI_AUTOCOMPACT_PCT"  # wins over `autoCompactThreshold`


@dataclass(frozen=True)
class RecallSettings:
    """`recall.*`: how Layer 3 chooses memories each turn (memory/recall/)."""

    strategy: str = "model"  # unset: "lexical" for the bundled local model, else "model"
    wait_ms: int = 0
    timeout_ms: int = RECALL_TIMEOUT_MS
    hold_ms: int = RECALL_HOLD_MS
    draft_pause_ms: int = RECALL_DRAFT_PAUSE_MS  # 0: no recall while typing


@dataclass(frozen=True)
class ExtractionSettings:
    """`memory.extractGate` (skip turns with nothing durable), `memory.extractBatchTurns` (run
    anyway once this many turns wait), `memory.extractEvery` (at least N turns between runs at
    turn end), `memory.extractWaitSeconds` (print mode, exit) and the daily-log mode, for
    Layer 4 (memory/extract/)."""

    every: int = EXTRACT_EVERY
    gate: bool = True
    batch_turns: int = EXTRACT_BATCH_TURNS
    wait_seconds: float = EXTRACT_WAIT_SECONDS
    log_mode: bool = False  # `memory.mode: "log"`: append bullets to today's log, edit no file
    hooks_in_forks: bool = False  # `memory.hooksInForks`: the user's PreToolUse hooks vet fork calls


@dataclass(frozen=True)
class ForgetSettings:
    """`memory.halfLifeDays`, `memory.maxFiles` and `memory.autoGc`: forgetting (memory/maintenance/forget.py)."""

    half_life_days: float = HALF_LIFE_DAYS
    max_files: int = MAX_MEMORY_FILES
    auto_gc: bool = True

    @classmethod
    def from_config(cls, config: Config | None) -> ForgetSettings:
        """`config.memory.forget`; the defaults without a config."""
        return config.memory.forget if config is not None else cls()


@dataclass(frozen=True)
class DreamSettings:
    """`memory.autoDream` and `memory.dreamMaxTurns`: consolidation (memory/maintenance/dream.py)."""

    auto_dream: bool = True
    max_turns: int = DREAM_MAX_TURNS
    min_hours: float = DREAM_MIN_HOURS  # the auto-dream gate: constants, not settings
    min_sessions: int = DREAM_MIN_SESSIONS

    @classmethod
    def from_config(cls, config: Config | None) -> DreamSettings:
        """`config.memory.dream`; the defaults without a config."""
        return config.memory.dream if config is not None else cls()


@dataclass(frozen=True)
class CompactSettings:
    """`contextWindow`, `autoCompact` and `autoCompactThreshold` (or its environment variable),
    for Layer 5 (memory/compact/)."""

    context_window: int | None = None  # None: what the client knows, else the per-model table
    auto_compact: bool = True
    threshold: float | None = None  # a fraction of the window; None: the formula


TEAM_PROPOSALS = ("team", "private")


@dataclass(frozen=True)
class TeamSettings:
    """`memory.teamDir` and `memory.teamProposals`: the team tier in the repository
    (memory/team/). `dir`: None (the default folder when it exists), False (off), True (on, at
    the default folder) or a folder relative to the repository root; `proposals`: where a
    memory proposed for the team waits, `team` (uncommitted in the team folder) or `private`
    (the private `proposed/` folder, until `memory promote`)."""

    dir: str | bool | None = None
    proposals: str = "team"


@dataclass(frozen=True)
class MemorySettings:
    """Every memory layer's settings, validated; `problems` names each bad value once."""

    recall: RecallSettings = field(default_factory=RecallSettings)
    extraction: ExtractionSettings = field(default_factory=ExtractionSettings)
    forget: ForgetSettings = field(default_factory=ForgetSettings)
    dream: DreamSettings = field(default_factory=DreamSettings)
    compact: CompactSettings = field(default_factory=CompactSettings)
    team: TeamSettings = field(default_factory=TeamSettings)
    log_mode: bool = False  # `memory.mode: "log"` (memory/maintenance/daylog.py)
    problems: tuple[str, ...] = ()


def memory_settings(
    settings: Mapping[str, Any], model: str = DEFAULT_MODEL, environ: Mapping[str, str] | None = None
) -> MemorySettings:
    """The memory layers' settings from merged settings; a bad value gets its default and a problem."""
    read = _SettingsReader(settings)
    recall = _recall_settings(read, read.group("recall"), model)
    memory = read.group("memory")
    log_mode = read.value(memory, "memory.mode", None, "'log' or left out", _is_log_mode, shown="topic files") == "log"
    return MemorySettings(
        recall=recall,
        extraction=ExtractionSettings(
            every=read.value(memory, "memory.extractEvery", EXTRACT_EVERY, "a whole number >= 1", _whole_at_least(1)),
            gate=read.value(memory, "memory.extractGate", True, "true or false", _is_bool),
            batch_turns=read.value(
                memory, "memory.extractBatchTurns", EXTRACT_BATCH_TURNS, "a whole number >= 1", _whole_at_least(1)
            ),
            wait_seconds=float(
                read.value(
                    memory, "memory.extractWaitSeconds", EXTRACT_WAIT_SECONDS, "a number >= 0", _number_at_least(0)
                )
            ),
            log_mode=log_mode,
            hooks_in_forks=read.value(memory, "memory.hooksInForks", False, "true or false", _is_bool),
        ),
        forget=ForgetSettings(
            half_life_days=float(
                read.value(memory, "memory.halfLifeDays", HALF_LIFE_DAYS, "a number of days > 0", _positive_number)
            ),
            max_files=int(
                read.value(memory, "memory.maxFiles", MAX_MEMORY_FILES, "a number >= 1", _number_at_least(1))
            ),
            auto_gc=read.value(memory, "memory.autoGc", True, "true or false", _is_bool),
        ),
        dream=DreamSettings(
            auto_dream=read.value(memory, "memory.autoDream", True, "true or false", _is_bool),
            max_turns=read.value(
                memory, "memory.dreamMaxTurns", DREAM_MAX_TURNS, "a whole number >= 2", _whole_at_least(2)
            ),
        ),
        compact=_compact_settings(read, os.environ if environ is None else environ),
        team=TeamSettings(
            dir=read.value(
                memory,
                "memory.teamDir",
                None,
                "true, false or a folder inside the repository (e.g. '.claude/memory')",
                _is_team_dir,
                shown="'.claude/memory' when that folder exists",
            ),
            proposals=read.value(
                memory, "memory.teamProposals", "team", "'team' or 'private'", lambda v: v in TEAM_PROPOSALS
            ),
        ),
        log_mode=log_mode,
        problems=tuple(read.problems),
    )


CHECKPOINT_CAP_MB = 50.0  # what one session's file checkpoints may take on disk


@dataclass(frozen=True)
class CheckpointSettings:
    """`checkpoints.maxSessionMB`: how much one session's file checkpoints (rewind/store.py) may
    keep; past it the oldest are dropped first. 0 keeps none (rewinding code is then off)."""

    max_session_bytes: int = int(CHECKPOINT_CAP_MB * 1024 * 1024)
    problems: tuple[str, ...] = ()


def checkpoint_settings(settings: Mapping[str, Any]) -> CheckpointSettings:
    """The file checkpoints' settings from merged settings; a bad value gets its default and a problem."""
    read = _SettingsReader(settings)
    megabytes = read.value(
        read.group("checkpoints"),
        "checkpoints.maxSessionMB",
        CHECKPOINT_CAP_MB,
        "a number of megabytes >= 0",
        _number_at_least(0),
    )
    return CheckpointSettings(int(float(megabytes) * 1024 * 1024), tuple(read.problems))


def _recall_settings(read: _SettingsReader, recall: Mapping[str, Any], model: str) -> RecallSettings:
    """`recall.*`; unset, the strategy follows the model, a bad one is "model".

    The bundled local model is tiny and runs one request at a time: picking memories with it
    costs seconds per turn and picks badly, so local sessions default to lexical recall.
    """
    unset = "lexical" if str(model).startswith("local") else "model"
    return RecallSettings(
        strategy=read.value(
            recall,
            "recall.strategy",
            unset,
            "one of " + ", ".join(RECALL_STRATEGIES),
            lambda v: v in RECALL_STRATEGIES,
            bad="model",
        ),
        wait_ms=int(read.value(recall, "recall.waitMs", 0, "a number of milliseconds >= 0", _number_at_least(0))),
        timeout_ms=int(
            read.value(
                recall, "recall.timeoutMs", RECALL_TIMEOUT_MS, "a number of milliseconds >= 0", _number_at_least(0)
            )
        ),
        hold_ms=int(
            read.value(recall, "recall.holdMs", RECALL_HOLD_MS, "a number of milliseconds >= 0", _number_at_least(0))
        ),
        draft_pause_ms=int(
            read.value(
                recall,
                "recall.draftPauseMs",
                RECALL_DRAFT_PAUSE_MS,
                "a number of milliseconds >= 0 (0: off)",
                _number_at_least(0),
            )
        ),
    )


def _compact_settings(read: _SettingsReader, environ: Mapping[str, str]) -> CompactSettings:
    """The compaction settings; the environment variable wins over `autoCompactThreshold`."""
    top = read.settings
    context_window = read.value(
        top, "contextWindow", None, "a whole number of tokens >= 1", _whole_at_least(1), shown="the model's window"
    )
    auto_compact = read.value(top, "autoCompact", True, "true or false", _is_bool)
    threshold = read.value(
        top,
        "autoCompactThreshold",
        None,
        "a fraction of the window from 0 to 1, or a percentage up to 100",
        lambda v: threshold_fraction(v) is not None,
        shown="the default threshold",
    )
    # The environment variable is no setting: an unusable value is ignored without a word, as before.
    fraction = threshold_fraction(environ.get(AUTOCOMPACT_ENV)) or threshold_fraction(threshold)
    return CompactSettings(context_window, auto_compact, fraction)


def threshold_fraction(value: Any) -> float | None:
    """A threshold given as a fraction (0.8) or a percentage (80, "80"); None when unusable."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if number > 1:
        number /= 100
    return number if 0 < number <= 1 else None


class _SettingsReader:
    """Reads settings one key at a time; each bad value becomes its default and one problem."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.settings = settings
        self.problems: list[str] = []

    def group(self, name: str) -> Mapping[str, Any]:
        """The `name` object (`recall`, `memory`); anything else counts as empty, said once."""
        value = self.settings.get(name, {})
        if isinstance(value, Mapping):
            return value
        self.problems.append(settings_problem(name, "an object", value, "the defaults"))
        return {}

    def value(
        self,
        group: Mapping[str, Any],
        dotted: str,
        default: Any,
        what: str,
        valid: Callable[[Any], bool],
        *,
        bad: Any = None,
        shown: str | None = None,
    ) -> Any:
        """`group`'s value for the last part of `dotted` if `valid`, else `bad` (or `default`).

        `bad` is the value a wrong setting falls back to when it differs from the unset
        default; `shown` says the default in words when it is not a value.
        """
        key = dotted.rsplit(".", 1)[-1]
        if key not in group:
            return default
        value = group[key]
        if valid(value):
            return value
        fallback = default if bad is None else bad
        self.problems.append(settings_problem(dotted, what, value, shown or _shown_default(fallback)))
        return fallback


def settings_problem(key: str, what: str, value: Any, default: str) -> str:
    """The one line naming a bad setting: `<key> must be <what> (got <value>); using <default>.`"""
    got = repr(value)
    got = got if len(got) <= 120 else got[:119] + "…"
    return f"{key} must be {what} (got {got}); using {default}."


def _shown_default(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value) if isinstance(value, str) else str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _number_at_least(minimum: float) -> Callable[[Any], bool]:
    return lambda value: _is_number(value) and value >= minimum


def _whole_at_least(minimum: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _positive_number(value: Any) -> bool:
    return _is_number(value) and value > 0


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_log_mode(value: Any) -> bool:
    return isinstance(value, str) and value == "log"


def _is_team_dir(value: Any) -> bool:
    """A usable `memory.teamDir`: a boolean, or a relative folder that does not climb out."""
    if isinstance(value, bool):
        return True
    if not isinstance(value, str) or not value.strip():
        return False
    path = Path(value.strip())
    return not path.is_absolute() and ".." not in path.parts and not value.strip().startswith("~")
