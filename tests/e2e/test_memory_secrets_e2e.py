"""End to end: a secret cannot be assembled in the memory folder by a Write then an Edit, through
the real CLI and the fake server; `memory add` refuses one; `memory forget --purge` deletes one."""

from __future__ import annotations

import json

import pytest

from claude_mini.base import paths
from claude_mini.memory.store import MemoryStore, format_memory
from tests.e2e.conftest import trust_folder
from tests.fake_anthropic import Reply


def no_extraction(repo, fake_server) -> None:
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"recall": {"strategy": "off"}}))
    trust_folder(paths.home_dir(), repo)  # untrusted, recall.strategy is ignored
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)


def results(request) -> list[dict]:
    return [block for block in request.body["messages"][-1]["content"] if block["type"] == "tool_result"]


CASES = [
    # (clean body the Write saves, old_string, new_string, replace_all, kind, the secret)
    (
        "Staging DB.\nDB_PASSWORD=\n",
        "DB_PASSWORD=",
        "DB_PASSWORD=hunter22",
        False,
        "a password (DB_PASSWORD=…)",
        "hunter22",
    ),
    (
        "CI pushes tags with TOKEN_HERE.\nAlso TOKEN_HERE for releases.\n",
        "TOKEN_HERE",
        "glpat-x8Yz3Qw9Lm2Nb7Vc4Kp1",
        True,
        "a credential (gitlab-pat rule)",
        "x8Yz3Qw9Lm2Nb7Vc4Kp1",
    ),
    (
        "[staging]\nregion = eu-west-1\naws_secret_access_key = PASTE_HERE\n",
        "PASTE_HERE",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        False,
        "an AWS secret access key on line 9",
        "je7MtGbClwBF/2Zp9Utk",
    ),
]


@pytest.mark.parametrize(("body", "old", "new", "replace_all", "kind", "secret"), CASES)
def test_a_write_then_an_edit_cannot_put_a_secret_in_memory(
    run_cli, fake_server, repo, body, old, new, replace_all, kind, secret
):
    no_extraction(repo, fake_server)
    path = paths.memory_dir(repo) / "reference_staging.md"
    clean = format_memory(name="Staging", description="how staging is reached", type="reference", body=body)
    fake_server.queue(
        Reply.tool("Write", {"file_path": str(path), "content": clean}),
        Reply.tool("Edit", {"file_path": str(path), "old_string": old, "new_string": new, "replace_all": replace_all}),
        Reply.text("done"),
    )
    result = run_cli("-p", "remember how to reach staging", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    _, after_write, after_edit = fake_server.requests_for("main")
    (wrote,) = results(after_write)
    (edited,) = results(after_edit)
    assert not wrote.get("is_error"), wrote
    assert edited["is_error"] and "refused to save" in edited["content"] and kind in edited["content"]
    assert secret not in edited["content"]
    assert path.read_text() == clean and secret not in path.read_text()


def test_the_extraction_fork_cannot_assemble_a_secret_either(run_cli, fake_server, repo):
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"recall": {"strategy": "off"}}))
    trust_folder(paths.home_dir(), repo)  # untrusted, recall.strategy is ignored
    path = paths.memory_dir(repo) / "reference_npm.md"
    clean = format_memory(
        name="npm",
        description="how packages are published",
        type="reference",
        body="//registry.npmjs.org/:_authToken=\n",
    )
    fake_server.on(Reply.text("ok"), purpose="main")
    fake_server.on(Reply.tool("Write", {"file_path": str(path), "content": clean}), purpose="extract")
    fake_server.on(
        Reply.tool(
            "Edit", {"file_path": str(path), "old_string": "_authToken=", "new_string": "_authToken=npm_" + "a1B2" * 9}
        ),
        purpose="extract",
    )
    fake_server.on(Reply.text("Saved."), purpose="extract")
    result = run_cli("-p", "we publish with npm")
    assert result.returncode == 0, result.stderr
    (edited,) = results(fake_server.requests_for("extract")[2])
    assert edited["is_error"] and "a credential (npmjsaccesstoken rule) on line" in edited["content"]
    assert "a1B2" not in path.read_text()


def test_memory_add_refuses_and_forget_purge_deletes(run_cli, repo):
    refused = run_cli("memory", "add", "staging: export DB_PASSWORD=hunter22")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("claude-mini memory: refused to save a password (DB_PASSWORD=…)")
    assert "hunter22" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    store = MemoryStore(paths.memory_dir(repo))
    store.write("db.md", name="DB", description="staging database", type="reference", body="password: Tr0ub4dor3")
    forgot = run_cli("memory", "forget", "db", input="")
    assert forgot.returncode == 0 and "`claude-mini memory forget db.md --purge`" in forgot.stdout
    assert (store.archive_dir / "db.md").exists()
    purged = run_cli("memory", "forget", "db.md", "--purge")
    assert purged.returncode == 0 and "Deleted db.md for good" in purged.stdout
    assert not (store.archive_dir / "db.md").exists()


