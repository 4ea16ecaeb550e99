"""Layer 2 store: topic files, the MEMORY.md index, archive, doctor, usage record."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest
import yaml

from claude_mini.base import fileutil
from claude_mini.memory.maintenance.doctor import description_problem, doctor, fix
from claude_mini.memory.store import (
    INDEX_MAX_BYTES,
    INDEX_MAX_LINES,
    AmbiguousMemoryName,
    InvalidMemory,
    MemoryNotFound,
    MemoryStore,
    MemoryStoreError,
    format_memory,
    index_line,
    iso_utc,
    memory_prompt_section,
    parse_index,
    parse_memory_text,
    render_index_for_prompt,
)

T0 = 1_790_000_000.0  # an injected clock (September 2026)
ISO_T0 = iso_utc(T0)
GOOD_DESC = "How to deploy the billing service to staging with make deploy"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def store(root: Path) -> MemoryStore:
    return MemoryStore(root, clock=lambda: T0)


def save(store: MemoryStore, filename: str, description: str = GOOD_DESC, **kw) -> Path:
    kw.setdefault("name", filename.removesuffix(".md").replace("-", " ").title())
    kw.setdefault("type", "project")
    kw.setdefault("body", "Run `make deploy`.")
    return store.write(filename, description=description, **kw)


def topic(name: str, description: str, type_: str = "project", body: str = "Body.") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n\n{body}\n"


# --- frontmatter ---------------------------------------------------------------------
def test_parse_good_frontmatter():
    parsed = parse_memory_text(topic("Deploy", GOOD_DESC, body="# Title\nText"))
    assert parsed.ok and parsed.problem is None
    assert parsed.frontmatter == {"name": "Deploy", "description": GOOD_DESC, "type": "project"}
    assert parsed.body == "# Title\nText\n"


def test_parse_invalid_yaml_salvages_plain_lines():
    parsed = parse_memory_text("---\nname: x\ndescription: Deploy: use make\ntype: user\n---\nb\n")
    assert not parsed.ok and parsed.problem_kind == "invalid_yaml"
    assert "line 3" in parsed.problem
    assert parsed.frontmatter["description"] == "Deploy: use make"
    assert parsed.salvage_clean and parsed.body == "b\n"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("# Just notes\nabout redis\n", "missing"),
        ("---\nname: x\ndescription: d\nbody never closed\n", "unclosed"),
        ("---\n- a\n- b\n---\nbody\n", "not_mapping"),
        ("---\nname: x\ntype: user\n---\nbody\n", "missing_field"),
        ("---\nname: x\ndescription: d\ntype: preference\n---\nbody\n", "bad_type"),
    ],
)
def test_parse_reports_each_kind_of_problem(text: str, kind: str):
    parsed = parse_memory_text(text)
    assert not parsed.ok
    assert parsed.problem_kind == kind
    assert parsed.problem


def test_format_memory_adds_why_and_how_lines_and_valid_yaml():
    text = format_memory(
        name="No mocks",
        description="Don't mock: the DB",
        type="feedback",
        body="Use the real database.",
        why="A mock hid a bug.",
        how_to_apply="Integration tests.",
        extra_frontmatter={"pinned": True},
    )
    parsed = parse_memory_text(text)
    assert parsed.ok
    assert parsed.frontmatter["description"] == "Don't mock: the DB"
    assert parsed.frontmatter["pinned"] is True
    assert "**Why:** A mock hid a bug.\n**How to apply:** Integration tests." in parsed.body


# --- list / read / write / resolve / delete -------------------------------------------
def test_missing_folder_is_tolerated_and_never_created(store: MemoryStore, root: Path):
    assert store.list() == []
    assert store.index_text() == ""
    assert store.usage() == {}
    assert store.update_index(remove=["x.md"]) is False
    assert doctor(store) == []
    with pytest.raises(MemoryNotFound):
        store.read("anything")
    assert not root.exists()


def test_write_creates_file_and_index_line_atomically(store: MemoryStore, root: Path):
    path = save(
        store, "deploy", name="Deploy steps", type="feedback", why="CI is slow", how_to_apply="Before every release"
    )
    assert path == root / "deploy.md"
    record = store.read("deploy")
    assert record.frontmatter_ok and record.type == "feedback" and record.name == "Deploy steps"
    assert record.frontmatter["created"] == record.frontmatter["updated"] == ISO_T0
    assert "**Why:** CI is slow" in record.body and "**How to apply:**" in record.body
    assert store.index_text() == f"- [Deploy steps](deploy.md) — {GOOD_DESC}\n"
    assert sorted(p.name for p in root.iterdir()) == [".MEMORY.md.lock", "MEMORY.md", "deploy.md"]


def test_rewrite_keeps_created_and_replaces_index_line_in_place(root: Path):
    clock = [T0]
    store = MemoryStore(root, clock=lambda: clock[0])
    save(store, "a.md")
    save(store, "b.md")
    clock[0] += 86_400
    save(store, "a.md", name="A renamed", description="New description of the deploy steps here")
    record = store.read("a.md")
    assert record.frontmatter["created"] == ISO_T0
    assert record.frontmatter["updated"] == iso_utc(T0 + 86_400)
    lines = store.index_text().splitlines()
    assert lines[0].startswith("- [A renamed](a.md) — New description")
    assert lines[1].startswith("- [B](b.md)") and len(lines) == 2


@pytest.mark.parametrize("bad", ["../x", "a/b", "a\\b", ".hidden", "two words", "MEMORY", ""])
def test_write_rejects_unsafe_filenames(store: MemoryStore, bad: str, root: Path):
    with pytest.raises(InvalidMemory):
        save(store, bad)
    assert not root.exists()


def test_write_rejects_unknown_type_and_empty_fields(store: MemoryStore):
    with pytest.raises(InvalidMemory, match="unknown memory type"):
        save(store, "x", type="preference")
    with pytest.raises(InvalidMemory):
        save(store, "x", description="  ")
    with pytest.raises(InvalidMemory):
        save(store, "x", extra_frontmatter={"name": "sneaky"})


def test_list_flags_broken_and_missing_frontmatter_and_skips_binary(store: MemoryStore, root: Path):
    save(store, "good.md")
    (root / "broken.md").write_text("---\nname: x\ndescription: Deploy: use make\n---\nbody\n")
    (root / "plain.md").write_text("\n\n# Redis cache keys carry a version suffix\nmore\n")
    (root / "binary.md").write_bytes(b"---\x00\x01\x02")
    (root / "latin1.md").write_bytes("caf\xe9 notes".encode("latin-1"))
    (root / "archive").mkdir()
    (root / "archive" / "old.md").write_text(topic("Old", GOOD_DESC))
    (root / "logs").mkdir()
    (root / "logs" / "2026-01-01.md").write_text("- log line\n")
    (root / ".draft.md").write_text(topic("Draft", GOOD_DESC))
    (root / "notes.txt").write_text("not markdown")
    (root / "sub").mkdir()
    (root / "sub" / "nested.md").write_text(topic("Nested", GOOD_DESC))

    records = {r.filename: r for r in store.list()}
    assert sorted(records) == ["broken.md", "good.md", "plain.md", "sub/nested.md"]
    assert records["good.md"].frontmatter_ok
    broken, plain = records["broken.md"], records["plain.md"]
    assert not broken.frontmatter_ok and "not valid YAML" in broken.problem
    assert broken.description == "Deploy: use make"  # salvaged
    assert not plain.frontmatter_ok and plain.problem.startswith("no frontmatter")
    assert plain.description == plain.first_line == "Redis cache keys carry a version suffix"
    assert plain.name == "plain" and plain.type is None
    reasons = {s.path.name: s.reason for s in store.skipped}
    assert reasons["binary.md"].startswith("binary")
    assert reasons["latin1.md"].startswith("not UTF-8")


def test_symlink_outside_folder_is_skipped(store: MemoryStore, root: Path, tmp_path: Path):
    save(store, "good.md")
    outside = tmp_path / "secret.md"
    outside.write_text(topic("Secret", GOOD_DESC))
    (root / "link.md").symlink_to(outside)
    assert [r.filename for r in store.list()] == ["good.md"]
    assert store.skipped[0].reason == "symlink pointing outside the memory folder"
    with pytest.raises(MemoryNotFound):
        store.resolve("link")


def test_resolve_accepts_stem_filename_and_frontmatter_name(store: MemoryStore, root: Path):
    save(store, "deploy-steps.md", name="Deploy the billing service")
    expected = root / "deploy-steps.md"
    for key in (
        "deploy-steps",
        "deploy-steps.md",
        "Deploy the billing service",
        "deploy the BILLING service",
        "  deploy-steps  ",
    ):
        assert store.resolve(key) == expected


def test_resolve_refuses_escapes_and_reports_ambiguity(store: MemoryStore, root: Path, tmp_path: Path):
    (tmp_path / "x.md").write_text(topic("X", GOOD_DESC))
    save(store, "a.md", name="Same name")
    save(store, "b.md", name="Same name")
    for key in ("../x", "../x.md", str(tmp_path / "x.md"), "MEMORY", "MEMORY.md"):
        with pytest.raises(MemoryNotFound):
            store.resolve(key)
    with pytest.raises(AmbiguousMemoryName, match="a.md, b.md"):
        store.resolve("Same name")


def test_delete_moves_to_archive_with_distinct_names(store: MemoryStore, root: Path):
    save(store, "keep.md")
    save(store, "gone.md", body="first version")
    first = store.delete("gone")
    assert first.archived_path == root / "archive" / "gone.md"
    assert first.index_line.startswith("- [Gone](gone.md)")
    save(store, "gone.md", body="second version")
    second = store.delete("gone.md")
    assert second.archived_path == root / "archive" / "gone-2.md"
    assert "first version" in first.archived_path.read_text()
    assert "second version" in second.archived_path.read_text()
    assert [r.filename for r in store.list()] == ["keep.md"]
    assert [e.filename for e in store.index_entries()] == ["keep.md"]


# --- the index -----------------------------------------------------------------------
def test_update_index_keeps_other_lines_replaces_removes_and_dedupes(store: MemoryStore, root: Path):
    root.mkdir()
    (root / "MEMORY.md").write_text(
        "# Project memory\n- [A](a.md) — old a\n- [B](./b.md) — b\nfree text\n- [A](a.md) — dup\n"
    )
    changed = store.update_index(
        add_or_replace={"a.md": "- [A](a.md) — new a", "c.md": "- [C](c.md) — c"}, remove=["b.md"]
    )
    assert changed
    assert store.index_text() == ("# Project memory\n- [A](a.md) — new a\nfree text\n- [C](c.md) — c\n")
    mtime = (root / "MEMORY.md").stat().st_mtime_ns
    assert store.update_index(add_or_replace={"c.md": "- [C](c.md) — c"}) is False
    assert (root / "MEMORY.md").stat().st_mtime_ns == mtime


def test_update_index_refuses_bad_lines_and_undecodable_index(store: MemoryStore, root: Path):
    with pytest.raises(InvalidMemory):
        store.update_index(add_or_replace={"a.md": "- [A](b.md) — points elsewhere"})
    with pytest.raises(InvalidMemory):
        store.update_index(add_or_replace={"a.md": "just text"})
    root.mkdir()
    (root / "MEMORY.md").write_bytes(b"- [A](a.md) \xff\n")
    with pytest.raises(MemoryStoreError, match="not valid UTF-8"):
        store.update_index(add_or_replace={"b.md": "- [B](b.md) — b"})
    assert (root / "MEMORY.md").read_bytes() == b"- [A](a.md) \xff\n"


def test_index_line_escapes_title_and_shortens_hook():
    line = index_line("a.md", "Use [brackets]", "word " * 60)
    assert line.startswith("- [Use \\[brackets\\]](a.md) — word word")
    assert line.endswith("…") and len(line) < 160
    entry = parse_index(line)[0]
    assert entry.title == "Use [brackets]" and entry.filename == "a.md"


def _add_many(root: str, tag: str, count: int, barrier) -> None:
    store = MemoryStore(Path(root))
    barrier.wait()
    for i in range(count):
        store.write(f"{tag}-{i}.md", name=f"{tag} {i}", description=GOOD_DESC, type="project", body="x")
        store.record_use([f"{tag}-{i}.md", "shared.md"])


def test_two_processes_adding_memories_at_once_keep_every_index_line(tmp_path: Path):
    ctx = multiprocessing.get_context("fork")
    for round_ in range(4):
        root = tmp_path / f"round{round_}"
        barrier = ctx.Barrier(2)
        procs = [ctx.Process(target=_add_many, args=(str(root), tag, 15, barrier)) for tag in ("p", "q")]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=60)
            assert p.exitcode == 0
        store = MemoryStore(root)
        listed = {e.filename for e in store.index_entries()}
        expected = {f"{t}-{i}.md" for t in ("p", "q") for i in range(15)}
        assert listed == expected
        assert len(store.index_text().splitlines()) == 30
        assert store.usage()["shared.md"]["count"] == 30


# --- truncation and the prompt section -------------------------------------------------
def test_render_index_short_is_unchanged():
    text = "- [A](a.md) — a\n- [B](b.md) — b\n"
    assert render_index_for_prompt(text) == (text.rstrip("\n"), None)


def test_render_index_cuts_at_200_lines_with_warning():
    text = "".join(f"- [M{i}](m{i}.md) — hook {i}\n" for i in range(250))
    rendered, warning = render_index_for_prompt(text)
    assert warning == (
        "> WARNING: MEMORY.md is 250 lines (limit: 200). Only the first 200 were loaded; keep "
        "index lines short and move detail into topic files (claude-mini memory doctor)."
    )
    body = rendered.split("\n\n> WARNING")[0].splitlines()
    assert len(body) == INDEX_MAX_LINES and body[-1].startswith("- [M199]")
    assert rendered.endswith(warning)


def test_render_index_cuts_long_lines_by_bytes_at_a_newline():
    lines = [f"- [M{i}](m{i}.md) — " + "é" * 490 for i in range(200)]  # ~1,000 bytes each
    rendered, warning = render_index_for_prompt("\n".join(lines) + "\n")
    kept = rendered.split("\n\n> WARNING")[0]
    assert len(kept.encode()) <= INDEX_MAX_BYTES
    assert kept.splitlines() == lines[: len(kept.splitlines())]  # whole lines only
    assert 20 <= len(kept.splitlines()) < 30
    assert "bytes (limit: 25,000)" in warning and "lines (limit" not in warning


def test_render_index_names_both_limits_when_both_hit():
    text = "".join(f"- [M{i}](m{i}.md) — {'x' * 200}\n" for i in range(300))
    _, warning = render_index_for_prompt(text)
    assert "300 lines and" in warning and "limits: 200 lines, 25,000 bytes" in warning


def test_prompt_section_explains_the_system_and_includes_the_index(store: MemoryStore, root: Path):
    empty = memory_prompt_section(store)
    assert str(root) in empty and "(empty: no memories saved yet)" in empty
    for word in (
        "user:",
        "feedback:",
        "project:",
        "reference:",
        "**Why:**",
        "**How to apply:**",
        "MEMORY.md",
        "git history",
        "CLAUDE.md",
        "secrets",
    ):
        assert word in empty
    save(store, "deploy.md", name="Deploy steps")
    section = memory_prompt_section(store)
    assert section.endswith(f"- [Deploy steps](deploy.md) — {GOOD_DESC}\n")
    assert len(empty) < 2_000  # paid on every request


# --- doctor and fix ------------------------------------------------------------------
def test_description_problem_flags_short_and_generic():
    assert "too short" in description_problem("Deploy notes")
    assert "too vague" in description_problem("misc notes and stuff about the todo info")
    assert description_problem(GOOD_DESC) is None


def _messy_folder(store: MemoryStore, root: Path) -> None:
    save(store, "good.md")
    save(store, "twin-a.md", name="Twin")
    save(store, "twin-b.md", name="Twin")
    save(store, "vague.md", description="misc notes")
    (root / "nofm.md").write_text("# Redis cache keys carry a schema version suffix v3\n")
    (root / "badyaml.md").write_text(
        "---\nname: Bad\ndescription: Deploy: use make deploy for the billing service\ntype: project\n---\nbody\n"
    )
    (root / "badtype.md").write_text(topic("T", GOOD_DESC, type_="preference"))
    (root / "bin.md").write_bytes(b"\x00\x00")
    store.update_index(add_or_replace={"ghost.md": "- [Ghost](ghost.md) — gone"})
    with open(root / "MEMORY.md", "a") as f:
        f.write("- [Good again](good.md) — duplicate line\n")


def test_doctor_finds_every_kind_of_problem(store: MemoryStore, root: Path):
    _messy_folder(store, root)
    found = {(f.kind, f.file): f for f in doctor(store)}
    assert found[("dangling_index_line", "ghost.md")].fixable
    assert found[("duplicate_index_line", "good.md")].fixable
    for f in ("nofm.md", "badyaml.md", "badtype.md"):
        assert found[("missing_from_index", f)].fixable
    assert not found[("duplicate_name", "twin-a.md")].fixable
    assert "twin-b.md" in found[("duplicate_name", "twin-a.md")].message
    assert found[("missing_frontmatter", "nofm.md")].fixable
    assert "type: project" in found[("missing_frontmatter", "nofm.md")].message
    assert found[("broken_frontmatter", "badyaml.md")].fixable
    assert not found[("broken_frontmatter", "badtype.md")].fixable
    assert not found[("vague_description", "vague.md")].fixable
    assert ("unreadable", "bin.md") in found
    assert ("vague_description", "good.md") not in found


def test_fix_repairs_the_mechanical_findings(store: MemoryStore, root: Path):
    _messy_folder(store, root)
    fixed = fix(store, doctor(store))
    assert {f.kind for f in fixed} == {
        "dangling_index_line",
        "duplicate_index_line",
        "missing_from_index",
        "missing_frontmatter",
        "broken_frontmatter",
    }
    left = {(f.kind, f.file) for f in doctor(store)}
    assert not any(f.fixable for f in doctor(store))
    assert ("broken_frontmatter", "badtype.md") in left
    assert ("duplicate_name", "twin-a.md") in left and ("vague_description", "vague.md") in left
    nofm = store.read("nofm")
    assert nofm.frontmatter_ok and nofm.type == "project"
    assert nofm.description == "Redis cache keys carry a schema version suffix v3"
    assert "# Redis cache keys" in nofm.body  # the body is kept
    bad = parse_memory_text((root / "badyaml.md").read_text())
    assert bad.ok and bad.frontmatter["description"].startswith("Deploy: use make")
    index = store.index_text()
    assert "ghost.md" not in index and index.count("(good.md)") == 1
    assert "- [nofm](nofm.md) — Redis cache keys" in index


# --- usage record --------------------------------------------------------------------
def test_record_use_counts_and_keeps_latest_time(store: MemoryStore, root: Path):
    save(store, "a.md")
    store.record_use(["a.md", "b.md"], when=T0 + 10)
    store.record_use(["a.md"], when=T0 + 5)
    store.record_use(["a.md"])  # default: the injected clock
    assert store.usage() == {"a.md": {"count": 3, "last_used": T0 + 10}, "b.md": {"count": 1, "last_used": T0 + 10}}
    assert json.loads((root / "usage.json").read_text())["version"] == 1


@pytest.mark.parametrize("garbage", ["{not json", '{"files": []}', '{"files": {"a.md": 3}}', '["x"]'])
def test_corrupt_usage_is_rebuilt_from_file_times(store: MemoryStore, root: Path, garbage: str):
    save(store, "a.md")
    os.utime(root / "a.md", (T0 - 100, T0 - 100))
    (root / "usage.json").write_text(garbage)
    assert store.usage() == {"a.md": {"count": 0, "last_used": T0 - 100}}
    assert "usage.json is unreadable" in store.warnings[0]
    store.record_use(["a.md"], when=T0)
    assert store.usage() == {"a.md": {"count": 1, "last_used": T0}}
    assert (root / "usage.json.corrupt").read_text() == garbage
    assert any("rebuilt it from file times" in w for w in store.warnings)


# --- file utilities -------------------------------------------------------------------
def test_atomic_write_failure_keeps_old_file_and_leaves_no_temp(tmp_path: Path, monkeypatch):
    target = tmp_path / "MEMORY.md"
    target.write_text("old\n")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(fileutil.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        fileutil.atomic_write(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]


def test_locked_is_reentrant_and_times_out_across_processes(tmp_path: Path):
    target = tmp_path / "f.md"
    with fileutil.locked(target), fileutil.locked(target):
        ctx = multiprocessing.get_context("fork")
        proc = ctx.Process(target=_try_lock, args=(str(target),))
        proc.start()
        proc.join(timeout=30)
        assert proc.exitcode == 3  # the child timed out: we hold the lock
    assert fileutil.lock_path_for(target).exists()


def _try_lock(path: str) -> None:
    try:
        with fileutil.locked(Path(path), timeout=0.2):
            os._exit(0)
    except fileutil.LockTimeout:
        os._exit(3)


def test_written_frontmatter_is_plain_yaml(store: MemoryStore, root: Path):
    save(store, "a.md", description="Colons: everywhere # and hashes", extra_frontmatter={"source": "user"})
    block = (root / "a.md").read_text().split("---\n")[1]
    assert yaml.safe_load(block)["description"] == "Colons: everywhere # and hashes"


def test_fifo_named_like_a_memory_is_ignored(store: MemoryStore, root: Path):
    save(store, "good.md")
    os.mkfifo(root / "pipe.md")
    assert [r.filename for r in store.list()] == ["good.md"]


# --- a MEMORY.md that is not a regular file ----------------------------------------------
def _make_not_a_file(index: Path, kind: str) -> None:
    if kind == "directory":
        index.mkdir()
        (index / "stray.md").write_text("---\nname: Stray\n---\nwritten by an agent into MEMORY.md/\n")
    elif kind == "fifo":
        os.mkfifo(index)  # opening it to read would block for ever
    else:
        index.symlink_to(index.parent / "nowhere.md")


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", ["directory", "fifo", "dangling symlink"])
def test_a_memory_md_that_is_not_a_file_reads_as_missing_with_one_warning(store, root, kind):
    save(store, "deploy-steps.md", type="user")
    store.index_path.unlink()
    _make_not_a_file(store.index_path, kind)
    said: list[str] = []
    store.warn = said.append
    assert store.index_text() == "" and store.index_entries() == []
    assert "(empty: no memories saved yet)" in memory_prompt_section(store)
    assert len(said) == 1 and "not a file" in said[0] and "memory doctor --fix" in said[0]
    assert [r.filename for r in store.list()] == ["deploy-steps.md"]  # MEMORY.md/stray.md is no memory
    with pytest.raises(MemoryStoreError, match="not a file, so the index was not changed"):
        store.update_index(add_or_replace={"deploy-steps.md": index_line("deploy-steps.md", "D", "d")})


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", ["directory", "fifo", "dangling symlink"])
def test_doctor_reports_a_memory_md_that_is_not_a_file_and_fix_moves_it_aside(store, root, kind):
    save(store, "deploy-steps.md", type="user")
    store.index_path.unlink()
    _make_not_a_file(store.index_path, kind)
    findings = doctor(store)
    assert findings[0].kind == "index_not_a_file" and findings[0].fixable
    assert "not a file" in findings[0].message
    fixed = fix(store, findings)
    [aside] = (root / "archive").iterdir()
    assert aside.name == f"MEMORY.md.aside-{ISO_T0.replace('-', '').replace(':', '')}"
    assert os.path.islink(aside) if kind == "dangling symlink" else os.path.lexists(aside)
    if kind == "directory":
        assert (aside / "stray.md").exists()  # nothing the agent wrote is lost
    assert fixed[0].kind == "index_not_a_file" and str(aside.relative_to(root)) in fixed[0].message
    assert [e.filename for e in store.index_entries()] == ["deploy-steps.md"]  # the index is rebuilt
    assert doctor(store) == []
