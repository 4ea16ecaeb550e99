"""End to end: the team tier over git, through the real CLI and the fake server.

Two clones of one repository (a local bare remote) stand for two people, each with their
own home folder: what A promotes and pushes reaches B after `git pull`, joins B's prompt and
is recalled in B's session. Concurrent additions on two branches merge; a merge that still
conflicts is repaired by `memory doctor --fix`; secrets and personal data are refused;
an untrusted clone writes nothing to its team folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from claude_mini.base import paths
from claude_mini.memory.store import format_memory
from tests.e2e.conftest import trust_folder
from tests.fake_anthropic import Reply

STAGING = "The staging database is reset every Monday at 06:00 UTC, so never keep test data there"
STAGING_FILE = "the-staging-database-is-reset-every-monday.md"
QUESTION = "when is the staging database reset? I want to keep my fixtures there"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def clone(remote: Path, dest: Path, name: str, email: str) -> Path:
    git(remote.parent, "clone", "-q", str(remote), str(dest))
    git(dest, "config", "user.name", name)
    git(dest, "config", "user.email", email)
    return dest


@pytest.fixture
def people(tmp_path: Path, isolated_env) -> dict[str, tuple[Path, dict[str, str]]]:
    """A and B: a clone each of one bare remote, and their own home folder (both trusted)."""
    remote = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    seed = clone(remote, tmp_path / "seed", "Seed", "seed@example.com")
    (seed / "README.md").write_text("# billing\n")
    git(seed, "add", ".")
    git(seed, "commit", "-qm", "init")
    git(seed, "push", "-q", "origin", "HEAD")
    out = {}
    for who, name in (("a", "Ada Lovelace"), ("b", "Bo Chen")):
        home = tmp_path / f"home-{who}"
        home.mkdir()
        folder = clone(remote, tmp_path / who, name, f"{who}@example.com")
        trust_folder(home, folder)
        out[who] = (folder, {"CLAUDE_MINI_HOME": str(home)})
    return out


def promote_and_commit(run_cli, folder: Path, env: dict, text: str) -> str:
    """`memory add TEXT`, `memory promote` it, commit the team folder; the file's name."""
    added = run_cli(
        "memory",
        "add",
        text,
        "--type",
        "project",
        "--why",
        "ops said so",
        "--how",
        "before using staging",
        cwd=folder,
        env=env,
    )
    assert added.returncode == 0, added.stderr
    filename = added.stdout.split()[1]  # "Saved <file> (project): ..."
    promoted = run_cli("memory", "promote", filename.removesuffix(".md"), cwd=folder, env=env)
    assert promoted.returncode == 0, promoted.stderr
    assert promoted.stdout.startswith(f"Promoted {filename} to the team memory: .claude/memory/")
    git(folder, "add", "-A", ".claude")
    git(folder, "commit", "-qm", f"Team memory: {filename.removesuffix('.md')}")
    return filename


def indexed(index: Path) -> list[str]:
    return [line.split("](")[1].split(")")[0] for line in index.read_text().splitlines()]


def test_a_promoted_memory_reaches_the_other_clone_and_is_recalled(run_cli, fake_server, people):
    (a, env_a), (b, env_b) = people["a"], people["b"]
    assert promote_and_commit(run_cli, a, env_a, STAGING) == STAGING_FILE
    git(a, "push", "-q", "origin", "HEAD")
    git(b, "pull", "-q")
    assert (b / ".claude" / "memory" / STAGING_FILE).is_file()
    fake_server.on(Reply.json({"selected_memories": [f"team/{STAGING_FILE}"]}), purpose="recall")
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    fake_server.on(Reply.text("Not there: it is reset every Monday."), purpose="main")
    result = run_cli("-p", QUESTION, cwd=b, env=env_b)
    assert result.returncode == 0, result.stderr
    # The recall manifest marks the tier ...
    (recall,) = fake_server.requests_for("recall")
    manifest = recall.body["messages"][0]["content"][0]["text"]
    line = next(x for x in manifest.splitlines() if STAGING_FILE in x)
    assert line.startswith(f"- [project] team/{STAGING_FILE} (") and ", team): " in line
    # ... the team index is in B's system prompt, after the instructions, before B's own ...
    (main,) = fake_server.requests_for("main")
    system = "\n".join(block["text"] for block in main.body["system"])
    assert system.index("# Team memory") < system.index("## MEMORY.md (private")
    assert f"({STAGING_FILE}) — {STAGING}" in system
    # ... and the memory itself joins B's first request.
    first = json.dumps(main.body["messages"][0])
    assert f"Recalled memory: team/{STAGING_FILE}" in first and "ops said so" in first
    listed = run_cli("memory", "list", "--tier", "team", cwd=b, env=env_b)
    assert f"project   {STAGING_FILE} (Ada Lovelace, " in listed.stdout
    blame = run_cli("memory", "blame", STAGING_FILE, cwd=b, env=env_b)
    assert "saved by Ada Lovelace on " in blame.stdout
    assert f"Ada Lovelace: Team memory: {STAGING_FILE.removesuffix('.md')}" in blame.stdout


