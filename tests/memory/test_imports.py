"""`memory import --from claude-code|codex|gemini`: fixture folders in each tool's format,
converted into topic files with provenance, deduplicated, never overwriting."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
import yaml

from claude_mini.base import paths
from claude_mini.commands.team import import_data, import_lines
from claude_mini.config import load_config
from claude_mini.memory.imports import read_source
from claude_mini.memory.imports.sources import claude_code_folder, gemini_folder
from claude_mini.memory.store import MemoryStore

FIXTURES = Path(__file__).parent / "import_fixtures"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    root.mkdir()
    return root


def install(name: str, dest: Path, project: Path) -> Path:
    """Copy a fixture folder to `dest`, with `{project}` replaced by the project's real path."""
    shutil.copytree(FIXTURES / name, dest)
    for path in dest.rglob("*.md"):
        path.write_text(path.read_text().replace("{project}", os.path.realpath(project)))
    return dest


def claude_code(tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    folder = tmp_path / "claude" / "projects" / paths.path_key(project.resolve()) / "memory"
    return install("claude-code", folder, project)


def store_of(project: Path) -> MemoryStore:
    return MemoryStore(paths.memory_dir(project))


def frontmatter(path: Path) -> dict:
    return yaml.safe_load(path.read_text().split("---\n")[1])


def actions(data: dict) -> list[tuple[str, str]]:
    return [(Path(m["origin"].split("#")[0].split(":")[0]).name, m["action"]) for m in data["memories"]]


# --- Claude Code ---------------------------------------------------------------------------
def test_claude_code_topic_files_and_inline_facts_become_memories(tmp_path, project, monkeypatch):
    folder = claude_code(tmp_path, project, monkeypatch)
    assert claude_code_folder(project.resolve()) == folder
    data = import_data(load_config(project), store_of(project), "claude-code", dry_run=False)
    assert sorted(actions(data)) == [
        ("MEMORY.md", "import"),
        ("feedback_testing.md", "import"),
        ("loose-note.md", "import"),
        ("project_release.md", "import"),
        ("reference_dashboards.md", "import"),
    ]
    store = store_of(project)
    records = {r.name: r for r in store.list()}
    assert records["Run pytest with -x"].type == "feedback"
    assert records["Dashboards"].type == "reference"
    assert records["Local setup"].type == "project"  # no frontmatter: named from its heading
    fm = frontmatter(records["Release train"].path)
    assert fm["source"] == "import:claude-code" and fm["imported_from"] == str(folder / "project_release.md")
    inline = next(r for r in records.values() if "docker compose" in r.description)
    assert frontmatter(inline.path)["imported_from"] == f"{folder / 'MEMORY.md'}:4"
    assert all(r.filename in store.index_text() for r in records.values())
    assert (folder / "feedback_testing.md").read_text().startswith("---\nname: Run pytest")  # untouched
    lines = import_lines(data)
    assert lines[-1].startswith("Imported 5 memories into") and "import:claude-code" in lines[-1]


def test_a_second_import_finds_only_duplicates(tmp_path, project, monkeypatch):
    claude_code(tmp_path, project, monkeypatch)
    config = load_config(project)
    import_data(config, store_of(project), "claude-code", dry_run=False)
    before = sorted(p.name for p in store_of(project).root.iterdir())
    data = import_data(config, store_of(project), "claude-code", dry_run=False)
    assert {m["action"] for m in data["memories"]} == {"duplicate"}
    assert sorted(p.name for p in store_of(project).root.iterdir()) == before


def test_duplicates_of_existing_memories_are_skipped_and_nothing_is_overwritten(tmp_path, project, monkeypatch):
    claude_code(tmp_path, project, monkeypatch)
    store = store_of(project)
    store.write(
        "run-pytest-with-x.md",
        name="Keep this",
        type="project",
        description="An unrelated memory that happens to have the imported one's filename",
        body="KEEP-ME: the staging cluster is in eu-west-1",
    )
    store.write(
        "release-days.md",
        name="Release train",
        type="project",
        description="Releases are cut from main every Thursday at 15:00 UTC by the release captain",
        body="Releases leave on Thursdays at 15:00 UTC; a fix that misses the train waits a week.",
    )
    data = import_data(load_config(project), store, "claude-code", dry_run=False)
    release = next(m for m in data["memories"] if m["origin"].endswith("project_release.md"))
    assert release["action"] == "duplicate" and "release-days.md" in release["why"]
    testing = next(m for m in data["memories"] if m["origin"].endswith("feedback_testing.md"))
    assert testing["action"] == "import" and testing["file"] == "run-pytest-with-x-2.md"
    assert "KEEP-ME" in (store.root / "run-pytest-with-x.md").read_text()


def test_a_memory_holding_a_secret_is_refused_and_the_dry_run_writes_nothing(tmp_path, project, monkeypatch):
    folder = claude_code(tmp_path, project, monkeypatch)
    (folder / "ci.md").write_text(
        "---\nname: CI token\ndescription: How CI reaches GitHub\n"
        f"type: reference\n---\n\nThe CI uses {GITHUB_TOKEN}.\n"
    )
    data = import_data(load_config(project), store_of(project), "claude-code", dry_run=True)
    ci = next(m for m in data["memories"] if m["origin"].endswith("ci.md"))
    assert ci["action"] == "refused" and "github-pat" in ci["why"] and GITHUB_TOKEN not in ci["why"]
    assert not store_of(project).root.exists()
    lines = import_lines(data)
    assert lines[-1].startswith("Dry run: 5 would be imported") and "nothing was written" in lines[-1]
    assert any("ci.md: refused" in line for line in lines)


def test_nothing_to_import_says_where_it_looked(tmp_path, project, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    data = import_data(load_config(project), store_of(project), "claude-code", dry_run=False)
    (line,) = import_lines(data)
    assert line.startswith("Nothing to import: Claude Code's memory for this project (")
    assert line.endswith(") does not exist.")


# --- Codex -----------------------------------------------------------------------------------
def test_codex_blocks_of_this_project_become_one_memory_per_section(tmp_path, project, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    install("codex", tmp_path / "codex" / "memories", project)
    source = read_source("codex", project)
    kinds = [(m.name, m.type) for m in source.memories]
    assert kinds == [
        ("billing service: User preferences", "feedback"),
        ("billing service: Reusable knowledge", "project"),
        ("billing service: Failures and how to do differently", "feedback"),
        ("User profile (from Codex)", "user"),
    ]
    assert source.left_out == 1  # the other project's block
    knowledge = source.memories[1]
    assert "ROUND_HALF_EVEN" in knowledge.body and "storybook" not in knowledge.body
    assert "rollout_summary_files" not in knowledge.body  # task routing is no memory
    data = import_data(load_config(project), store_of(project), "codex", dry_run=False)
    assert [m["action"] for m in data["memories"]] == ["import"] * 4
    assert "1 block(s) about other projects left out" in import_lines(data)[-1]


def test_codex_older_blocks_with_a_yaml_header(tmp_path, project, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    install("codex-legacy", tmp_path / "codex" / "memories", project)
    (memory,) = read_source("codex", project).memories
    assert memory.description.startswith("Notes for Cache warming for the search index")
    assert "make warm-cache" in memory.body


# --- Gemini CLI ------------------------------------------------------------------------------
def gemini(tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, slug: str) -> Path:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "ghome"))
    home = tmp_path / "ghome" / ".gemini"
    home.mkdir(parents=True)
    shutil.copy(FIXTURES / "gemini" / "GEMINI.md", home / "GEMINI.md")
    install("gemini/memory", home / "tmp" / slug / "memory", project)
    return home


def test_gemini_project_folder_and_added_memories(tmp_path, project, monkeypatch):
    home = gemini(tmp_path, project, monkeypatch, "app")
    (home / "projects.json").write_text(f'{{"projects": {{"{os.path.realpath(project)}": "app"}}}}')
    source = read_source("gemini", project)
    assert source.folder == home / "tmp" / "app" / "memory"
    found = [(m.type, m.body) for m in source.memories]
    assert ("project", "The API server listens on port 8081 in development") in found
    assert any(t == "project" and b.startswith("# Deploys") for t, b in found)
    assert ("user", "I prefer tabs over spaces in Go files") in found
    assert not any("not a memory" in b for _, b in found)  # skills/ are no memories
    assert len(found) == 4
    data = import_data(load_config(project), store_of(project), "gemini", dry_run=False)
    assert [m["action"] for m in data["memories"]] == ["import"] * 4


def test_gemini_folder_from_the_project_root_marker_or_the_old_hash(tmp_path, project, monkeypatch):
    home = gemini(tmp_path, project, monkeypatch, "app-2")
    (home / "tmp" / "app-2" / ".project_root").write_text(os.path.realpath(project))
    assert gemini_folder(project) == home / "tmp" / "app-2" / "memory"
    (home / "tmp" / "app-2" / ".project_root").unlink()
    digest = hashlib.sha256(os.path.realpath(project).encode()).hexdigest()
    assert gemini_folder(project) == home / "tmp" / digest / "memory"
