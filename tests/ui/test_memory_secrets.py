"""`memory add` / `/memory add` refuse secrets; `memory forget` of a memory that held one offers
to purge it from archive/ (`--purge`, a yes on a terminal, or a choice in the REPL)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from claude_mini.base import paths
from claude_mini.commands.memory import MemoryCommandError, add_memory, edit_memory, forget_memory
from claude_mini.memory.recall.lexical import rank
from claude_mini.memory.recall.scan import CandidateScanner, index_cache_file
from claude_mini.memory.store import MemoryStore
from claude_mini.subcommands import forget_cli
from claude_mini.subcommands.app import sub_app

SECRET_BODY = "Staging DB credentials.\nDB_PASSWORD=hunter22\n"


@pytest.fixture
def cli(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(repo)
    runner = CliRunner()
    return lambda *args: runner.invoke(sub_app, list(args))


@pytest.fixture
def store(repo: Path) -> MemoryStore:
    return MemoryStore(paths.memory_dir(repo))


def archived(store: MemoryStore) -> list[str]:
    if not store.archive_dir.exists():
        return []
    return sorted(p.name for p in store.archive_dir.iterdir() if p.name != "ARCHIVE.md" and not p.name.startswith("."))


# --- memory add ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "what"),
    [
        (
            ["the deploy token is ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"],
            "a credential (github-pat rule) on line 1 of the memory text",
        ),
        (["staging db: DB_PASSWORD=hunter2"], "a password (DB_PASSWORD=…) on line 1 of the memory text"),
        (["npm publishing uses npm_" + "a1" * 18], "a credential (npmjsaccesstoken rule) on line 1 of the memory text"),
        (
            ["--why", "curl -H 'Authorization: Basic ZGVwbG95OnN1cGVy'", "the registry wants basic auth"],
            "a credential (curl-auth-header rule) on line 1 of --why",
        ),
        (
            ["--how", "export API_TOKEN=q1w2e3r4t5y6", "CI needs the API token"],
            "a token (API_TOKEN=…) on line 1 of --how",
        ),
    ],
)
def test_memory_add_refuses_a_secret_in_one_line_and_saves_nothing(cli, store, args, what):
    result = cli("memory", "add", *args)
    assert result.exit_code == 1 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("claude-mini memory: refused to save ")
    assert what in lines[0] and "Nothing was saved" in lines[0]
    for secret in ("x" * 36, "hunter2", "a1a1a1", "ZGVwbG95", "q1w2e3"):
        assert secret not in lines[0]
    assert not store.root.exists() or list(store.root.glob("*.md")) == []


def test_memory_add_still_saves_text_about_secrets(cli, store):
    result = cli("memory", "add", "The staging DB password is in Vault; the app reads DB_PASSWORD")
    assert result.exit_code == 0, result.stderr
    assert len(store.list()) == 1


def test_slash_memory_add_refuses_in_one_line(slash):
    out = slash.run("/memory add --type reference the API key is sk-proj-" + "Q" * 30, width=400)
    assert out.strip().startswith("refused to save an API key (sk-proj-…) on line 1 of the memory text")
    assert len(out.strip().splitlines()) == 1 and "Q" * 30 not in out
    assert slash.runtime.store.list() == []


# --- memory edit -----------------------------------------------------------------------------
def test_memory_edit_warns_when_the_user_typed_a_secret(store, monkeypatch):
    store.write(
        "db.md", name="DB", description="where the staging database lives", type="reference", body="db.internal"
    )
    script = "import sys; open(sys.argv[1], 'a').write('password: Tr0ub4dor3\\n')"
    monkeypatch.setenv("EDITOR", f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}")
    lines = edit_memory(store, "db")
    assert any(line.startswith("Warning: db.md now holds a password (password:…) on line") for line in lines), lines
    assert not any("Tr0ub4dor3" in line for line in lines)


# --- memory forget ---------------------------------------------------------------------------
def write_secret_memory(store: MemoryStore, filename: str = "db.md") -> None:
    store.write(
        filename, name="Staging DB", description="staging database credentials", type="reference", body=SECRET_BODY
    )


def test_forget_without_a_terminal_says_how_to_purge(cli, store):
    write_secret_memory(store)
    result = cli("memory", "forget", "db")
    assert result.exit_code == 0, result.stderr
    assert "Archived db.md to archive/db.md" in result.stdout
    assert (
        "Warning: db.md held a password (DB_PASSWORD=…) on line 10, kept in archive/db.md. "
        "`claude-mini memory forget db.md --purge` deletes it for good."
    ) in result.stdout
    assert "hunter22" not in result.stdout and archived(store) == ["db.md"]
    # A session's recall saved its index of the archive, which holds the file's first lines.
    cache = index_cache_file(paths.recall_cache_dir(), store.archive_dir)
    scanner = CandidateScanner(store.archive_dir, index_name="ARCHIVE.md", cache_file=cache)
    scanner.scan()
    rank("staging database", scanner.index)  # its embeddings and BM25 matrix are saved beside it
    scanner.save_cache()
    assert "hunter22" in cache.read_text()
    companions = list(cache.parent.glob(f"{cache.stem}.*.*"))
    assert len(companions) == 2
    purged = cli("memory", "forget", "db.md", "--purge")  # works on the archived memory
    assert purged.exit_code == 0, purged.stderr
    assert "Deleted db.md for good: archive/db.md" in purged.stdout
    assert archived(store) == [] and "db.md" not in store.archive_index_path.read_text()
    assert not cache.exists()  # the secret is gone from recall's index too
    assert not any(p.exists() for p in companions)


def test_forget_of_a_clean_memory_says_nothing_about_secrets(cli, store):
    store.write(
        "deploy.md", name="Deploy", description="how to deploy billing", type="project", body="make deploy-billing"
    )
    result = cli("memory", "forget", "deploy")
    assert result.exit_code == 0 and "Warning" not in result.stdout
    assert archived(store) == ["deploy.md"]


@pytest.mark.parametrize(("answer", "kept"), [("y", []), ("yes", []), ("n", ["db.md"]), ("", ["db.md"])])
def test_forget_asks_on_a_terminal(store, answer, kept):
    write_secret_memory(store)
    questions: list[str] = []

    def ask(question: str) -> bool:
        questions.append(question)
        return answer in ("y", "yes")

    lines = forget_memory(store, "db", ask=ask)
    assert questions == [
        "db.md held a password (DB_PASSWORD=…) on line 10. Delete it from archive/ for good too? [y/N] "
    ]
    assert archived(store) == kept
    assert any(line.startswith("Deleted db.md for good") for line in lines) == (not kept)


def test_forget_purge_deletes_the_live_memory_and_older_copies_with_secrets(store):
    write_secret_memory(store)
    store.archive_copy("db.md", reason="dream: rewritten")  # an old version with the secret
    store.write(
        "db.md",
        name="Staging DB",
        description="staging database credentials",
        type="reference",
        body="The password is in Vault.",
    )
    store.write(
        "other.md", name="Other", description="another memory kept in the archive", type="project", body="clean"
    )
    store.delete("other.md")
    lines = forget_memory(store, "db", purge=True)
    assert lines[0].startswith("Deleted db.md for good: archive/db-2.md, archive/db.md and their")
    assert archived(store) == ["other.md"] and not (store.root / "db.md").exists()
    index = store.archive_index_path.read_text()
    assert "other.md" in index and "(db.md)" not in index and "db-2.md" not in index


def test_forget_purge_of_something_unknown_is_one_error(store):
    store.root.mkdir(parents=True)
    with pytest.raises(MemoryCommandError, match="nothing named 'nope'"):
        forget_memory(store, "nope", purge=True)


def test_terminal_ask_only_with_a_terminal(monkeypatch):
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    assert forget_cli.terminal_ask() is None


@pytest.mark.parametrize(("choice", "kept"), [("purge", []), ("keep", ["db.md"]), (None, ["db.md"])])
def test_slash_memory_forget_offers_the_purge(slash, choice, kept):
    store = slash.runtime.store
    write_secret_memory(store)
    slash.host.choice = choice
    out = slash.run("/memory forget db", width=400)
    (options,) = slash.host.choices
    assert [value for value, _ in options] == ["purge", "keep"]
    assert archived(store) == kept
    if kept:
        assert "`/memory forget db.md --purge` deletes it for good" in out
    else:
        assert "Deleted db.md for good" in out


def test_slash_memory_forget_purge_asks_nothing(slash):
    store = slash.runtime.store
    write_secret_memory(store)
    out = slash.run("/memory forget db --purge", width=400)
    assert slash.host.choices == [] and "Deleted db.md for good" in out and archived(store) == []


def test_add_memory_refusal_is_a_usage_free_error(repo):
    from claude_mini.commands.memory import MemoryContext

    with pytest.raises(MemoryCommandError) as caught:
        add_memory(MemoryContext.for_cwd(repo), "x", why="token: ab12cd34ef56gh78")
    assert caught.value.code == 1 and "of --why" in str(caught.value)


# --- what is scanned is what is written --------------------------------------------------
@pytest.mark.parametrize(
    ("args", "what"),
    [
        # a key on one line, its value on the next: joined in the one-line description
        (["Staging DB_PASSWORD\n=hunter2Secret9"], "a password (DB_PASSWORD=…)"),
        (["token:\n\n  ab12cd34ef56gh78"], "a token (token:…)"),
        (["API\nkey: abcd1234efgh5678"], "a secret key (key:…)"),
        # --why/--how are joined into one line too
        (["db notes", "--why", "DB_PASSWORD\n=hunter2Secret9"], "a password (DB_PASSWORD=…)"),
    ],
)
def test_memory_add_scans_the_file_as_it_would_be_saved(cli, store, args, what):
    result = cli("memory", "add", *args)
    assert result.exit_code == 1 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert what in line and "of the memory as it would be saved" in line, line
    assert "hunter2Secret9" not in line and "ab12cd34" not in line and "abcd1234" not in line
    assert not store.root.exists() or list(store.root.glob("*.md")) == []


def test_memory_add_scans_the_derived_filename(cli, store):
    # `_` becomes `-` in the filename: glpat_… is not a token, glpat-… is
    result = cli("memory", "add", "glpat_x8Yz3Qw9Lm2Nb7Vc4Kp1 is the CI token")
    assert result.exit_code == 1, result.stdout
    assert "a credential (gitlab-pat rule) on line 1 of its filename" in result.stderr
    assert "x8Yz3Qw9" not in result.stderr.lower()
    assert not store.root.exists() or list(store.root.glob("*.md")) == []


def test_memory_add_writes_what_it_scanned(repo, store, monkeypatch):
    import claude_mini.commands.memory as memory_cli

    scanned: list[dict[str, str]] = []
    original = memory_cli.saved_parts
    monkeypatch.setattr(
        memory_cli, "saved_parts", lambda filename, fields: scanned.append(original(filename, fields)) or scanned[-1]
    )
    add_memory(memory_cli.MemoryContext.for_cwd(repo), "Staging DB\nlives at db.internal", why="ops asked")
    (parts,) = scanned
    (path,) = [p for p in store.root.glob("*.md") if p.name != "MEMORY.md"]
    assert parts["the memory as it would be saved"] == path.read_text()
    assert parts["its filename (derived from the text)"] == path.name
    assert parts["its MEMORY.md line"] in store.index_path.read_text().splitlines()


def test_slash_memory_add_scans_the_joined_text(slash):
    out = slash.run("/memory add --why 'ops' Staging DB_PASSWORD\n=hunter2Secret9", width=400)
    assert out.strip().startswith("refused to save a password (DB_PASSWORD=…)"), out
    assert "hunter2Secret9" not in out and slash.runtime.store.list() == []
