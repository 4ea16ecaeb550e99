"""Helpers of the permission tests: a policy from settings layers, and tool inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_mini.permissions import PermissionPolicy


def policy(root: Path, *layers: Any, mode: str | None = None) -> PermissionPolicy:
    """A policy for a project at `root` from `(source, permissions)` layers, lowest first."""
    return PermissionPolicy.from_layers(list(layers), cwd=root, project_root=root, mode=mode)


def bash(cmd: str) -> dict[str, str]:
    return {"command": cmd}


def edit(path: str | Path) -> dict[str, str]:
    return {"file_path": str(path), "old_string": "a", "new_string": "b"}
