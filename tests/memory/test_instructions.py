"""Layer 1: discovery order, @imports, path-scoped rules, lazy attachments, lint, JSON.

Fixture trees are built in tmp dirs in the shape of real repositories: a CLAUDE.md
that only says `@AGENTS.md`, a rules folder symlinked elsewhere, rules in
subfolders, brace globs, a monorepo package with its own CLAUDE.md or AGENTS.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from claude_mini.commands.context import instructions_report
from claude_mini.memory.instructions import (
    CYCLE,
    DUPLICATE,
    EXCLUDED,
    HEADER,
    MAX_FILE_BYTES,
    UNTRUSTED,
    AttachmentTracker,
    InstructionSet,
    find_imports,
    lint,
    load_instructions,
    outside_imports,
    parse_frontmatter,
    strip_html_comments,
    to_json,
)


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Create `root/rel` (and its folders) with `text`."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Home, managed and OS-home folders in tmp, exported the way a session sees them."""
    root = tmp_path.resolve()
    dirs = {name: root / name for name in ("home", "managed", "oshome")}
    for d in dirs.values():
        d.mkdir()
    monkeypatch.setenv("CLAUDE_MINI_HOME", str(dirs["home"]))
    monkeypatch.setenv("CLAUDE_MINI_MANAGED_DIR", str(dirs["managed"]))
    monkeypatch.setenv("HOME", str(dirs["oshome"]))
    return root


def load(cwd: Path, root: Path | None = None, **kw) -> InstructionSet:
    """load_instructions with the project root given, so no git subprocess runs."""
    return load_instructions(cwd, project_root=root or cwd, **kw)


def under(paths, root: Path) -> list[str]:
    """Paths relative to `root` (tests ignore anything the real filesystem has above tmp)."""
    return [os.path.relpath(p, root) for p in paths if str(p).startswith(str(root))]


def entry_for(instructions, root: Path, rel: str):
    return next(e for e in instructions.considered if e.path == str(root / rel))


# ------------------------------------------------------------------ order


@pytest.fixture
def monorepo(env):
    """Managed, user, an ancestor above the repo, the repo, and a package as cwd."""
    write(env, "managed/CLAUDE.md", "managed policy")
    write(env, "managed/rules/security.md", "managed rule")
    write(env, "home/CLAUDE.md", "user prefs")
    write(env, "home/rules/style.md", "user rule")
    write(env, "work/CLAUDE.md", "above the repo")
    repo = env / "work/repo"
    write(repo, "CLAUDE.md", "@AGENTS.md\n")
    write(repo, "AGENTS.md", "shared agents text")
    write(repo, ".claude/CLAUDE.md", "team file")
    write(repo, "shared/rules/b-general.md", "general rule")
    write(repo, "shared/rules/backend/api.md", "api rule")
    write(repo, "shared/rules/a-first.md", "first rule")
    write(repo, "shared/rules/web.md", '---\npaths: "web/**/*.{ts,tsx}"\n---\nweb rule')
    (repo / ".claude/rules").symlink_to(repo / "shared/rules")
    write(repo, "CLAUDE.local.md", "my local notes")
    write(repo, "packages/app/AGENTS.md", "app agents (no CLAUDE.md here)")
    write(repo, "packages/app/CLAUDE.local.md", "app local")
    return repo


def test_load_order_across_all_levels(monorepo, env):
    cwd = monorepo / "packages/app"
    got = load(cwd, monorepo)
    order = [(os.path.relpath(f.path, env), f.kind) for f in got.files if f.path.startswith(str(env))]
    assert order == [
        ("managed/CLAUDE.md", "managed"),
        ("managed/rules/security.md", "rule"),
        ("home/CLAUDE.md", "user"),
        ("home/rules/style.md", "rule"),
        ("work/CLAUDE.md", "project"),
        ("work/repo/CLAUDE.md", "project"),
        ("work/repo/AGENTS.md", "imported"),  # a CLAUDE.md that only says @AGENTS.md
        ("work/repo/.claude/CLAUDE.md", "project"),
        # rules sorted by relative path, subfolders included, real path shown
        ("work/repo/shared/rules/a-first.md", "rule"),
        ("work/repo/shared/rules/b-general.md", "rule"),
        ("work/repo/shared/rules/backend/api.md", "rule"),
        ("work/repo/CLAUDE.local.md", "local"),
        ("work/repo/packages/app/AGENTS.md", "project"),  # AGENTS.md fallback
        ("work/repo/packages/app/CLAUDE.local.md", "local"),
    ]
    assert got.warnings == []


def test_render_is_header_then_blocks_and_conditional_rules_stay_out(monorepo):
    got = load(monorepo / "packages/app", monorepo)
    text = got.render()
    assert text.startswith(HEADER + "\n\n")
    agents = monorepo / "AGENTS.md"
    assert f"Contents of {agents} (imported):\n\nshared agents text" in text
    assert "web rule" not in text
    assert text.index("managed policy") < text.index("user prefs") < text.index("my local notes")
    assert [r.path for r in got.conditional] == [str(monorepo / "shared/rules/web.md")]
    assert got.conditional[0].base == str(monorepo)  # the folder holding .claude/, not shared/


def test_render_is_empty_without_files(env):
    assert load(env / "oshome").render() == ""


def test_agents_md_ignored_when_claude_md_exists(env):
    write(env, "p/CLAUDE.md", "claude text")
    write(env, "p/AGENTS.md", "AGENTS TEXT")
    assert "AGENTS TEXT" not in load(env / "p").render()


