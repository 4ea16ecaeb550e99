"""Custom commands and skills as slash commands: registration, clashes with built-ins,
/help and completion, running one, /skills, and `-p "/name args"` (the CLI end to end is
tests/e2e/test_skills_e2e.py)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from prompt_toolkit.document import Document

from claude_mini.base.text import estimate_tokens
from claude_mini.command_table import CommandTable, builtin_table
from claude_mini.commands.context import catalog_lines
from claude_mini.commands.skills import skills_table
from claude_mini.skills.catalog import Catalog, CatalogError, Listing, PromptCommand, build_listing
from claude_mini.skills.expand import ExpansionError
from claude_mini.skills.report import catalog_json, clash_warning, listing_line
from claude_mini.skills.tool import describe
from claude_mini.ui import commands
from claude_mini.ui.commands import CommandContext
from claude_mini.ui.mentions import ProjectFiles, ReplCompleter
from claude_mini.ui.skill_commands import (
    help_text,
    print_command_text,
    register_custom_commands,
    run_custom_command,
)
from tests.ui.conftest import FakeHost, make_console


@pytest.fixture
def table() -> CommandTable:
    """A session's command table with the built-ins and no custom command yet."""
    return builtin_table()


def entry(
    name: str, root: Path, *, kind="command", scope="project", namespace="", body="Body\n", **kw
) -> PromptCommand:
    folder = root / ".claude" / ("skills" if kind == "skill" else "commands")
    path = folder / name / "SKILL.md" if kind == "skill" else folder.joinpath(*namespace.split(":"), f"{name}.md")
    aliases = (f"{namespace}:{name}",) if namespace else ()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return PromptCommand(
        name, kind, scope, path, namespace=namespace, aliases=aliases, shown_path=str(path.relative_to(root)), **kw
    )


class FakeHook:
    """What the commands use of SkillPart: the catalog, the listing, invoked, expand_typed."""

    def __init__(self, catalog: Catalog, *, fail: Exception | None = None) -> None:
        self.catalog = catalog
        self.listing = Listing("- greet: Greet someone", 22, 8000, ())
        self.invoked: dict[str, int] = {}
        self.fail = fail
        self.calls: list[tuple[str, str, object]] = []

    async def expand_typed(self, entry, args):
        self.calls.append((entry.name, args))
        if self.fail is not None:
            raise self.fail
        return f"<command-name>/{entry.name}</command-name>\n\nHello {args}"


def test_every_entry_becomes_a_command_with_its_source_usage_and_alias(tmp_path, table):
    component = entry(
        "component", tmp_path, namespace="frontend", description="Make a component.", argument_hint="<name>"
    )
    skill = entry("pdf", tmp_path, kind="skill", scope="user", description="Fill PDF forms")
    warnings: list[str] = []
    names = register_custom_commands(table, Catalog([skill, component], []), warnings.append)
    assert names == ["component", "frontend:component", "pdf"] and warnings == []
    cmd = table.find("frontend:component")
    assert cmd is table.find("component")
    assert cmd.help == "Make a component. (project:frontend, also /frontend:component)"
    assert cmd.usage == "<name>"
    assert table.find("pdf").help == "Fill PDF forms (user)"


def test_a_builtin_name_keeps_its_command_and_the_custom_one_is_one_warning(tmp_path, table):
    builtin = table.find("help")
    clash = entry("help", tmp_path, description="Custom help")
    hidden = entry("context", tmp_path, disable_model_invocation=True)
    warnings: list[str] = []
    assert register_custom_commands(table, Catalog([clash, hidden], []), warnings.append) == []
    assert table.find("help") is builtin
    assert warnings == [
        "/help is claude-mini's own command: .claude/commands/help.md is not run by /help; rename it. "
        "The model can still load it with the Skill tool.",
        "/context is claude-mini's own command: .claude/commands/context.md is not run by /context; rename it.",
    ]


def test_a_namespaced_command_named_like_a_builtin_is_still_reached_by_its_alias(tmp_path, table):
    clash = entry("help", tmp_path, namespace="docs", description="Docs help")
    warnings: list[str] = []
    assert register_custom_commands(table, Catalog([clash], []), warnings.append) == ["docs:help"]
    assert table.find("docs:help").name == "docs:help"
    assert table.find("help").name == "help" and len(warnings) == 1


