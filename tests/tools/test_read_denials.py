"""Read deny rules hold inside Grep and Glob: denied files are skipped, never named or shown."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from claude_mini.permissions import PermissionPolicy
from claude_mini.tools import ToolContext
from claude_mini.tools.base import NO_READ_DENIALS
from claude_mini.tools.glob import GlobTool
from claude_mini.tools.grep import GrepTool, _Query, _rg_args
from claude_mini.tools.read_denials import read_denials_of, ripgrep_excludes

SECRET = "hunter2-SECRET"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with secrets in several places a rule may name, and ordinary files beside them."""
    files = {
        name: f"{_marker(name)}\n"
        for name in (".env", "app/.env", "secrets/prod.key", "secrets/deep/more.txt", "certs/server.pem")
    }
    files[".env"] = f"DB_PASSWORD={SECRET} {_marker('.env')}\n"
    files |= {"app/main.py": "print('hello')\n", "docs/readme.md": "hello world\n", "notes.txt": "hello\n"}
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _marker(name: str) -> str:
    """The secret text of one denied-able file: SECRET plus its name, so a leak says where from."""
    return f"SECRET in {name.replace('/', ' ')}"


def _ctx(project: Path, *deny: str) -> ToolContext:
    policy = PermissionPolicy.from_layers(
        [("project", {"deny": list(deny)})], cwd=project, project_root=project, protected=[]
    )
    ctx = ToolContext(cwd=project, project_root=project)
    ctx.read_denials = read_denials_of(policy)
    return ctx


def _grep_engines() -> list[GrepTool]:
    return [GrepTool(), GrepTool(use_ripgrep=False)]


# (rules, files that must not show up, number of denied files the walk meets)
CASES = [
    (["Read(.env)"], [".env", "app/.env"], 2),
    (["Read(./secrets/**)"], ["secrets/prod.key", "secrets/deep/more.txt"], 2),
    (["Read(*.pem)", "Read(*.key)"], ["certs/server.pem", "secrets/prod.key"], 2),
    (["Read(app/.env)"], ["app/.env"], 1),
]


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
@pytest.mark.parametrize(("rules", "hidden", "denied"), CASES)
def test_grep_skips_denied_files_in_every_mode(project: Path, engine, mode, rules, hidden, denied) -> None:
    ctx = _ctx(project, *rules)
    tool = GrepTool(use_ripgrep=engine == "ripgrep")
    # `glob` makes the walk include hidden files such as .env, as a model trying to read them would.
    result = asyncio.run(tool.call({"pattern": "SECRET|hello", "output_mode": mode, "glob": "**"}, ctx))
    for name in hidden:
        assert str(project / name) not in result.content
        assert _marker(name) not in result.content
    assert result.metadata["denied"] == denied
    assert f"{denied} file" in result.content and "Read deny rules" in result.content
    assert str(project / "notes.txt") in result.content  # the rest is still found


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_grep_deny_count_does_not_depend_on_contents(project: Path, engine) -> None:
    """A count of skipped *matches* would let a model probe a secret one guess at a time."""
    ctx = _ctx(project, "Read(.env)")
    tool = GrepTool(use_ripgrep=engine == "ripgrep")
    hit = asyncio.run(tool.call({"pattern": "DB_PASSWORD=hunter2", "glob": "**"}, ctx))
    miss = asyncio.run(tool.call({"pattern": "DB_PASSWORD=wrong", "glob": "**"}, ctx))
    assert hit.content == miss.content
    assert hit.metadata["denied"] == miss.metadata["denied"] == 2


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_grep_filters_results_even_when_the_rule_cannot_be_given_to_rg(project: Path, engine) -> None:
    """Braces mean something else to rg than to gitignore; the per-path check still holds."""
    (project / "a{b}.txt").write_text(f"{SECRET}\n")
    ctx = _ctx(project, "Read(a{b}.txt)")
    assert ctx.read_denials.ripgrep_excludes(project) == []
    result = asyncio.run(GrepTool(use_ripgrep=engine == "ripgrep").call({"pattern": "SECRET"}, ctx))
    assert "a{b}" not in result.content and result.metadata["denied"] == 1


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_grep_skips_a_symlink_to_a_denied_file(project: Path, engine) -> None:
    os.symlink(project / ".env", project / "harmless.txt")
    ctx = _ctx(project, "Read(.env)")
    result = asyncio.run(
        GrepTool(use_ripgrep=engine == "ripgrep").call({"pattern": "DB_PASSWORD", "output_mode": "content"}, ctx)
    )
    assert SECRET not in result.content and "harmless" not in result.content


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_grep_in_a_subfolder_and_with_absolute_rules(project: Path, engine) -> None:
    ctx = _ctx(project, f"Read(/{project}/secrets/deep/**)", "Read(.env)")
    tool = GrepTool(use_ripgrep=engine == "ripgrep")
    result = asyncio.run(tool.call({"pattern": "SECRET", "path": "secrets", "output_mode": "content"}, ctx))
    assert "more.txt" not in result.content
    assert f"{project / 'secrets' / 'prod.key'}:1:{_marker('secrets/prod.key')}" in result.content
    result = asyncio.run(tool.call({"pattern": "SECRET", "path": "app", "glob": "**"}, ctx))
    assert result.content.startswith("No matches found") and result.metadata["denied"] == 1