def test_symlinked_duplicate_is_loaded_once(env):
    write(env, "p/CLAUDE.md", "the one text")
    (env / "p/.claude").mkdir()
    (env / "p/.claude/CLAUDE.md").symlink_to(env / "p/CLAUDE.md")
    got = load(env / "p")
    assert got.render().count("the one text") == 1
    dup = [s for s in got.skipped if s.reason == DUPLICATE]
    assert [s.path for s in dup] == [str(env / "p/CLAUDE.md")]  # shown by its real path
    assert got.warnings == []  # a duplicate is normal, not a problem


def test_claude_md_excludes_skip_files_but_never_managed(env):
    write(env, "managed/CLAUDE.md", "policy")
    write(env, "p/CLAUDE.md", "project")
    write(env, "p/CLAUDE.local.md", "local")
    excludes = ["**/p/CLAUDE.{local,other}.md", "**/managed/CLAUDE.md", "!"]
    got = load(env / "p", excludes=excludes)
    assert "local" not in got.render() and "policy" in got.render()
    assert entry_for(got, env, "p/CLAUDE.local.md").reason == EXCLUDED
    assert got.warnings == ["claudeMdExcludes: invalid glob '!': Invalid git pattern: '!'; it is ignored"]


# ---------------------------------------------------------------- imports


def chain_tree(env: Path, hops: int) -> Path:
    """p/CLAUDE.md -> d1.md -> ... -> d{hops}.md."""
    write(env, "p/CLAUDE.md", "root\n@docs/d1.md")
    for i in range(1, hops + 1):
        nxt = f"\n@d{i + 1}.md" if i < hops else ""
        write(env, f"p/docs/d{i}.md", f"depth {i}{nxt}")
    return env / "p"


def test_imports_five_hops_deep_load_and_the_sixth_is_skipped(env):
    got = load(chain_tree(env, 6))
    loaded = {os.path.basename(f.path): f.depth for f in got.files if "/docs/" in f.path}
    assert loaded == {f"d{i}.md": i for i in range(1, 6)}
    deep = entry_for(got, env, "p/docs/d6.md")
    assert deep.reason.startswith("too deep") and deep.depth == 6
    assert deep.imported_by == str(env / "p/docs/d5.md")
    assert any("d6.md" in w and "too deep" in w for w in got.warnings)


def test_imported_text_follows_its_importer_depth_first(env):
    write(env, "p/CLAUDE.md", "root @a.md and @b.md")
    write(env, "p/a.md", "A @a2.md")
    write(env, "p/a2.md", "A2")
    write(env, "p/b.md", "B")
    write(env, "p/CLAUDE.local.md", "local")
    names = [os.path.basename(f.path) for f in load(env / "p").files]
    assert names == ["CLAUDE.md", "a.md", "a2.md", "b.md", "CLAUDE.local.md"]
    root = load(env / "p").files[0]
    assert [c.path for c in root.imports] == [str(env / "p/a.md"), str(env / "p/b.md")]


def test_import_cycle_and_repeat_are_skipped(env):
    write(env, "p/CLAUDE.md", "root @a.md")
    write(env, "p/a.md", "A @b.md")
    write(env, "p/b.md", "B @a.md and again @CLAUDE.md")
    write(env, "p/CLAUDE.local.md", "@b.md")
    got = load(env / "p")
    assert got.render().count("A @b.md") == 1
    reasons = [(os.path.basename(s.path), s.reason) for s in got.skipped]
    assert reasons == [("a.md", CYCLE), ("CLAUDE.md", CYCLE), ("b.md", DUPLICATE)]
    assert got.warnings == []


def test_imports_in_code_spans_fences_and_comments_are_ignored(env):
    text = "\n".join(
        [
            "Use `cat @inline.md` literally, ``x @double.md`` too, `@start.md`.",
            "```markdown",
            "@fenced.md",
            "```",
            "~~~",
            "@tilde.md",
            "~~~",
            "<!-- @commented.md -->",
            "mail me at someone@example.md",
            "real: @real.md, and @sub/other.md.",
        ]
    )
    assert find_imports(text) == ["real.md", "sub/other.md"]


def test_import_path_forms(env):
    write(env, "oshome/notes/personal.md", "from my home")
    write(env, "p/shared/abs.md", "absolute")
    write(env, "p/sub/rel.md", "relative @../sibling.md")
    write(env, "p/sibling.md", "sibling")
    write(env, "p/CLAUDE.md", f"@~/notes/personal.md @{env}/p/shared/abs.md @./sub/rel.md")
    names = [os.path.basename(f.path) for f in load(env / "p", trusted=True).files]
    assert names == ["CLAUDE.md", "personal.md", "abs.md", "rel.md", "sibling.md"]
    untrusted = load(env / "p")
    assert [os.path.basename(f.path) for f in untrusted.files] == ["CLAUDE.md", "abs.md", "rel.md", "sibling.md"]
    assert [(os.path.basename(s.path), s.reason) for s in untrusted.skipped] == [("personal.md", UNTRUSTED)]


def test_bad_imports_are_skipped_and_reported(env):
    write(env, "outside/secret.md", "not yours")
    write(env, "p/image.md", b"\x89PNG\x00\x00binary")
    write(env, "p/tool.bin", "text but not a text type")
    write(
        env,
        "p/CLAUDE.md",
        "\n".join(
            [
                "@missing.md",
                "@image.md",
                f"@{env}/outside/secret.md",
                "@tool.bin",
                "prose like @pytest.mark.skip or @types/node is not an import",
            ]
        ),
    )
    got = load(env / "p")
    reasons = {os.path.basename(s.path): s.reason for s in got.skipped}
    assert reasons == {
        "missing.md": "not found",
        "image.md": "binary file",
        "secret.md": "outside the project root and home folders",
        "tool.bin": "not a text file type",
    }
    assert len(got.warnings) == 4 and "not yours" not in got.render()
    assert [f.path for f in got.files] == [str(env / "p/CLAUDE.md")]


