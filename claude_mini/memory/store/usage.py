"""The usage record, usage.json: how often and when recall surfaced each memory.

    {"version": 1, "files": {"deploy-steps.md": {"count": 3, "last_used": 1790000000.0}}}

Forgetting (keep-scores, gc) reads it; recall and restore write it. Every
read-modify-write holds its cross-process lock. A corrupt record never stops
a session: reads fall back to file times, and the next write keeps the bad
bytes as `usage.json.corrupt` and starts again from file times.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypedDict

from claude_mini.base.fileutil import atomic_write, locked
from claude_mini.memory.store.folder import USAGE_FILENAME


class UsageEntry(TypedDict):
    """How often a memory was surfaced by recall, and when last (epoch seconds)."""

    count: int
    last_used: float


def parse_usage_entry(value: Any) -> UsageEntry | None:
    """A usage entry from JSON, or None when it is not `{count: int, last_used: number}`."""
    if not isinstance(value, dict):
        return None
    count, last = value.get("count"), value.get("last_used")
    if not isinstance(count, int) or not isinstance(last, int | float):
        return None
    return {"count": count, "last_used": float(last)}


class UsageRecord:
    """usage.json of one memory folder.

    `file_times` gives the stand-in record (count 0, last used at the file's
    mtime) used when the file is corrupt; `warn` tells the user why, once.
    """

    def __init__(
        self, path: Path, file_times: Callable[[], dict[str, UsageEntry]], warn: Callable[[str], None]
    ) -> None:
        self.path = path
        self._file_times = file_times
        self._warn = warn

    def read(self) -> dict[str, UsageEntry]:
        """filename -> {count, last_used}; a corrupt record reads as file times."""
        data, problem = self._load()
        if problem is None:
            return data
        self._warn(
            f"{USAGE_FILENAME} is unreadable ({problem}); using file times instead until the next recall rewrites it"
        )
        return self._file_times()

    def count_uses(self, names: list[str], when: float) -> None:
        """Count one surfacing of each file at `when`, under the lock."""

        def count(data: dict[str, UsageEntry]) -> None:
            for name in names:
                entry = data.setdefault(name, {"count": 0, "last_used": when})
                entry["count"] += 1
                entry["last_used"] = max(entry["last_used"], when)

        self.edit(count)

    def edit(self, change: Callable[[dict[str, UsageEntry]], None]) -> None:
        """Apply `change` to the record under its lock (a corrupt record is rebuilt first)."""
        with locked(self.path):
            data, problem = self._load()
            if problem is not None:
                data = self._rebuild(problem)
            change(data)
            self._save(data)

    def take_many(self, filenames: Iterable[str]) -> dict[str, UsageEntry]:
        """Remove and return the entries of several files in one write (gc archives many)."""
        with locked(self.path):
            data, problem = self._load()
            if problem is not None:
                return {}
            taken = {f: data.pop(f) for f in filenames if f in data}
            if taken:
                self._save(data)
            return taken

    def _load(self) -> tuple[dict[str, UsageEntry], str | None]:
        try:
            raw = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}, None
        except (OSError, ValueError) as e:
            return {}, f"{type(e).__name__}: {e}"
        files = raw.get("files") if isinstance(raw, dict) else None
        if not isinstance(files, dict):
            return {}, "no 'files' mapping"
        out: dict[str, UsageEntry] = {}
        for name, value in files.items():
            entry = parse_usage_entry(value)
            if entry is None:
                return {}, f"bad entry for {name!r}"
            out[name] = entry
        return out, None

    def _save(self, data: dict[str, UsageEntry]) -> None:
        payload = {"version": 1, "files": dict(sorted(data.items()))}
        atomic_write(self.path, json.dumps(payload, indent=1) + "\n")

    def _rebuild(self, problem: str) -> dict[str, UsageEntry]:
        # Keep the corrupt bytes for a human, then start again from file times.
        backup = self.path.with_name(USAGE_FILENAME + ".corrupt")
        try:
            shutil.copyfile(self.path, backup)
            kept = f"; the old file was kept as {backup.name}"
        except OSError:
            kept = ""
        self._warn(
            f"{USAGE_FILENAME} was unreadable ({problem}); rebuilt it from file times, so use counts restart at 0{kept}"
        )
        return self._file_times()
