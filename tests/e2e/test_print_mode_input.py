"""End to end: what `claude-mini -p` sends when the prompt is an argument, stdin, or both,
and how several permission rules follow one flag."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.e2e.conftest import cli_env
from tests.fake_anthropic import Reply

DIFF = 'diff --git a/app.py b/app.py\n-    return "hello"\n+    return "hi"\n'


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
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mini", "-p", "hello"],
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:  # not communicate(): it would close stdin
        proc.wait(timeout=60)  # the output is short: no pipe fills up before the exit
    finally:
        proc.stdin.close()
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.returncode == 0, err
    assert out == "(fake model) You said: hello\n"
    assert err.startswith("claude-mini: nothing arrived on stdin within 3 s; going on with the prompt alone")
    assert user_texts(fake_server.requests_for("main")[0]) == ["hello"]


def bash_result(fake_server) -> dict:
    return fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]


def test_several_rules_follow_one_allowed_tools_flag(run_cli, fake_server, repo):
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", "first commit"],
        cwd=repo,
        check=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "PATH": "/usr/bin:/bin",
        },
    )
    fake_server.queue(
        Reply.tools(
            [
                ("Bash", {"command": "git log --oneline"}),
                ("Bash", {"command": "git diff"}),
                ("Read", {"file_path": "app.py"}),
            ]
        ),
        Reply.text("done"),
    )
    result = run_cli("-p", "what changed?", "--allowedTools", "Bash(git log:*)", "Bash(git diff:*)", "Read")
    assert result.returncode == 0, result.stderr
    log, diff, read = fake_server.requests_for("main")[-1].body["messages"][-1]["content"]
    assert "first commit" in log["content"] and not diff.get("is_error") and 'return "hello"' in read["content"]
    assert user_texts(fake_server.requests_for("main")[0]) == ["what changed?"]


def test_a_prompt_after_the_rules_follows_a_double_dash(run_cli, fake_server):
    fake_server.queue(Reply.tool("Glob", {"pattern": "*.py"}), Reply.text("done"))
    result = run_cli("-p", "--disallowedTools", "Glob", "Grep", "--", "find the python files")
    assert result.returncode == 0, result.stderr
    assert user_texts(fake_server.requests_for("main")[0]) == ["find the python files"]
    denied = bash_result(fake_server)
    assert denied["is_error"] and "app.py" not in denied["content"]


def test_a_prompt_taken_as_a_rule_is_named(run_cli, fake_server):
    result = run_cli("-p", "--allowedTools", "Read", "fix the bug")
    assert result.returncode == 2 and fake_server.requests_for("main") == []
    assert result.stderr == (
        'claude-mini: "fix the bug" was read as a rule of --allowedTools, not as the '
        "prompt: put the prompt before --allowedTools or after --.\n"
    )
    fake_server.queue(Reply.text("ok"))
    result = run_cli("-p", "--allowedTools", "Edit Write", "fix the bug", input="it is in app.py")
    assert result.returncode == 0 and "was read as a rule" in result.stderr  # said, and stdin is the prompt
    assert "Edit Write" not in result.stderr  # a space-separated list of rules is not a prompt
    result = run_cli("-p", "--allowedTools", "Read", "summarize")  # one word: named too
    assert result.returncode == 2 and result.stderr.startswith('claude-mini: "summarize" was read as a rule')


@pytest.mark.parametrize("io_env", [{"LC_ALL": "C.UTF-8"}, {"PYTHONIOENCODING": "utf-8:strict"}])
def test_text_that_is_not_utf8_is_sent_with_replacement_characters(isolated_env, fake_server, repo, io_env):
    """Piped bytes and an argument that are not UTF-8 (a Latin-1 file, a mangled argv)."""
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, **io_env)
    result = subprocess.run(
        [sys.executable, "-m", "claude_mini", "-p", os.fsdecode(b"review caf\xe9")],
        cwd=repo,
        env=env,
        input=b"caf\xe9 cr\xe8me\n",
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert user_texts(fake_server.requests_for("main")[0]) == ["review caf\ufffd\ncaf\ufffd cr\ufffdme"]
