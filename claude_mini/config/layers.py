"""The settings files, in precedence order, each read into one `SettingsLayer`, and how layers merge."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_mini.base import paths
from claude_mini.base.safe_read import Unreadable, read_text_file
from claude_mini.config.json_text import parse_json

SETTINGS_MAX_BYTES = 2_000_000  # a settings file or .mcp.json larger than this is refused, not read


@dataclass
class SettingsLayer:
    """One settings source: its name, the file it came from (if any) and its data."""

    source: str
    path: Path | None
    data: dict[str, Any]


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
