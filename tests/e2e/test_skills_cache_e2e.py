"""End to end: skills and the prompt cache, through the real CLI against the fake server.

A repository with skills and commands in Claude Code's layout. In `-p` with auto memory on, the
Skill tool (whose description is the listing) is byte-identical in every main request and in
the extraction fork's, which reads the parent's prefix back from the fake server's simulated
cache; a body is sent only after its Skill call. In the REPL, after `/compact` the invoked
skills are named, not re-sent, and the Skill tool is still listed; the same after `-c`.
"""

from __future__ import annotations

import json
from pathlib import Path

from claude_mini.agent.fork import strip_cache_control
from tests.e2e import test_repl
from tests.e2e.test_repl import main_replies, wait_until
from tests.fake_anthropic import Reply

start = test_repl.start  # the fixture: a trusted repo, auto-memory off

SUMMARY = "<summary>SUMMARY-TEXT: release 2.3 prepared: notes drafted, migration reviewed.</summary>"
NO_MEMORY = {"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}


def rules(topic: str, marker: str, steps: list[str]) -> str:
    """A ~4 KB body: an intro naming `marker` (to find the body in requests), numbered steps,
    and a checklist, each line different (not one sentence repeated)."""
    lines = [f"# {topic}", "", f"{marker}: follow these steps in order; each one is checked in review.", ""]
    for n, step in enumerate(steps, start=1):
        lines.append(f"{n}. {step}")
    lines += ["", "## Checklist before you finish", ""]
    for n, step in enumerate(steps, start=1):
        lines.append(f"- [ ] Step {n} done: {step.split(';')[0].lower()}, and the result is recorded in the PR.")
    return "\n".join(lines) + "\n"


RELEASE_STEPS = [
    "Read CHANGELOG.md and list every entry under 'Unreleased'; do not invent entries that are not there",
    "Group the entries as Added, Changed, Deprecated, Removed, Fixed and Security, in that order",
    "Rewrite each entry for users, not for developers: say what changes for them, not which module moved",
    "Link each entry to its pull request as (#1234); an entry without a PR number is asked about, not dropped",
    "Put breaking changes first under a 'Breaking' heading, each with the one-line migration the user needs",
    "Name the version from pyproject.toml and today's date as YYYY-MM-DD; never guess the next version",
    "Check that every deprecation says in which release the old behaviour goes away",
    "Keep the tone plain: no marketing words, no exclamation marks, no emoji",
    "Credit first-time contributors by their GitHub handle at the end of the notes",
    "Run `python scripts/check_changelog.py` and fix every line it reports before you show the notes",
    "Move the entries from 'Unreleased' to the new version's section and leave 'Unreleased' empty",
    "Show the notes to the user and wait for their approval before you tag anything",
    "Tag the release as vX.Y.Z only after approval; the tag message is the notes' first paragraph",
    "Do not push the tag yourself; say which command would push it and let the user run it",
    "If the CI status of the release commit is not green, stop and report which job failed",
    "Record in docs/releases.md the date, the version and the person who approved the release",
]
MIGRATION_STEPS = [
    "Find the models that changed with `git diff --stat origin/main -- app/models`; one migration per change",
    "Generate the migration with `alembic revision --autogenerate -m '<what changed>'` and read it fully",
    "Remove any operation autogenerate added by mistake, such as dropped indexes on unrelated tables",
    "Never drop a column in the same release that stops using it; mark it deprecated and drop it a release later",
    "A new NOT NULL column needs a server default or a backfill step before the constraint is added",
    "Backfills over a million rows run in batches of 10,000 with a commit per batch, never one statement",
    "Create indexes on large tables with postgresql_concurrently=True inside an autocommit block",
    "Write the downgrade function too, and test it: upgrade, downgrade, upgrade again on a copy of staging",
    "Check the lock each statement takes; anything stronger than SHARE UPDATE EXCLUSIVE needs a maintenance window",
    "Keep data migrations apart from schema migrations, in their own revision files",
    "Run `pytest tests/migrations -q` and paste the result into the PR description",
    "Add the revision id and what it does to docs/migrations.md, newest first",
    "Ask for a review from the database owners listed in CODEOWNERS before merging",
    "Never edit a migration that has reached main; write a new one that corrects it",
    "If the migration renames a table, add a view with the old name for one release",
    "Say in the PR how long the migration took on the staging copy and how many rows it touched",
]

SKILLS = {
    "release-notes": (
        "Draft release notes from CHANGELOG.md for a new version",
        rules("Release notes", "RELEASE-NOTES-BODY", RELEASE_STEPS),
    ),
    "db-migration": (
        "Write and review an Alembic database migration safely",
        rules("Database migrations", "DB-MIGRATION-BODY", MIGRATION_STEPS),
    ),
    "api-docs": (
        "Regenerate the OpenAPI reference and check the examples still run",
        "# API docs\n\nAPI-DOCS-BODY: run `make openapi`, then `pytest docs/examples`.\n",
    ),
}
COMMANDS = {
    "review.md": "Review the staged diff for bugs, missing tests and unclear names.\n\nBe specific: cite file:line.\n",
    "frontend/component.md": (
        "---\ndescription: Scaffold a React component with a test and a story\n"
        "argument-hint: <ComponentName>\n---\nCreate src/components/$0/ with $0.tsx, "
        "$0.test.tsx and $0.stories.tsx, following src/components/Button.\n"
    ),
}
BODY_MARKERS = ("RELEASE-NOTES-BODY", "DB-MIGRATION-BODY", "API-DOCS-BODY", "Be specific: cite", "Button.")


def write_layout(repo: Path) -> None:
    """Claude Code's layout: .claude/skills/<name>/SKILL.md (one with a reference file) and
    .claude/commands (one in a subfolder)."""
    for name, (description, body) in SKILLS.items():
        folder = repo / ".claude" / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")
    (repo / ".claude" / "skills" / "db-migration" / "locks.md").write_text("# Lock levels\n")
    for relative, text in COMMANDS.items():
        path = repo / ".claude" / "commands" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert all(3_500 < len(SKILLS[n][1]) < 5_000 for n in ("release-notes", "db-migration"))  # ~4 KB each


def skill_tool(body: dict) -> dict:
    [tool] = [t for t in body["tools"] if t["name"] == "Skill"]
    return tool


def total_input(usage: dict[str, int]) -> int:
    return usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]


