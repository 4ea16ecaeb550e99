"""Forgetting: keep-scores, gc to archive/ with ARCHIVE.md, restore, likely duplicates."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from claude_mini.config import Config
from claude_mini.config.memory_settings import ForgetSettings
from claude_mini.memory.maintenance.forget import (
    LOW_WATER,
    duplicate_findings,
    gc,
    gc_message,
    likely_duplicates,
    maybe_auto_gc,
    plan_gc,
)
from claude_mini.memory.store import (
    INDEX_MAX_LINES,
    MemoryNotFound,
    MemoryRecord,
    MemoryStore,
    parse_archive_index,
)
from claude_mini.memory.store.keep import PROTECTED_FLOOR, keep_score, keep_scores
from claude_mini.memory.store.restore import find_archived, restore
from tests.memory.memclock import DAY, T0, Clock


def save(store: MemoryStore, stem: str, type_: str = "project", **kw) -> str:
    description = kw.pop("description", f"How the {stem.replace('-', ' ')} part of the build works")
    store.write(
        f"{stem}.md",
        name=kw.pop("name", stem.replace("-", " ").title()),
        description=description,
        type=type_,
        body=kw.pop("body", f"Details about {stem}."),
        **kw,
    )
    return f"{stem}.md"


def config(**memory) -> Config:
    return Config(cwd=Path("."), project_root=Path("."), settings={"memory": memory})


def record(
    type_: str | None = "project", *, pinned: bool = False, updated: str | None = None, mtime: float = T0
) -> MemoryRecord:
    fm = {"pinned": True} if pinned else {}
    if updated:
        fm["updated"] = updated
    return MemoryRecord(Path("x.md"), "x.md", "X", "desc", type_, mtime, 10, True, frontmatter=fm)


# --- keep-score ------------------------------------------------------------------------
def test_recency_halves_every_half_life_and_uses_add_a_bonus():
    fresh = keep_score(record(), None, T0)
    month = keep_score(record(), None, T0 + 30 * DAY)
    assert fresh.score == pytest.approx(1.0)
    assert month.score == pytest.approx(0.5)
    assert keep_score(record(), None, T0 + 15 * DAY, half_life_days=15).score == pytest.approx(0.5)
    used = keep_score(record(), {"count": 9, "last_used": T0}, T0 + 30 * DAY)
    assert used.score > month.score + 0.5  # ln(10) * 0.5 * 0.84
    assert used.count == 9


def test_the_use_bonus_fades_too_but_slower():
    often = {"count": 20, "last_used": T0}
    after_a_year = keep_score(record(), often, T0 + 365 * DAY).score
    never_used_2_months = keep_score(record(), None, T0 + 60 * DAY).score
    assert after_a_year < never_used_2_months  # usefulness long ago does not last forever
    assert keep_score(record(), often, T0 + 90 * DAY).score > never_used_2_months


def test_age_counts_from_the_later_of_last_use_and_last_write():
    rewritten = record(updated="2026-12-01T00:00:00Z", mtime=T0 - 400 * DAY)
    now = keep_score(rewritten, {"count": 1, "last_used": T0}, T0)
    assert now.last_used > T0  # the frontmatter time, not the old file time or the use


@pytest.mark.parametrize(
    ("type_", "pinned", "why"),
    [
        ("user", False, "user"),
        ("feedback", False, "feedback"),
        ("project", True, "pinned"),
    ],
)
def test_user_feedback_and_pinned_have_a_floor(type_, pinned, why):
    score = keep_score(record(type_, pinned=pinned), None, T0 + 1000 * DAY)
    assert score.score == PROTECTED_FLOOR
    assert score.protected == why


def test_settings_come_from_config_and_bad_values_fall_back():
    s = ForgetSettings.from_config(config(halfLifeDays=7, maxFiles=50, autoGc=False))
    assert (s.half_life_days, s.max_files, s.auto_gc) == (7.0, 50, False)
    bad = ForgetSettings.from_config(config(halfLifeDays="soon", maxFiles=-3, autoGc="yes"))
    assert (bad.half_life_days, bad.max_files, bad.auto_gc) == (30.0, 200, True)
    assert ForgetSettings.from_config(None) == ForgetSettings()


# --- 90 days of use, then gc -------------------------------------------------------------
def ninety_days(store: MemoryStore, clock: Clock) -> dict[str, list[str]]:
    groups = {
        "daily": [save(store, f"daily-{i}") for i in range(3)],
        "weekly": [save(store, f"weekly-{i}") for i in range(2)],
        "early": [save(store, f"early-{i}") for i in range(3)],
        "never": [save(store, f"never-{i}") for i in range(3)],
        "protected": [
            save(store, "user-role", "user"),
            save(store, "feedback-style", "feedback"),
            save(store, "pinned-deploy", extra_frontmatter={"pinned": True}),
        ],
    }
    for day in range(1, 91):
        clock.advance(1)
        used = []
        if day % 2 == 0:
            used += groups["daily"]
        if day % 7 == 0:
            used += groups["weekly"]
        if day <= 10:
            used += groups["early"]
        store.record_use(used)
    return groups


def test_ninety_days_then_gc_archives_the_least_used_and_never_a_protected_one(store, clock):
    groups = ninety_days(store, clock)
    result = gc(store, ForgetSettings(max_files=10))
    archived = {a.filename for a in result.archived}
    assert result.plan.reasons == ["there are 14 memory files (memory.maxFiles 10)"]
    assert archived == set(groups["never"] + groups["early"])  # 14 -> 8 files, under 85% of 10
    for name in groups["protected"] + groups["daily"] + groups["weekly"]:
        assert store.exists(name)
    assert all((store.archive_dir / name).is_file() for name in archived)
    listed = {e.filename for e in store.index_entries()}
    assert not listed & archived
    usage = store.usage()
    assert not set(usage) & archived  # the usage entries moved to ARCHIVE.md
    entries = store.archive_entries()
    assert {e.original for e in entries} == archived
    assert all(e.reason.startswith("gc: keep-score") for e in entries)
    assert next(e for e in entries if e.original == "early-0.md").usage["count"] == 10


def test_scores_after_ninety_days_rank_the_groups(store, clock):
    groups = ninety_days(store, clock)
    order = [s.filename for s in keep_scores(store)]
    rank = {name: order.index(name) for name in order}
    assert max(rank[n] for n in groups["never"]) < min(rank[n] for n in groups["early"])
    assert max(rank[n] for n in groups["early"]) < min(rank[n] for n in groups["weekly"])
    assert min(rank[n] for n in groups["protected"]) > max(rank[n] for n in groups["early"])


def test_auto_gc_only_runs_under_pressure(store, clock):
    ninety_days(store, clock)
    assert maybe_auto_gc(store, config(maxFiles=200), clock) == []
    assert maybe_auto_gc(store, config(maxFiles=10, autoGc=False), clock) == []
    archived = maybe_auto_gc(store, config(maxFiles=10), clock)
    assert len(archived) == 6
    message = gc_message(archived)
    assert message.startswith("Archived 6 little-used memories to archive/: ")
    assert "and 1 more" in message and "memory restore NAME" in message


def test_auto_gc_when_the_index_nears_its_line_limit(store):
    for i in range(int(INDEX_MAX_LINES * 0.9) + 1):
        save(store, f"note-{i:03d}")
    archived = maybe_auto_gc(store, config(maxFiles=10_000))
    remaining = len(store.index_text().splitlines())
    assert archived and remaining <= INDEX_MAX_LINES * LOW_WATER


def test_manual_gc_also_archives_stale_memories_and_dry_run_changes_nothing(store, clock):
    save(store, "ancient")
    save(store, "kept", "feedback")
    clock.advance(200)
    save(store, "recent")
    dry = gc(store, dry_run=True)
    assert [v.filename for v in dry.plan.victims] == ["ancient.md"] and dry.archived == []
    assert store.exists("ancient.md")
    assert gc_message([], dry_run=True) == "gc would archive nothing."
    assert [a.filename for a in gc(store).archived] == ["ancient.md"]
    assert gc(store, stale=False).archived == []


def test_gc_says_when_protected_memories_alone_exceed_the_limit(store):
    for i in range(3):
        save(store, f"who-{i}", "user")
    plan = plan_gc(store, ForgetSettings(max_files=2))
    assert plan.victims == [] and "user, feedback, pinned" in plan.blocked


def test_corrupt_usage_record_still_scores_from_file_times(store, clock):
    save(store, "a")
    os.utime(store.root / "a.md", (T0, T0))  # the rebuilt record uses file times
    store.usage_path.write_text("{not json")
    clock.advance(30)
    scores = keep_scores(store)
    assert scores[0].score == pytest.approx(0.5, abs=0.01)
    assert any("usage.json is unreadable" in w for w in store.warnings)


# --- restore ---------------------------------------------------------------------------
def test_restore_round_trips_bytes_index_line_and_usage(store, clock):
    name = save(store, "deploy-steps", description="How to deploy billing: make deploy ENV=staging")
    store.record_use([name])
    store.record_use([name])
    before_bytes = (store.root / name).read_bytes()
    before_line = next(e.line for e in store.index_entries() if e.filename == name)
    store.delete(name, reason="forgotten")
    assert not store.exists(name)
    clock.advance(3)
    result = restore(store, "deploy-steps")
    assert result.restored == [("deploy-steps.md", "deploy-steps.md")]
    assert (store.root / name).read_bytes() == before_bytes
    assert next(e.line for e in store.index_entries() if e.filename == name) == before_line
    assert store.usage()[name] == {"count": 3, "last_used": clock.now}  # restoring is a use
    assert store.archive_entries() == []
    assert not (store.archive_dir / name).exists()


def test_restore_when_the_name_exists_again_keeps_both(store):
    save(store, "style", body="old version")
    store.delete("style.md")
    save(store, "style", body="new version")
    result = restore(store, "style.md")
    assert result.restored == [("style.md", "style-2.md")]
    assert "new version" in (store.root / "style.md").read_text()
    assert "old version" in (store.root / "style-2.md").read_text()
    assert {e.filename for e in store.index_entries()} == {"style.md", "style-2.md"}


def test_restore_finds_by_title_and_takes_the_newest_of_several(store, clock):
    save(store, "tips", name="Shell Tips", body="first")
    store.delete("tips")
    clock.advance(1)
    save(store, "tips", name="Shell Tips", body="second")
    store.delete("tips")
    assert find_archived(store, "Shell Tips").file == "tips-2.md"
    restore(store, "shell tips")
    assert "second" in (store.root / "tips.md").read_text()
    with pytest.raises(MemoryNotFound, match="nothing named 'nope'"):
        restore(store, "nope")


def test_restore_of_a_file_archived_by_hand(store):
    store.archive_dir.mkdir(parents=True)
    (store.archive_dir / "manual.md").write_text(
        "---\nname: Manual\ndescription: Put in the archive by hand, not by claude-mini\n"
        "type: reference\n---\n\nBody.\n"
    )
    restore(store, "manual")
    assert store.exists("manual.md")
    assert [e.filename for e in store.index_entries()] == ["manual.md"]


def test_archive_md_is_readable_markdown_with_metadata(store, clock):
    name = save(store, "gone", description="Where the old CI dashboards lived before 2026")
    store.record_use([name])
    store.delete(name, reason="forgotten")
    text = store.archive_index_path.read_text()
    assert text.startswith("# Archived memories\n")
    line = text.splitlines()[-1]
    assert line.startswith("- [Gone](gone.md) — Where the old CI dashboards lived")
    meta = json.loads(line.split("<!-- archived: ", 1)[1].removesuffix(" -->"))
    assert meta["from"] == "gone.md" and meta["reason"] == "forgotten"
    assert meta["usage"] == {"count": 1, "last_used": T0}
    [entry] = parse_archive_index(text)
    assert entry.index_line.startswith("- [Gone](gone.md)")


def test_undo_of_a_merge_restores_every_original_and_archives_the_merged_one(store, clock):
    a = save(store, "a-tests", description="Run the unit tests with pytest -x before pushing")
    b = save(store, "b-tests", description="Always run pytest with -x before a push to main")
    originals = {n: (store.root / n).read_bytes() for n in (a, b)}
    # What /dream does after the fork wrote `merged.md`: archive the originals with a pointer.
    save(
        store,
        "merged",
        description="Run pytest -x before every push",
        extra_frontmatter={"replaces": ["archive/a-tests.md", "archive/b-tests.md"]},
    )
    store.delete(a, reason="dream: merged", successor="merged.md")
    store.delete(b, reason="dream: merged", successor="merged.md")
    note = restore(store, "a-tests").notes
    assert "merged into merged.md" in note[0]
    store.delete(a, reason="dream: merged", successor="merged.md")  # put it back as it was
    result = restore(store, "merged")
    assert sorted(live for _, live in result.restored) == [a, b]
    assert [x.filename for x in result.archived] == ["merged.md"]
    assert {n: (store.root / n).read_bytes() for n in (a, b)} == originals
    assert not store.exists("merged.md")
    assert {e.filename for e in store.index_entries()} == {a, b}


# --- duplicates ------------------------------------------------------------------------
def test_likely_duplicates_pairs_near_identical_memories_only(store):
    save(
        store,
        "pytest-flags",
        description="Run pytest with -x and -q before pushing to main",
        body="The suite is slow; -x stops at the first failure.",
    )
    save(
        store,
        "pytest-before-push",
        description="Before a push to main run pytest -x -q",
        body="Stop at the first failure with -x; the suite is slow.",
    )
    save(store, "deploy", description="Deploy billing to staging with make deploy ENV=staging", body="Needs VPN.")
    save(
        store,
        "oncall",
        description="Who is on call for the payments service this quarter",
        body="See the rota in PagerDuty.",
    )
    pairs = likely_duplicates(store)
    assert [(a, b) for a, b, _ in pairs] == [("pytest-before-push.md", "pytest-flags.md")]
    assert 0.55 <= pairs[0][2] <= 1.0
    [finding] = duplicate_findings(store)
    assert finding.kind == "likely_duplicate" and "pytest-flags.md" in finding.message


# --- the CLI pieces (claude_mini/subcommands/forget_cli.py) ---------------------------------------
def test_scores_gc_and_restore_lines(store, clock):
    from claude_mini.commands.forget import gc_data, gc_lines, restore_lines, scores_data, scores_lines

    groups = ninety_days(store, clock)
    data = scores_data(store, config(maxFiles=10), clock.now)
    lines = scores_lines(data)
    assert lines[0].startswith(f"Keep-scores in {store.root} (half-life 30 days; MEMORY.md 14/200")
    assert lines[0].endswith("14/10 files)")
    assert lines[-1].endswith("never-0.md") or lines[-1].split()[-1] in groups["never"]
    assert "kept (user)" in next(line for line in lines if line.endswith("user-role.md"))
    dry = gc_lines(gc_data(store, config(maxFiles=10), dry_run=True, clock=clock))
    assert dry[0] == "Near a limit: there are 14 memory files (memory.maxFiles 10)."
    assert dry[1].startswith("Would archive 6: ") and store.exists("never-0.md")
    done = gc_data(store, config(maxFiles=10), clock=clock)
    assert len(done["archived"]) == 6 and done["archived"][0]["to"].startswith("archive/")
    assert restore_lines(store, "never-0", clock) == ["Restored never-0.md."]


def test_cli_commands_mounted_on_a_typer_group(tmp_path, monkeypatch):
    import typer
    from typer.testing import CliRunner

    from claude_mini.base import paths
    from claude_mini.subcommands import forget_cli

    app = typer.Typer()
    app.command("gc")(forget_cli.gc_command)
    app.command("restore")(forget_cli.restore_command)
    app.command("scores")(forget_cli.scores_command)
    monkeypatch.chdir(tmp_path)
    store = MemoryStore(paths.memory_dir(tmp_path))
    save(store, "old-notes")
    os.utime(store.root / "old-notes.md", (T0, T0))
    runner = CliRunner()
    out = runner.invoke(app, ["scores", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["memories"][0]["file"] == "old-notes.md"
    out = runner.invoke(app, ["gc", "--dry-run"])
    assert out.exit_code == 0 and "gc would archive nothing" in out.output
    store.delete("old-notes")
    out = runner.invoke(app, ["restore", "old-notes"])
    assert out.exit_code == 0 and "Restored old-notes.md." in out.output
    out = runner.invoke(app, ["restore", "missing"])
    assert out.exit_code == 1 and "nothing named 'missing'" in out.output


def test_restore_never_leaves_the_memory_folder(store):
    save(store, "note")
    store.delete("note")
    text = store.archive_index_path.read_text().replace('"from": "note.md"', '"from": "../../escape.md"')
    store.archive_index_path.write_text(text)
    result = restore(store, "note")
    assert result.restored == [("note.md", "escape.md")]
    assert store.exists("escape.md") and not (store.root.parent / "escape.md").exists()
    with pytest.raises(MemoryNotFound):
        restore(store, "/etc/passwd")
