"""Subagent types: the built-ins and agent files in Claude Code's layout (`.claude/agents/**/*.md`,
`$CLAUDE_MINI_HOME/agents/`), precedence, bad files one line each, memory folders, links."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mini.permissions import Allow, Ask, Deny, PermissionPolicy
from claude_mini.subagents.runner import AgentRulesGuard
from claude_mini.subagents.types import (
    EXPLORE,
    GENERAL_PURPOSE,
    AgentType,
    load_agent_types,
    memory_dir,
)
from tests.sessions import write


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """(project root, home) as separate folders."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path / "repo", tmp_path / "home"


def agent_file(folder: Path, file: str, frontmatter: str, body: str = "You review code.\n") -> Path:
    return write(folder / "agents" / file, f"---\n{frontmatter.strip()}\n---\n{body}")


def names(types) -> list[str]:
    return [t.name for t in types.types]


def test_built_ins_alone_when_there_are_no_files(dirs):
    types = load_agent_types(*dirs)
    assert types.types == [GENERAL_PURPOSE, EXPLORE] and types.problems == []
    assert GENERAL_PURPOSE.fork and GENERAL_PURPOSE.tools is None and GENERAL_PURPOSE.prompt == ""
    assert EXPLORE.read_only and not EXPLORE.fork and EXPLORE.tools == ("Read", "Grep", "Glob", "Bash")
    assert "read-only" in EXPLORE.prompt and "Bash only for read-only" in EXPLORE.prompt
    assert types.find("explore") is EXPLORE and types.find("GENERAL-PURPOSE") is GENERAL_PURPOSE
    assert types.find("nosuch") is None


def test_a_project_file_becomes_a_type_named_by_its_frontmatter(dirs):
    root, home = dirs
    path = agent_file(
        root / ".claude",
        "other-file.md",
        "name: reviewer\ndescription: Reviews code. Use after edits.\\nThen report.\n"
        "tools: Read, Grep\nmodel: haiku\ncolor: blue",
        body="\nYou review code.\n\n",
    )
    types = load_agent_types(root, home)
    assert types.problems == []  # `color` is cosmetic: no line
    assert types.types[2:] == [
        AgentType(
            "reviewer",
            "Reviews code. Use after edits.\nThen report.",
            prompt="You review code.",
            tools=("Read", "Grep"),
            model="haiku",
            source="project",
            path=path,
        )
    ]
    assert types.find("Reviewer") is types.types[2]


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        ("tools: Read, Grep, Read", ("Read", "Grep")),
        ("tools: Read Grep", ("Read", "Grep")),
        ("tools:\n  - Read\n  - mcp__github__create_issue", ("Read", "mcp__github__create_issue")),
        ("tools: [Bash, 'Glob, Grep']", ("Bash", "Glob", "Grep")),
        ("tools: ''", None),  # empty, `[]`, `*` or omitted: every tool (Claude Code reads them so)
        ("tools: []", None),
        ("tools: '*'", None),
        ("tools:", None),
        ("", None),
    ],
)
def test_tools_as_a_string_or_a_list(dirs, tools, expected):
    root, home = dirs
    agent_file(root / ".claude", "a.md", f"name: a\ndescription: d\n{tools}")
    types = load_agent_types(root, home)
    assert types.problems == [] and types.find("a").tools == expected


def test_a_tools_value_that_is_no_list_of_names_skips_the_type_and_a_rule_grants_its_tool(dirs):
    root, home = dirs
    agent_file(root / ".claude", "map.md", "name: map\ndescription: d\ntools: {Read: true}")
    agent_file(root / ".claude", "rule.md", "name: rule\ndescription: d\ntools: Read, Bash(git log:*), Bash(psql:*)")
    agent_file(root / ".claude", "odd.md", "name: odd\ndescription: d\ntools: Read, ???")
    types = load_agent_types(root, home)
    assert names(types) == ["general-purpose", "Explore", "odd", "rule"]
    rule = types.find("rule")
    assert rule.tools == ("Read", "Bash") and rule.allow == ("Bash(git log:*)", "Bash(psql:*)")
    assert types.find("odd").tools == ("Read",)
    assert types.problems == [
        "Agent .claude/agents/map.md: `tools` is a mapping, not a comma-separated string or a list of tool names; "
        "skipped, since it would get every tool. Fix the frontmatter.",
        "Agent .claude/agents/odd.md: `tools` entry '???' is not a tool name or rule; it is left out, "
        "the others still apply. Fix the frontmatter.",
    ]


