"""End to end: memories saved with the real CLI reach the model through the index and recall."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from claude_mini.base import paths
from claude_mini.config import load_config
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.memory.store import INDEX_MAX_BYTES, MemoryStore, parse_index
from claude_mini.runtime import build_runtime
from tests.e2e.conftest import cli_env, trust_folder
from tests.fake_anthropic import Reply
from tests.folder_faults import read_only_folder

QUERY = "how do I deploy the billing service to staging?"


def system_text(request) -> str:
    return "\n".join(block["text"] for block in request.body["system"])


def test_print_mode_recalls_a_memory_added_on_the_command_line(run_cli, fake_server, repo):
    added = run_cli(
        "memory",
        "add",
        "--type",
        "project",
        "Deploy billing to staging with make deploy-billing, VPN first. DEPLOY-BODY",
    )
    assert added.returncode == 0, added.stderr
    filename = added.stdout.split()[1]
    fake_server.on(Reply.json({"selected_memories": [filename]}), purpose="recall")
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    fake_server.queue(
        Reply.tool("Read", {"file_path": "app.py"}).slow_first_byte(1.5), Reply.text("Use make deploy-billing.")
    )
    result = run_cli("-p", QUERY, "--output-format", "json", env={"CLAUDE_MINI_SMALL_MODEL": "tiny-recall-model"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["result"] == "Use make deploy-billing."
    (recall,) = fake_server.requests_for("recall")
    assert recall.body["model"] == "tiny-recall-model"
    assert f"] {filename} (" in recall.body["messages"][0]["content"][0]["text"]
    first, second = fake_server.requests_for("main")
    assert f"]({filename})" in system_text(first)  # Layer 2: the index line is in the prompt
    # Layer 3: a strong lexical match joins the user's message before the first request; the
    # side model's pick of the same file is not sent a second time at the tool result.
    header = f"Recalled memory: {filename} — saved today"
    assert header in json.dumps(first.body["messages"][0], ensure_ascii=False)
    assert json.dumps(second.body["messages"], ensure_ascii=False).count(header) == 1


def test_two_processes_adding_at_once_keep_both_index_lines(isolated_env, fake_server, repo):
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url)
    texts = [f"Parallel memory number {i} about the billing deploy pipeline" for i in range(4)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "claude_mini", "memory", "add", text],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for text in texts
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    store = MemoryStore(paths.memory_dir(repo))
    entries = parse_index(store.index_text())
    assert len(entries) == 4 and len({e.filename for e in entries}) == 4
    assert sorted(r.description for r in store.list()) == sorted(texts)


def test_memory_md_cut_at_200_lines_in_the_system_prompt(run_cli, fake_server, repo):
    store = MemoryStore(paths.memory_dir(repo))
    lines = [f"- [Memory {i:03d}](m{i:03d}.md) — hook {i:03d}" for i in range(250)]
    store.root.mkdir(parents=True)
    store.index_path.write_text("\n".join(lines) + "\n")
    result = run_cli("-p", "hello there")
    assert result.returncode == 0, result.stderr
    system = system_text(fake_server.requests_for("main")[0])
    assert "hook 199" in system and "hook 200" not in system
    assert "> WARNING: MEMORY.md is 250 lines (limit: 200). Only the first 200 were loaded" in system


def test_memory_md_cut_at_25000_bytes_in_the_system_prompt(fake_server, repo):
    store = MemoryStore(paths.memory_dir(repo))
    store.root.mkdir(parents=True)
    lines = [f"- [M{i:03d}](m{i:03d}.md) — LINE{i:03d} " + "x" * 975 for i in range(200)]
    store.index_path.write_text("\n".join(lines) + "\n")
    rt = build_runtime(load_config(repo), client=AnthropicClient(base_url=fake_server.base_url, api_key="t"))

    async def turn() -> None:
        async for _ in rt.agent.run("hello"):
            pass
        await rt.client.aclose()

    asyncio.run(turn())
    system = system_text(fake_server.requests_for("main")[0])
    kept = [n for n in range(200) if f"LINE{n:03d} " in system]
    assert kept == list(range(len(kept))) and 20 <= len(kept) < 200
    assert f"(limit: {INDEX_MAX_BYTES:,}). Only the first {len(kept)} lines" in system


def test_recall_brings_back_what_gc_archived(run_cli, fake_server, repo):
    added = run_cli(
        "memory", "add", "--type", "project", "The nightly reporting job needs a postgres pool size of 40. POOL-BODY"
    )
    assert added.returncode == 0, added.stderr
    filename = added.stdout.split()[1]
    store = MemoryStore(paths.memory_dir(repo))
    path = store.root / filename
    old = "'2026-01-05T10:00:00Z'"
    path.write_text(
        "".join(
            f"{line.split(':')[0]}: {old}\n" if line.startswith(("created:", "updated:")) else line
            for line in path.read_text().splitlines(keepends=True)
        )
    )
    gc = run_cli("memory", "gc")
    assert gc.returncode == 0 and f"Archived 1 little-used memory to archive/: {filename}" in gc.stdout
    assert filename not in store.index_text()

    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"recall": {"strategy": "lexical"}}')
    trust_folder(paths.home_dir(), repo)  # untrusted, recall.strategy is ignored
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    fake_server.queue(Reply.tool("Read", {"file_path": "app.py"}).slow_first_byte(1.0), Reply.text("Use 40."))
    result = run_cli("-p", "which postgres pool size does the nightly reporting job need?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Use 40.\n"
    assert f"memory recall brought {filename} back from the archive" in result.stderr
    assert "POOL-BODY" in json.dumps(fake_server.requests_for("main")[1].body["messages"])
    assert filename in store.index_text() and path.is_file()


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_a_memory_md_that_is_not_a_file_warns_at_start_and_doctor_fix_moves_it_aside(run_cli, fake_server, repo, kind):
    added = run_cli("memory", "add", "--type", "user", "The user deploys with make ship, never by hand")
    assert added.returncode == 0, added.stderr
    index = paths.memory_dir(repo) / "MEMORY.md"
    index.unlink()
    index.mkdir() if kind == "directory" else os.mkfifo(index)
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    fake_server.on(Reply.text("hello back"), purpose="main", times=1)
    result = run_cli("-p", "hello", timeout=30)  # a FIFO used to block the start for ever
    assert result.returncode == 0 and result.stdout.strip() == "hello back", result.stderr
    [warning] = [line for line in result.stderr.splitlines() if "MEMORY.md" in line]
    assert warning.startswith("claude-mini: ") and "not a file" in warning and "doctor --fix" in warning
    assert "(empty: no memories saved yet)" in system_text(fake_server.requests_for("main")[0])
    report = run_cli("memory", "doctor", timeout=30)
    assert report.returncode == 1 and "index_not_a_file: MEMORY.md" in report.stdout
    fixed = run_cli("memory", "doctor", "--fix", timeout=30)
    assert "Fixed MEMORY.md: it was not a file: moved to archive/MEMORY.md.aside-" in fixed.stdout
    assert "make ship" in index.read_text()  # rebuilt from the topic files


def test_a_read_only_memory_folder_gives_one_line_at_start_on_save_and_in_memory_add(run_cli, fake_server, repo):
    added = run_cli("memory", "add", "--type", "user", "The user deploys with make ship, never by hand")
    assert added.returncode == 0, added.stderr
    folder = paths.memory_dir(repo)
    topic = "---\nname: Release\ndescription: releases go out on Thursdays\ntype: user\n---\nThursdays\n"
    fake_server.on(
        Reply.tool("Write", {"file_path": str(folder / "release.md"), "content": topic}), purpose="extract", times=1
    )
    fake_server.on(Reply.text("Saved what I could."), purpose="extract", times=None)
    fake_server.on(Reply.text("noted"), purpose="main", times=1)  # not the recall request, which may come first
    with read_only_folder(folder):
        result = run_cli("-p", "remember: we always release on Thursdays")
        again = run_cli("memory", "add", "Releases go out on Thursdays after the freeze")
    assert result.returncode == 0 and result.stdout.strip() == "noted", result.stderr
    assert "Traceback" not in result.stderr + again.stderr
    [line] = [x for x in result.stderr.splitlines() if "release.md" in x]
    assert line.startswith("claude-mini: Memory extraction could not save release.md (Could not write ")
    assert "Saved release.md" not in result.stderr and not (folder / "release.md").exists()
    assert again.returncode == 1
    assert again.stderr.startswith("claude-mini memory: could not save the memory (") and again.stderr.count("\n") == 1
