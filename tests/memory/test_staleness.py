"""Stale memories say so (memory/recall/staleness.py): what counts as a reference to the repository,
how it is checked (disk, Makefile, package.json, git), and what recall and doctor show."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from claude_mini.commands.memory import MemoryContext, doctor_data, doctor_lines
from claude_mini.memory.extract.supersede import apply_link
from claude_mini.memory.recall.lexical import candidate_from_text
from claude_mini.memory.recall.selection import add_stale_lines, render_memory
from claude_mini.memory.recall.staleness import (
    Change,
    changed_a_lot,
    find_references,
    parse_numstat,
    stale_memories,
    stale_reasons,
)
from claude_mini.memory.store import format_memory
from tests.memory.test_recall import main_text, make_runtime, manifest_of, run_turns, save, select, tool_turn

DAY = 86_400.0


def refs(text: str) -> list[tuple[str, str]]:
    return [(r.kind, r.target) for r in find_references(text)]


def git(repo: Path, *args: str, when: float | None = None) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{int(when)} +0000"
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def memory(body: str, description: str = "Where the billing code lives and how it ships") -> str:
    return format_memory(name="Billing", description=description, type="project", body=body)


# --- finding references ----------------------------------------------------------------
def test_paths_folders_and_commands_are_references():
    text = (
        "Billing lives in src/billing/api.py and `web/`; the old code is in src/legacy/. "
        "Deploy with make deploy-billing or `make ship`, build with `npm run build:web`, "
        "run python manage.py migrate and ./scripts/deploy.sh, see src/x.py:42."
    )
    assert refs(text) == [
        ("path", "src/billing/api.py"),
        ("folder", "web"),
        ("folder", "src/legacy"),
        ("make", "deploy-billing"),
        ("make", "ship"),
        ("npm", "build:web"),
        ("path", "manage.py"),
        ("path", "scripts/deploy.sh"),
        ("path", "src/x.py"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "See https://github.com/org/repo/blob/main/src/x.py for details.",
        "Dashboards: grafana.internal/d/billing.json and docs.example.com/guide/x.html",
        "It handles read and/or write, client/server, TCP/IP, I/O, n/a, 24/7, input/output.",
        "Config is in /etc/app/config.yaml, ~/.ssh/config and ../other/repo/x.py",
        "Name files like path/to/file.py or foo/bar.py or your/module.py; globs src/*.py",
        "Put a test next to it, e.g. tests/test_new_thing.py, for example app/new.py",
        "Build output goes to dist/app.js and node_modules/x/index.js and .venv/lib/site.py",
        "Python 3.12/3.13 both work; ratios 1.5/2.0; the mime type is application/json.",
        "Make sure to make it clear; make changes small and make the tests pass.",
        "git@github.com:org/repo.git and $HOME/bin/tool.sh and <name>/x.py",
        "Build the frontend with `make -C web bundle` or `make -f ci.mk lint`; `cmake --build out`",
    ],
)
def test_what_is_not_a_reference(text):
    assert refs(text) == []


# --- checking them -----------------------------------------------------------------------
def test_missing_files_folders_targets_and_scripts_are_named(tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "here.py").write_text("x = 1\n")
    (tmp_path / "Makefile").write_text("ship: build\n\t./ship\n%.o: %.c\n\tcc $<\n")
    (tmp_path / "package.json").write_text('{"scripts": {"build": "vite build"}}')
    text = memory(
        "src/here.py and src/gone.py; `old/`; make ship, `make lost`, `make x.o`; npm run build and npm run deploy"
    )
    assert stale_reasons(text, time.time(), (tmp_path,)) == [
        "mentions src/gone.py, which no longer exists",
        "mentions old/, which no longer exists",
        "mentions `make lost`, but the Makefile has no lost target",
        "mentions `npm run deploy`, but package.json has no deploy script",
    ]  # in the order written


def test_no_claim_without_a_file_that_could_tell(tmp_path: Path):
    (tmp_path / "Makefile").write_text("include common.mk\nship:\n\t./ship\n")
    text = memory("`make lost` and `npm run deploy`")  # no package.json at all
    assert stale_reasons(text, time.time(), (tmp_path,)) == []
    (tmp_path / "package.json").write_text('{"workspaces": ["web"], "scripts": {}}')
    assert stale_reasons(text, time.time(), (tmp_path,)) == []  # the script may be in web/


def test_a_path_may_start_at_the_working_folder_or_deeper_in_git(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / "pkg" / "app" / "models").mkdir(parents=True)
    (repo / "pkg" / "app" / "models" / "user.py").write_text("class User: ...\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    text = memory("See app/models/user.py and models/user.py; gone/user.py is not there.")
    assert stale_reasons(text, time.time(), (repo, repo / "pkg")) == ["mentions gone/user.py, which no longer exists"]


def test_a_cited_file_that_changed_a_lot_since_the_memory_is_named(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "models.py").write_text("".join(f"v0 {i}\n" for i in range(100)))
    (repo / "app" / "views.py").write_text("views\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    now = time.time()
    git(repo, "commit", "-qm", "init", when=now - 30 * DAY)
    for n in range(1, 4):
        (repo / "app" / "models.py").write_text("".join(f"v{n} {i}\n" for i in range(100)))
        (repo / "app" / "views.py").write_text(f"views {n}\n")
        git(repo, "commit", "-qam", f"change {n}", when=now - (10 - n) * DAY)
    text = memory("The ORM is in app/models.py; views in app/views.py.")
    assert stale_reasons(text, now - 20 * DAY, (repo,)) == [
        "cites app/models.py, which changed a lot since (600 lines in 3 commits)"
    ]
    assert stale_reasons(text, now - DAY, (repo,)) == []  # nothing changed after it was written


def test_without_git_the_change_check_is_skipped_quietly(tmp_path: Path, monkeypatch):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "models.py").write_text("x\n")
    text = memory("app/models.py and app/gone.py")
    assert stale_reasons(text, 0.0, (tmp_path,)) == ["mentions app/gone.py, which no longer exists"]
    monkeypatch.setenv("PATH", "")  # no git at all
    assert stale_reasons(text, 0.0, (tmp_path,)) == ["mentions app/gone.py, which no longer exists"]


def test_numstat_parsing_and_the_threshold(tmp_path: Path):
    out = "\x1e1700000000\n\n10\t2\ta.py\n-\t-\tlogo.png\n\x1e1700000100\n\n5\t5\ta.py\n"
    assert parse_numstat(out) == {"a.py": [(1700000000.0, 12), (1700000100.0, 10)], "logo.png": [(1700000000.0, 0)]}
    small = tmp_path / "small.py"
    small.write_text("x\n" * 60)
    assert changed_a_lot(Change(40, 2), small) and not changed_a_lot(Change(39, 2), small)
    big = tmp_path / "big.py"
    big.write_text("x\n" * 1000)
    assert not changed_a_lot(Change(150, 9), big) and changed_a_lot(Change(200, 1), big)


# --- what recall and doctor show -----------------------------------------------------------
def test_the_recalled_header_says_what_is_gone(tmp_path: Path):
    path = tmp_path / "billing.md"
    path.write_text(memory("The entry point is src/x.py."))
    fine = tmp_path / "fine.md"
    fine.write_text(memory("Nothing to check here."))
    shown = [render_memory(candidate_from_text(p.name, p.read_text(), 0.0, path=p), time.time()) for p in (path, fine)]
    assert None not in shown
    before = [m.text for m in shown]
    add_stale_lines(shown, ())  # no repository: nothing is checked
    assert [m.text for m in shown] == before
    add_stale_lines(shown, (tmp_path,))
    header = shown[0].text.split("\n\n", 1)[0].splitlines()
    assert header[0] == "Recalled memory: billing.md — saved today"
    assert header[2] == ("Possibly stale: it mentions src/x.py, which no longer exists. Check before relying on it.")
    assert shown[0].text.split("\n\n", 1)[1] == before[0].split("\n\n", 1)[1]
    assert shown[1].text == before[1]


def test_recall_names_the_stale_memory_and_never_offers_a_superseded_one(repo, fake_server):
    rt = make_runtime(repo, fake_server)
    old = save(rt, "deploy-old.md", body="Run make deploy-billing.")
    save(
        rt,
        "deploy-new.md",
        body="DEPLOY-NEW: run scripts/deploy.sh.",
        extra_frontmatter={"supersedes": "deploy-old.md"},
    )
    apply_link(rt.store, "deploy-new.md", "deploy-old.md")
    select(fake_server, "deploy-new.md")
    tool_turn(fake_server)
    run_turns(rt, "how do I deploy the billing service to staging?")
    manifest = manifest_of(fake_server.requests_for("recall")[0])
    assert "] deploy-new.md (" in manifest and "deploy-old.md" not in manifest
    assert old.is_file()
    reminder = main_text(fake_server, 1)
    assert "DEPLOY-NEW" in reminder
    assert "Possibly stale: it mentions scripts/deploy.sh, which no longer exists." in reminder


def test_lexical_recall_picks_the_successor_not_the_superseded_memory(repo, fake_server):
    rt = make_runtime(repo, fake_server, {"recall": {"strategy": "lexical"}})
    for topic in ("coffee", "holidays", "parking", "printer", "lunch", "badges"):
        save(rt, f"{topic}.md", f"Where the office {topic} rules are written down")
    save(rt, "deploy-old.md", body="OLD-BODY")
    save(rt, "deploy-new.md", body="NEW-BODY", extra_frontmatter={"supersedes": "deploy-old.md"})
    apply_link(rt.store, "deploy-new.md", "deploy-old.md")
    tool_turn(fake_server)
    run_turns(rt, "how do I deploy the billing service to staging?")
    sent = main_text(fake_server, 1)
    assert "NEW-BODY" in sent and "OLD-BODY" not in sent


def test_doctor_lists_stale_memories_with_their_reasons(repo: Path):
    mc = MemoryContext.for_cwd(repo)
    mc.store.write(
        "billing.md",
        name="Billing",
        description="Where the billing code lives today",
        type="reference",
        body="It is in src/billing.py; app.py is the entry point.",
    )
    mc.store.write(
        "fine.md",
        name="Fine",
        description="The entry point of the app is app.py",
        type="reference",
        body="See ./app.py.",
    )
    data = doctor_data(mc.store, repo=mc.repo)
    assert data["stale"] == [{"file": "billing.md", "reasons": ["mentions src/billing.py, which no longer exists"]}]
    assert (
        "stale: billing.md mentions src/billing.py, which no longer exists (edit it, or forget it)"
    ) in doctor_lines(data)
    assert data["findings"] == [] and doctor_lines(data)[-1] == (
        f"No problems found in {mc.store.root}; 1 memory may be stale (above)."
    )
    assert doctor_data(mc.store)["stale"] == []  # without a repository nothing is checked


def test_stale_memories_batch_git_for_all_of_them(tmp_path: Path):
    (tmp_path / "a.py").write_text("a\n")
    texts = {"one.md": (memory("see ./a.py and lib/b.py"), 0.0), "two.md": (memory("see ./a.py"), 0.0)}
    assert stale_memories(texts, (tmp_path,)) == {"one.md": ["mentions lib/b.py, which no longer exists"]}