def test_registering_again_drops_the_commands_that_vanished(tmp_path, table):
    register_custom_commands(table, Catalog([entry("old", tmp_path), entry("kept", tmp_path)], []), print)
    register_custom_commands(table, Catalog([entry("kept", tmp_path), entry("new", tmp_path)], []), print)
    assert table.find("old") is None
    assert table.find("kept") and table.find("new")


def test_help_lists_them_with_their_source_and_tab_completes_them(slash, tmp_path):
    table = commands.session_table(slash.runtime)
    register_custom_commands(
        table,
        Catalog([entry("greet", tmp_path, description="Greet someone by name.", argument_hint="[name]")], []),
        print,
    )
    out = slash.run("/help", width=100)
    assert re.search(r"^/greet \[name\] +Greet someone by name\. \(project\) *$", out, re.M)
    completer = ReplCompleter(ProjectFiles(tmp_path), table=lambda: table)
    [completion] = list(completer.get_completions(Document("/gre"), None))
    assert completion.text == "/greet"
    assert "(project)" in completion.display_meta_text


def test_a_long_description_is_cut_in_help():
    text = help_text(
        PromptCommand("x", "skill", "project", Path("/p/.claude/skills/x/SKILL.md"), description="word " * 40)
    )
    assert text.endswith("… (project)") and len(text) < 110


class Host(FakeHost):
    """The REPL as a command sees it, with `cancellable` recording what its status said."""

    def __init__(self) -> None:
        super().__init__()
        self.statuses: list[str] = []

    async def cancellable(self, work, status):
        self.statuses.append(status)
        return await work


def run(entry_: PromptCommand, hook, args: str = "Alice") -> tuple[Host, str]:
    host, console = Host(), make_console(100)
    runtime = SimpleNamespace(skills=hook)
    asyncio.run(run_custom_command(CommandContext(host, runtime, console, args), entry_))
    return host, console.file.getvalue()


def test_running_one_sends_the_expanded_text(tmp_path):
    greet = entry("greet", tmp_path)
    hook = FakeHook(Catalog([greet], []))
    host, out = run(greet, hook)
    assert host.turns == ["<command-name>/greet</command-name>\n\nHello Alice"]
    assert hook.calls == [("greet", "Alice")]
    assert out == ""


@pytest.mark.parametrize(
    "error",
    [
        ExpansionError('the ! line "rm -rf x" was refused: it needs your permission'),
        CatalogError("Command .claude/commands/greet.md vanished; it was not loaded."),
    ],
)
def test_a_refused_bang_line_or_a_vanished_body_is_one_red_line_and_nothing_is_sent(tmp_path, error):
    greet = entry("greet", tmp_path)
    host, out = run(greet, FakeHook(Catalog([greet], []), fail=error))
    assert host.turns == []
    assert out.strip() == f"✗ /greet was not sent: {error}"


def test_a_model_only_entry_says_so_and_sends_nothing(tmp_path, table):
    helper = entry("lint-rules", tmp_path, kind="skill", user_invocable=False, description="Our lint rules")
    hook = FakeHook(Catalog([helper], []))
    register_custom_commands(table, hook.catalog, print)
    assert "for the model only" in table.find("lint-rules").help
    host, out = run(helper, hook)
    assert host.turns == [] and hook.calls == []
    assert " ".join(out.split()) == (
        "/lint-rules is for the model only (user-invocable: false); nothing was sent. Ask for what it "
        "does and the model can load the lint-rules skill with the Skill tool."
    )


