"""`claude-mini memory ...` (in-process through typer) and the REPL's `/memory`."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from claude_mini.base import paths
from claude_mini.base.text import visible_controls
from claude_mini.memory.store import MemoryStore, derive_memory
from claude_mini.subcommands.app import sub_app
from claude_mini.ui.memory_commands import split_add_options

DESC = "How to deploy the billing service to staging with make deploy-billing"


@pytest.fixture
def cli(repo: Path, monkeypatch: pytest.MonkeyPatch):
    """`cli("memory", "list")` -> click Result (stdout, stderr, exit_code), run in the repo."""
    monkeypatch.chdir(repo)
    monkeypatch.delenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(sub_app, list(args))


@pytest.fixture
def store(repo: Path) -> MemoryStore:
    return MemoryStore(paths.memory_dir(repo))


def editor_appending(line: str) -> str:
    """An $EDITOR command that appends `line` to the file it is given."""
    script = f"import sys; open(sys.argv[1], 'a').write({line!r} + '\\n')"
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}"


# --- list / show / path ----------------------------------------------------------------
def test_list_shows_instruction_files_and_memories(cli, store, repo, isolated_env):
    (repo / "CLAUDE.md").write_text("Run make test.\n")
    store.write("deploy.md", name="Deploy", description=DESC, type="project", body="Run it.")
    (store.root / "broken.md").write_text("no frontmatter here, just a note\n")
    result = cli("memory", "list")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"Memory folder: {store.root} (auto memory on)" in out
    assert "project" in out and "CLAUDE.md" in out
    assert f"deploy.md: {DESC}" in out and "just now" in out
    assert "broken.md: no frontmatter here, just a note  [needs attention" in out
    data = json.loads(cli("memory", "list", "--json").stdout)
    assert [f["kind"] for f in data["instruction_files"]] == ["project"]
    entry = next(m for m in data["memories"] if m["file"] == "deploy.md")
    assert entry["type"] == "project" and entry["description"] == DESC
    assert entry["size"] == (store.root / "deploy.md").stat().st_size and entry["age"] == "just now"
    assert cli("memory").stdout == out  # no action: list


@pytest.mark.parametrize("hostile", ["\x1b]52;c;cm0gLXJmIH4=\x07", "\x1b[2K\rok", "\u202eexe.txt", "\x9b31m"])
def test_list_show_and_context_draw_no_terminal_escapes(cli, store, repo, hostile):
    """Memories are written by a model and CLAUDE.md by the repository: neither drives the terminal."""
    (repo / "CLAUDE.md").write_text(f"Build with make {hostile}\n")
    store.write(
        "deploy.md", name="Deploy", description=f"Deploy notes {hostile}", type="project", body=f"Run it {hostile}"
    )
    for args in (("memory", "list"), ("memory", "show", "Deploy"), ("context",)):
        out = cli(*args).stdout
        assert not any(ch in out for ch in "\x1b\x07\r\u202e\x9b"), (args, out)
    assert f"Run it {visible_controls(hostile)}" in cli("memory", "show", "Deploy").stdout


def test_show_and_path(cli, store):
    store.write("deploy.md", name="Deploy", description=DESC, type="project", body="BODY-TEXT")
    shown = cli("memory", "show", "Deploy")
    assert shown.exit_code == 0 and "BODY-TEXT" in shown.stdout and "name: Deploy" in shown.stdout
    assert "- [Deploy](deploy.md)" in cli("memory", "show", "MEMORY.md").stdout
    assert cli("memory", "path").stdout.strip() == str(store.root)


def test_unknown_memory_is_one_line_and_exit_1(cli):
    result = cli("memory", "show", "nope")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "no memory named 'nope'" in result.stderr
    assert cli("memory", "forget", "nope").exit_code == 1


# --- add / forget --------------------------------------------------------------------
def test_add_saves_at_once_with_derived_name_and_index_line(cli, store):
    result = cli(
        "memory",
        "add",
        "--type",
        "feedback",
        "--why",
        "it broke prod",
        "--how",
        "every deploy",
        "Never skip the billing integration tests on CI.",
    )
    assert result.exit_code == 0, result.output
    path = store.root / "never-skip-the-billing-integration-tests.md"
    record = store.read(path.name)
    assert record.type == "feedback" and record.name == "Never skip the billing integration tests"
    assert record.description == "Never skip the billing integration tests on CI."
    assert "**Why:** it broke prod" in record.body and "**How to apply:** every deploy" in record.body
    assert store.index_entries()[0].filename == path.name
    assert f"Saved {path.name} (feedback)" in result.stdout and "Tip" not in result.stdout


def test_add_gives_tips_and_refuses_bad_input(cli, store):
    tip = cli("memory", "add", "use tabs")
    assert tip.exit_code == 0 and "description is too short" in tip.stdout and "--why" in tip.stdout
    again = cli("memory", "add", "use tabs")
    assert "use-tabs-2.md" in again.stdout  # a second memory, never an overwrite
    bad = cli("memory", "add", "--type", "opinion", "something to remember here")
    assert bad.exit_code == 2 and "unknown type 'opinion'" in bad.stderr
    assert cli("memory", "add").exit_code == 2


def test_forget_archives_and_drops_the_index_line(cli, store):
    store.write("deploy.md", name="Deploy", description=DESC, type="project", body="x")
    result = cli("memory", "forget", "deploy")
    assert result.exit_code == 0 and "Archived deploy.md to archive/deploy.md" in result.stdout
    assert (store.root / "archive" / "deploy.md").exists()
    assert store.index_entries() == [] and not (store.root / "deploy.md").exists()


def test_forgotten_memory_comes_back_with_restore(cli, store):
    store.write("deploy.md", name="Deploy", description=DESC, type="project", body="x")
    forgot = cli("memory", "forget", "deploy.md")
    assert "`claude-mini memory restore deploy.md` brings it back" in forgot.stdout
    assert cli("memory", "restore", "deploy.md").exit_code == 0
    assert (store.root / "deploy.md").exists() and store.index_entries()[0].filename == "deploy.md"


def test_derive_memory_name_and_description():
    assert derive_memory("The staging DB is at db.staging:5432 and needs the VPN") == (
        "The staging DB is at db.staging:5432",
        "The staging DB is at db.staging:5432 and needs the VPN",
    )
    name, desc = derive_memory("word " * 60)
    assert name == "Word word word word word word word" and len(desc) <= 150 and desc.endswith("…")


# --- edit --------------------------------------------------------------------------
def test_edit_runs_the_editor_on_the_file(cli, store, monkeypatch):
    store.write("deploy.md", name="Deploy", description=DESC, type="project", body="x")
    monkeypatch.setenv("VISUAL", editor_appending("EDITED-LINE"))
    result = cli("memory", "edit", "deploy.md")
    assert result.exit_code == 0, result.output
    assert "EDITED-LINE" in (store.root / "deploy.md").read_text()
    monkeypatch.setenv("VISUAL", f"{shlex.quote(sys.executable)} -c 'raise SystemExit(3)'")
    failed = cli("memory", "edit", "deploy.md")
    assert failed.exit_code == 1 and "exited with status 3" in failed.stderr


# --- on / off --------------------------------------------------------------------------
def test_on_off_write_the_user_settings_and_keep_other_keys(cli, isolated_env, monkeypatch):
    settings = isolated_env.home / "settings.json"
    settings.write_text(json.dumps({"model": "claude-opus-4-1", "recall": {"strategy": "lexical"}}))
    result = cli("memory", "off")
    assert result.exit_code == 0 and "Auto memory off" in result.stdout
    assert json.loads(settings.read_text()) == {
        "model": "claude-opus-4-1",
        "recall": {"strategy": "lexical"},
        "autoMemoryEnabled": False,
    }
    assert "(auto memory off)" in cli("memory", "list").stdout
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    on = cli("memory", "on")
    assert json.loads(settings.read_text())["autoMemoryEnabled"] is True
    assert "CLAUDE_MINI_DISABLE_AUTO_MEMORY=1 is set in the environment and wins" in on.stdout


def test_on_names_a_project_setting_that_wins(cli, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"autoMemoryEnabled": false}')
    result = cli("memory", "on")
    assert "settings.json sets autoMemoryEnabled to false, which wins" in result.stdout


def test_broken_user_settings_are_left_alone(cli, isolated_env):
    settings = isolated_env.home / "settings.json"
    settings.write_text("{not json")
    result = cli("memory", "off")
    assert result.exit_code == 1 and "is not valid JSON" in result.stderr
    assert settings.read_text() == "{not json"


# --- doctor --------------------------------------------------------------------------
def test_doctor_reports_then_fixes(cli, store):
    store.write("deploy.md", name="Deploy", description=DESC, type="reference", body="x")
    (store.root / "loose.md").write_text(
        "---\nname: Loose\ndescription: Where the Grafana dashboards for billing live\ntype: reference\n---\nbody\n"
    )
    store.update_index(add_or_replace={"gone.md": "- [Gone](gone.md) — missing"})
    report = cli("memory", "doctor")
    assert report.exit_code == 1
    assert "dangling_index_line: gone.md" in report.stdout
    assert "missing_from_index: loose.md" in report.stdout
    assert "2 fixable with `claude-mini memory doctor --fix`" in report.stdout
    fixed = json.loads(cli("memory", "doctor", "--fix", "--json").stdout)
    assert {f["file"] for f in fixed["fixed"]} == {"gone.md", "loose.md"} and fixed["ok"]
    clean = cli("memory", "doctor")
    assert clean.exit_code == 0 and "No problems found" in clean.stdout


# --- the REPL's /memory -----------------------------------------------------------------
def test_slash_memory_add_list_and_forget(slash):
    out = slash.run(
        "/memory add --type feedback --why \"it hid a bug\" --how 'on CI' don't mock the database in integration tests"
    )
    assert "Saved don-t-mock-the-database-in-integration-tests.md (feedback)" in out
    store = slash.runtime.store
    record = store.read("don-t-mock-the-database-in-integration-tests.md")
    assert record.body.startswith("don't mock the database") and "**Why:** it hid a bug" in record.body
    assert "don-t-mock-the-database" in slash.run("/memory")
    assert "Archived" in slash.run("/memory forget don-t-mock-the-database-in-integration-tests")
    assert "unknown /memory action 'frobnicate'" in slash.run("/memory frobnicate")
    assert "needs a memory name" in slash.run("/memory show")


def test_slash_memory_edit_rebuilds_the_prompt(slash, monkeypatch):
    rt = slash.runtime
    rt.store.write("deploy.md", name="Deploy", description=DESC, type="project", body="x")
    monkeypatch.setenv("VISUAL", editor_appending("- [Fresh](fresh.md) — FRESH-INDEX-LINE"))
    assert "FRESH-INDEX-LINE" not in "".join(rt.agent.system)
    out = slash.run("/memory edit MEMORY.md")
    assert "system prompt was rebuilt" in out
    assert "FRESH-INDEX-LINE" in "".join(rt.agent.system)


def test_slash_memory_off_applies_to_the_session(slash, isolated_env, monkeypatch):
    monkeypatch.delenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", raising=False)
    rt = slash.runtime
    assert "# Memory" in "".join(rt.agent.system)
    out = slash.run("/memory off")
    assert "This session: auto memory off" in out and not rt.config.auto_memory
    assert "# Memory" not in "".join(rt.agent.system)
    assert json.loads((isolated_env.home / "settings.json").read_text()) == {"autoMemoryEnabled": False}
    slash.run("/memory on")
    assert rt.config.auto_memory and "# Memory" in "".join(rt.agent.system)


def test_slash_memory_recall_summary(slash):
    out = slash.run("/memory recall")
    assert out.startswith("Recalled memories (strategy model): 0 in the context, 0 of 61,440 bytes")


def test_split_add_options_values_run_to_the_next_option_without_quoting():
    assert split_add_options("don't mock the db --why it hid a bug --how on CI --type feedback") == (
        {"why": "it hid a bug", "how": "on CI", "type": "feedback"},
        "don't mock the db",
    )
    assert split_add_options("-t user I'm a backend dev") == ({"type": "user"}, "I'm a backend dev")
    assert split_add_options('--why="because" x') == ({"why": "because"}, "x")
    assert split_add_options("--type-checks are slow") == ({}, "--type-checks are slow")


def test_slash_memory_add_without_text_says_where_the_text_goes(slash):
    out = slash.run("/memory add --why it broke --how on CI", width=400)
    assert "put the memory text first: /memory add TEXT --why WHY --how HOW" in out
    assert not [p for p in slash.runtime.store.root.glob("*.md") if p.name != "MEMORY.md"]


def test_memory_cli_does_not_import_the_sdk(repo):
    import subprocess

    code = "import sys; from claude_mini.subcommands.app import sub_app; print('anthropic' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, env={**os.environ}, check=True
    )
    assert out.stdout.strip() == "False"


def test_slash_memory_add_supersedes_and_doctor_lists_stale(slash):
    first = slash.run("/memory add Billing deploys run make deploy-billing from main", width=400)
    old = first.split()[1]
    out = slash.run(f"/memory add Billing deploys run scripts/ship.sh from release --supersedes {old}", width=400)
    assert f"Marked {old} as superseded by " in out
    doctor = slash.run("/memory doctor", width=400)
    assert "mentions scripts/ship.sh, which no longer exists" in doctor
    assert (
        slash.run("/memory add Another fact about the release train --supersedes nope.md", width=400).count(
            "Note: --supersedes nope.md was ignored"
        )
        == 1
    )