@pytest.mark.parametrize("scope", ["project", "user", "local"])
def test_memory_values_and_their_folders(dirs, scope):
    root, home = dirs
    agent_file(root / ".claude", "a.md", f"name: a\ndescription: d\ntools: Grep, Read\nmemory: {scope}")
    agent_file(root / ".claude", "b.md", f"name: b\ndescription: d\nmemory: {scope}")
    types = load_agent_types(root, home)
    a, b = types.find("a"), types.find("b")
    assert types.problems == [] and a.memory == scope == b.memory
    assert a.tools == ("Grep", "Read", "Write", "Edit")  # it must be able to keep its memory (Claude Code)
    assert b.tools is None
    expected = {
        "project": root / ".claude/agent-memory/a",
        "user": home / "agent-memory/a",
        "local": root / ".claude/agent-memory-local/a",
    }[scope]
    assert memory_dir(a, root, home) == expected


def test_a_bad_memory_value_is_a_line_and_no_memory(dirs):
    root, home = dirs
    agent_file(root / ".claude", "a.md", "name: a\ndescription: d\ntools: Read\nmemory: global")
    agent_file(root / ".claude", "b.md", "name: b\ndescription: d\nmemory: [project]")
    types = load_agent_types(root, home)
    assert types.find("a").memory is None and types.find("a").tools == ("Read",)
    assert types.find("b").memory is None
    assert types.problems == [
        "Agent .claude/agents/a.md: `memory` is 'global', not project, user or local; loaded without memory. "
        "Fix the frontmatter.",
        "Agent .claude/agents/b.md: `memory` is a list, not project, user or local; loaded without memory. "
        "Fix the frontmatter.",
    ]
    assert memory_dir(types.find("a"), root, home) is None and memory_dir(EXPLORE, root, home) is None


def test_project_beats_user_then_path_order_and_custom_types_sort_by_name(dirs):
    root, home = dirs
    agent_file(home, "clash.md", "name: clash\ndescription: USER version")
    agent_file(home, "zeta.md", "name: Zeta\ndescription: a user type")
    agent_file(root / ".claude", "b-clash.md", "name: Clash\ndescription: PROJECT version")
    agent_file(root / ".claude", "c-clash.md", "name: clash\ndescription: second project version")
    agent_file(root / ".claude", "sub/alpha.md", "name: alpha\ndescription: in a subfolder")
    agent_file(root / ".claude", "model.md", "name: model\ndescription: d\nmodel: inherit")
    types = load_agent_types(root, home)
    assert names(types) == ["general-purpose", "Explore", "alpha", "Clash", "model", "Zeta"]
    assert types.find("clash").description == "PROJECT version" and types.find("zeta").source == "user"
    assert types.find("model").model is None  # inherit: the parent's
    assert types.problems == [
        "Agent .claude/agents/c-clash.md has the same name as .claude/agents/b-clash.md ('clash'); it comes "
        "first in path order, so that one is used and this one is skipped. Rename one to keep both.",
        f"Agent {home}/agents/clash.md has the same name as .claude/agents/b-clash.md ('clash'); a project one "
        "comes before a user one, so that one is used and this one is skipped. Rename one to keep both.",
    ]


def test_a_custom_type_cannot_take_a_built_in_name(dirs):
    root, home = dirs
    agent_file(root / ".claude", "explore.md", "name: explore\ndescription: my own explorer")
    agent_file(home, "gp.md", "name: general-purpose\ndescription: mine")
    types = load_agent_types(root, home)
    assert types.types == [GENERAL_PURPOSE, EXPLORE]
    assert types.problems == [
        "Agent .claude/agents/explore.md is named 'explore', which is a built-in type; skipped. "
        "Rename it (its `name`) to use it.",
        f"Agent {home}/agents/gp.md is named 'general-purpose', which is a built-in type; skipped. "
        "Rename it (its `name`) to use it.",
    ]


