"""Recall's archive tier: what gc archived is still found, and a recalled one comes back.

The tier on its own (a real store, an injected clock), then through the real agent loop
and the loopback fake for both strategies (helpers shared with test_recall.py).
"""

from __future__ import annotations

import json

import pytest

from claude_mini.memory.maintenance.forget import gc
from claude_mini.memory.recall.archive import ArchiveTier
from claude_mini.memory.recall.engine import RecallEngine
from claude_mini.memory.recall.lexical import SHORTLIST_SIZE, select_lexical, shortlist
from claude_mini.memory.recall.scan import CandidateScanner
from claude_mini.memory.store import MemoryStore
from tests.memory.memclock import DAY, Clock
from tests.memory.test_recall import main_text, make_runtime, manifest_of, run_turns, select, tool_turn

QUESTION = "which postgres pool size does the reporting job need?"


def save(store: MemoryStore, stem: str, description: str, body: str = "", **kw) -> None:
    store.write(
        f"{stem}.md",
        name=stem.replace("-", " "),
        description=description,
        type=kw.pop("type", "project"),
        body=body or description,
        **kw,
    )


def folder(store: MemoryStore, clock: Clock) -> None:
    """Three old memories gc finds stale, one of which a person forgot instead; one fresh."""
    save(
        store,
        "reporting-pool",
        "The nightly reporting job needs a postgres pool size of 40",
        "REPORTING-POOL-BODY: set pool_size=40 in reporting.toml; 10 starves it.",
    )
    save(store, "old-flags", "Feature flags were read from flags.yaml before the migration")
    save(store, "pool-myth", "Someone thought the reporting pool size should be 5 (wrong)")
    clock.now += 200 * DAY
    save(store, "deploy", "Deploy the billing service to staging with make deploy-billing")
    store.delete("pool-myth.md")  # a person's decision: never brought back by recall
    assert [a.filename for a in gc(store).archived] == ["old-flags.md", "reporting-pool.md"]


@pytest.fixture
def store(store: MemoryStore, clock: Clock) -> MemoryStore:
    folder(store, clock)
    return store


# --- the tier ----------------------------------------------------------------------------
def test_only_what_gc_archived_is_eligible_and_archive_md_is_no_candidate(store):
    tier = ArchiveTier(store)
    view = tier.refresh()
    assert sorted(view.eligible) == ["old-flags.md", "reporting-pool.md"]
    assert "ARCHIVE.md" not in view.index.docs and "pool-myth.md" in view.index.docs
    assert tier.original("archive/reporting-pool.md") == "reporting-pool.md"
    assert tier.candidate("archive/pool-myth.md") is None


def test_an_archive_md_line_pointing_outside_the_archive_is_ignored(store, tmp_path):
    outside = tmp_path / "secret.md"
    outside.write_text("---\nname: postgres pool\ndescription: reporting pool size\n---\nx\n")
    text = store.archive_index_path.read_text()
    line = next(x for x in text.splitlines() if "reporting-pool.md" in x)
    store.archive_index_path.write_text(text + line.replace("(reporting-pool.md)", "(../../secret.md)") + "\n")
    assert "../../secret.md" not in ArchiveTier(store).refresh().eligible


def test_lexical_selection_reaches_the_archive_and_names_it_so(store, clock):
    tier = ArchiveTier(store)
    live = CandidateScanner(store.root)
    live.scan()
    without = select_lexical(QUESTION, live.index)
    assert without == []  # the live folder alone has no answer
    chosen = select_lexical(QUESTION, live.index, archive=tier.refresh())
    assert [f for f, _ in chosen] == ["archive/reporting-pool.md"]
    in_context = {"archive/reporting-pool.md"}  # shown from the archive earlier (restore failed)
    assert select_lexical(QUESTION, live.index, archive=tier.refresh(), exclude=in_context) == []
    names = [f for f, _ in shortlist(QUESTION, live.index, archive=tier.refresh(), exclude=in_context)]
    assert "archive/reporting-pool.md" not in names and "archive/old-flags.md" in names
    assert select_lexical("deploy billing to staging", live.index, archive=tier.refresh())[0][0] == "deploy.md"