# ------------------------------------------------------------------ rules


def test_rules_with_string_list_and_star_paths(env):
    write(env, "p/.claude/rules/str.md", '---\npaths: "src/**/*.{ts,tsx}, docs/*.md"\n---\nS')
    write(env, "p/.claude/rules/list.md", "---\npaths:\n  - lib/**/*.py\n  - 'tests/*.py'\n---\nL")
    write(env, "p/.claude/rules/all.md", '---\npaths: "**"\ndescription: x\n---\nALL')
    write(env, "p/.claude/rules/none.md", "---\ndescription: no paths\n---\nNONE")
    got = load(env / "p")
    assert {os.path.basename(r.path): r.globs for r in got.conditional} == {
        "list.md": ["lib/**/*.py", "tests/*.py"],
        "str.md": ["src/**/*.{ts,tsx}", "docs/*.md"],
    }
    assert "ALL" in got.render() and "NONE" in got.render()
    assert "description" not in got.render()  # valid frontmatter is not shown
    rule = next(r for r in got.conditional if r.path.endswith("str.md"))
    assert rule.matches(env / "p/src/a/b.tsx") and rule.matches(env / "p/src/b.ts")
    assert rule.matches(env / "p/docs/x.md")
    assert not rule.matches(env / "p/src/a/b.js") and not rule.matches(env / "p/docs/a/x.md")
    assert not rule.matches(env / "elsewhere/src/b.ts")


@pytest.mark.parametrize(
    "frontmatter, problem",
    [
        ("{paths: [", "not valid YAML"),
        ("- just\n- a list", "not a mapping"),
        ("paths: 42", "`paths` must be a string or a list of strings"),
    ],
)
def test_malformed_frontmatter_warns_and_loads_whole_file(env, frontmatter, problem):
    write(env, "p/.claude/rules/bad.md", f"---\n{frontmatter}\n---\nbody text")
    got = load(env / "p")
    assert got.conditional == []
    assert f"---\n{frontmatter}\n---\nbody text" in got.render()
    assert len(got.warnings) == 1 and problem in got.warnings[0]
    assert problem in got.files[0].notes[0]


def test_a_rule_yaml_refuses_is_read_line_by_line(env, caplog):
    write(env, "p/.claude/rules/py.md", "---\npaths: **/*.py\n---\nPython rule")
    with caplog.at_level("DEBUG", logger="claude_mini.base.frontmatter"):
        got = load(env / "p")
    assert got.warnings == []
    (rule,) = got.conditional
    assert rule.matches(env / "p/src/a.py") and not rule.matches(env / "p/src/a.ts")
    assert "Python rule" not in got.render()
    assert [r.message for r in caplog.records if "line by line" in r.getMessage()]


def test_unclosed_frontmatter_warns():
    meta, body, problem = parse_frontmatter("---\npaths: x\nno end")
    assert meta is None and body.startswith("---") and "not closed" in problem


def test_simple_frontmatter_agrees_with_pyyaml():
    import yaml

    from claude_mini.memory.instructions import _simple_frontmatter

    samples = [
        "paths: src/**/*.{ts,tsx}",
        "paths: 'a, b'",
        'paths: "x"',
        "paths:\n- a\n- b",
        "paths:\n  - a\n  - 'b c'\ndescription: hi there",
        "k: a#b",
        "k: -a",
        "k: yes",
        "k: 12",
        "k: ~",
        "k: 2024-01-01",
        "k: a: b",
        "k: a #c",
        "paths:\n  - a\n    - b",
        "paths:\n  - a\n - b",
        'k: "a\\tb"',
        "k: <<",
        "# comment\nk: v",
        "k:",
        "",
        "a: 1\na: 2",
        "paths:\n  - **/*.ts",
        "paths: [a, b]",
        "k: 'it''s'",
        "k:v",
    ]
    for sample in samples:
        fast = _simple_frontmatter(sample)
        if fast is not None:  # when the fast path answers, it must answer what YAML does
            assert fast == (yaml.safe_load(sample) or {}), sample


def test_rules_folder_symlink_loop_and_looping_file_are_reported(env):
    write(env, "p/.claude/rules/ok.md", "fine")
    (env / "p/.claude/rules/again").symlink_to(env / "p/.claude/rules")
    (env / "p/.claude/rules/self.md").symlink_to(env / "p/.claude/rules/self.md")
    got = load(env / "p")
    assert [os.path.basename(f.path) for f in got.files] == ["ok.md"]
    assert sorted(s.reason for s in got.skipped) == ["symlink loop", "symlink loop"]


def test_binary_huge_and_non_utf8_files(env):
    write(env, "p/CLAUDE.md", b"caf\xe9 au lait")
    write(env, "p/.claude/CLAUDE.md", b"\x00\x01binary")
    write(env, "p/CLAUDE.local.md", "x" * (MAX_FILE_BYTES + 1))
    got = load(env / "p")
    assert got.files[0].text == "caf\ufffd au lait" and "UTF-8" in got.files[0].notes[0]
    reasons = sorted(s.reason for s in got.skipped)
    assert reasons[0] == "binary file" and reasons[1].startswith("too large")
    assert len(got.warnings) == 3