def test_bad_files_are_one_line_each_and_the_rest_loads(dirs):
    root, home = dirs
    agents = root / ".claude" / "agents"
    write(agents / "a-plain.md", "Just a body.\n")
    agent_file(root / ".claude", "b-noname.md", "description: d")
    agent_file(root / ".claude", "c-nodesc.md", "name: nodesc")
    agent_file(root / ".claude", "d-yaml.md", "[[[ broken")
    write(agents / "e-binary.md", b"---\nname: x\n---\n\0\1")
    write(agents / "f-huge.md", "---\nname: huge\ndescription: d\n---\n" + "x" * 100_001)
    write(agents / "g-latin1.md", b"---\nname: caf\xe9\ndescription: d\n---\n")
    agent_file(root / ".claude", "h-badname.md", "name: my agent\ndescription: d")
    agent_file(root / ".claude", "i-listname.md", "name: [a, b]\ndescription: d")
    agent_file(root / ".claude", "j-listdesc.md", "name: listdesc\ndescription: [a, b]")
    agent_file(root / ".claude", "k-good.md", "name: good\ndescription: d")
    write(agents / "notes.txt", "not an agent file")
    types = load_agent_types(root, home)
    assert names(types) == ["general-purpose", "Explore", "good"]
    assert types.problems == [
        "Agent .claude/agents/a-plain.md has no frontmatter; skipped. Start it with a `---` block holding "
        "`name` and `description`.",
        "Agent .claude/agents/b-noname.md has no `name`; skipped. Add `name:` with the name the Agent tool "
        "should use for it.",
        "Agent .claude/agents/c-nodesc.md has no `description`; skipped. Add one line saying when to use it.",
        "Agent .claude/agents/d-yaml.md: frontmatter is not valid YAML (line 3: did not find expected ',' or "
        "']'); skipped. Fix the YAML.",
        "Agent .claude/agents/e-binary.md is binary (a NUL byte in its first 8 KB); skipped. Make it a UTF-8 "
        "text file under 100 KB.",
        "Agent .claude/agents/f-huge.md is too large (100,035 bytes; limit 100,000); skipped. Make it a UTF-8 "
        "text file under 100 KB.",
        "Agent .claude/agents/g-latin1.md is not UTF-8 text (byte 0xe9 at offset 13); skipped. Make it a "
        "UTF-8 text file under 100 KB.",
        "Agent .claude/agents/h-badname.md: `name` 'my agent' cannot be an agent name (letters, digits, '_', "
        "'.' and '-', starting with a letter or digit); skipped. Fix the frontmatter.",
        "Agent .claude/agents/i-listname.md: `name` is a list, not text; skipped. Fix the frontmatter.",
        "Agent .claude/agents/j-listdesc.md has a `description` that is not text; skipped. Add one line saying "
        "when to use it.",
    ]


def test_claude_code_keys_are_read_and_other_keys_never_skip_the_type(dirs, caplog):
    root, home = dirs
    agent_file(root / ".claude", "a.md", "name: a\ndescription: d\nmaxTurns: 3\npermissionMode: acceptEdits")
    agent_file(root / ".claude", "b.md", "name: b\ndescription: d\ndisallowedTools: Write, Bash(rm:*)")
    hooks = "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: echo"
    agent_file(root / ".claude", "c.md", f"name: c\ndescription: d\n{hooks}\nskills: pdf, review")
    agent_file(root / ".claude", "d.md", "name: d\ndescription: d\ncategory: x\ndisplayName: D\ncolor: red")
    with caplog.at_level("DEBUG", logger="claude_mini.subagents.types"):
        types = load_agent_types(root, home)
    assert names(types) == ["general-purpose", "Explore", "a", "b", "c", "d"]
    assert types.problems == []
    assert types.find("a").permission_mode == "acceptEdits"
    b = types.find("b")
    assert b.disallowed == ("Write", "Bash") and b.deny == ("Bash(rm:*)",)
    c = types.find("c")
    assert c.skills == ("pdf", "review") and c.hooks["PreToolUse"][0]["matcher"] == "Bash"
    debug = [r.getMessage() for r in caplog.records]
    assert any("d.md" in line and "category, displayName, color" in line for line in debug)


