"""load_catalog over folders in Claude Code's layout; the listing's budget."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claude_mini.skills.catalog import (
    BUDGET_ENV,
    MAX_BODY_BYTES,
    MAX_ENTRY_CHARS,
    Catalog,
    CatalogError,
    PromptCommand,
    build_listing,
    listing_budget,
    load_catalog,
    split_tool_rules,
)
from tests.sessions import write


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    return project


@pytest.fixture
def home(isolated_env) -> Path:
    return isolated_env.home


def skill(base: Path, name: str, text: str) -> Path:
    return write(base / "skills" / name / "SKILL.md", text)


def command(base: Path, rel: str, text: str) -> Path:
    return write(base / "commands" / rel, text)


def load(root: Path, home: Path) -> Catalog:
    return load_catalog(root, home)


# --- order and precedence ----------------------------------------------------------------
def test_listing_order_is_user_skills_project_skills_project_commands_user_commands(root, home):
    skill(home, "zeta", "user skill")
    skill(home, "alpha", "user skill")
    skill(root / ".claude", "mid", "project skill")
    command(root / ".claude", "pcmd.md", "project command")
    command(home, "ucmd.md", "user command")
    cat = load(root, home)
    assert [(e.name, e.kind, e.scope) for e in cat.entries] == [
        ("alpha", "skill", "user"),
        ("zeta", "skill", "user"),
        ("mid", "skill", "project"),
        ("pcmd", "command", "project"),
        ("ucmd", "command", "user"),
    ]
    assert cat.problems == []


def test_user_skill_beats_project_skill_with_one_line(root, home):
    skill(home, "dup", "---\ndescription: USER dup\n---\nbody")
    skill(root / ".claude", "dup", "---\ndescription: PROJECT dup\n---\nbody")
    cat = load(root, home)
    assert [e.description for e in cat.entries] == ["USER dup"]
    [line] = cat.problems
    assert line.startswith("Skill .claude/skills/dup/SKILL.md has the same name as ")
    assert str(home / "skills/dup/SKILL.md") in line and "user one comes before a project one" in line
    assert "skipped" in line


def test_skill_beats_command_of_the_same_name(root, home):
    command(home, "nodesc.md", "user command")
    skill(root / ".claude", "nodesc", "project skill")
    cat = load(root, home)
    assert [(e.kind, e.scope) for e in cat.entries] == [("skill", "project")]
    [line] = cat.problems
    assert "a skill comes before a command" in line and line.startswith("Command ")


def test_user_command_beats_project_command(root, home):
    command(home, "x.md", "USER")
    command(root / ".claude", "x.md", "PROJECT")
    cat = load(root, home)
    assert [e.description for e in cat.entries] == ["USER"]
    assert len(cat.problems) == 1


def test_command_in_subfolder_has_namespace_and_alias(root, home):
    command(root / ".claude", "frontend/component.md", "Make a component")
    command(root / ".claude", "a/b/deep.md", "Deep")
    cat = load(root, home)
    comp = cat.find("frontend:component")
    assert comp is not None and comp.name == "frontend:component" and comp.aliases == ("component",)
    assert comp.namespace == "frontend" and comp.source == "project:frontend"
    assert cat.find("/component") is comp and cat.find("COMPONENT") is comp
    assert cat.find("a:b:deep") is cat.find("deep")
    assert cat.names() == {"component", "frontend:component", "deep", "a:b:deep"}
    assert [e.name for e in cat.listed()] == ["frontend:component", "a:b:deep"]


def test_same_stem_in_two_folders_each_is_reached_by_its_namespace(root, home):
    command(root / ".claude", "api/test.md", "API")
    command(root / ".claude", "web/test.md", "WEB")
    command(root / ".claude", "test.md", "TOP")
    command(root / ".claude", "git/lint.md", "LINT")
    command(root / ".claude", "hg/lint.md", "HG LINT")
    cat = load(root, home)
    assert cat.find("test").description == "TOP"
    assert cat.find("api:test").description == "API" and cat.find("web:test").description == "WEB"
    assert cat.find("lint") is None  # ambiguous: neither owns the short name
    assert cat.find("git:lint").description == "LINT"
    assert cat.problems == []


def test_skill_frontmatter_name_is_an_alias(root, home):
    skill(root / ".claude", "renamed-dir", "---\nname: other-name\ndescription: d\n---\nbody")
    cat = load(root, home)
    entry = cat.find("other-name")
    assert entry is not None and entry.name == "renamed-dir" and entry.aliases == ("other-name",)
    assert cat.find("renamed-dir") is entry


def test_alias_taken_by_a_real_name_is_dropped_with_a_line(root, home):
    skill(root / ".claude", "aaa", "---\nname: bbb\n---\nbody")
    command(root / ".claude", "bbb.md", "the command")
    cat = load(root, home)
    assert cat.find("bbb").kind == "command" and cat.find("aaa").aliases == ()
    [line] = cat.problems
    assert "'bbb' is taken by .claude/commands/bbb.md" in line


def test_same_name_differing_in_case_clashes(root, home):
    skill(home, "Deploy", "user")
    skill(root / ".claude", "deploy", "project")
    cat = load(root, home)
    assert [e.name for e in cat.entries] == ["Deploy"] and len(cat.problems) == 1


# --- bad files ----------------------------------------------------------------------------
def test_yaml_refused_is_read_line_by_line(root, home):
    text = "---\ndescription: Use when: the user asks\nmodel:\thaiku\nallowed-tools: Bash(git:*)\n---\nBody"
    command(root / ".claude", "c.md", text)
    skill(root / ".claude", "pdf", "---\ndescription: [unclosed\n---\nBody")
    cat = load(root, home)
    c, pdf = cat.find("c"), cat.find("pdf")
    assert c.description == "Use when: the user asks" and c.model == "haiku" and c.allowed_tools == ("Bash(git:*)",)
    assert pdf.description == "[unclosed" and pdf.body() == "Body"
    assert cat.problems == []


def test_broken_yaml_loads_with_folder_name_and_first_paragraph(root, home):
    skill(root / ".claude", "pdf", "---\n[[ nothing: to read\n---\nBroken body\nsecond line\n\nmore")
    cat = load(root, home)
    [entry] = cat.entries
    assert entry.name == "pdf" and entry.description == "Broken body second line"
    assert entry.body() == "Broken body\nsecond line\n\nmore"
    [line] = cat.problems
    assert line.startswith("Skill .claude/skills/pdf/SKILL.md: frontmatter is not valid YAML (line ")
    assert line.endswith("; loaded with the folder name and its first paragraph as description. Fix the YAML.")


def test_unclosed_frontmatter_is_a_line(root, home):
    command(root / ".claude", "c.md", "---\ndescription: x\nbody")
    cat = load(root, home)
    assert cat.find("c") is not None
    assert "not closed" in cat.problems[0] and "file name" in cat.problems[0]


def test_folder_without_skill_md_is_one_line_and_skipped(root, home):
    (root / ".claude/skills/empty").mkdir(parents=True)
    write(root / ".claude/skills/empty/notes.md", "x")
    write(root / ".claude/skills/README.md", "a file here is not a skill")
    skill(root / ".claude", "ok", "fine")
    cat = load(root, home)
    assert [e.name for e in cat.entries] == ["ok"]
    assert cat.problems == [
        "Skill folder .claude/skills/empty has no SKILL.md; skipped. Add empty/SKILL.md or remove the folder."
    ]


def test_binary_huge_and_non_utf8_bodies_are_one_line_each(root, home):
    base = root / ".claude"
    skill(base, "bin", "")
    write(base / "skills/bin/SKILL.md", b"---\ndescription: x\n---\n\x00\x01\x02")
    write(base / "commands/big.md", "x" * (MAX_BODY_BYTES + 1))
    write(base / "commands/latin.md", "caf\xe9".encode("latin-1"))
    command(base, "fine.md", "ok")
    cat = load(root, home)
    assert [e.name for e in cat.entries] == ["fine"]
    assert len(cat.problems) == 3
    bin_line, big_line, latin_line = sorted(cat.problems, key=lambda p: ("bin" not in p, "big" not in p))
    assert bin_line.startswith("Skill .claude/skills/bin/SKILL.md is binary")
    assert big_line.startswith(f"Command .claude/commands/big.md is too large ({MAX_BODY_BYTES + 1:,} bytes")
    assert "is not UTF-8 text (byte 0xe9 at offset 3); skipped." in latin_line


def test_bad_names_are_a_line_and_skipped(root, home):
    command(root / ".claude", "my command.md", "x")
    command(root / ".claude", "bad folder/x.md", "x")
    skill(root / ".claude", "-dash", "x")
    command(root / ".claude", "notes.txt", "not markdown: ignored")
    command(root / ".claude", ".hidden/y.md", "hidden folders are ignored")
    cat = load(root, home)
    assert cat.entries == []
    assert len(cat.problems) == 3
    assert any("'my command' cannot be a command name" in p and p.endswith("Rename the file.") for p in cat.problems)
    assert any("'-dash' cannot be a skill name" in p for p in cat.problems)


def test_dangling_link_and_fifo_are_a_line_each(root, home, tmp_path):
    (root / ".claude/commands").mkdir(parents=True)
    (root / ".claude/commands/gone.md").symlink_to(tmp_path / "nowhere.md")
    os.mkfifo(root / ".claude/commands/pipe.md")
    cat = load(root, home)
    assert cat.entries == []
    assert cat.problems == [
        "Command .claude/commands/gone.md cannot be read (not found); skipped. Fix or remove it.",
        "Command .claude/commands/pipe.md is not a regular file; skipped. Fix or remove it.",
    ]


def test_symlinked_folders_are_followed_and_loops_guarded(root, home, tmp_path):
    elsewhere = tmp_path / "shared"
    write(elsewhere / "linked.md", "linked command")
    (root / ".claude/commands").mkdir(parents=True)
    (root / ".claude/commands/ext").symlink_to(elsewhere)
    (elsewhere / "loop").symlink_to(elsewhere)
    real_skill = tmp_path / "skill-src"
    write(real_skill / "SKILL.md", "linked skill")
    (root / ".claude/skills").mkdir(parents=True)
    (root / ".claude/skills/lnk").symlink_to(real_skill)
    cat = load_catalog(root, home, trusted=True)
    assert cat.find("ext:linked").description == "linked command"
    assert cat.find("lnk").description == "linked skill"
    assert cat.problems == []


def test_an_untrusted_projects_links_out_of_the_repository_are_not_followed(root, home, tmp_path):
    """Their first paragraph would reach the model in every request, unasked: a secret linked in."""
    secret = tmp_path / "secret" / "creds"
    write(secret, "TOKEN-abc123")
    write(tmp_path / "usr" / "a.md", "a")
    (root / ".claude/commands").mkdir(parents=True)
    (root / ".claude/commands/notes.md").symlink_to(secret)
    (root / ".claude/commands/usr").symlink_to(tmp_path / "usr")
    (root / ".claude/skills").symlink_to(tmp_path / "secret")
    write(root / "shared" / "inside.md", "inside the repository")
    (root / ".claude/commands/inside.md").symlink_to(root / "shared" / "inside.md")
    cat = load(root, home)
    assert [e.name for e in cat.entries] == ["inside"]
    assert len(cat.problems) == 3 and all(
        "outside the repository, and this folder is not trusted" in p for p in cat.problems
    )
    assert "TOKEN" not in " ".join(cat.problems)


def test_a_user_folders_links_are_followed_anywhere(root, home, tmp_path):
    write(tmp_path / "dotfiles" / "mine.md", "my command")
    (home / "commands").mkdir(parents=True)
    (home / "commands" / "mine.md").symlink_to(tmp_path / "dotfiles" / "mine.md")
    assert load(root, home).find("mine").description == "my command"


def test_an_unreadable_entry_is_a_line_and_the_rest_loads(root, home, monkeypatch):
    write(root / ".claude/commands/good.md", "good")
    write(root / ".claude/commands/locked/x.md", "x")
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    cat = load(root, home)
    assert [e.name for e in cat.entries] == ["good"]
    assert cat.problems == [".claude/commands/locked cannot be read (permission denied); skipped. Fix or remove it."]


def test_a_huge_tree_is_cut_with_one_line(root, home, monkeypatch):
    import claude_mini.skills.catalog as catalog

    monkeypatch.setattr(catalog, "MAX_FILES", 5)
    for i in range(4):
        write(root / f".claude/commands/ns{i}/a{i}.md", "x")
        write(root / f".claude/commands/ns{i}/b{i}.md", "x")
    cat = load(root, home)
    assert len(cat.entries) < 8 and sum("more than 5 files" in p.lower() for p in cat.problems) == 1


def test_allowed_tools_rules_are_checked_when_the_file_is_read(root, home):
    write(root / ".claude/commands/bad.md", '---\nallowed-tools: ["Bash(", "Read(./**)", "bash(ls)"]\n---\nx')
    cat = load(root, home)
    assert cat.find("bad").allowed_tools == ("Read(./**)",)
    assert len(cat.problems) == 2 and all("allowed-tools rule" in p and "grants nothing" in p for p in cat.problems)


# --- fields -------------------------------------------------------------------------------
def test_fields_from_frontmatter(root, home):
    skill(
        root / ".claude",
        "pdf",
        (
            "---\nname: pdf\ndescription: Fill PDF forms\nwhen_to_use: When a PDF is mentioned\n"
            "argument-hint: <file>\nallowed-tools: Read, Bash(git add:*) Grep\nmodel: claude-haiku-4-5\n"
            "disable-model-invocation: true\nuser-invocable: false\n---\nBody\n"
        ),
    )
    cat = load(root, home)
    [e] = cat.entries
    assert (e.description, e.when_to_use, e.argument_hint) == ("Fill PDF forms", "When a PDF is mentioned", "<file>")
    assert e.allowed_tools == ("Read", "Bash(git add:*)", "Grep")
    assert e.model == "claude-haiku-4-5" and e.disable_model_invocation and not e.user_invocable
    assert e.aliases == () and e.directory == root / ".claude/skills/pdf" and e.source == "project"
    assert e.body() == "Body\n" and cat.listed() == [] and cat.problems == []


def test_allowed_tools_as_a_yaml_list_and_model_inherit(root, home):
    command(
        home,
        "c.md",
        "---\nallowed-tools:\n  - Read\n  - Bash(npm run test:*), Write\nmodel: inherit\n"
        "argument-hint: [message]\n---\nbody",
    )
    e = load(root, home).find("c")
    assert e.allowed_tools == ("Read", "Bash(npm run test:*)", "Write")
    assert e.model is None and e.argument_hint == "[message]" and e.source == "user"


def test_bad_field_values_are_coerced_or_a_line(root, home):
    command(
        root / ".claude",
        "c.md",
        "---\ndescription: 42\ndisable-model-invocation: 'yes please'\n"
        "user-invocable: 'false'\nallowed-tools: {a: 1}\n---\nFirst para",
    )
    cat = load(root, home)
    e = cat.find("c")
    assert e.description == "42" and not e.disable_model_invocation and not e.user_invocable
    assert e.allowed_tools == ()
    flag_line, tools_line = sorted(cat.problems, key=lambda p: "allowed-tools" in p)
    assert "`disable-model-invocation` is 'yes please', not true or false; using false" in flag_line
    assert "`allowed-tools` is a dict" in tools_line


def test_description_list_falls_back_to_first_paragraph(root, home):
    command(root / ".claude", "c.md", "---\ndescription: [a, b]\n---\n\n# Review the diff\n\nThen more.")
    cat = load(root, home)
    assert cat.find("c").description == "Review the diff"
    assert "the first paragraph is used" in cat.problems[0]


def test_description_from_first_paragraph_is_one_line_and_cut(root, home):
    command(root / ".claude", "long.md", "\n\n" + ("word " * 100) + "\nnext line\n\nsecond paragraph")
    command(root / ".claude", "empty.md", "")
    cat = load(root, home)
    desc = cat.find("long").description
    assert "\n" not in desc and desc.endswith("…") and len(desc) == 250
    assert cat.find("empty").description == ""


def test_body_is_read_now_and_raises_catalog_error_when_gone(root, home):
    path = command(root / ".claude", "c.md", "---\ndescription: d\n---\nold")
    e = load(root, home).find("c")
    path.write_text("---\ndescription: d\n---\nnew")
    assert e.body() == "new"
    path.unlink()
    with pytest.raises(CatalogError, match=r"^Command \.claude/commands/c\.md cannot be read \(not found\)"):
        e.body()


def test_split_tool_rules():
    assert split_tool_rules("Bash(git add:*), Bash(git status:*),Read  Edit") == [
        "Bash(git add:*)",
        "Bash(git status:*)",
        "Read",
        "Edit",
    ]
    assert split_tool_rules("") == []


def test_no_folders_at_all_is_an_empty_catalog(root, home):
    cat = load(root, home)
    assert cat.entries == [] and cat.problems == [] and cat.find("x") is None


# --- listing ------------------------------------------------------------------------------
def entry(name: str, description: str = "", when: str = "") -> PromptCommand:
    return PromptCommand(
        name=name,
        kind="skill",
        scope="project",
        path=Path(f"/p/{name}/SKILL.md"),
        description=description,
        when_to_use=when,
    )


def test_listing_lines_and_when_to_use():
    listing = build_listing([entry("a", "Does A", "When A"), entry("b")], 10_000)
    assert listing.text == "- a: Does A - When A\n- b"
    assert listing.chars == len(listing.text) and listing.shortened == () and listing.budget == 10_000
    assert build_listing([], 100).text == ""


def test_listing_cuts_one_entry_to_max_entry_chars():
    line = build_listing([entry("a", "x" * 5000)], 100_000).text
    assert line == "- a: " + "x" * (MAX_ENTRY_CHARS - 1) + "…"


def test_listing_over_budget_collapses_to_names_never_drops():
    entries = [entry("one", "d" * 50), entry("two", "e" * 200), entry("three", "f" * 10)]
    listing = build_listing(entries, 100)
    assert listing.text == "- one: " + "d" * 50 + "\n- two\n- three: " + "f" * 10
    assert listing.shortened == ("two",) and listing.chars <= 100
    tiny = build_listing(entries, 5)
    assert tiny.text == "- one\n- two\n- three" and tiny.shortened == ("one", "two", "three")


def test_listing_budget_from_window_and_env(monkeypatch):
    assert listing_budget(200_000) == 8_000 and listing_budget(1_000_000) == 40_000
    monkeypatch.setenv(BUDGET_ENV, "600")
    assert listing_budget(200_000) == 600
    for bad in ("0", "-5", "lots"):
        monkeypatch.setenv(BUDGET_ENV, bad)
        assert listing_budget(200_000) == 8_000