def test_block_level_html_comments_are_removed():
    text = "\n".join(
        [
            "keep 1",
            "<!-- gone -->",
            "  <!-- gone too,",
            "over lines -->",
            "<!-- gone --> but this stays",
            "inline <!-- stays --> here",
            "```",
            "<!-- stays in code -->",
            "```",
            "<!-- never closed stays",
        ]
    )
    assert strip_html_comments(text) == "\n".join(
        [
            "keep 1",
            " but this stays",
            "inline <!-- stays --> here",
            "```",
            "<!-- stays in code -->",
            "```",
            "<!-- never closed stays",
        ]
    )


# ------------------------------------------------------------ attachments


@pytest.fixture
def tracked(env):
    """A repo with conditional rules and nested instruction files below the cwd."""
    repo = env / "repo"
    write(repo, "CLAUDE.md", "root")
    write(repo, ".claude/rules/ts.md", '---\npaths: "src/**/*.{ts,tsx}"\n---\nTS rule @../ts-extra.md')
    write(repo, ".claude/rules/py.md", "---\npaths:\n  - '**/*.py'\n---\nPY rule")
    write(repo, ".claude/ts-extra.md", "imported by the TS rule")
    write(repo, "pkg/web/CLAUDE.md", "web package")
    write(repo, "pkg/web/.claude/rules/css.md", "---\npaths: 'styles/*.css'\n---\nCSS rule")
    write(repo, "pkg/api/AGENTS.md", "api agents")
    return repo


def test_rule_fires_on_write_of_a_new_file_once(tracked):
    got = load(tracked)
    tracker = AttachmentTracker(got, tracked)
    new_file = tracked / "src/new/feature.tsx"
    assert not new_file.exists()
    first = tracker.on_path_touched(new_file, created=True)
    assert [(os.path.basename(a.path), a.kind) for a in first] == [("ts.md", "rule")]
    assert first[0].render() == (
        f"Contents of {tracked / '.claude/rules/ts.md'} (rule):\n\nTS rule @../ts-extra.md\n\n"
        f"Contents of {tracked / '.claude/ts-extra.md'} (imported):\n\nimported by the TS rule"
    )
    assert tracker.on_path_touched(tracked / "src/other.ts") == []
    assert tracker.on_path_touched(tracked / "README.md") == []


def test_nested_instructions_attach_once_with_their_rules(tracked):
    tracker = AttachmentTracker(load(tracked), tracked)
    got = tracker.on_path_touched(tracked / "pkg/web/styles/site.css")
    assert [(os.path.relpath(a.path, tracked), a.kind) for a in got] == [
        ("pkg/web/CLAUDE.md", "nested"),
        ("pkg/web/.claude/rules/css.md", "rule"),  # a nested folder's rule joins the pool
    ]
    assert "web package" in got[0].render()
    assert tracker.on_path_touched(tracked / "pkg/web/index.html") == []
    api = tracker.on_path_touched(tracked / "pkg/api/main.py")
    assert [os.path.relpath(a.path, tracked) for a in api] == [
        "pkg/api/AGENTS.md",  # AGENTS.md fallback below the cwd too
        ".claude/rules/py.md",
    ]


def test_reattach_after_compaction(tracked):
    tracker = AttachmentTracker(load(tracked), tracked)
    tracker.on_path_touched(tracked / "src/a.ts")
    tracker.on_path_touched(tracked / "pkg/api/x.py")
    assert len(tracker.active()) == 3
    assert [a.path for a in tracker.reattach_after_compaction()] == [a.path for a in tracker.active()]
    again = tracker.reattach_after_compaction([tracked / "pkg/api/x.py"])
    assert [os.path.basename(a.path) for a in again] == ["AGENTS.md", "py.md"]
    assert [os.path.basename(a.path) for a in tracker.on_path_touched(tracked / "src/b.ts")] == [
        "ts.md"  # forgotten by the compaction, so it fires again
    ]


def test_context_json_lists_everything_in_order(tracked):
    got = load(tracked)
    tracker = AttachmentTracker(got, tracked)
    tracker.on_path_touched(tracked / "src/a.ts")
    data = json.loads(json.dumps(to_json(got, tracker)))
    statuses = [
        (os.path.relpath(f["path"], tracked), f["status"]) for f in data["files"] if f["path"].startswith(str(tracked))
    ]
    assert statuses == [
        ("CLAUDE.md", "loaded"),
        (".claude/rules/py.md", "conditional"),
        (".claude/rules/ts.md", "conditional"),
    ]
    active = {os.path.basename(r["path"]): r["active"] for r in data["conditional_rules"]}
    assert active == {"py.md": False, "ts.md": True}
    assert data["attachments"][0]["files"][1] == str(tracked / ".claude/ts-extra.md")
    assert data["tokens"] > 0


def test_context_json_import_tree(env):
    write(env, "p/CLAUDE.md", "@a.md @gone.md")
    write(env, "p/a.md", "A")
    files = to_json(load(env / "p"))["files"]
    root, child, broken = files[-3:]
    assert root["imports"] == [child["path"], broken["path"]]
    assert child["imported_by"] == root["path"] and child["depth"] == 1
    assert broken["status"] == "skipped" and broken["reason"] == "not found"


# ------------------------------------------------------------------- lint