def test_a_project_link_out_of_the_repository_needs_a_trusted_folder(dirs, tmp_path):
    root, home = dirs
    outside = agent_file(tmp_path / "elsewhere", "x.md", "name: outsider\ndescription: from elsewhere")
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "x.md").symlink_to(outside)
    (home / "agents").symlink_to(outside.parent)  # the user's own links go anywhere
    (tmp_path / "elsewhere" / "agents" / "y.md").write_text("---\nname: y\ndescription: d\n---\n")
    untrusted = load_agent_types(root, home)
    assert names(untrusted) == ["general-purpose", "Explore", "outsider", "y"]
    assert untrusted.find("outsider").source == "user"
    assert untrusted.problems == [
        f".claude/agents/x.md links to {outside}, outside the repository, and this folder is not "
        "trusted; skipped. Trust the folder, or copy it in."
    ]
    trusted = load_agent_types(root, home, trusted=True)
    assert trusted.find("outsider").source == "project"
    assert trusted.problems == [
        f"Agent {home}/agents/x.md has the same name as .claude/agents/x.md ('outsider'); a project one comes "
        "before a user one, so that one is used and this one is skipped. Rename one to keep both."
    ]


def test_a_linked_agents_folder_out_of_the_repository_and_a_link_loop(dirs, tmp_path):
    root, home = dirs
    agent_file(tmp_path / "shared", "s.md", "name: shared\ndescription: d")
    (root / ".claude").mkdir()
    (root / ".claude" / "agents").symlink_to(tmp_path / "shared" / "agents")
    (tmp_path / "shared" / "agents" / "loop").symlink_to(tmp_path / "shared" / "agents")
    untrusted = load_agent_types(root, home)
    assert names(untrusted) == ["general-purpose", "Explore"]
    assert untrusted.problems == [
        f".claude/agents links to {tmp_path / 'shared' / 'agents'}, outside the repository, and this folder "
        "is not trusted; skipped. Trust the folder, or copy it in."
    ]
    assert names(load_agent_types(root, home, trusted=True)) == ["general-purpose", "Explore", "shared"]


def test_a_home_that_is_the_projects_claude_folder_loads_each_file_once(dirs):
    root, _ = dirs
    agent_file(root / ".claude", "a.md", "name: a\ndescription: d")
    types = load_agent_types(root, root / ".claude")
    assert names(types) == ["general-purpose", "Explore", "a"] and types.problems == []
    assert types.find("a").source == "user"


def test_an_agents_own_rules_deny_allow_and_refuse_as_its_mode_says(tmp_path):
    layer = {"allow": ["Bash(psql:*)"], "deny": ["Bash(rm:*)"]}
    rules = PermissionPolicy.from_layers([("agent", layer, None)], cwd=tmp_path, project_root=tmp_path)
    guard = AgentRulesGuard(rules, None, "agent db")
    denied = guard.before("Bash", {"command": "rm -rf build"})
    assert isinstance(denied, Deny) and "Bash(rm:*)" in denied.reason and "agent db" in denied.reason
    assert guard.before("Bash", {"command": "psql -c 'select 1'"}) is None
    asked = Ask("This command needs approval")
    assert isinstance(guard.after("Bash", {"command": "psql -c 'select 1'"}, asked), Allow)
    assert guard.after("Bash", {"command": "make"}, asked) is asked
    by_rule = Ask("an ask rule asks", by_rule=True)
    assert guard.after("Bash", {"command": "psql x"}, by_rule) is by_rule  # ask rules are never lifted
    refusing = AgentRulesGuard(rules, "dontAsk", "agent db")
    assert isinstance(refusing.after("Bash", {"command": "make"}, asked), Deny)
