"""Corrections supersede (memory/extract/supersede.py): the links, what recall offers, gc's order, the
prompt's view of an overfull MEMORY.md, extraction's and `memory add`'s marking."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from claude_mini.base import paths
from claude_mini.commands.memory import MemoryContext, add_memory, list_data, list_lines
from claude_mini.config.memory_settings import ForgetSettings
from claude_mini.memory.extract.gate import no_gate
from claude_mini.memory.extract.supersede import (
    apply_link,
    apply_links,
    guess_replaced,
    mark_superseded,
    with_frontmatter_line,
)
from claude_mini.memory.maintenance.doctor import doctor
from claude_mini.memory.maintenance.forget import gc, likely_duplicates
from claude_mini.memory.recall.lexical import candidate_from_text
from claude_mini.memory.store import (
    INDEX_MAX_LINES,
    MemoryStore,
    format_memory,
    memory_prompt_section,
    parse_memory_text,
)
from claude_mini.memory.store.keep import keep_scores, overflow_order
from claude_mini.memory.store.links import hidden, superseded_names
from claude_mini.ui.memory_commands import split_add_options
from tests.fake_anthropic import Reply
from tests.memory.memclock import DAY, Clock


def save(store: MemoryStore, stem: str, description: str | None = None, **kw) -> str:
    store.write(
        f"{stem}.md",
        name=kw.pop("name", stem.replace("-", " ").title()),
        description=description or f"How the {stem.replace('-', ' ')} part works today",
        type=kw.pop("type", "project"),
        body=kw.pop("body", f"Details about {stem}."),
        **kw,
    )
    return f"{stem}.md"


def candidate(filename: str, successor: str = ""):
    fm = f"superseded_by: {successor}\n" if successor else ""
    text = f"---\nname: {filename}\ndescription: d\ntype: project\n{fm}---\nbody\n"
    return candidate_from_text(filename, text, 0.0)


# --- who is current ------------------------------------------------------------------
def test_a_chain_shows_only_its_live_head():
    live = {"a.md", "b.md", "c.md"}
    assert hidden({"a.md": "b.md", "b.md": "c.md", "c.md": ""}, live) == {"a.md", "b.md"}
    # The successor is gone: the old memory is current again.
    assert hidden({"a.md": "b.md", "b.md": ""}, {"a.md"}) == set()
    # A chain through a gone member ends there: b is gone, so a is its own head.
    assert hidden({"a.md": "b.md", "c.md": ""}, {"a.md", "c.md"}) == set()


def test_a_cycle_or_a_self_link_hides_nobody():
    assert hidden({"a.md": "b.md", "b.md": "a.md"}, {"a.md", "b.md"}) == set()
    assert hidden({"a.md": "a.md"}, {"a.md"}) == set()
    # A memory leading into a cycle is not hidden either: the cycle has no head.
    assert hidden({"x.md": "a.md", "a.md": "b.md", "b.md": "a.md"}, {"x.md", "a.md", "b.md"}) == set()


def test_superseded_names_cover_live_and_archived_files():
    live = {"old.md": candidate("old.md", "new.md"), "new.md": candidate("new.md")}
    archived = {"older.md": candidate("older.md", "new.md"), "gone.md": candidate("gone.md", "x.md")}
    assert superseded_names(live, archived) == {"old.md", "archive/older.md"}


# --- marking the old file ------------------------------------------------------------
def test_the_mark_is_one_frontmatter_line_and_every_other_byte_is_kept():
    text = "---\nname: Old\ndescription: d\ntype: project\n---\n\nBody with `code`.\n"
    marked = with_frontmatter_line(text, "superseded_by", "new.md")
    assert marked == text.replace("type: project\n", "type: project\nsuperseded_by: new.md\n")
    again = with_frontmatter_line(marked, "superseded_by", "newer: v2.md")
    assert again == text.replace("type: project\n", "type: project\nsuperseded_by: 'newer: v2.md'\n")
    crlf = text.replace("\n", "\r\n")
    assert with_frontmatter_line(crlf, "superseded_by", "n.md") == crlf.replace(
        "type: project\r\n", "type: project\r\nsuperseded_by: n.md\r\n"
    )
    bom = "\ufeff" + text
    assert with_frontmatter_line(bom, "superseded_by", "n.md").startswith("\ufeff---\n")
    assert with_frontmatter_line("no frontmatter\n", "superseded_by", "n.md") is None
    assert with_frontmatter_line("---\nname: x\nunclosed\n", "superseded_by", "n.md") is None


def test_marking_keeps_the_old_files_time(store: MemoryStore):
    save(store, "old")
    path = store.root / "old.md"
    os.utime(path, (1_700_000_000, 1_700_000_000))
    mark_superseded(path, "new.md")
    assert path.stat().st_mtime == 1_700_000_000
    assert parse_memory_text(path.read_text()).frontmatter["superseded_by"] == "new.md"


def test_apply_link_marks_and_drops_the_index_line_which_doctor_does_not_miss(store: MemoryStore):
    old = save(store, "deploy-old")
    new = save(store, "deploy-new", extra_frontmatter={"supersedes": old})
    outcome = apply_link(store, new, old)
    assert outcome.marked == old
    assert outcome.message == (
        f"Marked {old} as superseded by {new}: recall no longer offers it and it left MEMORY.md."
    )
    assert [e.filename for e in store.index_entries()] == [new]
    assert "missing_from_index" not in [f.kind for f in doctor(store) if f.file == old]
    assert apply_links(store, new) == []  # already marked: nothing more to say
    assert likely_duplicates(store, threshold=0.0) == []  # history, not a duplicate


def test_bad_links_are_refused_with_one_line_and_change_nothing(store: MemoryStore):
    a = save(store, "a")
    b = save(store, "b", extra_frontmatter={"supersedes": "a.md"})
    apply_link(store, b, a)
    before = {p.name: p.read_bytes() for p in store.root.glob("*.md")}
    outside = store.root.parent / "outside.md"
    outside.write_text("---\nname: o\ndescription: d\ntype: user\n---\nx\n")
    missing = apply_link(store, b, "nope.md")
    escape = apply_link(store, b, "../outside.md")
    itself = apply_link(store, b, b)
    cycle = apply_link(store, a, b)  # a would supersede b, which supersedes a
    assert "superseded_by" not in outside.read_text()
    assert "there is no memory '../outside.md'" in escape.message
    for outcome in (missing, escape, itself, cycle):
        assert outcome.marked is None and "\n" not in outcome.message
        assert "nothing was marked" in outcome.message
    assert "there is no memory 'nope.md'" in missing.message
    assert "cannot supersede itself" in itself.message
    assert "would be a cycle" in cycle.message
    assert {p.name: p.read_bytes() for p in store.root.glob("*.md")} == before


# --- gc and the prompt's view of an overfull index ---------------------------------------
def test_gc_archives_the_superseded_first_and_keeps_the_correction(store: MemoryStore, clock: Clock):
    old = save(store, "old-rule", type="feedback")  # protected by its type, until superseded
    for i in range(8):
        save(store, f"note-{i}")
    clock.advance(200)  # everything is old now; the correction too
    new = save(store, "new-rule", extra_frontmatter={"supersedes": old})
    apply_link(store, new, old)
    clock.advance(200)
    scores = {s.filename: s for s in keep_scores(store)}
    assert scores[old].score == 0.0 and scores[old].protected is None
    assert scores[new].protected == "correction"
    result = gc(store, ForgetSettings(max_files=5), stale=False)
    archived = [a.filename for a in result.archived]
    assert archived[0] == old and new not in archived
    # With the old one archived, the correction is an ordinary memory again.
    assert {s.filename: s for s in keep_scores(store)}[new].protected is None


def test_an_overfull_index_leaves_out_the_oldest_and_least_used_not_the_newest(store: MemoryStore, clock: Clock):
    names = []
    for i in range(INDEX_MAX_LINES + 50):  # appended in order: the newest lines are the last
        clock.advance(1)
        names.append(save(store, f"note-{i:03d}", description=f"Note number {i:03d} of the build"))
    store.record_use([names[3]])  # the oldest, but used lately: it stays
    fix = save(store, "note-fix", extra_frontmatter={"supersedes": names[10]})
    apply_link(store, fix, names[10])
    section = memory_prompt_section(store)
    assert "(note-249.md)" in section and "(note-fix.md)" in section  # the newest lines survive
    assert "(note-003.md)" in section
    assert "(note-000.md)" not in section and "(note-051.md)" not in section
    assert "(note-052.md)" in section
    assert (
        "> WARNING: MEMORY.md is 250 lines (limit: 200). 200 lines were loaded: the 50 oldest "
        "and least-used entries were left out (`claude-mini memory gc` archives them)"
    ) in section
    # The superseded memory would go first (it has no line any more), then the oldest unused.
    assert overflow_order(store)[:3] == ["note-010.md", "note-000.md", "note-001.md"]


# --- extraction ----------------------------------------------------------------------------
def test_extraction_writing_a_successor_marks_the_old_memory(repo: Path, fake_server):
    from claude_mini.config import load_config
    from claude_mini.config.layers import merge
    from claude_mini.llm.anthropic_client import AnthropicClient
    from claude_mini.runtime import build_runtime

    memdir = paths.memory_dir(repo)
    config = load_config(repo)
    config.settings = merge(config.settings, {"recall": {"strategy": "off"}})
    rt = build_runtime(config, client=AnthropicClient(base_url=fake_server.base_url, api_key="t"))
    rt.extractor.gate = no_gate
    rt.store.write(
        "project_deploy.md",
        name="Deploy",
        description="deploy with make deploy-old",
        type="project",
        body="make deploy-old",
    )
    new_text = format_memory(
        name="Deploy v2",
        description="deploy with scripts/deploy.sh now",
        type="project",
        body="scripts/deploy.sh",
        extra_frontmatter={"supersedes": "project_deploy.md"},
    )
    bad_text = format_memory(
        name="Other",
        description="something else entirely",
        type="project",
        body="x",
        extra_frontmatter={"supersedes": "missing.md"},
    )
    fake_server.on(Reply.text("Noted."), purpose="main")
    fake_server.on(
        Reply.tools(
            [
                ("Write", {"file_path": str(memdir / "project_deploy_v2.md"), "content": new_text}),
                ("Write", {"file_path": str(memdir / "project_other.md"), "content": bad_text}),
            ]
        ),
        purpose="extract",
    )
    fake_server.on(Reply.text("Saved."), purpose="extract")
    said: list[tuple[str, str]] = []
    rt.notices.say = lambda text, level="info", **kw: said.append((level, text))

    async def go() -> None:
        async for _ in rt.agent.run("deploys now go through scripts/deploy.sh, not make"):
            pass
        assert await rt.extractor.wait(10)
        await rt.client.aclose()

    asyncio.run(go())
    prompt = fake_server.requests_for("extract")[0].body["messages"][-1]["content"][-1]["text"]
    assert "add `supersedes: old_file.md` to the new file's frontmatter" in prompt
    old_fm = parse_memory_text((memdir / "project_deploy.md").read_text()).frontmatter
    assert old_fm["superseded_by"] == "project_deploy_v2.md"
    assert "project_deploy.md" not in [e.filename for e in rt.store.index_entries()]
    assert (
        "saved",
        "Marked project_deploy.md as superseded by project_deploy_v2.md: recall no "
        "longer offers it and it left MEMORY.md.",
    ) in said
    assert any(
        level == "warning"
        and "project_other.md says it supersedes missing.md, but there is no memory 'missing.md'" in text
        for level, text in said
    )
    entries = [json.loads(line) for line in rt.session.transcript.path.read_text().splitlines()]
    assert {"file": "project_deploy.md", "by": "project_deploy_v2.md"}.items() <= next(
        e for e in entries if e.get("subtype") == "memory_superseded"
    ).items()


# --- memory add ------------------------------------------------------------------------------
def test_memory_add_supersedes_by_option_and_says_so(repo: Path):
    mc = MemoryContext.for_cwd(repo)
    add_memory(mc, "Staging deploys run make deploy-billing from the main branch")
    old = mc.store.list()[0].filename
    lines = add_memory(mc, "Billing deploys go through the release pipeline", supersedes=old)
    new = next(r.filename for r in mc.store.list() if r.filename != old)
    assert lines[2].startswith(f"Marked {old} as superseded by {new}: ")
    assert parse_memory_text((mc.store.root / new).read_text()).frontmatter["supersedes"] == old
    assert f"[superseded by {new}]" in "\n".join(list_lines(list_data(mc)))


def test_memory_add_with_a_bad_supersedes_saves_without_it(repo: Path):
    mc = MemoryContext.for_cwd(repo)
    lines = add_memory(mc, "Billing deploys go through the release pipeline", supersedes="nope")
    assert lines[2].startswith("Note: --supersedes nope was ignored: there is no memory 'nope'")
    (record,) = mc.store.list()
    assert "supersedes" not in record.frontmatter


def test_memory_add_guesses_a_correction_and_leaves_unrelated_memories_alone(repo: Path):
    mc = MemoryContext.for_cwd(repo)
    add_memory(mc, "Deploy billing to staging with make deploy-billing, VPN first")
    add_memory(mc, "The billing dashboard lives in grafana under billing-latency")
    first = {r.filename for r in mc.store.list()}
    lines = add_memory(
        mc, "Deploy billing to staging no longer uses make deploy-billing; it moved to the release pipeline instead"
    )
    assert any(
        line.startswith("Marked deploy-billing-to-staging-with-make-deploy.md as superseded by ")
        and "says 'no longer'" in line
        for line in lines
    )
    # Without a correction cue nothing is guessed, however similar.
    unrelated = add_memory(mc, "Billing dashboard alerts page the on-call engineer")
    assert not any(line.startswith("Marked") for line in unrelated)
    assert len(first) == 2


def test_a_link_may_name_the_old_memory_by_its_name(store: MemoryStore):
    old = save(store, "old-deploy", name="Deploy steps")
    new = save(store, "new-deploy", extra_frontmatter={"supersedes": "Deploy steps"})
    (outcome,) = apply_links(store, new)
    assert outcome.marked == old and apply_links(store, new) == []


def test_guess_by_same_name_and_no_guess_for_a_plain_new_fact(store: MemoryStore):
    save(store, "release-day", name="Release day")
    guess, tip = guess_replaced(store, "Release day", "Releases happen on Thursdays")
    assert guess is not None and guess.filename == "release-day.md" and tip == ""
    assert guess_replaced(store, "Coffee", "The team drinks coffee at ten") == (None, "")


def test_slash_memory_add_takes_supersedes_as_one_word():
    options, text = split_add_options("Deploys use the pipeline --supersedes old.md --why faster")
    assert options == {"supersedes": "old.md", "why": "faster"} and text == "Deploys use the pipeline"


def test_superseded_files_are_history_in_the_extraction_manifest(store: MemoryStore, clock: Clock):
    from claude_mini.memory.extract.prompt import memory_manifest

    old = save(store, "old")
    clock.advance(1)
    new = save(store, "new", extra_frontmatter={"supersedes": old})
    apply_link(store, new, old)
    manifest = memory_manifest(store)
    assert f"{old} (" in manifest and ", superseded by new.md):" in manifest
    assert "superseded" not in manifest.splitlines()[0]  # new.md, newest first
    clock.advance(DAY)


def test_the_on_disk_recall_index_keeps_the_link_and_sees_the_mark(store: MemoryStore, tmp_path: Path):
    from claude_mini.memory.recall.scan import CandidateScanner

    old, new = save(store, "old"), save(store, "new")
    cache = tmp_path / "cache" / "index.json"
    first = CandidateScanner(store.root, cache_file=cache)
    first.scan()
    first.save_cache()
    apply_link(store, new, old)  # the old file's time is kept, its size is not
    second = CandidateScanner(store.root, cache_file=cache)  # as a new process would
    assert {c.filename: c.superseded_by for c in second.scan()} == {old: new, new: ""}
    second.save_cache()
    third = CandidateScanner(store.root, cache_file=cache)
    assert {c.filename: c.superseded_by for c in third.scan()} == {old: new, new: ""}
    assert third.reads == 0 and superseded_names(third.index.docs) == {old}