def test_lint_findings(env):
    repo = env / "repo"
    write(repo, "CLAUDE.md", "@gone.md")
    write(repo, ".claude/rules/dup.md", "same words")
    write(repo, "CLAUDE.local.md", "same words\n")
    write(repo, ".claude/CLAUDE.md", "y" * 40_001)
    write(repo, ".claude/rules/dead.md", "---\npaths: 'build/**/*.js, nowhere/*'\n---\nD")
    write(repo, ".claude/rules/live.md", "---\npaths: 'src/*.py'\n---\nL")
    write(repo, "src/app.py", "")
    write(repo, "build/out.js", "")  # matches dead.md, but git ignores it
    write(repo, ".gitignore", "build/\n")
    findings = lint(load(repo), repo)
    assert len(findings) == 4
    assert "40,001 characters" in findings[0]
    assert "broken import" in findings[1] and "gone.md" in findings[1]
    assert "CLAUDE.local.md has the same content as" in findings[2]
    assert "dead.md" in findings[3] and "match no file" in findings[3]


# ------------------------------------------------------------ more inputs


def test_user_rule_globs_are_relative_to_the_project_root(env):
    write(env, "home/rules/py.md", "---\npaths: 'src/*.py'\n---\nuser py rule")
    repo = env / "repo"
    (repo / "sub").mkdir(parents=True)
    got = load(repo / "sub", repo)
    rule = got.conditional[0]
    assert rule.base == str(repo) and rule.level == "user"
    tracker = AttachmentTracker(got)
    assert [a.kind for a in tracker.on_path_touched(repo / "src/x.py")] == ["rule"]


def test_project_root_defaults_to_the_git_checkout(env):
    import subprocess

    repo = env / "repo"
    (repo / "a/b").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    write(repo, "CLAUDE.md", "see @docs/x.md")
    write(repo, "docs/x.md", "inside the checkout")
    got = load_instructions(repo / "a/b")
    assert got.context.project_root == str(repo)
    assert "inside the checkout" in got.render()


def test_symlink_out_of_the_project_and_special_files_are_skipped(env):
    write(env, "outside/secret.md", "secret")
    write(env, "p/CLAUDE.md", "@link.md")
    (env / "p/link.md").symlink_to(env / "outside/secret.md")
    (env / "p/.claude/CLAUDE.md").mkdir(parents=True)  # a folder where a file should be
    os.mkfifo(env / "p/CLAUDE.local.md")  # reading a FIFO would block the session
    got = load(env / "p")
    reasons = {os.path.relpath(s.path, env): s.reason for s in got.skipped}
    assert reasons == {
        "outside/secret.md": "outside the project root and home folders",
        "p/.claude/CLAUDE.md": "not a regular file",
        "p/CLAUDE.local.md": "not a regular file",
    }


def test_excluded_import_and_broken_symlink(env):
    write(env, "p/CLAUDE.md", "@private/notes.md")
    write(env, "p/private/notes.md", "private")
    (env / "p/CLAUDE.local.md").symlink_to(env / "p/nowhere.md")
    got = load(env / "p", excludes=["**/private/**"])
    assert {os.path.basename(s.path): s.reason for s in got.skipped} == {
        "notes.md": EXCLUDED,
        "CLAUDE.local.md": "not found",
    }


def test_touching_through_a_symlink_matches_the_real_path(env):
    repo = env / "repo"
    write(repo, ".claude/rules/ts.md", "---\npaths: 'src/**/*.ts'\n---\nTS")
    write(repo, "src/a.ts", "")
    (env / "alias").symlink_to(repo)
    tracker = AttachmentTracker(load(repo))
    assert len(tracker.on_path_touched(env / "alias/src/a.ts")) == 1


def test_touching_files_in_the_cwd_or_outside_attaches_no_nested_file(tracked):
    tracker = AttachmentTracker(load(tracked), tracked)
    assert tracker.on_path_touched(tracked / "README.md") == []
    assert tracker.on_path_touched(tracked.parent / "other/CLAUDE.md") == []


def test_nested_folder_imports_are_resolved_and_broken_ones_reported(tracked):
    write(tracked, "pkg/lib/CLAUDE.md", "lib @notes.md @missing.md")
    write(tracked, "pkg/lib/notes.md", "lib notes")
    tracker = AttachmentTracker(load(tracked), tracked)
    [nested] = tracker.on_path_touched(tracked / "pkg/lib/x.c")
    assert [os.path.basename(f.path) for f in nested.files] == ["CLAUDE.md", "notes.md"]
    assert any("missing.md" in w for w in tracker.warnings)
    data = to_json(load(tracked), tracker)
    assert [f["reason"] for f in data["attachment_files"] if f["status"] == "skipped"] == ["not found"]


# ------------------------------------------------------------------- globs


def test_brace_expansion():
    from claude_mini.base.braces import expand_braces
    from claude_mini.memory.instructions.globs import split_globs

    assert expand_braces("src/**/*.{ts,tsx}") == ["src/**/*.ts", "src/**/*.tsx"]
    assert expand_braces("{a,b{c,d}}/x.{1,2}") == [
        "a/x.1",
        "a/x.2",
        "bc/x.1",
        "bc/x.2",
        "bd/x.1",
        "bd/x.2",
    ]
    assert expand_braces("{a}/b") == ["{a}/b"]  # no comma: literal, as in bash
    assert expand_braces("a{b,c") == ["a{b,c"]  # unclosed: literal
    assert expand_braces(r"\{a,b\}") == [r"\{a,b\}"]  # escaped
    with pytest.raises(ValueError, match="expands to more than"):
        expand_braces("{a,b}" * 9)
    assert split_globs(" src/*.{ts,tsx} , docs/**,, ") == ["src/*.{ts,tsx}", "docs/**"]


