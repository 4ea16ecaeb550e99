"""End to end: Layer 1 instruction files reach the model, in order, and path-scoped rules attach lazily."""

from __future__ import annotations

import json
import os

from tests.fake_anthropic import Reply


def _build_tree(repo, home):
    (home / "CLAUDE.md").write_text("USER-LEVEL: prefer short answers.\n")
    (repo / "AGENTS.md").write_text("AGENTS-TEXT: run make test.\n")
    (repo / "CLAUDE.md").write_text("@AGENTS.md\n\n<!-- hidden comment -->\nPROJECT-TEXT\n")
    (repo / "CLAUDE.local.md").write_text("LOCAL-TEXT\n")
    rules = repo / "shared-rules"
    (rules / "backend").mkdir(parents=True)
    (rules / "backend" / "api.md").write_text("UNCONDITIONAL-RULE\n")
    (rules / "web.md").write_text('---\npaths: "web/**/*.{ts,tsx}"\n---\nWEB-RULE: use strict TS.\n')
    (rules / "py.md").write_text("---\npaths:\n  - '**/*.py'\n---\nPY-RULE: 4 spaces.\n")
    (repo / ".claude").mkdir()
    os.symlink(rules, repo / ".claude" / "rules")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "CLAUDE.md").write_text("NESTED-PKG-TEXT\n")
    (repo / "pkg" / "mod.py").write_text("x = 1\n")


def test_instruction_files_and_lazy_rules_reach_the_model(run_cli, fake_server, repo, isolated_env):
    _build_tree(repo, isolated_env.home)
    fake_server.queue(
        Reply.tool("Read", {"file_path": "pkg/mod.py"}),
        Reply.tool("Write", {"file_path": "web/src/App.tsx", "content": "export {}\n"}),
        Reply.text("done"),
    )
    result = run_cli("-p", "go", "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    first, second, third = fake_server.requests_for("main")
    system = "\n".join(block["text"] for block in first.body["system"])
    order = ["USER-LEVEL", "PROJECT-TEXT", "AGENTS-TEXT", "UNCONDITIONAL-RULE", "LOCAL-TEXT"]
    positions = [system.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "hidden comment" not in system
    assert f"Contents of {rules_real(repo)}/backend/api.md (rule):" in system
    for lazy in ("WEB-RULE", "PY-RULE", "NESTED-PKG-TEXT"):
        assert lazy not in system
    after_read = json.dumps(second.body["messages"][-1])
    assert "PY-RULE" in after_read and "NESTED-PKG-TEXT" in after_read and "<system-reminder>" in after_read
    assert "WEB-RULE" not in after_read
    after_write = json.dumps(third.body["messages"][-1])
    assert "WEB-RULE" in after_write and "PY-RULE" not in after_write
    assert second.body["system"] == first.body["system"] == third.body["system"]


def rules_real(repo):
    return os.path.realpath(repo / "shared-rules")


def test_context_json_lists_what_was_loaded(run_cli, repo, isolated_env):
    _build_tree(repo, isolated_env.home)
    (repo / "CLAUDE.local.md").write_text("@missing/file.md\n@CLAUDE.local.md\n")
    result = run_cli("context", "--json", "--lint")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    loaded = [(os.path.basename(f["path"]), f["kind"]) for f in data["files"] if f["status"] == "loaded"]
    assert loaded[:3] == [("CLAUDE.md", "user"), ("CLAUDE.md", "project"), ("AGENTS.md", "imported")]
    skipped = {os.path.basename(f["path"]): f["reason"] for f in data["files"] if f["status"] == "skipped"}
    assert "file.md" in skipped
    globs = {os.path.basename(r["path"]): r["globs"] for r in data["conditional_rules"]}
    assert globs == {"web.md": ["web/**/*.{ts,tsx}"], "py.md": ["**/*.py"]}
    assert any("web.md" in finding for finding in data["lint"])  # no web/ files exist yet
    text = run_cli("context")
    assert "py.md" in text.stdout and "waiting" in text.stdout
