"""Fixtures of the memory tests: an injected clock and a memory folder that reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mini.memory.store import MemoryStore
from tests.memory.memclock import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> MemoryStore:
    return MemoryStore(tmp_path / "memory", clock=clock)