def test_globset_fast_path_agrees_with_pathspec():
    import pathspec

    from claude_mini.memory.instructions.globs import GlobSet

    globs = ["*.py", "src/**/*.ts", "/top.md", "docs/", "a/*/b/**", "**/test_*.py", "x?.md"]
    paths = [
        "a.py",
        "deep/er/a.py",
        "src/a.ts",
        "src/x/y/a.ts",
        "lib/src/a.ts",
        "top.md",
        "sub/top.md",
        "docs/a.md",
        "docs/x/y.md",
        "mydocs/a.md",
        "a/1/b/c/d",
        "a/b/c",
        "t/test_x.py",
        "xy.md",
        "xyz.md",
    ]
    for glob in globs:
        fast = GlobSet([glob])
        assert fast.regex is not None
        spec = pathspec.GitIgnoreSpec.from_lines([glob])
        for path in paths:
            assert fast.matches(path) == spec.match_file(path), (glob, path)
    negated = GlobSet(["src/**", "!src/gen/**"])
    assert negated.regex is None  # falls back to pathspec's last-match-wins logic
    assert negated.matches("src/a.ts") and not negated.matches("src/gen/a.ts")


def test_invalid_globs_are_reported(env):
    write(env, "p/.claude/rules/bad.md", "---\npaths: ['!', 'ok/*.md']\n---\nB")
    got = load(env / "p")
    rule = got.conditional[0]
    assert rule.matches(env / "p/ok/a.md")
    assert rule.errors == ["invalid glob '!': Invalid git pattern: '!'"]
    assert any("invalid glob" in f for f in lint(got, env / "p"))


def test_rule_index_groups_by_base():
    from claude_mini.memory.instructions.globs import GlobSet, RuleIndex

    index: RuleIndex[str] = RuleIndex()
    index.add("/r", GlobSet(["*.py"]), "py")
    index.add("/r", GlobSet(["src/**"]), "src")
    index.add("/r/pkg", GlobSet(["*.py"]), "pkg-py")
    assert index.matching(["/r/src/a.py"]) == ["py", "src"]
    assert index.matching(["/r/pkg/a.py"]) == ["py", "pkg-py"]
    assert index.matching(["/elsewhere/a.py", "/r/a.py"]) == ["py"]
    assert index.matching(["/r"]) == []


def test_repository_walk_respects_nested_gitignore(tmp_path):
    from claude_mini.memory.instructions.globs import iter_repository_files

    write(tmp_path, ".gitignore", "*.log\nbuild/\n")
    write(tmp_path, "a.py", "")
    write(tmp_path, "x.log", "")
    write(tmp_path, "build/out.js", "")
    write(tmp_path, "sub/.gitignore", "!keep.log\nlocal.txt\n")
    write(tmp_path, "sub/keep.log", "")
    write(tmp_path, "sub/local.txt", "")
    write(tmp_path, ".git/config", "")
    found = sorted(os.path.relpath(p, tmp_path) for p in iter_repository_files(str(tmp_path)))
    assert found == [".gitignore", "a.py", "sub/.gitignore", "sub/keep.log"]


# ------------------------------------------------ trust and credentials


def test_imports_from_the_os_home_need_a_trusted_folder(env):
    write(env, "oshome/notes/style.md", "home style")
    write(env, "oshome/work/team.md", "team notes")
    write(env, "home/shared.md", "from the claude-mini home")  # always allowed
    write(env, "p/docs/inside.md", "inside the repo")
    (env / "p").mkdir(exist_ok=True)
    os.symlink(env / "oshome/work/team.md", env / "p/linked.md")  # in the repo, resolves outside
    write(
        env,
        "p/CLAUDE.md",
        f"@~/notes/style.md @{env}/oshome/work/team.md @linked.md @{env}/home/shared.md @docs/inside.md",
    )
    untrusted = load(env / "p")
    assert [os.path.basename(f.path) for f in untrusted.files] == ["CLAUDE.md", "shared.md", "inside.md"]
    skipped = [(s.path, s.reason) for s in untrusted.skipped]
    team = (str(env / "oshome/work/team.md"), UNTRUSTED)  # linked.md is shown by its real path
    assert skipped == [(str(env / "oshome/notes/style.md"), UNTRUSTED), team, team]
    assert "home style" not in untrusted.render() and "team notes" not in untrusted.render()
    assert sum("not trusted" in w for w in untrusted.warnings) == 3
    trusted = load(env / "p", trusted=True)
    assert "home style" in trusted.render() and "team notes" in trusted.render()


def test_user_and_managed_files_import_from_the_os_home_without_trust(env):
    write(env, "oshome/notes/mine.md", "my own notes")
    write(env, "oshome/notes/org.md", "org notes")
    write(env, "home/CLAUDE.md", "@~/notes/mine.md")
    write(env, "managed/CLAUDE.md", "@~/notes/org.md")
    write(env, "p/CLAUDE.md", "project")
    text = load(env / "p").render()
    assert "my own notes" in text and "org notes" in text


CREDENTIALS = [
    ("oshome/.ssh/config", "~/.ssh"),
    ("oshome/.ssh/id_rsa.pub", "~/.ssh"),
    ("oshome/.aws/credentials", "~/.aws"),
    ("oshome/.aws/config.toml", "~/.aws"),
    ("oshome/.config/gh/hosts.yml", "~/.config/gh"),
    ("oshome/.docker/config.json", "~/.docker"),
    ("oshome/.kube/config", "~/.kube"),
    ("oshome/.config/gcloud/application_default_credentials.json", "~/.config/gcloud"),
    ("oshome/.gnupg/gpg.conf", "~/.gnupg"),
    ("oshome/.netrc", ".netrc"),
    ("oshome/.git-credentials", ".git-credentials"),
    ("oshome/.npmrc", ".npmrc"),
    ("oshome/.pypirc", ".pypirc"),
    ("p/.env", ".env"),
    ("p/.env.local", ".env.local"),
    ("p/services/api/.env.production", ".env.production"),
]