def bodies_in(body: dict) -> list[str]:
    """Which skill and command bodies a request carries (by their markers)."""
    sent = json.dumps(body["messages"])
    return [marker for marker in BODY_MARKERS if marker in sent]


def test_the_listing_is_one_cached_prefix_for_every_request_and_the_fork(run_cli, fake_server, repo):
    """Auto memory on: the extraction fork after the turn (it states a schedule, so the gate lets it
    run) must extend the main agent's exact prefix."""
    write_layout(repo)
    fake_server.on(Reply.tool("Skill", {"skill": "release-notes", "args": "2.3.0"}), purpose="main", times=1)
    fake_server.on(Reply.tool("Read", {"file_path": "app.py"}), purpose="main", times=1)
    fake_server.on(Reply.text("Notes drafted for 2.3.0."), purpose="main", times=1)
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    result = run_cli("-p", "draft the release notes for 2.3.0; we release on Thursdays")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Notes drafted for 2.3.0.\n"

    mains, [extract, *_] = fake_server.requests_for("main"), fake_server.requests_for("extract")
    assert len(mains) == 3
    listing = skill_tool(mains[0].body)["description"]
    for entry in (
        "- release-notes: Draft release notes from CHANGELOG.md for a new version",
        "- db-migration: Write and review an Alembic database migration safely",
        "- review: Review the staged diff for bugs, missing tests and unclear names.",
        "- frontend:component: Scaffold a React component with a test and a story",
    ):
        assert entry in listing
    for request in [*mains, extract]:  # byte-identical tools and system: one cached prefix
        assert request.body["tools"] == mains[0].body["tools"]
        assert request.body["system"] == mains[0].body["system"]

    # Bodies: none before the call; only the invoked one after it, in its tool result.
    assert bodies_in(mains[0].body) == []
    assert bodies_in(mains[1].body) == bodies_in(mains[2].body) == ["RELEASE-NOTES-BODY"]
    result_block = mains[1].body["messages"][-1]["content"][0]
    assert result_block["type"] == "tool_result" and not result_block.get("is_error")
    assert "This skill's folder, where the files it mentions are:" in json.dumps(
        result_block
    ) and "ARGUMENTS: 2.3.0" in json.dumps(result_block)

    # The fork's first request reads back, from the cache, everything the last main request sent.
    parent = mains[-1].body["messages"]
    assert strip_cache_control(extract.body["messages"][: len(parent)]) == strip_cache_control(parent)
    assert extract.usage["cache_read_input_tokens"] == total_input(mains[-1].usage) > 0


