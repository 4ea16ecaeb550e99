"""End to end: background shells in -p and the REPL against the fake server. A job started with
Bash run_in_background is read twice with BashOutput and killed with KillShell; an unknown id is
one line; none is left after the session ends, after SIGTERM, or after kill -9 of claude-mini; the
sandbox confines them like any Bash call; /bashes lists and kills them and the status line counts
them."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from tests.e2e.conftest import cli_env, trust_folder
from tests.e2e.test_repl import main_replies, start, wait_until  # noqa: F401  (the `start` fixture)
from tests.fake_anthropic import Reply
from tests.processes import alive, ends_soon, pid_in

NO_MEMORY = {"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}
# Prints, waits for the test's `go` file, prints again: each read has something new, no sleeps to guess.
COUNTER = (
    "echo first; touch said1; until [ -e go ]; do sleep 0.02; done; echo second; touch said2; "
    "echo $$ > counter.pid; sleep 300"
)


def background(command: str, **more: object) -> Reply:
    return Reply.tool("Bash", {"command": command, "run_in_background": True, **more})


def waits_for(name: str, then: str = "") -> Reply:
    """A foreground Bash call that returns once the background job has written `name`."""
    return Reply.tool("Bash", {"command": f"{then}until [ -s {name} ] || [ -e {name} ]; do sleep 0.02; done"})


def results(fake_server) -> list[str]:
    """The text of every tool result the main agent sent, in order."""
    return results_of(fake_server, "main")


def results_of(fake_server, purpose: str) -> list[str]:
    """The text of every tool result sent in requests of `purpose`, in order."""
    found = []
    for request in fake_server.requests_for(purpose):
        content = request.body["messages"][-1]["content"]
        found += [b["content"] for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return found


@pytest.mark.usefixtures("no_sandbox")
def test_print_mode_reads_twice_kills_and_leaves_nothing_running(run_cli, fake_server, repo):
    main_replies(
        fake_server,
        background(COUNTER, description="a counter"),
        waits_for("said1"),
        Reply.tool("BashOutput", {"bash_id": "bash_1"}),
        waits_for("said2", then="touch go; "),
        Reply.tool("BashOutput", {"bash_id": "bash_1"}),
        Reply.tool("BashOutput", {"bash_id": "bash_7"}),
        Reply.tool("KillShell", {"shell_id": "bash_1"}),
        background("echo $$ > left.pid; sleep 300"),
        waits_for("left.pid"),
        Reply.text("Done."),
    )
    result = run_cli("-p", "run the counter", "--permission-mode", "bypassPermissions", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Done."
    started, _, first, _, second, unknown, killed, left, _ = results(fake_server)
    assert started.startswith("Command running in the background as bash_1.")
    assert first == f"Shell bash_1: running · {COUNTER}\nNew output:\nfirst\n"
    assert second == f"Shell bash_1: running · {COUNTER}\nNew output:\nsecond\n"
    assert unknown == "No background shell 'bash_7' in this session (shells: bash_1)."
    assert killed.startswith("Killed background shell bash_1")
    assert left.startswith("Command running in the background as bash_2.")
    assert ends_soon(pid_in(repo / "counter.pid")), "KillShell left the counter running"
    assert ends_soon(pid_in(repo / "left.pid")), "the session's end left bash_2 running"
    tools = {t["name"]: t["input_schema"] for t in fake_server.requests_for("main")[0].body["tools"]}
    assert tools["Bash"]["properties"]["run_in_background"]["type"] == "boolean"
    assert set(tools["BashOutput"]["properties"]) == {"bash_id", "filter"} and tools["BashOutput"]["required"] == [
        "bash_id"
    ]
    assert set(tools["KillShell"]["properties"]) == {"shell_id"} and tools["KillShell"]["required"] == ["shell_id"]


@pytest.mark.usefixtures("no_sandbox")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_claude_mini_ends_its_background_shells(isolated_env, fake_server, repo, sig):
    main_replies(
        fake_server,
        background("sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait"),
        Reply.text("never arrives").hang(),
    )
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, **NO_MEMORY)
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mini", "-p", "start it", "--permission-mode", "bypassPermissions"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pids: list[int] = []
    try:
        wait_until(
            lambda: all((repo / n).exists() and (repo / n).read_text().strip() for n in ("child.pid", "shell.pid"))
        )
        pids = [pid_in(repo / "child.pid"), pid_in(repo / "shell.pid")]
        assert all(alive(pid) for pid in pids)
        wait_until(lambda: len(fake_server.requests_for("main")) == 2)  # the shell runs in the background
        proc.send_signal(sig)
        proc.wait(timeout=30)
        assert all(ends_soon(pid) for pid in pids)
    finally:
        proc.kill()
        for pid in pids:
            subprocess.run(["kill", "-9", str(pid)], capture_output=True)


def test_the_sandbox_confines_a_background_shell(run_cli, fake_server, repo, tmp_path):
    outside = tmp_path / "outside.txt"
    main_replies(
        fake_server,
        background(f"touch {outside}; echo status=$? > done.txt"),
        waits_for("done.txt"),
        Reply.tool("BashOutput", {"bash_id": "bash_1"}),
        Reply.text("Checked."),
    )
    result = run_cli("-p", "try it", "--permission-mode", "bypassPermissions", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    if "Sandbox not available" in result.stderr:
        pytest.skip("bubblewrap does not run here")
    assert not outside.exists()  # unsandboxed, this test's user could write there
    assert (repo / "done.txt").exists()  # the project is writable inside
    assert results(fake_server)[-1].startswith("Shell bash_1: ")


@pytest.mark.usefixtures("no_sandbox")
def test_the_repl_counts_lists_and_kills_them_and_its_exit_ends_the_rest(start, fake_server, repo):  # noqa: F811
    main_replies(
        fake_server,
        background("echo $$ > one.pid; sleep 300", description="first server"),
        Reply.text("Started one."),
        background("echo $$ > two.pid; sleep 300"),
        Reply.text("Started two."),
    )
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"permissions": {"allow": ["Bash"]}}')
    term = start()
    term.ready()
    term.submit("start a server")
    term.expect("Started one.")
    term.expect(r"· 1 shell\b")
    wait_until(lambda: (repo / "one.pid").exists() and (repo / "one.pid").read_text().strip())
    one = pid_in(repo / "one.pid")
    term.submit("/bashes")
    term.expect(r"bash_1\s+running\s+\d+s\s+echo \$\$ > one.pid; sleep 300  \(first server\)")
    term.expect("Kill a background shell?")
    term.child.send("1")
    term.expect("bash_1 killed.")
    assert ends_soon(one)
    term.ready()
    term.submit("/bashes kill bash_5")
    term.expect(r"No background shell 'bash_5' in this session \(shells: bash_1\)\.")
    term.submit("start another")
    term.expect("Started two.")
    wait_until(lambda: (repo / "two.pid").exists() and (repo / "two.pid").read_text().strip())
    two = pid_in(repo / "two.pid")
    term.ready()
    term.submit("/context")
    term.expect(r"Background shells: 1 running \(/bashes\)")
    term.submit("/exit")
    assert term.exit_status() == 0
    assert ends_soon(two), "the REPL's exit left bash_2 running"


WATCHER = """---
name: watcher
description: Starts a job in the background and keeps an eye on it.
tools: Bash, BashOutput, KillShell
---
You watch background jobs.
"""
LOG_HOOK = {"type": "command", "command": "cat >> .claude/hooklog.jsonl; echo >> .claude/hooklog.jsonl"}
REFUSE_HOOK = {"type": "command", "command": "echo 'keep it running' >&2; exit 2"}


@pytest.mark.usefixtures("no_sandbox")
def test_hooks_matchers_and_a_subagents_tools_list_written_for_claude_code_apply(
    run_cli, fake_server, repo, isolated_env
):
    trust_folder(isolated_env.home, repo)
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "watcher.md").write_text(WATCHER)
    hooks = {
        "PreToolUse": [{"matcher": "KillShell", "hooks": [REFUSE_HOOK]}],
        "PostToolUse": [{"matcher": "Bash|BashOutput", "hooks": [LOG_HOOK]}],
    }
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    task = {"description": "Watch a job", "prompt": "Watch the job.", "subagent_type": "watcher"}
    main_replies(
        fake_server,
        background("echo $$ > w.pid; echo watching; sleep 300"),
        waits_for("w.pid"),
        Reply.tool("Agent", task),
        Reply.tool("BashOutput", {"bash_id": "bash_1"}),
        Reply.text("Watched."),
    )
    for reply in (
        Reply.tool("BashOutput", {"bash_id": "bash_1", "filter": "watch"}),
        Reply.tool("KillShell", {"shell_id": "bash_1"}),
        Reply.text("Still running."),
    ):
        fake_server.on(reply, purpose="subagent")
    result = run_cli("-p", "watch it", "--permission-mode", "bypassPermissions", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Watched."
    read, refused = results_of(fake_server, "subagent")  # the child shares the session's shells
    assert read.endswith("New matching lines:\nwatching")
    assert "keep it running" in refused  # the PreToolUse hook matched KillShell and refused it
    assert results(fake_server)[-1].endswith("(no new output)")  # still running, read by the child
    logged = [json.loads(line) for line in (repo / ".claude" / "hooklog.jsonl").read_text().split("\n") if line]
    assert [(e["tool_name"], e["tool_input"].get("run_in_background")) for e in logged] == [
        ("Bash", True),
        ("Bash", None),
        ("BashOutput", None),
    ]
    assert ends_soon(pid_in(repo / "w.pid")), "the session's end left the subagent's shell running"