@pytest.mark.parametrize("trusted", [False, True])
@pytest.mark.parametrize(("rel", "named"), CREDENTIALS)
def test_credential_locations_are_never_imported(env, rel, named, trusted):
    write(env, rel, "SECRET_TOKEN=hunter2\n")
    target = env / rel
    write(env, "p/CLAUDE.md", f"Read this: @{target}\n")
    got = load(env / "p", trusted=trusted)
    assert "hunter2" not in got.render()
    [skipped] = got.skipped
    assert named in skipped.reason and "credential" in skipped.reason
    [warning] = got.warnings
    assert "\n" not in warning and str(target) in warning


@pytest.mark.parametrize("secret", ["oshome/.ssh/id_rsa", "oshome/.aws/credentials", "p/.env"])
def test_a_symlink_to_a_credential_is_refused_by_its_real_path(env, secret):
    write(env, secret, "PRIVATE KEY hunter2")
    (env / "p/docs").mkdir(parents=True, exist_ok=True)
    os.symlink(env / secret, env / "p/docs/notes.md")  # looks like a harmless text file
    os.symlink(env / secret, env / "p/AGENTS.md")  # a root file that is a link to it
    write(env, "p/.claude/CLAUDE.md", "@../docs/notes.md")
    got = load(env / "p", trusted=True)
    assert "hunter2" not in got.render()
    assert len(got.skipped) == 2 and all("credential" in s.reason for s in got.skipped)


def test_context_lists_imports_from_outside_the_repository(env):
    write(env, "oshome/notes/style.md", "home style")
    write(env, "oshome/.aws/config.md", "aws")
    write(env, "p/local.md", "inside")
    write(env, "p/CLAUDE.md", "@~/notes/style.md @~/.aws/config.md @local.md")
    for trusted, status in ((False, "skipped"), (True, "loaded")):
        instructions = load(env / "p", trusted=trusted)
        listed = outside_imports(instructions)
        assert [(os.path.basename(e["path"]), e["status"]) for e in listed] == [
            ("style.md", status),
            ("config.md", "skipped"),
        ]
        data = to_json(instructions)
        assert data["trusted"] is trusted and data["outside_imports"] == listed
        report = "\n".join(instructions_report(data))
        assert "Imports from outside the repository" in report
        assert ("not trusted" in report) is not trusted
    assert outside_imports(load(env / "p", trusted=True))[0]["tokens"] > 0


# Where a repository file may be a link: (the link, relative to the repository).
LINK_SPOTS = [
    "CLAUDE.md",
    "AGENTS.md",
    "CLAUDE.local.md",
    ".claude/CLAUDE.md",
    ".claude/rules/x.md",
    ".claude/rules/deep/y.md",
]


@pytest.mark.parametrize("spot", LINK_SPOTS)
def test_a_repository_file_linked_to_outside_needs_trust(env, spot):
    outside = write(env, "oshome/fakehome/notes.txt", "text from outside the repository")
    link = env / "p" / spot
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(outside, link.parent), link)  # `ln -s ../fakehome/notes.txt CLAUDE.md`
    untrusted = load(env / "p")
    assert "text from outside" not in untrusted.render()
    [skipped] = untrusted.skipped
    assert (skipped.path, skipped.reason, skipped.linked_from) == (str(outside), UNTRUSTED, str(link))
    [warning] = untrusted.warnings
    assert f"linked from {link}" in warning and "not trusted" in warning and "\n" not in warning
    [listed] = outside_imports(untrusted)
    assert listed["status"] == "skipped" and listed["linked_from"] == str(link)
    assert f"(linked from {link}) skipped" in "\n".join(instructions_report(to_json(untrusted)))
    trusted = load(env / "p", trusted=True)
    assert "text from outside" in trusted.render() and not trusted.warnings
    assert [e["status"] for e in outside_imports(trusted)] == ["loaded"]


def test_a_linked_rules_folder_outside_needs_trust_and_one_inside_does_not(env):
    write(env, "oshome/shared-rules/a.md", "shared rule from outside")
    write(env, "p/tools/rules/b.md", "rule kept in the repository")
    (env / "p/.claude").mkdir(parents=True)
    (env / "p/pkg/.claude").mkdir(parents=True)
    os.symlink(env / "oshome/shared-rules", env / "p/.claude/rules")
    os.symlink(env / "p/tools/rules", env / "p/pkg/.claude/rules")
    text = load(env / "p/pkg", env / "p").render()
    assert "rule kept in the repository" in text and "shared rule from outside" not in text
    assert "shared rule from outside" in load(env / "p/pkg", env / "p", trusted=True).render()


def test_links_to_the_claude_mini_home_and_within_the_repository_need_no_trust(env):
    write(env, "home/team.md", "from the claude-mini home")
    write(env, "p/docs/AGENTS.md", "agents text")
    os.symlink(env / "p/docs/AGENTS.md", env / "p/CLAUDE.md")
    (env / "p/.claude").mkdir()
    os.symlink(env / "home/team.md", env / "p/.claude/CLAUDE.md")
    got = load(env / "p")
    assert "agents text" in got.render() and "from the claude-mini home" in got.render()
    assert not got.skipped and not outside_imports(got)


