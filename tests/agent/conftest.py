"""Fixtures of the agent tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project folder with `src/` and `secrets/`."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "secrets").mkdir()
    return project