def test_skills_lists_every_entry_its_state_the_problems_and_the_budget(tmp_path):
    hook = FakeHook(
        Catalog(
            [
                entry("pdf", tmp_path, kind="skill", scope="user", description="Fill PDF forms"),
                entry("component", tmp_path, namespace="frontend", description="Make a component"),
                entry("deploy", tmp_path, description="Ship it", disable_model_invocation=True),
                entry("lint-rules", tmp_path, kind="skill", user_invocable=False, description="x " * 60),
                entry("help", tmp_path, description="My help"),
            ],
            ["Skill .claude/skills/broken/SKILL.md: frontmatter is not valid YAML (line 2: bad); loaded without it."],
        )
    )
    hook.invoked = {"pdf": 1234}
    hook.listing = Listing("- pdf\n- component: Make a component\n- lint-rules\n- help: My help", 64, 8000, ("pdf",))
    tokens = estimate_tokens(describe(hook.listing))
    lines = skills_table(hook, SimpleNamespace(), width=100)
    assert lines == [
        f"Skills and custom commands: 5 (4 listed to the model in the Skill tool's description: {tokens:,} tokens, "
        "the listing 64 of 8,000 characters):",
        "  pdf         skill    user              listed      invoked (1,234 tokens)  Fill PDF forms",
        "  component   command  project:frontend  listed                              Make a component",
        "  deploy      command  project           you-only                            Ship it",
        "  lint-rules  skill    project           model-only                          x x x x x x x x x x x…",
        "  help        command  project           listed                              My help",
        "Listed by name only (over the listing's budget): pdf",
        "⚠ Skill .claude/skills/broken/SKILL.md: frontmatter is not valid YAML (line 2: bad); loaded without it.",
        "⚠ /help is claude-mini's own command: .claude/commands/help.md is not run by /help; rename it. "
        "The model can still load it with the Skill tool.",
    ]
    assert all(len(line) <= 100 for line in lines[1:-2])


def test_skills_with_nothing_says_where_they_go(repo):
    runtime = SimpleNamespace(config=SimpleNamespace(project_root=repo, trusted=False, claude_code_home=None))
    [line] = skills_table(None, runtime)
    assert line.startswith(
        "Skills and custom commands: none. Add .claude/skills/NAME/SKILL.md or .claude/commands/NAME.md here"
    )


def test_context_and_skills_show_the_same_rows_and_the_skill_tools_tokens(tmp_path):
    """One report (findings 14, 15): the same first line, states and the token figure (the Skill
    tool's whole description, what the model pays) in `claude-mini context` and /skills."""
    catalog = Catalog(
        [
            entry("greet", tmp_path, description="Greet"),
            entry("deploy", tmp_path, scope="user", description="Ship", disable_model_invocation=True),
        ],
        ["Skill .claude/skills/empty: no SKILL.md in it; skipped."],
    )
    listing = build_listing(catalog.listed(), 8000)
    tokens = estimate_tokens(describe(listing))
    assert tokens > estimate_tokens(listing.text) + 50  # the guide is most of it
    first = (
        f"Skills and custom commands: 2 (1 listed to the model in the Skill tool's description: {tokens:,} "
        f"tokens, the listing {listing.chars} of 8,000 characters):"
    )
    assert catalog_lines(catalog, listing, {"help", "clear"}) == [
        first,
        "  greet   command  project  listed    .claude/commands/greet.md",
        "  deploy  command  user     you-only  .claude/commands/deploy.md",
        "  warning: Skill .claude/skills/empty: no SKILL.md in it; skipped.",
    ]
    hook = FakeHook(catalog)
    hook.listing = listing
    assert skills_table(hook, SimpleNamespace())[0] == first
    assert listing_line(catalog, listing) + ":" == first
    data = catalog_json(catalog, listing, {"greet"})
    assert data["tool_tokens"] == tokens and [e["state"] for e in data["entries"]] == ["listed", "you-only"]
    assert data["entries"][0]["shown_path"] == ".claude/commands/greet.md"
    assert data["problems"][-1].startswith("/greet is claude-mini's own command")


def test_a_catalog_with_nothing_listed_has_no_skill_tool_to_count(tmp_path):
    catalog = Catalog([entry("deploy", tmp_path, disable_model_invocation=True)], [])
    listing = build_listing(catalog.listed(), 8000)
    assert listing_line(catalog, listing) == "Skills and custom commands: 1 (none listed to the model: no Skill tool)"


# ---- print mode


def print_text(runtime, prompt: str) -> tuple[str, list[str]]:
    warnings: list[str] = []
    return asyncio.run(print_command_text(runtime, prompt, warnings.append)), warnings