def test_files_above_the_repository_and_the_users_links_need_no_trust(env):
    write(env, "oshome/dotfiles/CLAUDE.md", "the user's own instructions")
    os.symlink(env / "oshome/dotfiles/CLAUDE.md", env / "home/CLAUDE.md")  # a dotfiles link
    write(env, "CLAUDE.md", "above the repository")  # an ancestor folder's file
    write(env, "p/CLAUDE.md", "project")
    got = load(env / "p")
    assert "the user's own instructions" in got.render() and "above the repository" in got.render()
    assert not got.skipped and not outside_imports(got)


def test_a_nested_claude_md_linked_to_outside_needs_trust(env):
    write(env, "oshome/notes.md", "nested text from outside")
    write(env, "p/CLAUDE.md", "project")
    write(env, "p/pkg/src/main.py", "")
    os.symlink(env / "oshome/notes.md", env / "p/pkg/CLAUDE.md")
    for trusted in (False, True):
        tracker = AttachmentTracker(load(env / "p", trusted=trusted))
        attached = tracker.on_path_touched(env / "p/pkg/src/main.py")
        assert any("nested text from outside" in a.render() for a in attached) is trusted
        assert [s.reason for s in tracker.considered if hasattr(s, "reason")] == ([] if trusted else [UNTRUSTED])


NEW_CREDENTIALS = [
    ("oshome/.config/hub/hosts.yml", "~/.config/hub"),
    ("oshome/.config/glab-cli/config.yml", "~/.config/glab-cli"),
    ("oshome/.config/op/config", "~/.config/op"),
    ("oshome/.doppler/.doppler.yaml", "~/.doppler"),
    ("oshome/.vault-token", ".vault-token"),
    ("oshome/.terraform.d/credentials.tfrc.json", "~/.terraform.d/credentials.tfrc.json"),
    ("oshome/.pgpass", ".pgpass"),
    ("oshome/.my.cnf", ".my.cnf"),
    ("oshome/.s3cfg", ".s3cfg"),
    ("oshome/.boto", ".boto"),
    ("oshome/.azure/accessTokens.json", "~/.azure"),
    ("oshome/.oci/config", "~/.oci"),
    ("oshome/.cargo/credentials.toml", "~/.cargo/credentials.toml"),
    ("oshome/.cargo/credentials", "~/.cargo/credentials"),
    ("oshome/.gem/credentials", "~/.gem/credentials"),
    ("oshome/.m2/settings.xml", "~/.m2/settings.xml"),
    ("oshome/.gradle/gradle.properties", "~/.gradle/gradle.properties"),
    ("oshome/.config/git/credentials", "~/.config/git/credentials"),
]


@pytest.mark.parametrize(("rel", "named"), NEW_CREDENTIALS)
@pytest.mark.parametrize("how", ["rule link", "root link", "import"])
def test_every_instruction_file_is_checked_against_the_credential_list(env, rel, named, how):
    secret = write(env, rel, "token = hunter2\n")
    write(env, "p/README.md", "readme")
    if how == "rule link":
        (env / "p/.claude/rules").mkdir(parents=True)
        os.symlink(secret, env / "p/.claude/rules/x.md")
    elif how == "root link":
        os.symlink(secret, env / "p/CLAUDE.md")
    else:
        write(env, "p/CLAUDE.md", f"@{secret}")
    got = load(env / "p", trusted=True)  # trusted or not: never read
    assert "hunter2" not in got.render()
    [skipped] = got.skipped
    assert named in skipped.reason and "credential" in skipped.reason


def test_ordinary_files_beside_credential_stores_still_load(env):
    write(env, "oshome/.m2/repository/NOTES.md", "maven notes")  # only settings.xml is a store
    write(env, "oshome/.cargo/config.toml", "cargo config")
    write(env, "p/CLAUDE.md", "@~/.m2/repository/NOTES.md @~/.cargo/config.toml")
    text = load(env / "p", trusted=True).render()
    assert "maven notes" in text and "cargo config" in text


@pytest.mark.parametrize(
    ("globs", "project", "user"),
    [
        (["**/CLAUDE.md"], "project instructions", "user instructions"),
        (["**/*.md"], "project rule", "user rule"),
        (["**"], "project instructions", "ancestor instructions"),
        (["*"], "project rule", "imported by the user"),
        (["/**/rules/**"], "project rule", "user rule"),
    ],
)
def test_untrusted_excludes_hide_only_the_repositorys_own_files(env, globs, project, user):
    from claude_mini.trust import RepositoryOnly

    write(env, "managed/CLAUDE.md", "managed policy")
    write(env, "home/CLAUDE.md", "user instructions")
    write(env, "home/rules/style.md", "user rule")
    write(env, "CLAUDE.md", "ancestor instructions")
    write(env, "oshome/notes.md", "imported by the user")
    write(env, "home/rules/imports.md", "@~/notes.md")
    write(env, "p/CLAUDE.md", "project instructions")
    write(env, "p/.claude/rules/r.md", "project rule")
    repo_only = load(env / "p", excludes=RepositoryOnly(globs)).render()
    for kept in ("managed policy", "user instructions", "user rule", "ancestor instructions", "imported by the user"):
        assert kept in repo_only
    assert project not in repo_only
    everywhere = load(env / "p", excludes=list(globs)).render()  # the user's own setting
    assert "managed policy" in everywhere and user not in everywhere and project not in everywhere
