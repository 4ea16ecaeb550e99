"""Layer 3 lexical helper: tokenising, BM25 ranking, shortlist, selection, the scan cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claude_mini.memory.recall.lexical import (
    SHORTLIST_SIZE,
    LexicalIndex,
    candidate_from_text,
    manifest_line,
    rank,
    select_lexical,
    shortlist,
    stem,
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


# --- tokenising ----------------------------------------------------------------------
def test_tokenize_splits_case_styles_and_drops_stop_words():
    assert tokenize("The getUserName of user_name and kebab-case") == [
        "user",
        "name",
        "getusernam",
        "user",
        "name",
        "kebab",
        "case",
        "usernam",
        "kebabcas",
    ]
    assert tokenize("PostgreSQL HTTPServer k8s python3") == [
        "postgr",
        "sql",
        "postgresql",
        "http",
        "server",
        "httpserver",
        "k8s",
        "python",
        "python3",
    ]


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("tests", "test"),
        ("testing", "test"),
        ("tested", "test"),
        ("running", "run"),
        ("dependencies", "dependency"),
        ("installing", "install"),
        ("class", "class"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("deploys", "deploy"),
        ("caching", "cach"),
        ("cache", "cach"),
    ],
)
def test_stem_is_light_and_deterministic(word: str, expected: str):
    assert stem(word) == expected


def test_on_call_meets_oncall():
    assert "oncall" in tokenize("on-call rotation") and "oncall" in tokenize("oncall")


# --- ranking -------------------------------------------------------------------------
def test_relevant_document_ranks_first():
    for query, best in [
        ("how do I deploy billing to staging?", "deploy-billing.md"),
        ("should tests use setUp or fixtures", "pytest-fixtures.md"),
        ("users logged out, redis evicted their session", "redis-sessions.md"),
        ("explain this React component", "user-role.md"),
        ("429 too many requests from the gateway", "rate-limits.md"),
    ]:
        ranked = rank(query, CORPUS, NOW)
        assert ranked[0][0] == best, query
        assert ranked[0][1] > ranked[1][1]
    assert len(rank("deploy", CORPUS, NOW)) == len(CORPUS)


def test_rank_is_deterministic_and_ties_break_by_filename():
    twins = [doc("b.md", "identical words here"), doc("a.md", "identical words here")]
    assert [f for f, _ in rank("identical words", twins, NOW)] == ["a.md", "b.md"]


def test_recency_prior_only_breaks_ties():
    old = doc("old.md", "kafka consumer group rebalancing", age_days=400)
    new = doc("new.md", "kafka consumer group rebalancing", age_days=1)
    unrelated_new = doc("zzz.md", "tailwind classes for cards", age_days=0)
    ranked = rank("kafka rebalancing", [old, new, unrelated_new], NOW)
    assert [f for f, _ in ranked] == ["new.md", "old.md", "zzz.md"]
    assert ranked[0][1] - ranked[1][1] < 0.1


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
    picked = [f for f, _ in shortlist("the websocket test failed on CI again", index, 200, NOW)]
    assert len(picked) == 200
    assert picked[0] == "flaky-websocket.md"
    # With no lexical match at all, the manifest falls back to the newest files.
    picked = [f for f, _ in shortlist("zebra", index, 3, NOW)]
    assert picked == ["n000.md", "n001.md", "n002.md"]


def test_shortlist_returns_everything_below_k_and_honours_exclude():
    picked = shortlist("deploy", CORPUS, SHORTLIST_SIZE, NOW, exclude={"user-role.md"})
    assert sorted(f for f, _ in picked) == sorted(d.filename for d in CORPUS if d.filename != "user-role.md")


def test_select_lexical_picks_clear_matches_and_nothing_for_unrelated_queries():
    assert [f for f, _ in select_lexical("deploy billing to staging", CORPUS, now=NOW)] == ["deploy-billing.md"]
    for query in ("thanks, that works!", "convert this loop to a comprehension", "", "the a"):
        assert select_lexical(query, CORPUS, now=NOW) == []
    assert select_lexical("deploy billing", CORPUS, now=NOW, exclude={"deploy-billing.md"}) == []


def test_select_lexical_returns_at_most_k():
    docs = [doc(f"d{i}.md", "pgbouncer connection pool exhaustion") for i in range(9)]
    docs += [doc(f"other{i}.md", f"unrelated topic number {i}") for i in range(50)]
    assert len(select_lexical("pgbouncer pool exhaustion", docs, k=5, now=NOW)) == 5


def test_scores_do_not_depend_on_the_number_of_memories():
    small = select_lexical("deploy billing staging", CORPUS, now=NOW)
    padding = [doc(f"p{i}.md", f"unrelated topic number {i}") for i in range(300)]
    large = select_lexical("deploy billing staging", [*CORPUS, *padding], now=NOW)
    assert [f for f, _ in small] == [f for f, _ in large]
    assert abs(small[0][1] - large[0][1]) / small[0][1] < 0.5


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
    assert sorted(f for f, _ in rank("kafka", scanner.index, NOW)[:2]) == ["b.md", "d.md"]
    assert "c.md" not in scanner.index.docs and "charlie" not in scanner.index.postings
    # The incrementally updated index scores exactly like one built from scratch.
    fresh = LexicalIndex(found)
    assert rank("bravo kafka", scanner.index, NOW) == rank("bravo kafka", fresh, NOW)
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
    assert shortlist("anything", scanner.index, now=NOW) == []
    assert select_lexical("anything", scanner.index, now=NOW) == []
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
    assert rank("bravo kafka", second.index, NOW) == rank("bravo kafka", LexicalIndex(found), NOW)
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


# --- scripts without spaces ------------------------------------------------------------
def test_chinese_is_split_into_bigrams_and_never_swallows_latin_words():
    assert tokenize("数据库迁移") == ["数据", "据库", "库迁", "迁移"]
    assert tokenize("怎么部署billing-api到staging") == [
        "怎么",
        "么部",
        "部署",
        "bill",
        "api",
        "到",
        "stag",
        "billingapi",
    ]
    assert tokenize("的") == []


def test_a_chinese_query_finds_chinese_and_mixed_memories():
    docs = CORPUS + [
        doc("db-migration-zh.md", "数据库迁移之前必须先备份生产库", "用 pg_dump 备份。"),
        doc("staging-zh.md", "staging 环境每周一重置，测试数据会丢失"),
    ]
    assert [f for f, _ in select_lexical("迁移数据库前要做什么", docs, now=NOW)] == ["db-migration-zh.md"]
    assert rank("为什么 staging 的数据没了", docs, NOW)[0][0] == "staging-zh.md"
    assert rank("怎么部署 billing 到 staging", docs, NOW)[0][0] == "deploy-billing.md"


def test_the_last_quarter_of_the_manifest_goes_to_the_query_widened_by_its_best_matches():
    docs = [
        doc(f"totals-{i}.md", text)
        for i, text in enumerate(
            [
                "Totals dashboard lives in Grafana",
                "Totals for the quarterly board deck",
                "Totals column hidden in the CSV export",
                "Totals cache is warmed at six",
                "Totals endpoint is paginated by tenant",
                "Totals need the region filter",
            ]
        )
    ]
    docs += [
        doc("rounding-note.md", "Totals off by a penny: round half-even once, in decimal"),
        doc("decimal-gotcha.md", "Money is decimal, rounded half-even once at the end"),
    ]
    query = "why are the totals off by a penny"
    assert "decimal-gotcha.md" not in LexicalIndex(docs).bm25(query)  # no word in common
    short = [f for f, _ in shortlist(query, docs, 5, NOW)]
    assert short[:4] == [f for f, _ in rank(query, docs, NOW)][:4]  # three quarters unchanged
    assert short[4] == "decimal-gotcha.md"  # reached through "decimal", "half-even", "once"


def test_a_query_word_counts_once_however_it_is_split():
    docs = [
        doc("git-hooks.md", "Git hooks run the linters before a commit"),
        doc("hub-notes.md", "The hub service fans events out"),
    ] + CORPUS
    index = LexicalIndex(docs)
    one_word = index.bm25("GitHub")  # git, hub and github: the best of them, not their sum
    assert one_word["git-hooks.md"] == pytest.approx(index.bm25("git")["git-hooks.md"])
    assert "between" not in tokenize("the difference between them")
