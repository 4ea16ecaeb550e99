"""/agents: the subagent types and the problems of their files, from the session or from disk;
/agents last: the last subagent's conversation."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from claude_mini.commands.agents import agents_table, last_run_lines, session_types
from claude_mini.config import load_config
from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.runtime import build_runtime
from claude_mini.subagents.types import load_agent_types
from claude_mini.ui import commands
from claude_mini.ui.render import tool_label
from tests.ui.conftest import FakeHost, StubClient, make_console


def agent_file(folder: Path, file: str, frontmatter: str, body: str = "You review code.\n") -> Path:
    path = folder / "agents" / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter.strip()}\n---\n{body}")
    return path


def run(line: str, runtime, *, width: int = 100) -> str:
    console = make_console(width)

    async def get_runtime():
        return runtime

    asyncio.run(commands.run_command(line, FakeHost(), console, get_runtime, commands.session_table(None)))
    return console.file.getvalue()


def files_runtime(root: Path, *, trusted: bool = False) -> SimpleNamespace:
    """A runtime without the Agent tool's hook: /agents reads the files now."""
    return SimpleNamespace(
        subagents=None, config=SimpleNamespace(project_root=root, cwd=root, trusted=trusted, claude_code_home=None)
    )


def test_every_type_with_its_source_tools_model_memory_and_context(tmp_path, isolated_env):
    root, home = tmp_path, isolated_env.home
    agent_file(
        root / ".claude",
        "reviewer.md",
        "name: reviewer\ndescription: Reviews code. Use after edits.\n"
        "tools: [Read, Grep]\nmodel: haiku\nmemory: project",
    )
    agent_file(home, "notes.md", "name: notes\ndescription: Keeps notes\nmemory: user")
    agent_file(home, "reviewer.md", "name: reviewer\ndescription: my own reviewer")
    lines = agents_table(session_types(files_runtime(root)), width=100)
    printed = run("/agents", files_runtime(root)).splitlines()
    assert all(row in printed for row in lines[1:10])  # the rows are cut at the width, the rest wraps
    assert lines == [
        f"Agent types: 4 (2 built-in, 2 from .claude/agents/ and {home}/agents/):",
        "  NAME             SOURCE    TOOLS                    MODEL    MEMORY   CONTEXT",
        "  general-purpose  built-in  all tools                inherit  -        fork",
        "      For research and multi-step tasks: searching a codebase, reading many files, making a change …",
        "  Explore          built-in  Read, Grep, Glob, Bash   inherit  -        own, read-only",
        "      A fast read-only search agent: finds files and code by name, pattern or keyword, reads them, …",
        "  notes            user      all tools                inherit  user     own",
        "      Keeps notes",
        "  reviewer         project   Read, Grep, Write, Edit  haiku    project  own",
        "      Reviews code. Use after edits.",
        f"⚠ Agent {home}/agents/reviewer.md has the same name as .claude/agents/reviewer.md ('reviewer'); a "
        "project one comes before a user one, so that one is used and this one is skipped. Rename one to keep both.",
    ]


def test_bad_files_are_one_line_each_and_built_in_names_stay(tmp_path):
    agent_file(tmp_path / ".claude", "explore.md", "name: Explore\ndescription: mine")
    agent_file(tmp_path / ".claude", "nodesc.md", "name: nodesc")
    agent_file(tmp_path / ".claude", "tools.md", "name: t\ndescription: d\ntools: 3")
    out = run("/agents", files_runtime(tmp_path), width=200)
    assert [line for line in out.splitlines() if line.startswith("⚠")] == [
        "⚠ Agent .claude/agents/nodesc.md has no `description`; skipped. Add one line saying when to use it.",
        "⚠ Agent .claude/agents/tools.md: `tools` is a number, not a comma-separated string or a list of tool "
        "names; skipped, since it would get every tool. Fix the frontmatter.",
        "⚠ Agent .claude/agents/explore.md is named 'Explore', which is a built-in type; skipped. Rename it "
        "(its `name`) to use it.",
    ]
    assert "Agent types: 2 (2 built-in, 0 from" in out and "Add one as" not in out


