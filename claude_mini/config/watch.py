"""Settings files edited during a session: noticed by a stat at each turn start, re-read, merged.

`SettingsWatch(config)` remembers each watched file's (mtime, size); `changes()` re-reads those
that differ into `config.raw_layers` (a new file becomes a layer in its place, a deleted one
leaves), re-merges the settings (trust filter included) and says which top-level keys changed
in which file. The runtime applies them (permissions, hooks, MCP servers) and says so in one line.
A stat per file per turn costs microseconds; no watcher thread is needed.

Managed settings are not re-read: an administrator's change applies at the next start, as a
broken managed file must lock every tool from the start, not from a turn in the middle.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_mini.config.layers import SettingsLayer, read_settings_file, settings_files
from claude_mini.config.loader import Config, merge_layers


@dataclass(frozen=True)
class SettingsChange:
    """One settings file that changed: its path and the top-level keys whose values differ."""

    path: Path
    source: str
    keys: tuple[str, ...]
    before: dict[str, Any] = field(default_factory=dict, repr=False)
    after: dict[str, Any] = field(default_factory=dict, repr=False)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class SettingsWatch:
    """The session's user, project and local settings files (and Claude Code's user file), by stat."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.stamps = {path: _stamp(path) for _, path in self.files()}

    def files(self) -> list[tuple[str, Path]]:
        """(source, path) of every watched file, lowest precedence first."""
        cfg = self.config
        out = [(source, path) for source, path in settings_files(cfg.cwd, cfg.project_root) if source != "managed"]
        if cfg.claude_code_home is not None:
            out.insert(0, ("user", cfg.claude_code_home / "settings.json"))
        return out

    def changes(self) -> list[SettingsChange]:
        """Re-read the files whose stat changed since the last call; the config follows them."""
        found = []
        for source, path in self.files():
            stamp = _stamp(path)
            if stamp == self.stamps.get(path):
                continue
            self.stamps[path] = stamp
            before = self._layer_data(path)
            after = read_settings_file(path, self.config.warnings) if stamp is not None else {}
            keys = tuple(sorted(k for k in {*before, *after} if before.get(k) != after.get(k)))
            if keys:
                self._replace_layer(source, path, after)
                found.append(SettingsChange(path, source, keys, before, after))
        if found:
            merge_layers(self.config)
        return found

    def _layer_data(self, path: Path) -> dict[str, Any]:
        return next((layer.data for layer in self.config.raw_layers if layer.path == path), {})

    def _replace_layer(self, source: str, path: Path, data: dict[str, Any]) -> None:
        """`path`'s raw layer gets `data`: replaced, inserted in precedence order, or removed when empty."""
        layers = self.config.raw_layers
        at = next((i for i, layer in enumerate(layers) if layer.path == path), None)
        if at is not None:
            if data:
                layers[at] = SettingsLayer(source, path, data)
            else:
                del layers[at]
            return
        if data:  # before the first layer of a file watched later, or of the flags or managed settings
            order = [watched for _, watched in self.files()]
            later = order[order.index(path) + 1 :]
            at = next(
                (i for i, layer in enumerate(layers) if layer.path in later or layer.source in ("flags", "managed")),
                len(layers),
            )
            layers.insert(at, SettingsLayer(source, path, data))