def test_no_rules_means_no_note_and_no_extra_work(project: Path) -> None:
    ctx = _ctx(project, "Bash(rm:*)")
    assert ctx.read_denials is NO_READ_DENIALS
    for tool in _grep_engines():
        result = asyncio.run(tool.call({"pattern": "hello"}, ctx))
        assert "deny" not in result.content and result.metadata["denied"] == 0


# --- ripgrep exclusions ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "root", "expected"),
    [
        ("Read(.env)", ".", ["!.env"]),
        ("Read(.env)", "app", ["!.env"]),
        ("Read(*.pem)", "certs", ["!*.pem"]),
        ("Read(./secrets/**)", ".", ["!/secrets/**"]),
        ("Read(./secrets/**)", "secrets", ["!/**"]),
        ("Read(./secrets/deep/**)", "secrets", ["!/deep/**"]),
        ("Read(./secrets/**)", "app", []),  # the rule cannot match below app/
        ("Read(**/id_rsa)", "app", ["!**/id_rsa"]),
        ("Read(a/**/b.txt)", "app", []),  # not expressible relative to app/: filter only
        ("Read({a,b}.txt)", ".", []),  # braces differ between gitignore and rg
    ],
)
def test_ripgrep_excludes(project: Path, rule, root, expected) -> None:
    ctx = _ctx(project, rule)
    assert ctx.read_denials.ripgrep_excludes(project / root) == expected


def test_rules_outside_the_search_root_give_no_exclusions(tmp_path: Path) -> None:
    assert ripgrep_excludes([(str(tmp_path / "proj"), ".env")], tmp_path / "elsewhere") == []


def test_rg_exclusions_come_after_the_users_globs(project: Path) -> None:
    """For rg the last matching glob wins, so `glob: ".env"` cannot re-include a denied file."""
    ctx = _ctx(project, "Read(.env)")
    query = _Query.from_input({"pattern": "x", "glob": ".env"}, ctx)
    args = _rg_args("rg", query)
    assert args.index("--glob=!.env") > args.index("--glob=.env")


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_a_glob_naming_the_denied_file_does_not_reinclude_it(project: Path, engine) -> None:
    ctx = _ctx(project, "Read(.env)")
    result = asyncio.run(
        GrepTool(use_ripgrep=engine == "ripgrep").call(
            {"pattern": "PASSWORD", "glob": ".env", "output_mode": "content"}, ctx
        )
    )
    assert SECRET not in result.content and ".env" not in result.content.split("(")[0]


# --- Glob ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "pattern", "hidden", "shown"),
    [
        (["Read(.env)"], "**/.env", [".env", "app/.env"], []),
        (["Read(./secrets/**)"], "**/*", ["secrets/prod.key", "secrets/deep/more.txt"], ["notes.txt"]),
        (["Read(*.pem)"], "certs/*", ["certs/server.pem"], []),
        (["Read(//ROOT/app/**)"], "app/*.py", ["app/main.py"], []),
    ],
)
def test_glob_skips_denied_files(project: Path, rules, pattern, hidden, shown) -> None:
    rules = [r.replace("//ROOT", "/" + str(project)) for r in rules]  # an absolute rule
    ctx = _ctx(project, *rules)
    result = asyncio.run(GlobTool().call({"pattern": pattern}, ctx))
    for name in hidden:
        assert name.rsplit("/", 1)[-1] not in result.content
    for name in shown:
        assert str(project / name) in result.content
    assert result.metadata["denied"] == len(hidden)
    word, them = ("file was", "it") if len(hidden) == 1 else ("files were", "them")
    assert f"{len(hidden)} {word} skipped because Read deny rules cover {them};" in result.content


def test_glob_without_denied_matches_says_nothing(project: Path) -> None:
    ctx = _ctx(project, "Read(.env)")
    result = asyncio.run(GlobTool().call({"pattern": "**/*.md"}, ctx))
    assert result.content == str(project / "docs" / "readme.md")


def test_forked_agents_share_the_deny_view(project: Path) -> None:
    """Extraction, compaction and subagents call the same tools with their own ToolContext."""
    from claude_mini.agent.fork import Fork, ForkSnapshot
    from claude_mini.llm.messages import ModelRequest

    ctx = _ctx(project, "Read(.env)")
    snap = ForkSnapshot(
        request=ModelRequest(model="m", system=[], tools=[], messages=[], max_tokens=1),
        sent=None,
        tools={},
        cwd=project,
        project_root=project,
        client=None,  # type: ignore[arg-type]
        read_denials=ctx.read_denials,
    )
    fork = Fork(snap, purpose="extract", policy=None)  # type: ignore[arg-type]
    assert fork.ctx.read_denials is ctx.read_denials
    result = asyncio.run(GrepTool().call({"pattern": "DB_PASSWORD", "glob": "**"}, fork.ctx))
    assert SECRET not in result.content and result.metadata["denied"] == 2
