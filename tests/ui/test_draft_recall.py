"""The REPL's recall while typing (ui/draft_recall.py) before the runtime exists."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
from prompt_toolkit.buffer import Buffer

from claude_mini.ui.draft_recall import DraftRecall


def test_enter_before_the_runtime_is_built_imports_no_memory_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader thread imports the memory layers while it builds the runtime; the main thread
    importing them at the same moment deadlocked the two on the package's import cycles."""
    monkeypatch.setitem(sys.modules, "claude_mini.memory.recall", None)  # an import here raises
    loader = SimpleNamespace(peek=lambda: None)
    draft = DraftRecall(loader, Buffer())
    draft.settle("remember this line")  # Enter: no runtime yet, so nothing to settle
    assert sys.modules["claude_mini.memory.recall"] is None
