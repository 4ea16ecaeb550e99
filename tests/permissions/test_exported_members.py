"""The permissions package's public surface is exactly these names (STYLE.md: a pinned surface)."""

from __future__ import annotations

import claude_mini.permissions as permissions

PUBLIC = {
    "EDIT_TOOLS",
    "MODES",
    "READ_TOOLS",
    "Allow",
    "Ask",
    "Deny",
    "Decision",
    "ToolPolicy",
    "RuleError",
    "CommandPattern",
    "PathPattern",
    "Rule",
    "parse_rule",
    "PermissionPolicy",
    "ExtractionPolicy",
    "Guard",
    "PolicyChain",
}


def test_all_is_exactly_the_public_names() -> None:
    assert set(permissions.__all__) == PUBLIC
    assert len(permissions.__all__) == len(PUBLIC)  # no name twice


def test_every_public_name_is_importable_from_the_package() -> None:
    missing = [name for name in permissions.__all__ if not hasattr(permissions, name)]
    assert missing == []


def test_no_other_public_name_is_defined_at_the_top() -> None:
    extra = {name for name in vars(permissions) if not name.startswith("_")} - PUBLIC
    assert extra <= {
        "decisions",
        "rules",
        "policy",
        "bash",
        "request",
        "secret_reads",
        "protected",
        "memory_folder",
        "extraction",
        "chain",
        "annotations",
    }
