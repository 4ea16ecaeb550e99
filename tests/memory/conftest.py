"""Fixtures of the memory tests: an injected clock and a memory folder that reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mini.memory.recall import embed
from claude_mini.memory.store import MemoryStore
from tests.memory.memclock import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> MemoryStore:
    return MemoryStore(tmp_path / "memory", clock=clock)


@pytest.fixture(autouse=True, scope="session")
def embedding_model_loaded() -> None:
    """Loaded once per worker, as in a session past its first turn: a turn's local pass ranks by
    BM25 alone while the model loads, and the fake answers a turn at once, so without this a
    test's ranking would depend on how fast the worker loaded it (the cold first turn is timed
    in scripts/bench_recall.py)."""
    embed.embedder()
