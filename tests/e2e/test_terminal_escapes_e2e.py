"""End to end: escape sequences from the model and from tools are shown, never obeyed.

The model answers with escape sequences and asks for a Bash command and a Read
whose results hold them. The model must still get the raw bytes (its tools are
not censored), while nothing printed carries a raw ESC, C1 or bidi control.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import cli_env, json_lines
from tests.e2e.test_repl import Terminal
from tests.fake_anthropic import Reply

RAW = ("\x1b", "\x9b", "\x9d", "\u202e", "\x07", "\x08")
ANSWER = (
    "Done.\x1b[2J\x1b[H Copied \x1b]52;c;cm0gLXJmIH4=\x07 and titled \x1b]0;PWNED\x1b\\ "
    "with \x9b2J and \u202eevil\u2069 and a\bb."
)
FILE = "line one\n\x1b]52;c;ZXZpbA==\x07\x1b[1A\x1b[2Kline two\n\x9b31mred\n"


def tool_results(fake_server) -> list[dict]:
    """Every tool_result block the main agent was sent, in order."""
    blocks = []
    for message in fake_server.requests_for("main")[-1].body["messages"]:
        if isinstance(message["content"], list):
            blocks += [b for b in message["content"] if b.get("type") == "tool_result"]
    return blocks


def result_text(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def queue_hostile_turn(fake_server, repo) -> None:
    (repo / "evil.txt").write_text(FILE)
    fake_server.queue(
        Reply.tool("Bash", {"command": r"printf 'out\033]0;PWNED\007 \033[2K\233Hdone\n'"}),
        Reply.tool("Read", {"file_path": "evil.txt"}),
        Reply.text(ANSWER),
    )


def test_text_output_shows_escapes_from_the_model_and_from_tools(run_cli, fake_server, repo):
    queue_hostile_turn(fake_server, repo)
    result = run_cli("-p", "show me", "--allowedTools", "Bash")
    assert result.returncode == 0, result.stderr
    bash, read = tool_results(fake_server)
    assert "\x1b]0;PWNED\x07" in result_text(bash)  # the model gets the real output
    assert "\x1b]52;c;ZXZpbA==\x07" in result_text(read)
    for raw in RAW:
        assert raw not in result.stdout and raw not in result.stderr
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in result.stdout
    assert "\\x9b2J and \\u202eevil\\u2069 and a\\x08b." in result.stdout


def test_json_outputs_escape_controls_and_keep_the_exact_text(run_cli, fake_server, repo):
    for output_format in ("json", "stream-json"):
        queue_hostile_turn(fake_server, repo)
        result = run_cli("-p", "show me", "--allowedTools", "Bash", "--output-format", output_format)
        assert result.returncode == 0, result.stderr
        for raw in RAW:
            assert raw not in result.stdout
        lines = json_lines(result.stdout)
        assert lines[-1]["result"] == ANSWER
        if output_format == "stream-json":
            users = [line for line in lines if line["type"] == "user"]
            contents = [
                block.get("content")
                for line in users
                for block in line["message"]["content"]
                if isinstance(block, dict) and block.get("type") == "tool_result"
            ]
            assert any("\x9b31mred" in str(c) for c in contents)  # escaped in JSON, exact once parsed


@pytest.mark.usefixtures("no_sandbox")
def test_the_repl_approval_prompt_shows_the_real_command(isolated_env, fake_server, repo):
    hostile = "rm -f README.md #\r\x1b[2K\x1b]0;PWNED\x07ls -la \x1b]52;c;eA==\x07\x9b1A"
    fake_server.on(Reply.tool("Bash", {"command": hostile}), purpose="main")
    env = cli_env(
        isolated_env.home, isolated_env.managed, fake_server.base_url, TERM="xterm", CLAUDE_MINI_DISABLE_AUTO_MEMORY="1"
    )
    term = Terminal(["--trust-folder"], repo, env)
    try:
        term.ready()
        term.submit("list files")
        term.expect("Run this command")
        term.expect("don't ask again")
        term.child.send("3")
        term.expect("Declined: the turn stopped")
        screen = term.output.getvalue()
    finally:
        term.child.close(force=True)
    assert (repo / "README.md").exists()
    assert "rm -f README.md #\\r\\x1b[2K\\x1b]0;PWNED\\x07ls -la" in screen
    for raw in ("\x1b]0;PWNED", "\x1b]52", "\x9b", "\r\x1b[2K\x1b]"):
        assert raw not in screen
