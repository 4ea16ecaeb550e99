"""Custom commands and skills as slash commands (issue 18): registration, clashes with built-ins,
/help and completion, running one, /skills, and `-p "/name args"` (the CLI end to end is
tests/e2e/test_skills_e2e.py)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from prompt_toolkit.document import Document

from claude_mini.skills.catalog import Catalog, CatalogError, Listing, PromptCommand
from claude_mini.skills.expand import ExpansionError
from claude_mini.subcommands.context_view import skills_report as context_skills_report
from claude_mini.ui import commands
from claude_mini.ui.commands import CommandContext
from claude_mini.ui.mentions import ProjectFiles, ReplCompleter
from claude_mini.ui.skill_commands import (
    clash_warning,
    help_text,
    print_command_text,
    register_custom_commands,
    run_custom_command,
    skills_report,
)
from tests.ui.conftest import FakeHost, make_console


@pytest.fixture(autouse=True)
def registry():
    """Each test starts from (and leaves) the registry without custom commands."""
    commands.discover_commands()
    saved = dict(commands.COMMANDS)
    yield
    register_custom_commands(None, lambda line: None)
    commands.COMMANDS.clear()
    commands.COMMANDS.update(saved)


def entry(name: str, root: Path, *, kind="command", scope="project", namespace="", **kw) -> PromptCommand:
    folder = root / ".claude" / ("skills" if kind == "skill" else "commands")
    path = folder / name / "SKILL.md" if kind == "skill" else folder.joinpath(*namespace.split(":"), f"{name}.md")
    aliases = (f"{namespace}:{name}",) if namespace else ()
    return PromptCommand(name, kind, scope, path, namespace=namespace, aliases=aliases,
                         shown_path=str(path.relative_to(root)), **kw)


class FakeHook:
    """What the commands use of SkillHook: the catalog, the listing, invoked, expand_typed."""

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


def test_every_entry_becomes_a_command_with_its_source_usage_and_alias(tmp_path):
    component = entry("component", tmp_path, namespace="frontend", description="Make a component.",
                      argument_hint="<name>")
    skill = entry("pdf", tmp_path, kind="skill", scope="user", description="Fill PDF forms")
    warnings: list[str] = []
    names = register_custom_commands(Catalog([skill, component], []), warnings.append)
    assert names == ["component", "frontend:component", "pdf"] and warnings == []
    cmd = commands.find_command("frontend:component")
    assert cmd is commands.find_command("component")
    assert cmd.help == "Make a component. (project:frontend, also /frontend:component)"
    assert cmd.usage == "<name>"
    assert commands.find_command("pdf").help == "Fill PDF forms (user)"


def test_a_builtin_name_keeps_its_command_and_the_custom_one_is_one_warning(tmp_path):
    builtin = commands.find_command("help")
    clash = entry("help", tmp_path, description="Custom help")
    hidden = entry("context", tmp_path, disable_model_invocation=True)
    warnings: list[str] = []
    assert register_custom_commands(Catalog([clash, hidden], []), warnings.append) == []
    assert commands.find_command("help") is builtin
    assert warnings == [
        "/help is claude-mini's own command: .claude/commands/help.md is not run by /help; rename it. "
        "The model can still load it with the Skill tool.",
        "/context is claude-mini's own command: .claude/commands/context.md is not run by /context; rename it.",
    ]


def test_a_namespaced_command_named_like_a_builtin_is_still_reached_by_its_alias(tmp_path):
    clash = entry("help", tmp_path, namespace="docs", description="Docs help")
    warnings: list[str] = []
    assert register_custom_commands(Catalog([clash], []), warnings.append) == ["docs:help"]
    assert commands.find_command("docs:help").name == "docs:help"
    assert commands.find_command("help").name == "help" and len(warnings) == 1


def test_registering_again_drops_the_commands_that_vanished(tmp_path):
    register_custom_commands(Catalog([entry("old", tmp_path), entry("kept", tmp_path)], []), print)
    register_custom_commands(Catalog([entry("kept", tmp_path), entry("new", tmp_path)], []), print)
    assert commands.find_command("old") is None
    assert commands.find_command("kept") and commands.find_command("new")


def test_help_lists_them_with_their_source_and_tab_completes_them(slash, tmp_path):
    register_custom_commands(Catalog([entry("greet", tmp_path, description="Greet someone by name.",
                                            argument_hint="[name]")], []), print)
    out = slash.run("/help", width=100)
    assert re.search(r"^/greet \[name\] +Greet someone by name\. \(project\) *$", out, re.M)
    completer = ReplCompleter(ProjectFiles(tmp_path))
    [completion] = list(completer.get_completions(Document("/gre"), None))
    assert completion.text == "/greet"
    assert "(project)" in completion.display_meta_text


def test_a_long_description_is_cut_in_help():
    text = help_text(PromptCommand("x", "skill", "project", Path("/p/.claude/skills/x/SKILL.md"),
                                   description="word " * 40))
    assert text.endswith("… (project)") and len(text) < 110


def run(entry_: PromptCommand, hook, args: str = "Alice") -> tuple[FakeHost, str]:
    host, console = FakeHost(), make_console(100)
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


@pytest.mark.parametrize("error", [
    ExpansionError('the ! line "rm -rf x" was refused: it needs your permission'),
    CatalogError("Command .claude/commands/greet.md vanished; it was not loaded."),
])
def test_a_refused_bang_line_or_a_vanished_body_is_one_red_line_and_nothing_is_sent(tmp_path, error):
    greet = entry("greet", tmp_path)
    host, out = run(greet, FakeHook(Catalog([greet], []), fail=error))
    assert host.turns == []
    assert out.strip() == f"✗ /greet was not sent: {error}"


def test_a_model_only_entry_says_so_and_sends_nothing(tmp_path):
    helper = entry("lint-rules", tmp_path, kind="skill", user_invocable=False, description="Our lint rules")
    hook = FakeHook(Catalog([helper], []))
    register_custom_commands(hook.catalog, print)
    assert "for the model only" in commands.find_command("lint-rules").help
    host, out = run(helper, hook)
    assert host.turns == [] and hook.calls == []
    assert " ".join(out.split()) == (
        "/lint-rules is for the model only (user-invocable: false); nothing was sent. Ask for what it "
        "does and the model can load the lint-rules skill with the Skill tool.")


def test_skills_lists_every_entry_its_state_the_problems_and_the_budget(tmp_path):
    hook = FakeHook(Catalog([
        entry("pdf", tmp_path, kind="skill", scope="user", description="Fill PDF forms"),
        entry("component", tmp_path, namespace="frontend", description="Make a component"),
        entry("deploy", tmp_path, description="Ship it", disable_model_invocation=True),
        entry("lint-rules", tmp_path, kind="skill", user_invocable=False, description="x " * 60),
    ], ["Skill .claude/skills/broken/SKILL.md: frontmatter is not valid YAML (line 2: bad); loaded without it."]))
    hook.invoked = {"pdf": 1234}
    hook.listing = Listing("- pdf\n- component: Make a component\n- lint-rules", 48, 8000, ("pdf",))
    lines = skills_report(hook, SimpleNamespace(), width=100)
    assert lines == [
        "Custom commands and skills (4; 3 listed to the model in 48 of 8,000 characters, about 12 tokens):",
        "  pdf         skill    user              listed      invoked (1,234 tokens)  Fill PDF forms",
        "  component   command  project:frontend  listed                              Make a component",
        "  deploy      command  project           you-only                            Ship it",
        "  lint-rules  skill    project           model-only                          x x x x x x x x x x x…",
        "Listed without their description (over the budget): pdf",
        "⚠ Skill .claude/skills/broken/SKILL.md: frontmatter is not valid YAML (line 2: bad); loaded without it.",
    ]
    assert all(len(line) <= 100 for line in lines[1:-1])


def test_skills_with_nothing_says_where_they_go(repo):
    runtime = SimpleNamespace(config=SimpleNamespace(project_root=repo))
    [line] = skills_report(None, runtime)
    assert line.startswith("No custom commands or skills. Add .claude/commands/NAME.md")


def test_context_shows_the_listed_entries_the_listing_size_and_the_problems():
    data = {"entries": [
        {"name": "greet", "kind": "command", "source": "project", "path": "/r/.claude/commands/greet.md",
         "shown_path": ".claude/commands/greet.md", "listed": True, "user_invocable": True, "description": "Greet"},
        {"name": "deploy", "kind": "command", "source": "user", "path": "/h/commands/deploy.md",
         "shown_path": "/h/commands/deploy.md", "listed": False, "user_invocable": True, "description": "Ship"}],
        "listing_chars": 15, "listing_budget": 8000, "listing_tokens": 4, "shortened": [],
        "problems": ["Skill .claude/skills/empty: no SKILL.md in it; skipped."]}
    assert context_skills_report(data) == [
        "Skills and custom commands (1 of 2 listed to the model in the Skill tool's description: 4 tokens, "
        "15 of 8,000 characters):",
        "  + greet (command, project): .claude/commands/greet.md",
        "  - deploy (command, user, not listed: disable-model-invocation): /h/commands/deploy.md",
        "  warning: Skill .claude/skills/empty: no SKILL.md in it; skipped.",
    ]


# ---- print mode


def print_text(runtime, prompt: str) -> tuple[str, list[str]]:
    warnings: list[str] = []
    return asyncio.run(print_command_text(runtime, prompt, warnings.append)), warnings


def test_print_mode_expands_a_custom_command_without_anyone_to_ask_and_attaches_its_files(runtime, repo):
    (repo / "notes.txt").write_text("NOTES\n")
    greet = entry("greet", repo)

    class MentionHook(FakeHook):
        async def expand_typed(self, entry_, args):
            self.calls.append((entry_.name, args))
            return f"Greet {args}; see @notes.txt"

    hook = MentionHook(Catalog([greet], []))
    runtime.skills = hook
    text, warnings = print_text(runtime, "/greet Alice\nand Bob")
    assert hook.calls == [("greet", "Alice\nand Bob")]
    assert text.startswith("Greet Alice\nand Bob; see @notes.txt\n\n") and "NOTES" in text
    assert warnings == []


def test_print_mode_sends_builtin_and_unknown_names_as_typed(runtime, repo):
    hook = FakeHook(Catalog([entry("help", repo)], []))
    runtime.skills = hook
    assert print_text(runtime, "/nosuch thing") == ("/nosuch thing", [])
    text, [warning] = print_text(runtime, "/help me")
    assert text == "/help me" and hook.calls == []
    assert warning == ("/help is one of claude-mini's own commands, which print mode does not run: the text "
                       "was sent to the model as typed (.claude/commands/help.md is not run; rename it).")
    assert print_text(runtime, "/usr/bin/env is broken") == ("/usr/bin/env is broken", [])


def test_print_mode_refuses_a_model_only_entry(runtime, repo):
    runtime.skills = FakeHook(Catalog([entry("lint-rules", repo, kind="skill", user_invocable=False)], []))
    with pytest.raises(ExpansionError, match="for the model only"):
        print_text(runtime, "/lint-rules")


def test_clash_warning_names_the_file_of_a_user_entry_in_full(tmp_path):
    user = PromptCommand("clear", "command", "user", tmp_path / "home" / "commands" / "clear.md")
    assert f"{tmp_path}/home/commands/clear.md is not run by /clear" in clash_warning(user)


def test_registering_from_the_real_catalog(tmp_path):
    from claude_mini.skills.catalog import load_catalog

    folder = tmp_path / ".claude" / "commands" / "frontend"
    folder.mkdir(parents=True)
    (folder / "component.md").write_text("---\ndescription: Make a component\nargument-hint: <name>\n---\nBody $1\n")
    (tmp_path / ".claude" / "commands" / "help.md").write_text("Custom help\n")
    warnings: list[str] = []
    names = register_custom_commands(load_catalog(tmp_path, tmp_path / "home"), warnings.append)
    assert names == ["component", "frontend:component"]
    assert commands.find_command("component").help == "Make a component (project:frontend, also /frontend:component)"
    assert warnings == ["/help is claude-mini's own command: .claude/commands/help.md is not run by /help; "
                        "rename it. The model can still load it with the Skill tool."]
