"""Layer 3's ranking: tokenising, BM25 fused with embeddings, shortlist, selection, the scan cache."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest

from claude_mini.memory.recall import embed
from claude_mini.memory.recall.lexical import (
    SHORTLIST_SIZE,
    LexicalIndex,
    candidate_from_text,
    manifest_line,
    rank,
    select_lexical,
    shortlist,
    tokenize,
)
from claude_mini.memory.recall.scan import CandidateScanner
from claude_mini.memory.store import iso_utc
from claude_mini.memory.store.folder import HEAD_LINES

NOW = 1_796_000_000.0
DAY = 86_400.0


def memory(name: str, description: str, body: str = "", type_: str = "project") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n\n{body}\n"


def doc(filename: str, description: str, body: str = "", age_days: float = 10.0):
    text = memory(filename.removesuffix(".md"), description, body)
    return candidate_from_text(filename, text, NOW - age_days * DAY)


CORPUS = [
    doc(
        "deploy-billing.md",
        "How to deploy the billing service to staging and production",
        "Run make deploy-billing; needs the VPN.",
    ),
    doc(
        "pytest-fixtures.md",
        "Use pytest fixtures instead of unittest setUp methods",
        "Shared fixtures live in conftest.py.",
    ),
    doc(
        "redis-sessions.md",
        "Redis eviction incident wiped user sessions in September",
        "Sessions now have their own Redis instance.",
    ),
    doc("user-role.md", "User is a backend engineer who is new to React and TypeScript"),
    doc("rate-limits.md", "Gateway rate limits: 600 requests per minute per API key"),
]


def same_ranking(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    return [f for f, _ in a] == [f for f, _ in b] and [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-3)


@pytest.fixture
def without_embeddings(monkeypatch: pytest.MonkeyPatch):
    """The embedding package hidden, as on an install without it."""
    monkeypatch.setitem(sys.modules, "wordllama", None)  # `import wordllama` now raises ImportError
    embed.reset_for_tests()
    yield
    embed.reset_for_tests()


# --- tokenising ----------------------------------------------------------------------
def test_tokenize_stems_with_snowball_and_drops_stop_words_and_single_letters():
    assert tokenize("The runners were running databases quickly") == ["runner", "run", "databas", "quick"]
    assert tokenize("what is a b c") == []
    assert tokenize("snake_case and kebab-case") == ["snake", "case", "kebab", "case"]


# --- ranking -------------------------------------------------------------------------
def test_relevant_document_ranks_first():
    for query, best in [
        ("how do I deploy billing to staging?", "deploy-billing.md"),
        ("should tests use setUp or fixtures", "pytest-fixtures.md"),
        ("users logged out, redis evicted their session", "redis-sessions.md"),
        ("explain this React component", "user-role.md"),
        ("429 too many requests from the gateway", "rate-limits.md"),
    ]:
        ranked = rank(query, CORPUS)
        assert ranked[0][0] == best, query
        assert ranked[0][1] > ranked[1][1]
    assert len(rank("deploy", CORPUS)) == len(CORPUS)  # with embeddings every file has a rank


def test_rank_is_deterministic_and_ties_break_by_filename():
    twins = [doc("b.md", "identical words here"), doc("a.md", "identical words here")]
    assert [f for f, _ in rank("identical words", twins)] == ["a.md", "b.md"]


def test_embeddings_reach_a_memory_worded_differently_from_the_request():
    docs = [
        *CORPUS,
        doc("test-env-db.md", "We moved the test environment to Postgres 16", "The pre-production cluster runs it."),
        doc("ci-cache.md", "The CI cache is keyed by the lockfile hash"),
    ]
    index = LexicalIndex(docs)
    query = "which sql database backs QA?"
    assert "test-env-db.md" not in index.bm25(query)  # not one word in common
    assert max(index.cosines(query).items(), key=lambda kv: kv[1])[0] == "test-env-db.md"
    assert rank(query, index)[0][0] == "test-env-db.md"


def test_without_the_embedding_package_recall_ranks_by_bm25_and_says_so_once_at_debug(
    without_embeddings, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.DEBUG, logger="claude_mini.memory.recall.embed")
    index = LexicalIndex(CORPUS)
    assert index.cosines("deploy billing") == {}
    assert [f for f, _ in select_lexical("deploy billing to staging", index)] == ["deploy-billing.md"]
    assert rank("redis sessions", index)[0][0] == "redis-sessions.md"
    assert len(rank("redis sessions", index)) == 1  # only BM25 matches are ranked
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and lines[0].startswith("memory recall ranks by BM25 only")


def test_loading_the_model_leaves_the_root_logger_alone(monkeypatch: pytest.MonkeyPatch):
    for name in [m for m in sys.modules if m == "wordllama" or m.startswith("wordllama.")]:
        monkeypatch.delitem(sys.modules, name)  # imported afresh: its import calls basicConfig
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])  # as in the CLI (pytest's own would hide basicConfig)
    before = ([], root.level)
    embed.reset_for_tests()
    try:
        assert embed.embedder() is not None
    finally:
        embed.reset_for_tests()
    assert (list(root.handlers), root.level) == before


def test_shortlist_keeps_an_old_relevant_memory_among_500_newer_ones():
    newer = [
        doc(
            f"n{i:03}.md",
            f"Deploy notes for component {i} in the cluster",
            f"Component {i} restarts cleanly.",
            age_days=i / 10,
        )
        for i in range(500)
    ]
    old = doc("flaky-websocket.md", "The websocket reconnect test is flaky on CI; retry it", age_days=700)
    index = LexicalIndex([*newer, old])
    picked = [f for f, _ in shortlist("the websocket test failed on CI again", index, 200)]
    assert len(picked) == 200
    assert picked[0] == "flaky-websocket.md"


def test_with_bm25_alone_a_query_matching_nothing_is_offered_the_newest():
    index = LexicalIndex([doc(f"n{i}.md", f"component {i} notes", age_days=i) for i in range(5)], embeddings=False)
    assert [f for f, _ in shortlist("zebra", index, 3)] == ["n0.md", "n1.md", "n2.md"]


def test_shortlist_returns_everything_below_k_and_honours_exclude():
    picked = shortlist("deploy", CORPUS, SHORTLIST_SIZE, exclude={"user-role.md"})
    assert sorted(f for f, _ in picked) == sorted(d.filename for d in CORPUS if d.filename != "user-role.md")


def test_select_lexical_picks_clear_matches_and_nothing_for_unrelated_queries():
    assert [f for f, _ in select_lexical("deploy billing to staging", CORPUS)] == ["deploy-billing.md"]
    for query in ("thanks, that works!", "convert this loop to a comprehension", "", "the a"):
        assert select_lexical(query, CORPUS) == []
    assert select_lexical("deploy billing", CORPUS, exclude={"deploy-billing.md"}) == []


def test_select_lexical_returns_at_most_k():
    docs = [doc(f"d{i}.md", "pgbouncer connection pool exhaustion") for i in range(9)]
    docs += [doc(f"other{i}.md", f"unrelated topic number {i}") for i in range(50)]
    assert len(select_lexical("pgbouncer pool exhaustion", docs, k=5)) == 5


def test_the_cut_does_not_depend_on_the_number_of_memories():
    small = select_lexical("deploy billing staging", CORPUS)
    padding = [doc(f"p{i}.md", f"unrelated topic number {i}") for i in range(300)]
    large = select_lexical("deploy billing staging", [*CORPUS, *padding])
    assert [f for f, _ in small] == [f for f, _ in large] == ["deploy-billing.md"]


def test_only_the_first_30_lines_are_indexed():
    body = "\n".join(["filler line"] * 40 + ["zanzibar appears late"])
    late = candidate_from_text("late.md", memory("Late", "some description words", body), NOW)
    assert "zanzibar" not in late.terms
    assert len(late.head_text.splitlines()) <= HEAD_LINES


def test_manifest_line_format():
    cand = candidate_from_text("deploy.md", memory("Deploy", "Deploy  the billing service"), 1_790_000_000.0)
    assert manifest_line(cand) == (f"- [project] deploy.md ({iso_utc(1_790_000_000.0)}): Deploy the billing service")
    assert iso_utc(1_790_000_000.0) == "2026-09-21T14:13:20Z"
    broken = candidate_from_text("x.md", "first line of a note\n", 1_790_000_000.0)
    assert manifest_line(broken).startswith("- [untyped] x.md (")


# --- the scanner ---------------------------------------------------------------------
def write(root: Path, name: str, description: str, mtime: float = NOW - DAY) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(memory(name.removesuffix(".md"), description))
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "a.md", "alpha service deploy steps")
    write(root, "b.md", "bravo service flaky tests")
    write(root, "c.md", "charlie dashboards in grafana")
    write(root, "MEMORY.md", "the index is not a candidate")
    write(root, "archive/old.md", "archived alpha memory")
    write(root, "logs/2026/01/2026-01-01.md", "log of alpha")
    write(root, ".hidden.md", "hidden alpha")
    (root / "bin.md").write_bytes(b"\x00binary")
    return root


def test_scanner_lists_candidates_like_the_store(folder: Path):
    scanner = CandidateScanner(folder)
    found = scanner.scan()
    assert [c.filename for c in found] == ["a.md", "b.md", "c.md"]
    assert [s.path.name for s in scanner.skipped] == ["bin.md"]
    assert found[0].type == "project" and found[0].description == "alpha service deploy steps"
    assert scanner.reads == 4


def test_scanner_rereads_only_changed_files(folder: Path):
    scanner = CandidateScanner(folder)
    scanner.scan()
    assert list(scanner.index.newest_first()) == ["a.md", "b.md", "c.md"]  # equal mtimes
    first = scanner.reads
    scanner.scan()
    assert scanner.reads == first  # warm: stat only
    write(folder, "b.md", "bravo service now about kafka", mtime=NOW)
    write(folder, "d.md", "delta new memory about kafka")
    (folder / "c.md").unlink()
    found = scanner.scan()
    assert scanner.reads == first + 2
    assert [c.filename for c in found] == ["a.md", "b.md", "d.md"]
    assert sorted(f for f, _ in rank("kafka", scanner.index)[:2]) == ["b.md", "d.md"]
    assert "c.md" not in scanner.index.docs and "charlie" not in scanner.index.bm25("charlie")
    # The incrementally updated index scores exactly like one built from scratch.
    fresh = LexicalIndex(found)
    assert same_ranking(rank("bravo kafka", scanner.index), rank("bravo kafka", fresh))
    assert list(scanner.index.newest_first()) == list(fresh.newest_first()) == ["b.md", "a.md", "d.md"]


def test_scanner_detects_same_size_rewrite_by_mtime(folder: Path):
    scanner = CandidateScanner(folder)
    scanner.scan()
    path = folder / "a.md"
    path.write_text(path.read_text().replace("alpha", "omega"))
    os.utime(path, (NOW, NOW))
    assert scanner.scan()[0].description == "omega service deploy steps"


def test_scanner_skips_symlinks_leaving_the_folder(folder: Path, tmp_path: Path):
    outside = write(tmp_path, "outside.md", "outside secret")
    (folder / "link.md").symlink_to(outside)
    (folder / "inner-link.md").symlink_to(folder / "a.md")
    scanner = CandidateScanner(folder)
    names = [c.filename for c in scanner.scan()]
    assert "link.md" not in names and "inner-link.md" in names
    assert any(s.path.name == "link.md" for s in scanner.skipped)


def test_scanner_tolerates_a_missing_folder(tmp_path: Path):
    scanner = CandidateScanner(tmp_path / "nope")
    assert scanner.scan() == []
    assert shortlist("anything", scanner.index) == []
    assert select_lexical("anything", scanner.index) == []
    assert not (tmp_path / "nope").exists()


def test_scanner_ignores_fifos(folder: Path):
    os.mkfifo(folder / "pipe.md")
    assert [c.filename for c in CandidateScanner(folder).scan()] == ["a.md", "b.md", "c.md"]


# --- the on-disk index -----------------------------------------------------------------
def test_a_new_process_reads_only_what_changed_since_the_saved_index(folder: Path, tmp_path: Path):
    cache = tmp_path / "cache" / "index.json"
    first = CandidateScanner(folder, cache_file=cache)
    before = first.scan()
    first.save_cache()
    assert cache.is_file() and str(folder) not in os.listdir(folder)  # nothing in the folder
    write(folder, "b.md", "bravo service now about kafka", mtime=NOW)
    (folder / "c.md").unlink()
    second = CandidateScanner(folder, cache_file=cache)  # as a new process would
    found = second.scan()
    assert second.reads == 1  # b.md changed; bin.md's skip reason was kept too
    assert [c.filename for c in found] == ["a.md", "b.md"]
    assert same_ranking(rank("bravo kafka", second.index), rank("bravo kafka", LexicalIndex(found)))
    assert found[0].terms == before[0].terms and found[0].path == folder / "a.md"
    second.save_cache()
    third = CandidateScanner(folder, cache_file=cache)
    third.scan()
    assert third.reads == 0


@pytest.mark.parametrize(
    "damage", ["not json", '{"version": 2, "root": "/x", "files": {}}', '{"version": 2, "files": {"a.md": [1]}}', "[]"]
)
def test_a_damaged_or_foreign_index_is_ignored_and_rewritten(folder: Path, tmp_path: Path, damage: str):
    cache = tmp_path / "index.json"
    cache.write_text(
        damage.replace('"files"', f'"root": "{os.path.realpath(folder)}", "files"')
        if '"root"' not in damage
        else damage
    )
    scanner = CandidateScanner(folder, cache_file=cache)
    assert [c.filename for c in scanner.scan()] == ["a.md", "b.md", "c.md"]
    assert scanner.reads == 4  # everything read, as without an index
    scanner.save_cache()
    again = CandidateScanner(folder, cache_file=cache)
    again.scan()
    assert again.reads == 0


def test_an_unwritable_cache_costs_nothing_but_the_next_read(folder: Path, tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    scanner = CandidateScanner(folder, cache_file=blocker / "index.json")  # parent is a file
    scanner.scan()
    scanner.save_cache()  # logged, not raised
    assert [c.filename for c in scanner.scan()] == ["a.md", "b.md", "c.md"]


def test_the_saved_index_keeps_vectors_and_the_bm25_matrix_so_a_new_process_computes_neither(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    cache = tmp_path / "cache" / "index.json"
    first = CandidateScanner(folder, cache_file=cache)
    first.scan()
    expected = rank("alpha deploy", first.index)  # builds both
    first.save_cache()
    assert sorted(p.suffix for p in cache.parent.iterdir()) == [".bm25", ".json", ".npy"]
    calls: list[int] = []
    real_embed = embed.embed
    monkeypatch.setattr(embed, "embed", lambda texts, **kw: calls.append(len(texts)) or real_embed(texts, **kw))
    second = CandidateScanner(folder, cache_file=cache)
    second.scan()
    assert second.index.bm25_dump is not None and len(second.index.vectors) == 3
    assert same_ranking(rank("alpha deploy", second.index), expected)
    assert calls == [1]  # the query alone: no memory embedded again
    write(folder, "b.md", "bravo service now about kafka", mtime=NOW)
    second.scan()
    rank("kafka", second.index)
    assert calls == [1, 1, 1]  # the changed file, then the query
    second.save_cache()
    assert len(list(cache.parent.glob("*.npy"))) == 1  # the old companions are gone


def test_damaged_companions_are_ignored(folder: Path, tmp_path: Path):
    cache = tmp_path / "index.json"
    first = CandidateScanner(folder, cache_file=cache)
    first.scan()
    expected = rank("alpha deploy", first.index)
    first.save_cache()
    for npy in tmp_path.glob("*.npy"):
        npy.write_bytes(b"not numpy")
    second = CandidateScanner(folder, cache_file=cache)
    second.scan()
    assert second.reads == 0 and not second.index.vectors
    assert same_ranking(rank("alpha deploy", second.index), expected)


# --- scripts without spaces ------------------------------------------------------------
def test_chinese_is_split_into_bigrams_and_never_swallows_latin_words():
    assert tokenize("数据库迁移") == ["数据", "据库", "库迁", "迁移"]
    assert tokenize("怎么部署billing-api到staging") == ["怎么", "么部", "部署", "到", "bill", "api", "stage"]
    assert tokenize("的") == []


def test_a_chinese_query_finds_chinese_and_mixed_memories():
    docs = CORPUS + [
        doc("db-migration-zh.md", "数据库迁移之前必须先备份生产库", "用 pg_dump 备份。"),
        doc("staging-zh.md", "staging 环境每周一重置，测试数据会丢失"),
    ]
    assert [f for f, _ in select_lexical("迁移数据库前要做什么", docs)] == ["db-migration-zh.md"]
    assert rank("为什么 staging 的数据没了", docs)[0][0] == "staging-zh.md"
    assert rank("怎么部署 billing 到 staging", docs)[0][0] == "deploy-billing.md"
