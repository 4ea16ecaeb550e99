"""End to end: background memory extraction through the real CLI and the fake server (`-p`, and one
REPL session for the gate's batching and the final run at exit)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import yaml

from claude_mini.base import paths
from claude_mini.memory.store import format_memory
from tests.e2e.conftest import cli_env, trust_folder
from tests.fake_anthropic import Reply

MEMORY = format_memory(
    name="Run pytest with -x",
    description="always run pytest with -x",
    type="feedback",
    body="Run the tests with `pytest -x`.",
    why="the user wants the first failure only",
    how_to_apply="every test run",
)


def settings(repo, **memory) -> None:
    (repo / ".claude").mkdir(exist_ok=True)
    data = {"recall": {"strategy": "off"}, "memory": memory}
    (repo / ".claude" / "settings.json").write_text(json.dumps(data))
    trust_folder(paths.home_dir(), repo)  # untrusted, recall.strategy and memory.extract* are ignored


def save_replies(fake_server, memdir) -> None:
    fake_server.on(
        Reply.tool("Write", {"file_path": str(memdir / "feedback_testing.md"), "content": MEMORY}), purpose="extract"
    )
    fake_server.on(Reply.text("Saved one memory."), purpose="extract")


def runs(fake_server) -> list:
    """The first request of each extraction run (its last message is the extraction prompt)."""
    return [
        r
        for r in fake_server.requests_for("extract")
        if r.body["messages"][-1]["content"][-1].get("text", "").startswith("You are now the memory extraction")
    ]


def transcript_entries(home, repo) -> list[dict]:
    files = list(paths.project_dir(repo).glob("*.jsonl"))
    assert len(files) == 1 and str(files[0]).startswith(str(home))
    return [json.loads(line) for line in files[0].read_text().splitlines()]


def test_print_mode_saves_a_memory_and_says_so(run_cli, fake_server, repo, isolated_env):
    settings(repo)
    memdir = paths.memory_dir(repo)
    fake_server.on(Reply.text("OK, pytest -x it is."), purpose="main")
    save_replies(fake_server, memdir)
    result = run_cli("-p", "always run pytest with -x")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "OK, pytest -x it is.\n"
    assert "Saved memory: feedback_testing.md — always run pytest with -x\n" in result.stderr
    entries = transcript_entries(isolated_env.home, repo)
    session_id = entries[0]["session_id"]
    saved = [e for e in entries if e.get("subtype") == "memory_saved"]
    assert saved and saved[0]["file"] == "feedback_testing.md"
    text = (memdir / "feedback_testing.md").read_text()
    fm = yaml.safe_load(text.split("---\n")[1])
    assert fm["source"] == session_id and fm["created"] == fm["updated"]
    assert "(feedback_testing.md) — always run pytest with -x" in (memdir / "MEMORY.md").read_text()
    extract = fake_server.requests_for("extract")[0]
    assert extract.body["tools"] == fake_server.requests_for("main")[0].body["tools"]


def test_json_output_stays_one_object_and_announces_nothing(run_cli, fake_server, repo):
    settings(repo)
    save_replies(fake_server, paths.memory_dir(repo))
    result = run_cli("-p", "always run pytest with -x", "--output-format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["type"] == "result" and "Saved memory" not in result.stderr
    assert (paths.memory_dir(repo) / "feedback_testing.md").exists()


def test_print_mode_waits_for_a_slow_extraction_before_exiting(run_cli, fake_server, repo):
    settings(repo)
    memdir = paths.memory_dir(repo)
    fake_server.on(
        Reply.tool("Write", {"file_path": str(memdir / "feedback_testing.md"), "content": MEMORY}).slow_first_byte(2.0),
        purpose="extract",
    )
    fake_server.on(Reply.text("Saved."), purpose="extract")
    result = run_cli("-p", "always run pytest with -x")
    assert result.returncode == 0, result.stderr
    # Ordering, not timing: the file the slow extraction writes exists when the process has exited.
    assert (memdir / "feedback_testing.md").exists() and "Saved memory:" in result.stderr


def test_print_mode_stops_waiting_after_the_configured_time(run_cli, fake_server, repo):
    settings(repo, extractWaitSeconds=1)
    memdir = paths.memory_dir(repo)
    fake_server.on(
        Reply.tool("Write", {"file_path": str(memdir / "feedback_testing.md"), "content": MEMORY}), purpose="extract"
    )
    fake_server.on(Reply.text("never").hang(), purpose="extract")
    # The extraction's reply never comes: the run ending at all (run_cli's timeout would raise) shows
    # that print mode stopped waiting.
    result = run_cli("-p", "always run pytest with -x", timeout=30)
    assert result.returncode == 0 and result.stdout == "(fake model) You said: always run pytest with -x\n"
    assert "Memory extraction was still running after 1 s and was stopped" in result.stderr
    assert not (memdir / "feedback_testing.md").exists()  # the unfinished run was rolled back


def test_text_output_says_it_is_saving_and_stops_after_a_few_seconds(run_cli, fake_server, repo):
    settings(repo)  # no memory.extractWaitSeconds: text output waits printmode.TEXT_WAIT_SECONDS
    fake_server.on(Reply.text("never").hang(), purpose="extract")
    result = run_cli("-p", "always run pytest with -x", timeout=30)
    assert result.returncode == 0 and result.stdout == "(fake model) You said: always run pytest with -x\n"
    lines = result.stderr.splitlines()
    assert lines[0] == "saving memories… (Ctrl-C skips)"
    assert lines[1].startswith("Memory extraction was still running after 5 s and was stopped")


def test_ctrl_c_while_saving_skips_it(isolated_env, fake_server, repo):
    """A real process, to send it SIGINT once it says it is saving."""
    settings(repo, extractWaitSeconds=60)
    memdir = paths.memory_dir(repo)
    fake_server.on(
        Reply.tool("Write", {"file_path": str(memdir / "feedback_testing.md"), "content": MEMORY}), purpose="extract"
    )
    fake_server.on(Reply.text("never").hang(), purpose="extract")
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url)
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mini", "-p", "always run pytest with -x"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr.readline() == "saving memories… (Ctrl-C skips)\n"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out == "(fake model) You said: always run pytest with -x\n"
    assert err == "Memory saving skipped; nothing from this turn was kept.\n"
    assert not (memdir / "feedback_testing.md").exists()  # the unfinished run was rolled back


def test_a_turn_with_nothing_durable_is_not_extracted(run_cli, fake_server, repo):
    """A greeting, a listing, a question answered from the code, an edit: no fork, at the turn's
    end or at the session's (each -p run is a session)."""
    settings(repo)
    fake_server.queue(
        Reply.text("Hello!"),
        Reply.tool("Glob", {"pattern": "*"}),
        Reply.text("app.py, README.md"),
        Reply.tool("Read", {"file_path": "app.py"}),
        Reply.text("greet() returns hello."),
        Reply.tool("Read", {"file_path": "app.py"}),
        Reply.tool("Edit", {"file_path": "app.py", "old_string": "def greet():", "new_string": "def greet() -> str:"}),
        Reply.text("Annotated."),
    )
    for prompt in ("hello", "list files", "what does greet do?", "add a return type to greet"):
        result = run_cli("-p", prompt, "--permission-mode", "acceptEdits")
        assert result.returncode == 0 and result.stderr == "", result.stderr
    assert fake_server.requests_for("extract") == [] and len(fake_server.requests_for("main")) == 8
    assert "def greet() -> str:" in (repo / "app.py").read_text()


