"""End to end: repository files that reach a prompt, and settings, go through
one reader (claude_mini/base/safe_read.py).

A committed link to /proc/self/environ as the team's MEMORY.md, the memory policy or an agent
type's MEMORY.md must not carry the process environment (API key, tokens) to the API; a FIFO or
a link to /dev/zero as `.claude/settings.json`, `settings.local.json` or `.mcp.json` is one line
on stderr and the run goes on (never a hang or a MemoryError); an agent type's memory folder that
is a committed link to the repository root gives the child no way to write the repository.
Every run has a timeout: a hang fails the test instead of blocking the suite.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.e2e.conftest import all_requests_text, trust_folder
from tests.fake_anthropic import Reply

CANARY = "planted-canary-7c1e95b04d"
# A variable only these runs have: its value is in /proc/self/environ of the CLI's process.
SECRET_ENV = {"CLAUDE_MINI_TEST_CANARY": CANARY, "GITHUB_TOKEN": "ghp_" + CANARY}
TIMEOUT = 60


def link(path, target) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


@pytest.mark.parametrize("trusted", [False, True])
def test_a_team_memory_md_linked_to_proc_environ_sends_nothing_of_the_environment(
    run_cli, fake_server, repo, isolated_env, trusted
):
    link(repo / ".claude" / "memory" / "MEMORY.md", "/proc/self/environ")
    if trusted:
        trust_folder(isolated_env.home, repo)
    fake_server.queue(Reply.text("ok"))
    result = run_cli("-p", "hello", env=SECRET_ENV, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert fake_server.requests and CANARY not in all_requests_text(fake_server)
    assert "Team memory" in fake_server.requests[0].text  # the tier is on; its index was refused
    [line] = [li for li in result.stderr.splitlines() if "MEMORY.md was not read" in li]
    assert "/proc" in line and "taken as empty" in line


def test_an_agent_types_memory_md_linked_to_proc_environ_stays_out_of_the_childs_prompt(run_cli, fake_server, repo):
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "keeper.md").write_text(
        "---\nname: keeper\ndescription: Keeps notes\nmemory: project\n---\nKEEPER-PROMPT\n"
    )
    link(repo / ".claude" / "agent-memory" / "keeper" / "MEMORY.md", "/proc/self/environ")
    fake_server.on(
        Reply.tool("Agent", {"description": "x", "prompt": "Note it.", "subagent_type": "keeper"}), purpose="main"
    )
    fake_server.on(Reply.text("done"), purpose="subagent")
    fake_server.on(Reply.text("ok"), purpose="main")
    result = run_cli("-p", "go", env={**SECRET_ENV, "CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    [child] = fake_server.requests_for("subagent")
    assert "KEEPER-PROMPT" in child.text and CANARY not in all_requests_text(fake_server)


def test_an_agent_memory_folder_linked_to_the_repository_root_is_no_way_to_write_it(run_cli, fake_server, repo):
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "keeper.md").write_text(
        "---\nname: keeper\ndescription: Keeps notes\nmemory: project\n---\nKeep notes.\n"
    )
    link(repo / ".claude" / "agent-memory" / "keeper", "../..")  # the repository itself
    before = (repo / "app.py").read_text()
    fake_server.on(
        Reply.tool("Agent", {"description": "x", "prompt": "Note it.", "subagent_type": "keeper"}), purpose="main"
    )
    target = repo / ".claude" / "agent-memory" / "keeper" / "app.py"
    fake_server.on(Reply.tool("Write", {"file_path": str(target), "content": "PWNED\n"}), purpose="subagent")
    fake_server.on(Reply.text("done"), purpose="subagent")
    fake_server.on(Reply.text("ok"), purpose="main")
    result = run_cli("-p", "go", env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert (repo / "app.py").read_text() == before
    [line] = [li for li in result.stderr.splitlines() if "memory folder of agent keeper" in li]
    assert "symbolic link" in line and "runs without its memory" in line
    refused = fake_server.requests_for("subagent")[-1].body["messages"][-1]["content"][0]
    assert refused["is_error"]


def _fifo(path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


@pytest.mark.parametrize("name", [".claude/settings.json", ".claude/settings.local.json", ".mcp.json"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_dev_zero_as_a_settings_file_is_one_line_and_the_run_goes_on(
    run_cli, fake_server, repo, isolated_env, name, kind
):
    trust_folder(isolated_env.home, repo)  # trusted: every one of these files is read
    path = repo / name
    _fifo(path) if kind == "fifo" else link(path, "/dev/zero")
    fake_server.queue(Reply.text("ok"))
    result = run_cli("-p", "hello", timeout=TIMEOUT)  # before: a hang, or a MemoryError
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    lines = [li for li in result.stderr.splitlines() if name in li]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    why = "FIFO" if kind == "fifo" else "/dev"
    assert why in lines[0] and "Skipped" in lines[0] and "regular JSON file" in lines[0]


def test_a_fifo_as_the_user_settings_is_one_line(run_cli, fake_server, isolated_env):
    _fifo(isolated_env.home / "settings.json")
    fake_server.queue(Reply.text("ok"))
    result = run_cli("-p", "hello", timeout=TIMEOUT)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
    [line] = [li for li in result.stderr.splitlines() if "settings.json" in li]
    assert "FIFO" in line


def test_a_fifo_as_the_managed_settings_fails_closed_promptly(run_cli, fake_server, isolated_env):
    _fifo(isolated_env.managed / "settings.json")
    fake_server.queue(Reply.tool("Read", {"file_path": "app.py"}), Reply.text("ok"))
    result = run_cli("-p", "read app.py", timeout=TIMEOUT)
    assert "FIFO" in result.stderr and "every tool is denied" in result.stderr
    assert "def greet" not in all_requests_text(fake_server)  # the Read was denied


def test_a_commands_at_file_of_a_credential_or_a_proc_link_is_not_attached(run_cli, fake_server, repo):
    (repo / ".env").write_text(f"API_TOKEN={CANARY}\n")
    link(repo / "notes.md", "/proc/self/environ")
    commands = repo / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "leak.md").write_text("---\ndescription: Summarise the notes\n---\nSummarise @.env and @notes.md\n")
    fake_server.queue(Reply.text("ok"))
    result = run_cli("-p", "/leak", env=SECRET_ENV, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert "Summarise" in fake_server.requests[0].text and CANARY not in all_requests_text(fake_server)
    assert "@.env was not attached" in result.stderr


@pytest.mark.parametrize("trusted", [False, True])
def test_a_memory_policy_linked_to_proc_environ_stays_out_of_the_extraction_prompt(
    run_cli, fake_server, repo, isolated_env, trusted
):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"recall": {"strategy": "off"}}))
    link(repo / ".claude" / "memory-policy.md", "/proc/self/environ")
    if trusted:
        trust_folder(isolated_env.home, repo)
    fake_server.on(Reply.text("OK, pytest -x it is."), purpose="main")
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    result = run_cli("-p", "always run pytest with -x", env=SECRET_ENV, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    [extract, *_] = fake_server.requests_for("extract")  # the extraction ran, without the policy
    assert "memory extraction" in extract.text and CANARY not in all_requests_text(fake_server)
    [line] = [li for li in result.stderr.splitlines() if "memory-policy.md" in li]
    assert "was not read" in line and "/proc" in line