def test_additions_on_two_branches_merge_without_a_conflict(run_cli, people):
    (a, env_a), (b, env_b) = people["a"], people["b"]
    promote_and_commit(run_cli, a, env_a, STAGING)
    git(a, "push", "-q", "origin", "HEAD")
    git(b, "pull", "-q")
    git(a, "checkout", "-qb", "a-topic")  # two additions next to each other in sorted order
    retries = promote_and_commit(
        run_cli, a, env_a, "Payments retries back off for 30 seconds before the second attempt"
    )
    git(b, "checkout", "-qb", "b-topic")
    refunds = promote_and_commit(
        run_cli, b, env_b, "Payments refunds over 500 EUR need a second reviewer in the pull request"
    )
    git(a, "push", "-q", "origin", "a-topic")
    git(b, "fetch", "-q", "origin")
    merged = subprocess.run(["git", "merge", "--no-edit", "origin/a-topic"], cwd=b, capture_output=True, text=True)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    index = b / ".claude" / "memory" / "MEMORY.md"
    assert "<<<<<<<" not in index.read_text()
    assert sorted(indexed(index)) == [refunds, retries, STAGING_FILE]
    doctor = run_cli("memory", "doctor", cwd=b, env=env_b)
    assert "Team memory (" in doctor.stdout and "index_conflict" not in doctor.stdout


def test_a_merge_that_still_conflicts_is_repaired_by_doctor_fix(run_cli, people):
    (a, env_a), (b, env_b) = people["a"], people["b"]
    promote_and_commit(run_cli, a, env_a, STAGING)
    git(a, "rm", "-q", ".claude/memory/.gitattributes")  # no union driver: a plain conflict
    git(a, "commit", "-qm", "no union merges")
    git(a, "push", "-q", "origin", "HEAD")
    git(b, "pull", "-q")
    retries = promote_and_commit(run_cli, a, env_a, "Payments retries back off for 30 seconds")
    refunds = promote_and_commit(run_cli, b, env_b, "Payments refunds need a second reviewer")
    git(a, "push", "-q", "origin", "HEAD")
    git(b, "fetch", "-q", "origin")
    merged = subprocess.run(["git", "merge", "--no-edit", "origin/HEAD"], cwd=b, capture_output=True, text=True)
    assert merged.returncode != 0 and "CONFLICT" in merged.stdout
    index = b / ".claude" / "memory" / "MEMORY.md"
    assert "<<<<<<<" in index.read_text()
    found = run_cli("memory", "doctor", cwd=b, env=env_b)
    assert found.returncode == 1 and "index_conflict: MEMORY.md: has git merge-conflict markers" in found.stdout
    fixed = run_cli("memory", "doctor", "--fix", cwd=b, env=env_b)
    assert "Fixed MEMORY.md: rebuilt from the 3 memory files" in fixed.stdout
    assert "<<<<<<<" not in index.read_text() and "=======" not in index.read_text()
    assert indexed(index) == [refunds, retries, STAGING_FILE]
    git(b, "add", ".claude/memory/MEMORY.md")
    git(b, "commit", "-qm", "merge")