# --- review findings: mixed line ends, invisible characters, huge files, joined text -------
TOKEN = "ghp_a1B2c3D4{}e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_a_mixed_crlf_edit_cannot_assemble_a_secret(run_cli, fake_server, repo):
    no_extraction(repo, fake_server)
    memdir = paths.memory_dir(repo)
    files = {
        "cr.md": ("DB_PASSWORD=\r\nnote\n", "=\r", "=hunter2Secret9\r"),
        "tok.md": ("a\nAPI_TOKEN=\r\nb\r\n", "API_TOKEN=\r\n", "API_TOKEN=q1w2e3r4t5y6u7i8\r\n"),
    }
    fake_server.queue(
        Reply.tools([("Write", {"file_path": str(memdir / n), "content": c}) for n, (c, _, _) in files.items()]),
        Reply.tools([("Read", {"file_path": str(memdir / n)}) for n in files]),
        Reply.tools(
            [
                ("Edit", {"file_path": str(memdir / n), "old_string": o, "new_string": w})
                for n, (_, o, w) in files.items()
            ]
        ),
        Reply.text("done"),
    )
    result = run_cli("-p", "remember the staging setup", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    wrote, read, edited = (results(r) for r in fake_server.requests_for("main")[1:4])
    assert not any(r.get("is_error") for r in wrote + read), wrote + read
    for block in edited:
        assert block["is_error"] and "refused to save" in block["content"], block
        assert "hunter2Secret9" not in block["content"] and "q1w2e3" not in block["content"]
    for name, (content, _, _) in files.items():
        assert (memdir / name).read_bytes() == content.encode()


HIDDEN = ["\u202e", "\U000e0061", "\ufe0f", "\u3164", "\u0301"]


def test_invisible_characters_and_lookalikes_do_not_smuggle_a_token(run_cli, fake_server, repo):
    no_extraction(repo, fake_server)
    memdir = paths.memory_dir(repo)
    contents = [f"The bot token is {TOKEN.format(x)}\n" for x in HIDDEN]
    contents += [
        f"The bot token is {TOKEN.format('').replace('ghp', 'ghр')}\n",  # Cyrillic р
        "staging: DB_PАSSWORD=hunter2Secret9\n",
    ]  # Cyrillic А
    fake_server.queue(
        Reply.tools([("Write", {"file_path": str(memdir / f"m{i}.md"), "content": c}) for i, c in enumerate(contents)]),
        Reply.text("done"),
    )
    result = run_cli("-p", "remember the bot", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    blocks = results(fake_server.requests_for("main")[1])
    assert len(blocks) == len(contents)
    for block in blocks:
        assert block["is_error"] and "refused to save" in block["content"], block
        assert "e5F6g7H8" not in block["content"] and "hunter2Secret9" not in block["content"]
    assert not memdir.exists() or list(memdir.glob("m*.md")) == []


def test_an_edit_of_a_memory_file_too_large_to_check_is_refused(run_cli, fake_server, repo):
    no_extraction(repo, fake_server)
    path = paths.memory_dir(repo) / "big.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    original = "DB_PASSWORD=placeholder\n" + "filler line of a runaway memory\n" * 300_000
    path.write_text(original)
    fake_server.queue(
        Reply.tool("Read", {"file_path": str(path), "limit": 5}),
        Reply.tool("Edit", {"file_path": str(path), "old_string": "placeholder", "new_string": "hunter2Secret9"}),
        Reply.text("done"),
    )
    result = run_cli("-p", "fill in the password", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    (edited,) = results(fake_server.requests_for("main")[2])
    assert edited["is_error"] and "big.md is over 8 MiB" in edited["content"], edited
    assert "cannot be checked for secrets" in edited["content"]
    assert path.read_text() == original


@pytest.mark.parametrize("text", ["Staging DB_PASSWORD\n=hunter2Secret9", "glpat_x8Yz3Qw9Lm2Nb7Vc4Kp1 is the CI token"])
def test_memory_add_refuses_a_secret_made_by_joining_lines(run_cli, repo, text):
    refused = run_cli("memory", "add", text)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("claude-mini memory: refused to save ")
    assert "hunter2Secret9" not in refused.stderr and "x8Yz3Qw9" not in refused.stderr
    memdir = paths.memory_dir(repo)
    assert not memdir.exists() or [p for p in memdir.glob("*.md") if p.name != "MEMORY.md"] == []
