"""NotebookEdit is an edit as the rules see it (Claude Code's `Edit(...)` rules cover it), and the
folders `additionalDirectories` adds are edited unasked in acceptEdits."""

from __future__ import annotations

from claude_mini.permissions import Allow, Ask, Deny, PermissionPolicy


def policy(tmp_path, perms, mode="default"):
    return PermissionPolicy.from_layers([("user", perms)], cwd=tmp_path, project_root=tmp_path, mode=mode)


def test_edit_rules_govern_notebook_edit(tmp_path):
    p = policy(tmp_path, {"allow": ["Edit(notebooks/**)"], "deny": ["Edit(secret.ipynb)"]})
    assert isinstance(p.can_use_tool("NotebookEdit", {"notebook_path": "notebooks/a.ipynb"}), Allow)
    assert isinstance(p.can_use_tool("NotebookEdit", {"notebook_path": "secret.ipynb"}), Deny)
    assert isinstance(p.can_use_tool("NotebookEdit", {"notebook_path": "other.ipynb"}), Ask)
    assert p.suggest_rule("NotebookEdit", {"notebook_path": "other.ipynb"}) == "Edit(./**)"


def test_plan_mode_refuses_notebook_edit(tmp_path):
    p = policy(tmp_path, {}, mode="plan")
    assert isinstance(p.can_use_tool("NotebookEdit", {"notebook_path": "a.ipynb"}), Deny)


def test_additional_directories_in_accept_edits(tmp_path):
    project, other = tmp_path / "p", tmp_path / "o"
    project.mkdir()
    other.mkdir()
    p = PermissionPolicy.from_layers(
        [("user", {"additionalDirectories": [str(other)]})],
        cwd=project,
        project_root=project,
        mode="acceptEdits",
    )
    assert isinstance(p.can_use_tool("NotebookEdit", {"notebook_path": str(other / "a.ipynb")}), Allow)
    assert isinstance(p.can_use_tool("Write", {"file_path": str(tmp_path / "elsewhere.txt")}), Ask)
