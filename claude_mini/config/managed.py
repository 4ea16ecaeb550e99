"""The managed settings file, which fails closed, and the keys a `permissions` object may have.

A managed file that exists but cannot be read, parsed, has wrong types or an unknown
`permissions` key (a misspelt `deny`) sets `Config.managed_error`; `runtime.make_policy`
then denies every tool. In the other layers an unknown key is one warning.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from claude_mini.base.safe_read import Unreadable, read_text_file
from claude_mini.config.json_text import parse_json
from claude_mini.config.layers import SETTINGS_MAX_BYTES, SettingsLayer
from claude_mini.config.untrusted import UNTRUSTED_SOURCES, shown_value


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
    from claude_mini.permissions import MODES  # startup: kept off the first paint

    mode = perms.get("defaultMode")
    if mode is not None and mode not in MODES:
        return f'has "permissions.defaultMode" {json.dumps(mode)}, not one of {", ".join(MODES)}'
    bypass = perms.get("disableBypassPermissionsMode", "disable")
    if bypass != "disable":  # any other value (null too) would silently leave bypass allowed
        shown = shown_value(json.dumps(bypass))
        return f'has "permissions.disableBypassPermissionsMode" {shown}; the only value is "disable"'
    return None