def test_the_shortlist_ranks_archived_and_live_files_together(store, clock):
    tier = ArchiveTier(store)
    live = CandidateScanner(store.root)
    live.scan()
    view = tier.refresh()
    assert [f for f, _ in shortlist(QUESTION, live.index, 1, archive=view)] == [
        "archive/reporting-pool.md"
    ]  # the best match, though gc archived it
    everything = [f for f, _ in shortlist(QUESTION, live.index, 10, archive=view)]
    # the best match first, then the rest of both tiers; never what a person forgot
    assert everything[0] == "archive/reporting-pool.md"
    assert sorted(everything) == ["archive/old-flags.md", "archive/reporting-pool.md", "deploy.md"]
    unrelated = [f for f, _ in shortlist("frontend colours", live.index, 10, archive=view)]
    assert sorted(unrelated) == ["archive/old-flags.md", "archive/reporting-pool.md", "deploy.md"]


def test_bring_back_restores_the_file_its_index_line_and_counts_a_use(store, clock):
    tier = ArchiveTier(store)
    tier.refresh()
    archived_bytes = (store.archive_dir / "reporting-pool.md").read_bytes()
    assert tier.bring_back("archive/reporting-pool.md", clock.now) == "reporting-pool.md"
    assert (store.root / "reporting-pool.md").read_bytes() == archived_bytes
    assert "reporting-pool.md" in store.index_text()
    assert store.usage()["reporting-pool.md"]["last_used"] == clock.now
    assert "reporting-pool.md" not in tier.refresh().eligible
    assert tier.bring_back("archive/reporting-pool.md", clock.now) is None  # already back


def test_bring_back_of_a_file_removed_meanwhile_is_none(store, clock):
    tier = ArchiveTier(store)
    tier.refresh()
    (store.archive_dir / "old-flags.md").unlink()
    assert tier.bring_back("archive/old-flags.md", clock.now) is None


def test_the_manifest_stays_at_200_with_archived_offers(store):
    for i in range(SHORTLIST_SIZE):
        save(store, f"service-{i:03d}", f"Service {i:03d} runbook: restart it with make restart-{i}")
    manifest, _, _ = RecallEngine(store, config=None).local_pass(QUESTION, frozenset())
    assert len(manifest) == SHORTLIST_SIZE
    assert manifest[-1].filename == "archive/reporting-pool.md"


# --- through the agent loop ----------------------------------------------------------------
def archive_old_memory(rt) -> None:
    clock = Clock()
    rt.store.clock = clock
    folder(rt.store, clock)


def test_lexical_recall_brings_an_archived_memory_back_into_the_turn(repo, fake_server):
    rt = make_runtime(repo, fake_server, {"recall": {"strategy": "lexical"}})
    archive_old_memory(rt)
    tool_turn(fake_server)
    run_turns(rt, QUESTION)
    text = main_text(fake_server, 1)
    assert "Recalled memory: reporting-pool.md" in text and "REPORTING-POOL-BODY" in text
    assert str(rt.store.root / "reporting-pool.md") in text  # the live path, not archive/
    assert "reporting-pool.md" in rt.store.index_text()
    assert not (rt.store.archive_dir / "reporting-pool.md").exists()
    assert any("brought reporting-pool.md back from the archive" in n.text for n in rt.notices.said())
    usage = json.loads((rt.store.root / "usage.json").read_text())["files"]
    assert usage["reporting-pool.md"]["count"] == 1  # restoring counted once, not twice


def test_model_recall_sees_archived_files_marked_and_may_pick_one(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    archive_old_memory(rt)
    select(fake_server, "archive/reporting-pool.md")
    tool_turn(fake_server)
    run_turns(rt, QUESTION)
    manifest = manifest_of(fake_server.requests_for("recall")[0])
    assert "- [project] deploy.md (" in manifest
    line = next(x for x in manifest.splitlines() if "archive/reporting-pool.md" in x)
    assert ", archived): The nightly reporting job" in line
    assert "pool-myth" not in manifest  # a person forgot it: recall never offers it
    assert "- [project] archive/old-flags.md (" in manifest  # gc's archive is a prior, not a wall
    assert "REPORTING-POOL-BODY" in main_text(fake_server, 1)
    assert (rt.store.root / "reporting-pool.md").is_file()