def test_print_mode_expands_a_custom_command_without_anyone_to_ask_and_attaches_its_files(runtime, repo, monkeypatch):
    (repo / "notes.txt").write_text("NOTES\n")
    greet = entry("greet", repo)

    class MentionHook(FakeHook):
        async def expand_typed(self, entry_, args):
            self.calls.append((entry_.name, args))
            return f"Greet {args}; see @notes.txt"

    hook = MentionHook(Catalog([greet], []))
    monkeypatch.setattr(type(runtime), "skills", hook)  # the runtime finds its skills part in its lifecycle
    text, warnings = print_text(runtime, "/greet Alice\nand Bob")
    assert hook.calls == [("greet", "Alice\nand Bob")]
    assert text.startswith("Greet Alice\nand Bob; see @notes.txt\n\n") and "NOTES" in text
    assert warnings == []


def test_print_mode_sends_builtin_and_unknown_names_as_typed(runtime, repo, monkeypatch):
    hook = FakeHook(Catalog([entry("help", repo)], []))
    monkeypatch.setattr(type(runtime), "skills", hook)  # the runtime finds its skills part in its lifecycle
    assert print_text(runtime, "/nosuch thing") == ("/nosuch thing", [])
    text, [warning] = print_text(runtime, "/help me")
    assert text == "/help me" and hook.calls == []
    assert warning == (
        "/help is one of claude-mini's own commands, which print mode does not run: the text "
        "was sent to the model as typed (.claude/commands/help.md is not run; rename it)."
    )
    assert print_text(runtime, "/usr/bin/env is broken") == ("/usr/bin/env is broken", [])


def test_print_mode_refuses_a_model_only_entry(runtime, repo, monkeypatch):
    hook = FakeHook(Catalog([entry("lint-rules", repo, kind="skill", user_invocable=False)], []))
    monkeypatch.setattr(type(runtime), "skills", hook)  # the runtime finds its skills part in its lifecycle
    with pytest.raises(ExpansionError, match="for the model only"):
        print_text(runtime, "/lint-rules")


def test_clash_warning_names_the_file_of_a_user_entry_in_full(tmp_path):
    path = tmp_path / "home" / "commands" / "clear.md"
    user = PromptCommand("clear", "command", "user", path, shown_path=str(path))
    assert f"{tmp_path}/home/commands/clear.md is not run by /clear" in clash_warning(user)


def test_registering_from_the_real_catalog(tmp_path, table):
    from claude_mini.skills.catalog import load_catalog

    folder = tmp_path / ".claude" / "commands" / "frontend"
    folder.mkdir(parents=True)
    (folder / "component.md").write_text("---\ndescription: Make a component\nargument-hint: <name>\n---\nBody $0\n")
    (tmp_path / ".claude" / "commands" / "help.md").write_text("Custom help\n")
    warnings: list[str] = []
    names = register_custom_commands(table, load_catalog(tmp_path, tmp_path / "home"), warnings.append)
    assert names == ["component", "frontend:component"]
    assert table.find("frontend:component").help == "Make a component (project:frontend, also /component)"
    assert table.find("component") is table.find("frontend:component")
    assert warnings == [
        "/help is claude-mini's own command: .claude/commands/help.md is not run by /help; "
        "rename it. The model can still load it with the Skill tool."
    ]


# ---- the REPL's details


def test_tab_completes_an_alias(tmp_path, table):
    register_custom_commands(table, Catalog([entry("component", tmp_path, namespace="frontend")], []), print)
    completer = ReplCompleter(ProjectFiles(tmp_path), table=lambda: table)
    assert [c.text for c in completer.get_completions(Document("/frontend:c"), None)] == ["/frontend:component"]
    assert [c.text for c in completer.get_completions(Document("/compon"), None)] == ["/component"]


def test_while_the_bang_lines_run_the_status_names_them(tmp_path):
    slow = entry("slow", tmp_path, body="Slept: !`sleep 20 && echo woke` then !`date`\n")
    host, _ = run(slow, FakeHook(Catalog([slow], [])))
    assert host.statuses == ["Running !`sleep 20 && echo woke` and 1 more for /slow"]
    greet = entry("greet", tmp_path)
    host, _ = run(greet, FakeHook(Catalog([greet], [])))
    assert host.statuses == ["Reading /greet"]


