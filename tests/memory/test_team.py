"""The team tier (memory/team/): where it is, the prompt, recall, moves between tiers, the
personal-data check, the write guard, and the sorted index that merges cleanly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from claude_mini import trust
from claude_mini.base.notices import NoticeChannel
from claude_mini.config import load_config
from claude_mini.memory.maintenance.doctor import doctor, fix
from claude_mini.memory.recall.engine import RecallEngine
from claude_mini.memory.recall.lexical import SHORTLIST_SIZE
from claude_mini.memory.recall.team import merge_tiers
from claude_mini.memory.secrets.guard import SecretGuard
from claude_mini.memory.store import MemoryStore, parse_index
from claude_mini.memory.team import TeamTier, team_problem, team_prompt_section, team_tier
from claude_mini.memory.team.guard import TeamWriteCheck
from claude_mini.memory.team.moves import TeamRefused, demote, promote, propose
from claude_mini.memory.team.privacy import PersonalContext, find_personal_data, team_refusal
from claude_mini.permissions import Allow, Deny, PolicyChain
from claude_mini.runtime import make_prompt

STAGING = "The staging database is reset every Monday at 06:00 UTC; never keep test data there"
NOBODY = PersonalContext()  # no people, no paths: the checks that need no git
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.name", "Ada Lovelace")
    return root


def tier(repo: Path, *, trusted: bool = True, proposals: str = "team") -> TeamTier:
    return TeamTier(repo / ".claude" / "memory", repo, trusted, proposals)


def settings(repo: Path, **memory: object) -> None:
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"memory": memory}))


def save(
    store: MemoryStore, filename: str, description: str, body: str = "", type: str = "project", **extra: object
) -> None:
    store.write(
        filename,
        name=filename.removesuffix(".md").replace("-", " "),
        type=type,
        description=description,
        body=body or description,
        extra_frontmatter=extra or None,
    )


def frontmatter(path: Path) -> dict:
    return yaml.safe_load(path.read_text().split("---\n")[1])


# --- where it is ---------------------------------------------------------------------------
def test_off_without_the_folder_on_with_it_or_the_setting(repo):
    assert team_tier(load_config(repo)) is None
    (repo / ".claude" / "memory").mkdir(parents=True)
    found = team_tier(load_config(repo))
    assert found is not None and found.root == repo / ".claude" / "memory"
    assert not found.trusted and found.write_problem() and "not trusted" in found.write_problem()
    settings(repo, teamDir=False)
    trust.record_trust(repo)  # a repository's own settings count once it is trusted
    assert team_tier(load_config(repo)) is None


def test_the_setting_names_another_folder_but_never_one_outside_the_repository(repo):
    settings(repo, teamDir="docs/team-memory")
    assert team_tier(load_config(repo)) is None  # an untrusted repository cannot move it
    trust.record_trust(repo)
    found = team_tier(load_config(repo))
    assert found is not None and found.root == repo / "docs" / "team-memory"
    settings(repo, teamDir="../elsewhere")
    config = load_config(repo)
    assert team_tier(config) is None
    assert any("memory.teamDir must be" in p for p in config.memory.problems)
    (repo / "out").symlink_to(repo.parent)
    settings(repo, teamDir="out/x")
    assert team_tier(load_config(repo)) is None
    assert "outside the repository" in (team_problem(load_config(repo)) or "")


# --- the index: sorted, so additions merge -----------------------------------------------
def test_team_index_lines_stay_sorted_by_filename(repo):
    team = tier(repo).store()
    for name in ("mango.md", "apple.md", "kiwi.md"):
        save(team, name, f"Notes on {name} for the whole team of this service")
    files = [e.filename for e in team.index_entries()]
    assert files == ["apple.md", "kiwi.md", "mango.md"]


def test_doctor_fix_rebuilds_a_conflicted_index_from_the_files(repo):
    team = tier(repo).store()
    save(team, "alpha.md", "Alpha service deploys need the release captain's approval")
    save(team, "beta.md", "Beta service tests must run against the local emulator only")
    conflicted = (
        "<<<<<<< HEAD\n- [alpha](alpha.md) — a hook someone wrote\n=======\n"
        "- [gone](gone.md) — a memory deleted since\n>>>>>>> topic\n"
    )
    team.index_path.write_text(conflicted)
    findings = doctor(team)
    assert any(f.kind == "index_conflict" and f.fixable for f in findings)
    fixed = fix(team, findings)
    assert [f.kind for f in fixed] == ["index_conflict"]
    text = team.index_path.read_text()
    assert "<<<<<<<" not in text and "=======" not in text and "gone.md" not in text
    assert [e.filename for e in parse_index(text)] == ["alpha.md", "beta.md"]
    assert "a hook someone wrote" in text  # the line a person wrote is kept
    left = {f.kind for f in doctor(team)}
    assert not left & {"index_conflict", "dangling_index_line", "duplicate_index_line", "missing_from_index"}


# --- the prompt ------------------------------------------------------------------------------
def test_the_team_index_sits_between_the_instructions_and_the_private_index(repo):
    (repo / "CLAUDE.md").write_text("Use tabs.\n")
    save(tier(repo).store(), "staging-reset.md", STAGING)
    config = load_config(repo)
    store = MemoryStore(repo.parent / "private")
    save(store, "my-editor.md", "The user edits with vim and wants short answers")
    prompt, _ = make_prompt(config, store, NoticeChannel())
    names = [s.name for s in prompt.sections]
    assert names.index("instructions") < names.index("team memory") < names.index("memory")
    team_text = next(s.text for s in prompt.sections if s.name == "team memory")
    assert "## Team MEMORY.md (.claude/memory/MEMORY.md)" in team_text
    assert "(staging-reset.md)" in team_text and "my-editor.md" not in team_text
    private = next(s.text for s in prompt.sections if s.name == "memory")
    assert "## MEMORY.md (private: yours only" in private and "staging-reset.md" not in private


def test_the_team_index_has_its_own_limits_and_warning(repo):
    found = tier(repo)
    found.root.mkdir(parents=True)
    found.index_path.write_text("".join(f"- [m{i}](m{i}.md) — hook {i}\n" for i in range(250)))
    text = team_prompt_section(found)
    assert "- [m199](m199.md)" in text and "- [m200](m200.md)" not in text
    assert "> WARNING: the team's .claude/memory/MEMORY.md is 250 lines (limit: 200)" in text


def test_conflict_markers_never_reach_the_prompt(repo):
    found = tier(repo)
    found.root.mkdir(parents=True)
    found.index_path.write_text("<<<<<<< HEAD\n- [a](a.md) — x\n=======\n- [b](b.md) — y\n>>>>>>> t\n")
    text = team_prompt_section(found)
    assert "- [a](a.md)" in text and "- [b](b.md)" in text and "<<<<<<<" not in text


# --- recall -----------------------------------------------------------------------------------
def test_recall_searches_both_tiers_and_names_team_files(repo, tmp_path):
    private = MemoryStore(tmp_path / "private")
    save(private, "vim.md", "The user edits with vim")
    save(tier(repo).store(), "staging-reset.md", STAGING)
    engine = RecallEngine(private, config=None, team_root=tier(repo).root)
    manifest, strong, _ = engine.local_pass("when is the staging database reset", frozenset())
    assert {c.filename for c in manifest} == {"vim.md", "team/staging-reset.md"}
    assert strong == ["team/staging-reset.md"]
    candidate = engine.candidate("team/staging-reset.md")
    assert candidate is not None and candidate.path == tier(repo).root / "staging-reset.md"
    # already in the context: not offered again
    manifest, strong, _ = engine.local_pass("staging database reset", frozenset({"team/staging-reset.md"}))
    assert "team/staging-reset.md" not in {c.filename for c in manifest} and not strong


def test_merging_the_tiers_keeps_the_manifest_size_and_orders_the_strong_matches_by_score():
    private = [(f"p{i}.md", 0.05) for i in range(SHORTLIST_SIZE)]
    team = [("team/hit.md", 3.0)]
    best, strong = merge_tiers(private, [("p1.md", 1.0)], team, [("team/hit.md", 3.0)])
    assert len(best) == SHORTLIST_SIZE and best[0] == ("team/hit.md", 3.0)
    assert strong == [("team/hit.md", 3.0), ("p1.md", 1.0)]  # each tier made its own cut


# --- promote and demote -------------------------------------------------------------------
def test_promote_writes_the_team_file_with_provenance_and_archives_the_private_copy(repo, tmp_path):
    private = MemoryStore(tmp_path / "private")
    save(private, "staging-reset.md", STAGING, source="session-1", supersedes="old.md")
    move = promote(tier(repo), private, "staging-reset", context=NOBODY, author="Ada Lovelace")
    path = repo / ".claude" / "memory" / "staging-reset.md"
    assert move.path == path and "uncommitted" in move.message
    fm = frontmatter(path)
    assert fm["author"] == "Ada Lovelace" and fm["created"] and fm["type"] == "project"
    assert "source" not in fm and "supersedes" not in fm  # private-only fields stay behind
    assert (repo / ".claude" / "memory" / ".gitattributes").read_text() == "MEMORY.md merge=union\n"
    assert not (private.root / "staging-reset.md").exists()
    assert private.archive_entries()[0].reason.startswith("promoted to the team memory")
    assert "?? .claude/" in git(repo, "status", "--porcelain")
    assert ".MEMORY.md.lock" not in git(repo, "status", "--porcelain", "--untracked-files=all")


def test_promote_refuses_what_the_team_already_has(repo, tmp_path):
    private = MemoryStore(tmp_path / "private")
    save(tier(repo).store(), "staging.md", STAGING)
    save(private, "staging-reset.md", STAGING)
    with pytest.raises(TeamRefused, match="already has it as .claude/memory/staging.md"):
        promote(tier(repo), private, "staging-reset", context=NOBODY)
    assert (private.root / "staging-reset.md").is_file()


def test_promote_refuses_untrusted_folders_user_memories_and_secrets(repo, tmp_path):
    private = MemoryStore(tmp_path / "private")
    save(private, "staging-reset.md", STAGING)
    with pytest.raises(TeamRefused, match="not trusted"):
        promote(tier(repo, trusted=False), private, "staging-reset", context=NOBODY)
    save(private, "me.md", "The user is a backend engineer who prefers terse answers", type="user")
    with pytest.raises(TeamRefused, match="user memory"):
        promote(tier(repo), private, "me", context=NOBODY)
    save(
        private,
        "ci-token.md",
        "How the CI job reaches the GitHub API for releases",
        body=f"The CI uses the token {GITHUB_TOKEN} for releases.",
    )
    with pytest.raises(TeamRefused, match="github-pat") as refused:
        promote(tier(repo), private, "ci-token", context=NOBODY)
    assert GITHUB_TOKEN not in str(refused.value)
    assert not (repo / ".claude" / "memory").exists()  # nothing written at all
    assert {r.filename for r in private.list()} == {"staging-reset.md", "me.md", "ci-token.md"}


def test_demote_brings_a_team_memory_back_and_deletes_the_team_file(repo, tmp_path):
    private = MemoryStore(tmp_path / "private")
    save(tier(repo).store(), "staging-reset.md", STAGING, author="Grace Hopper", created="2026-01-02T03:04:05Z")
    move = demote(tier(repo), private, "team/staging-reset.md")
    assert not (repo / ".claude" / "memory" / "staging-reset.md").exists()
    assert "staging-reset.md" not in tier(repo).store().index_text()
    fm = frontmatter(private.root / move.target)
    assert fm["author"] == "Grace Hopper" and fm["created"] == "2026-01-02T03:04:05Z"
    assert move.target in private.index_text()


# --- what extraction proposes --------------------------------------------------------------
def test_a_proposal_goes_to_the_team_folder_or_waits_in_proposed(repo, tmp_path):
    private = MemoryStore(tmp_path / "private")
    save(private, "staging-reset.md", STAGING, type="feedback", team=True)
    line, proposed = propose(tier(repo), private, "staging-reset.md", context=lambda: NOBODY)
    assert proposed and line.startswith("Proposed staging-reset.md to the team memory")
    assert "team" not in frontmatter(repo / ".claude" / "memory" / "staging-reset.md")
    save(private, "flaky-tests.md", "The payments suite is flaky on Fridays; rerun it once", type="feedback", team=True)
    line, proposed = propose(tier(repo, proposals="private"), private, "flaky-tests.md")
    assert proposed and "proposed/flaky-tests.md" in line
    assert (private.root / "proposed" / "flaky-tests.md").is_file()
    assert "(proposed/flaky-tests.md)" in private.index_text()
    move = promote(tier(repo), private, "proposed/flaky-tests", context=NOBODY, author="Ada")
    assert move.target == "flaky-tests.md" and not (private.root / "proposed" / "flaky-tests.md").exists()


def test_a_refused_or_untrusted_proposal_stays_private_without_its_flag(repo, tmp_path):
    private = MemoryStore(tmp_path / "private")
    save(private, "ask-dana.md", "Ask Dana Scully before changing the protobuf version", type="feedback", team=True)
    context = PersonalContext(others=frozenset({"Dana Scully"}))
    line, proposed = propose(tier(repo), private, "ask-dana.md", context=lambda: context)
    assert not proposed and "Kept ask-dana.md private" in line and "Dana Scully" in line
    assert "team" not in frontmatter(private.root / "ask-dana.md")
    save(private, "staging-reset.md", STAGING, type="project", team=True)
    line, proposed = propose(tier(repo, trusted=False), private, "staging-reset.md")
    assert not proposed and "not trusted" in line
    assert not (repo / ".claude" / "memory").exists()


# --- personal data ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Mail jane.doe@corp.io for access", "an e-mail address (…@corp.io)"),
        ("Logs are in /home/ada/build/logs", "a local absolute path (/home/ada…)"),
        ("Run C:\\Users\\ada\\tools\\fix.bat first", "a local absolute path"),
        ("Ask Dana before a release", "the name of a person in this repository's history (Dana)"),
        ("dana scully owns the deploy", "the name of a person in this repository's history (Dana Scully)"),
        ("The build box devbox-17 caches wheels", "this machine's name (devbox-17)"),
        ("See /srv/checkout/app/README.md", "this checkout's absolute path (/srv/checkout/app)"),
    ],
)
def test_personal_data_is_found(text, kind):
    context = PersonalContext(
        others=frozenset({"Dana Scully"}),
        home="/home/ada",
        checkout="/srv/checkout/app",
        hosts=frozenset({"devbox-17"}),
    )
    found = find_personal_data(f"---\nname: x\n---\n{text}\n", context)
    assert found and found[0].describe().startswith(kind) and found[0].line == 4


@pytest.mark.parametrize(
    "text",
    [
        "Push with git@github.com:org/app.git",
        "Use test@example.com in fixtures",
        "Paths are relative: src/app/main.py and ~/.cache/app",
        "The danger zone is the cron",
        "https://ci.example.org/home/jobs/42 shows the build",
    ],
)
def test_ordinary_team_text_passes(text):
    context = PersonalContext(
        others=frozenset({"Dana Scully", "ci", "dependabot[bot]"}), home="/home/ada", hosts=frozenset({"devbox-17"})
    )
    assert find_personal_data(text, context) == []
    assert team_refusal(text, context, "x.md") is None


def test_the_context_knows_the_other_people_of_the_repository(repo):
    (repo / "a.txt").write_text("a")
    git(repo, "add", "a.txt")
    subprocess.run(
        ["git", "-c", "user.name=Grace Hopper", "-c", "user.email=grace@navy.example", "commit", "-qm", "a"],
        cwd=repo,
        check=True,
    )
    context = PersonalContext.of(repo)
    assert "Grace Hopper" in context.others and "Ada Lovelace" not in context.others  # not the saver
    assert context.checkout == str(repo.resolve())


# --- the main agent's own writes ------------------------------------------------------------
class AllowAll:
    def can_use_tool(self, tool_name, input):
        return Allow()


def test_the_guard_refuses_team_writes_with_personal_data_or_when_untrusted(repo, tmp_path):
    trusted = tier(repo)
    guard = PolicyChain(
        AllowAll(),
        [SecretGuard(tmp_path / "private", cwd=repo, team=TeamWriteCheck(lambda: trusted, lambda t: NOBODY))],
    )
    target = str(trusted.root / "x.md")
    assert isinstance(guard.can_use_tool("Write", {"file_path": target, "content": STAGING}), Allow)
    refused = guard.can_use_tool(
        "Write", {"file_path": ".claude/memory/x.md", "content": "Write to ops@corp.io on failures"}
    )
    assert isinstance(refused, Deny) and "e-mail address" in refused.reason
    refused = guard.can_use_tool("Write", {"file_path": target, "content": f"token {GITHUB_TOKEN}"})
    assert isinstance(refused, Deny) and "github-pat" in refused.reason
    other = guard.can_use_tool("Write", {"file_path": str(repo / "notes.md"), "content": "ops@corp.io"})
    assert isinstance(other, Allow)  # outside the team folder: not this guard's business
    untrusted = tier(repo, trusted=False)
    guard = PolicyChain(
        AllowAll(),
        [SecretGuard(tmp_path / "private", cwd=repo, team=TeamWriteCheck(lambda: untrusted, lambda t: NOBODY))],
    )
    refused = guard.can_use_tool("Edit", {"file_path": target, "old_string": "", "new_string": "x"})
    assert isinstance(refused, Deny) and "not trusted" in refused.reason