def memdir_of(folder: Path, env: dict, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The private memory folder of `folder` for the person whose environment is `env`."""
    with monkeypatch.context() as patch:
        patch.setenv("CLAUDE_MINI_HOME", env["CLAUDE_MINI_HOME"])
        return paths.memory_dir(folder)


def write_private(memdir: Path, filename: str, body: str) -> Path:
    """A private memory as if edited by hand (`memory add` refuses secrets at once)."""
    memdir.mkdir(parents=True, exist_ok=True)
    path = memdir / filename
    path.write_text(
        format_memory(
            name="CI releases", description="How the CI job publishes a release to GitHub", type="project", body=body
        )
    )
    return path


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (f"The CI publishes with the token {GITHUB_TOKEN}.", "a credential"),
        ("Ask release-team@corp.io before publishing.", "an e-mail address (…@corp.io)"),
    ],
)
def test_secrets_and_personal_data_are_refused_for_the_team_tier(run_cli, people, body, said, monkeypatch):
    folder, env = people["a"]
    path = write_private(memdir_of(folder, env, monkeypatch), "ci-releases.md", body)
    before = path.read_text()
    result = run_cli("memory", "promote", "ci-releases", cwd=folder, env=env)
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("claude-mini memory: refused to write ci-releases.md to the team memory")
    assert said in line and GITHUB_TOKEN not in line and "private memory is unchanged" in line
    assert not (folder / ".claude" / "memory").exists()
    assert path.read_text() == before
    assert git(folder, "status", "--porcelain") == ""


def extraction_proposes(fake_server, memdir: Path) -> None:
    memory = format_memory(
        name="Staging resets on Mondays",
        type="project",
        description="The staging database is reset every Monday at 06:00 UTC",
        body=STAGING,
        why="an ops cron job",
        how_to_apply="before seeding staging",
        extra_frontmatter={"team": True},
    )
    fake_server.on(
        Reply.tool("Write", {"file_path": str(memdir / "project_staging.md"), "content": memory}), purpose="extract"
    )
    fake_server.on(Reply.text("Saved one memory."), purpose="extract")


def test_extraction_proposes_a_team_memory_as_an_uncommitted_file(run_cli, fake_server, people, monkeypatch):
    folder, env = people["a"]
    (folder / ".claude" / "memory").mkdir(parents=True)
    memdir = memdir_of(folder, env, monkeypatch)
    extraction_proposes(fake_server, memdir)
    fake_server.on(Reply.text("Noted: staging resets on Mondays."), purpose="main")
    result = run_cli("-p", "remember: the staging database is reset every Monday", cwd=folder, env=env)
    assert result.returncode == 0, result.stderr
    prompt = fake_server.requests_for("extract")[0].last_user_text
    assert "# The team memory" in prompt and "`team: true`" in prompt
    assert "Proposed project_staging.md to the team memory: .claude/memory/project_staging.md" in result.stderr
    team_file = folder / ".claude" / "memory" / "project_staging.md"
    fm = yaml.safe_load(team_file.read_text().split("---\n")[1])
    assert fm["author"] == "Ada Lovelace" and "team" not in fm and "source" not in fm
    assert "?? .claude/memory/project_staging.md" in git(folder, "status", "--porcelain", "--untracked-files=all")
    assert not (memdir / "project_staging.md").exists()


def test_an_untrusted_clone_writes_nothing_to_its_team_folder(run_cli, fake_server, people, monkeypatch):
    folder, env = people["b"]
    (folder / ".claude" / "memory").mkdir(parents=True)
    (folder / ".claude" / "memory" / "MEMORY.md").write_text("")
    git(folder, "add", ".claude")
    git(folder, "commit", "-qm", "team folder")
    home = Path(env["CLAUDE_MINI_HOME"])
    (home / "trusted-folders.json").unlink()
    # promote: refused, nothing written
    added = run_cli("memory", "add", STAGING, cwd=folder, env=env)
    assert added.returncode == 0, added.stderr
    promoted = run_cli("memory", "promote", STAGING_FILE, cwd=folder, env=env)
    assert promoted.returncode == 1 and "this folder is not trusted" in promoted.stderr
    # extraction's proposal stays private, and the model's own Write into the folder is denied
    memdir = memdir_of(folder, env, monkeypatch)
    extraction_proposes(fake_server, memdir)
    fake_server.on(Reply.tool("Write", {"file_path": ".claude/memory/ops.md", "content": STAGING}), purpose="main")
    fake_server.on(Reply.text("Noted: staging resets on Mondays."), purpose="main")
    result = run_cli(
        "-p",
        "remember: the staging database is reset every Monday",
        "--permission-mode",
        "bypassPermissions",
        cwd=folder,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    denied = json.dumps(fake_server.requests_for("main")[1].body["messages"][-1])
    assert "refused this Write of ops.md: this folder is not trusted" in denied
    assert "# The team memory" not in fake_server.requests_for("extract")[0].last_user_text
    assert git(folder, "status", "--porcelain", "--untracked-files=all") == ""
    private = memdir / "project_staging.md"
    assert private.is_file() and "team:" not in private.read_text()
    assert "Kept project_staging.md private" in result.stderr


def test_import_from_codex_dry_run_then_for_real(run_cli, people, tmp_path, monkeypatch):
    folder, env = people["a"]
    codex = tmp_path / "codex" / "memories"
    shutil.copytree(Path(__file__).parent.parent / "memory" / "import_fixtures" / "codex", codex)
    for path in codex.glob("*.md"):
        path.write_text(path.read_text().replace("{project}", os.path.realpath(folder)))
    env = {**env, "CODEX_HOME": str(tmp_path / "codex")}
    dry = run_cli("memory", "import", "--from", "codex", "--dry-run", cwd=folder, env=env)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[-1].startswith("Dry run: 4 would be imported into")
    assert not memdir_of(folder, env, monkeypatch).exists()
    done = run_cli("memory", "import", "--from", "codex", cwd=folder, env=env)
    assert done.stdout.splitlines()[-1].startswith("Imported 4 memories into")
    files = sorted(p.name for p in memdir_of(folder, env, monkeypatch).glob("*.md"))
    assert "MEMORY.md" in files and len(files) == 5
    bad = run_cli("memory", "import", "--from", "cursor", cwd=folder, env=env)
    assert bad.returncode == 2 and "'cursor' is not one of claude-code, codex, gemini" in bad.stderr