def test_repl_compact_names_the_invoked_skills_and_drops_their_bodies(start, fake_server, repo):
    write_layout(repo)
    main_replies(
        fake_server,
        Reply.tool("Skill", {"skill": "release-notes"}),
        Reply.tool("Skill", {"skill": "db-migration"}),
        Reply.text("Both skills loaded."),
        Reply.text("Going on from the summary."),
    )
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    term = start()
    term.ready()
    term.submit("prepare release 2.3 and its migration")
    term.expect("Both skills loaded.")
    term.ready()
    before = fake_server.requests_for("main")[-1].body
    assert bodies_in(before) == ["RELEASE-NOTES-BODY", "DB-MIGRATION-BODY"]
    term.submit("/compact")
    term.expect("Compacted")
    term.ready()
    term.submit("what is left to do?")
    term.expect("Going on from the summary.")
    wait_until(lambda: len(fake_server.requests_for("main")) == 4)
    after = fake_server.requests_for("main")[-1].body
    assert_names_not_bodies(after, before, ["release-notes", "db-migration"])


def assert_names_not_bodies(after: dict, before: dict, names: list[str]) -> None:
    """The request after a compaction: the summary, one note naming `names`, no body, the same
    Skill tool (so the names can be loaded again)."""
    sent = json.dumps(after["messages"])
    assert "SUMMARY-TEXT" in sent
    [note] = [line for line in sent.split("\\n") if "Skills loaded earlier in this session" in line]
    assert ", ".join(names) in note
    assert bodies_in(after) == []
    assert skill_tool(after) == skill_tool(before)


def test_resume_then_compact_still_names_the_skill_invoked_before_the_resume(run_cli, start, fake_server, repo):
    write_layout(repo)
    fake_server.on(Reply.tool("Skill", {"skill": "db-migration", "args": "add users.locale"}), purpose="main", times=1)
    fake_server.on(Reply.text("Migration written."), purpose="main", times=1)
    first = run_cli("-p", "write the migration for users.locale", env=NO_MEMORY)
    assert first.returncode == 0, first.stderr
    before = fake_server.requests_for("main")[-1].body
    assert bodies_in(before) == ["DB-MIGRATION-BODY"]

    main_replies(fake_server, Reply.text("Resumed and compacted."))
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    term = start("-c")
    term.expect(r"Resumed session \S+")
    term.ready()
    term.submit("/compact")
    term.expect("Compacted")
    term.ready()
    term.submit("and the index?")
    term.expect("Resumed and compacted.")
    wait_until(lambda: len(fake_server.requests_for("main")) == 3)
    assert_names_not_bodies(fake_server.requests_for("main")[-1].body, before, ["db-migration"])
