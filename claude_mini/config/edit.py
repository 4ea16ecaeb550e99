"""Changing a settings file on disk (a rule added by "don't ask again" or /permissions, or removed),
with this session's settings following it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.base.fileutil import atomic_write
from claude_mini.base.safe_read import Unreadable, read_text_file
from claude_mini.config.json_text import parse_json
from claude_mini.config.layers import SETTINGS_MAX_BYTES, SettingsLayer, settings_files
from claude_mini.config.loader import merge_layers

if TYPE_CHECKING:
    from claude_mini.config.loader import Config


class SettingsEditError(Exception):
    """A settings file could not be changed; the message says why and that it was left as it was."""


PERMISSION_LISTS = ("allow", "ask", "deny")


def remove_permission_rule(config: Config, path: Path, rule: str) -> list[str]:
    """Delete `rule` from `permissions.allow/ask/deny` of the settings file `path`, as Claude
    Code's /permissions does; returns the lists it was in. The file is rewritten atomically
    with its other keys kept (its formatting is not), and this session's settings follow it;
    the typed fields the session may have changed since it started (the model of /model or
    of the offline fallback) are left alone."""
    target = path.resolve()  # a linked settings file stays linked
    data = read_for_edit(target)
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
    merge_layers(config)
    return lists


def add_permission_rule(config: Config, source: str, path: Path, kind: str, rule: str) -> bool:
    """Add `rule` to `permissions.<kind>` of the settings file `path` (created with its folder if
    missing); returns whether the file was created. Written atomically with its other keys kept;
    a rule already there is not added twice; this session's settings follow the file."""
    target = path.resolve()  # a linked settings file stays linked
    created = not target.exists()
    data = {} if created else read_for_edit(target)
    perms = data.setdefault("permissions", {})
    if not isinstance(perms, dict) or not isinstance(perms.setdefault(kind, []), list):
        raise SettingsEditError(f'{path}: "permissions.{kind}" is not a list; it was left unchanged: fix it first')
    if rule not in _stripped(perms[kind]):
        perms[kind].append(rule)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise SettingsEditError(f"cannot write {path}: {exc.strerror or exc}; it was left unchanged") from None
    _follow(config, source, path, data)
    return created


def _follow(config: Config, source: str, path: Path, data: dict[str, Any]) -> None:
    """This session's settings as they are now on disk: the file's layer replaced, or put in its
    place in the precedence order when the file was missing or empty at start."""
    for layer in config.raw_layers:
        if layer.path == path:
            layer.data = data
            break
    else:
        rank = [name for name, _ in settings_files(config.cwd, config.project_root)]
        rank.insert(rank.index("managed"), "flags")
        at = next(
            (i for i, layer in enumerate(config.raw_layers) if rank.index(layer.source) > rank.index(source)), None
        )
        config.raw_layers.insert(len(config.raw_layers) if at is None else at, SettingsLayer(source, path, data))
    merge_layers(config)


def _stripped(texts: list[Any]) -> list[str]:
    return [text.strip() for text in texts if isinstance(text, str)]


def read_for_edit(path: Path) -> dict[str, Any]:
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
