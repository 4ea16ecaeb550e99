"""The sandbox package's public surface is exactly these names (STYLE.md: a pinned surface)."""

from __future__ import annotations

import claude_mini.sandbox as sandbox


def test_all_is_exactly_the_public_names() -> None:
    assert sorted(sandbox.__all__) == ["Sandbox", "SandboxSettings", "sandbox_settings"]
    assert all(hasattr(sandbox, name) for name in sandbox.__all__)