def test_with_no_files_it_says_where_to_add_one(tmp_path, isolated_env):
    lines = run("/agents", files_runtime(tmp_path), width=300).splitlines()
    assert len(lines) == 7 and lines[0].startswith("Agent types: 2 (2 built-in, 0 from")
    assert lines[-1] == (
        f"Add one as .claude/agents/NAME.md (this project) or {isolated_env.home}/agents/NAME.md "
        "(every project): frontmatter `name` and `description`, optionally `tools`, `model`, "
        "`memory`; the body is its system prompt."
    )


def test_links_out_of_the_repository_follow_the_folders_trust(tmp_path):
    root = tmp_path / "repo"
    outside = agent_file(tmp_path / "shared", "x.md", "name: outsider\ndescription: from elsewhere")
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "x.md").symlink_to(outside)
    untrusted = run("/agents", files_runtime(root), width=300)
    assert "outsider" not in untrusted.split("⚠")[0]
    assert (
        f"⚠ .claude/agents/x.md links to {outside}, outside the repository, and this folder is not trusted; "
        "skipped. Trust the folder, or copy it in."
    ) in untrusted
    trusted = run("/agents", files_runtime(root, trusted=True), width=300)
    assert "  outsider         project" in trusted and "⚠" not in trusted


def test_the_sessions_types_are_shown_not_the_files_as_they_are_now(tmp_path):
    agent_file(tmp_path / ".claude", "a.md", "name: early\ndescription: there at start")
    types = load_agent_types(tmp_path, tmp_path / "home")
    agent_file(tmp_path / ".claude", "b.md", "name: late\ndescription: added later")
    runtime = SimpleNamespace(subagents=SimpleNamespace(types=types, runs=[]), config=files_runtime(tmp_path).config)
    out = run("/agents", runtime)
    assert "  early " in out and "late" not in out


def test_a_real_session_lists_its_types(repo):
    agent_file(repo / ".claude", "reviewer.md", "name: reviewer\ndescription: Reviews code\ntools: Read Grep")
    runtime = build_runtime(load_config(repo), client=StubClient())
    out = run("/agents", runtime)
    assert "  reviewer         project   Read, Grep" in out
    assert run("/agents last", runtime) == "No subagent ran in this session.\n"


def test_last_prints_the_last_childs_text_and_one_line_per_tool_call(tmp_path):
    first = SimpleNamespace(
        agent_type="Explore", description="Old", status="completed", tool_count=0, messages=[Message.user("old task")]
    )
    last = SimpleNamespace(
        agent_type="reviewer",
        description="Review the\ndiff",
        status="stopped",
        tool_count=2,
        messages=[
            Message.user("Review app.py"),
            Message(
                "assistant",
                [
                    TextBlock("Reading it."),
                    ToolUseBlock("t1", "Read", {"file_path": str(tmp_path / "app.py")}),
                    ToolUseBlock("t2", "Bash", {"command": "git diff\n--stat"}),
                ],
            ),
            Message("user", [ToolResultBlock("t1", "def greet(): ..."), ToolResultBlock("t2", "1 file changed")]),
            Message("assistant", [TextBlock("Two findings:\n- a bug\x1b[2J\n- a typo")]),
        ],
    )
    runtime = SimpleNamespace(
        subagents=SimpleNamespace(types=None, runs=[first, last]), config=files_runtime(tmp_path).config
    )
    assert run("/agents last", runtime).splitlines() == [
        "Last subagent: reviewer · Review the diff · stopped · 2 tool calls",
        "user:",
        "  Review app.py",
        "assistant:",
        "  Reading it.",
        "  ● Read(app.py)",
        "  ● Bash(git diff --stat)",
        "assistant:",
        "  Two findings:",
        "  - a bug\\x1b[2J",
        "  - a typo",
    ]


def test_last_without_runs_or_without_the_hook_is_one_line(tmp_path):
    assert last_run_lines([], tool_label) == ["No subagent ran in this session."]
    assert run("/agents last", files_runtime(tmp_path)) == "No subagent ran in this session.\n"


def test_another_argument_says_how_to_use_it(tmp_path):
    assert run("/agents lats", files_runtime(tmp_path)) == (
        "Usage: /agents [last]: the subagent types, or the last subagent's conversation.\n"
    )


def test_rows_are_cut_at_the_width():
    types = load_agent_types(Path("/nonexistent"), Path("/nonexistent-home"))
    assert all(len(line) <= 60 for line in agents_table(types, width=60)[1:6])