def test_a_cancelled_expansion_is_one_line_and_nothing_is_sent(tmp_path):
    slow = entry("slow", tmp_path, body="!`sleep 20`\n")
    hook = FakeHook(Catalog([slow], []), fail=asyncio.CancelledError())  # as Esc or Ctrl-C cancel it
    host, console = Host(), make_console(100)
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(run_custom_command(CommandContext(host, SimpleNamespace(skills=hook), console, ""), slow))
    assert console.file.getvalue().strip() == "/slow was not sent (interrupted)."
    assert host.turns == []


def test_a_name_added_after_the_conversation_started_says_when_it_becomes_a_command(tmp_path):
    from claude_mini.commands.skills import late_hint
    from claude_mini.ui.commands import unknown_hint

    hook = FakeHook(Catalog([entry("early", tmp_path)], []))
    (tmp_path / ".claude" / "commands" / "late.md").write_text("Late body\n")
    runtime = SimpleNamespace(
        skills=hook, config=SimpleNamespace(project_root=tmp_path, trusted=False, claude_code_home=None)
    )
    assert unknown_hint("late", builtin_table(), runtime) == (
        "/late was added after this conversation started; it becomes a command at the next /clear."
    )
    assert late_hint(runtime, "early") is None and late_hint(runtime, "nosuch") is None
    runtime.skills = None  # nothing was found at start: there is no catalog for /clear to reread
    assert late_hint(runtime, "late").endswith("it becomes a command when claude-mini starts again.")


def test_a_skill_calls_header_and_question_name_the_skill_its_args_and_the_rules_it_grants(tmp_path):
    from claude_mini.llm.messages import ToolUseBlock
    from claude_mini.ui.render import tool_label
    from claude_mini.ui.repl import permission_question, skill_grants

    call = ToolUseBlock("t1", "Skill", {"skill": "gl", "args": "--output=/tmp/x"})
    assert tool_label(call) == "Skill(gl --output=/tmp/x)"
    assert tool_label(ToolUseBlock("t2", "Skill", {"skill": "plain", "args": None})) == "Skill(plain)"
    gl = entry("gl", tmp_path, kind="skill", allowed_tools=("Bash(git log:*)", "Read"))
    runtime = SimpleNamespace(skills=FakeHook(Catalog([gl], [])), config=SimpleNamespace(trusted=True))
    assert skill_grants(runtime, call) == ["Bash(git log:*)", "Read"]
    assert permission_question(call, tmp_path, skill_grants(runtime, call)) == (
        "Load the skill gl? It would allow Bash(git log:*), Read without asking for the rest of this turn."
    )
    runtime.config.trusted = False  # a project's allowed-tools count only in a trusted folder
    assert skill_grants(runtime, call) == []
    assert permission_question(call, tmp_path) == "Load the skill gl?"


def test_each_runtime_registers_its_own_catalog(tmp_path):
    """No process-wide registry: each runtime's table holds its own catalog's commands, a second
    runtime does not see the first one's, and one whose catalog /clear replaced drops the old ones."""
    from claude_mini.ui.skill_commands import wait_for_custom_commands

    def runtime(*entries):
        hook = FakeHook(Catalog(list(entries), [])) if entries else None
        return SimpleNamespace(skills=hook, notices=SimpleNamespace(say=lambda *a, **k: None), commands=CommandTable())

    async def wait(rt):
        async def get():
            return rt

        await wait_for_custom_commands(get)

    first, second = runtime(entry("greet", tmp_path)), runtime(entry("deploy", tmp_path))
    asyncio.run(wait(first))
    asyncio.run(wait(second))
    assert first.commands.find("greet") is not None and first.commands.find("deploy") is None
    assert second.commands.find("greet") is None and second.commands.find("deploy") is not None
    assert first.commands.find("help") is not None  # the built-ins are in every session's table
    first.skills = None  # /clear: the new conversation's catalog has nothing
    asyncio.run(wait(first))
    assert first.commands.find("greet") is None
