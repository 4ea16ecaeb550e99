"""`checkpoints.maxSessionMB`: what the file checkpoints of /rewind may keep, validated."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from claude_mini.config.validate import SettingsReader, number_at_least

CHECKPOINT_CAP_MB = 50.0  # what one session's file checkpoints may take on disk


@dataclass(frozen=True)
class CheckpointSettings:
    """`checkpoints.maxSessionMB`: how much one session's file checkpoints (rewind/store.py) may
    keep; past it the oldest are dropped first. 0 keeps none (rewinding code is then off)."""

    max_session_bytes: int = int(CHECKPOINT_CAP_MB * 1024 * 1024)
    problems: tuple[str, ...] = ()


def checkpoint_settings(settings: Mapping[str, Any]) -> CheckpointSettings:
    """The file checkpoints' settings from merged settings; a bad value gets its default and a problem."""
    read = SettingsReader(settings)
    megabytes = read.value(
        read.group("checkpoints"),
        "checkpoints.maxSessionMB",
        CHECKPOINT_CAP_MB,
        "a number of megabytes >= 0",
        number_at_least(0),
    )
    return CheckpointSettings(int(float(megabytes) * 1024 * 1024), tuple(read.problems))
