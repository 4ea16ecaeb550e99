"""End to end: what `claude-mini -p` sends when the prompt is an argument, stdin, or both
(issue 15 item 1), and how several permission rules follow one flag (item 4)."""

from __future__ import annotations

import subprocess
import sys

from fake_anthropic import Reply

from tests.e2e.conftest import cli_env

DIFF = "diff --git a/app.py b/app.py\n-    return \"hello\"\n+    return \"hi\"\n"


def user_texts(request) -> list[str]:
    """The text blocks the user's first message carried."""
    content = request.body["messages"][0]["content"]
    return [b["text"] for b in content if b["type"] == "text"]


def test_a_prompt_and_piped_text_are_both_sent_prompt_first(run_cli, fake_server):
    fake_server.queue(Reply.text("Looks fine."))
    result = run_cli("-p", "review this diff", input=DIFF)
    assert result.returncode == 0, result.stderr
    assert user_texts(fake_server.requests_for("main")[0]) == ["review this diff\n" + DIFF.rstrip()]


def test_an_empty_stdin_adds_nothing(run_cli, fake_server):
    for stdin in ("", None, "\n\n"):  # a closed pipe, /dev/null (run_cli's default), blank lines
        fake_server.clear_requests()
        result = run_cli("-p", "hello", input=stdin)
        assert result.returncode == 0 and result.stderr == "", result.stderr
        assert user_texts(fake_server.requests_for("main")[0]) == ["hello"]


def test_a_silent_open_pipe_is_not_waited_for(isolated_env, fake_server, repo):
    """Stdin is a pipe that stays open and never sends (a CI runner's): the run goes on alone.
    A real process: the fork server gives a run /dev/null or a pipe it closes after the input."""
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url)
    proc = subprocess.Popen([sys.executable, "-m", "claude_mini", "-p", "hello"], cwd=repo, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:  # not communicate(): it would close stdin
        proc.wait(timeout=60)  # the output is short: no pipe fills up before the exit
    finally:
        proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.returncode == 0, err
    assert out == "(fake model) You said: hello\n"
    assert err.startswith("claude-mini: nothing arrived on stdin within 3 s; going on with the prompt alone")
    assert user_texts(fake_server.requests_for("main")[0]) == ["hello"]