def test_the_session_end_extracts_a_durable_turn_the_throttle_held(run_cli, fake_server, repo):
    """memory.extractEvery holds a turn at its end; a -p run is a whole session, so it is extracted
    at exit, because it is durable. A trivial one is not."""
    settings(repo, extractEvery=3)
    memdir = paths.memory_dir(repo)
    result = run_cli("-p", "hello")
    assert result.returncode == 0 and result.stderr == "" and fake_server.requests_for("extract") == []
    save_replies(fake_server, memdir)
    result = run_cli("-p", "always run pytest with -x")
    assert result.returncode == 0, result.stderr
    assert "Saved memory: feedback_testing.md — always run pytest with -x" in result.stderr
    assert (memdir / "feedback_testing.md").exists() and len(runs(fake_server)) == 1


def test_main_agent_cannot_save_a_secret_into_memory(run_cli, fake_server, repo):
    settings(repo)
    memdir = paths.memory_dir(repo)
    content = format_memory(
        name="Token",
        description="the deploy token is ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        type="reference",
        body="Use it to deploy.",
    )
    fake_server.on(
        Reply.tool("Write", {"file_path": str(memdir / "reference_token.md"), "content": content}), purpose="main"
    )
    fake_server.on(Reply.text("I could not save it."), purpose="main")
    result = run_cli("-p", "remember the deploy token", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    tool_result = fake_server.requests_for("main")[1].body["messages"][-1]["content"][0]
    assert tool_result["is_error"] and "refused to save a credential (github-pat rule)" in tool_result["content"]
    assert not (memdir / "reference_token.md").exists()
    assert len(fake_server.requests_for("extract")) == 1  # a refused write does not skip extraction


def test_no_extraction_when_auto_memory_is_disabled(run_cli, fake_server, repo):
    settings(repo)
    result = run_cli("-p", "always run pytest with -x", env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"})
    assert result.returncode == 0, result.stderr
    assert fake_server.requests_for("extract") == [] and len(fake_server.requests_for("main")) == 1


def test_repl_batches_held_turns_into_the_durable_turns_run_and_extracts_the_rest_at_exit(
    isolated_env, fake_server, repo
):
    """Turns 1-2 state nothing and wait; the 3rd states a preference: ONE run, carrying turns 1-3.
    The 4th states a schedule but is interrupted (no turn end): /exit extracts it."""
    from tests.e2e.conftest import trust_folder
    from tests.e2e.test_repl import Terminal

    settings(repo)
    trust_folder(isolated_env.home, repo)
    memdir = paths.memory_dir(repo)
    for reply in (
        Reply.text("Hi!"),
        Reply.tool("Glob", {"pattern": "*"}),
        Reply.text("app.py, README.md"),
        Reply.text("Tabs it is."),
        Reply.text("never arrives").hang(),
    ):
        fake_server.on(reply, purpose="main")
    tabs = format_memory(name="Tabs", description="indent with tabs", type="feedback", body="Tabs.")
    deploy = format_memory(name="Deploys", description="deploys happen on Fridays", type="project", body="Fri.")
    for reply in (
        Reply.tool("Write", {"file_path": str(memdir / "feedback_tabs.md"), "content": tabs}),
        Reply.text("Saved."),
        Reply.tool("Write", {"file_path": str(memdir / "project_deploy.md"), "content": deploy}),
        Reply.text("Saved."),
    ):
        fake_server.on(reply, purpose="extract")
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, TERM="xterm")
    term = Terminal([], repo, env)
    try:
        for text, answer in (
            ("hello", "Hi!"),
            ("list files", "app.py, README.md"),
            ("always indent with tabs", "Tabs it is."),
        ):
            term.expect(r"mode: \w+")
            term.submit(text)
            term.expect(answer)
        term.expect("Saved memory: feedback_tabs.md")
        [first] = runs(fake_server)
        typed = [
            b["text"]
            for m in first.body["messages"][:-1]
            if m["role"] == "user"
            for b in m["content"]
            if b.get("type") == "text"
        ]
        assert typed == ["hello", "list files", "always indent with tabs"]
        term.expect(r"mode: \w+")
        term.submit("we deploy on Fridays")
        term.expect("esc to interrupt")
        term.child.sendintr()
        term.expect("Interrupted")
        term.expect(r"mode: \w+")
        term.submit("/exit")
        term.expect("Saving memories from this session")
        assert term.exit_status() == 0
    finally:
        term.child.close(force=True)
    first, last = runs(fake_server)
    assert "from the user's \"we deploy on Fridays" in last.body["messages"][-1]["content"][-1]["text"]
    assert (memdir / "feedback_tabs.md").exists() and (memdir / "project_deploy.md").exists()
