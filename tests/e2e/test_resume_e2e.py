"""End to end: resuming sessions (-r with an id prefix, -c, /resume) and transcripts that were cut
short or could not be written, through the real CLI against the fake server."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from claude_mini.llm.messages import Message, TextBlock, Usage
from claude_mini.session import Session
from tests.e2e.conftest import cli_env, trust_folder
from tests.e2e.test_repl import Terminal
from tests.fake_anthropic import Reply


def saved_session(repo: Path, session_id: str, *exchanges: tuple[str, str], when: float | None = None) -> Session:
    """A session on disk as an earlier run would have left it, one main request costed per answer."""
    session = Session(repo, session_id)
    for request, answer in exchanges:
        session.add_message(Message.user(request))
        session.add_message(Message("assistant", [TextBlock(answer)]))
        session.costs.add("main", "claude-sonnet-4-6", Usage(input_tokens=1000, output_tokens=100))
    if when is not None:
        os.utime(session.transcript.path, (when, when))
    return session


def sent_texts(fake_server) -> list[str]:
    messages = fake_server.requests_for("main")[-1].body["messages"]
    return [b["text"] for m in messages for b in m["content"] if b["type"] == "text"]


def test_resume_takes_an_unambiguous_id_prefix(run_cli, fake_server, repo):
    saved_session(repo, "1234abcd-0000-4000-8000-000000000001", ("about apples", "Apples."))
    saved_session(repo, "12ff0000-0000-4000-8000-000000000002", ("about pears", "Pears."))
    fake_server.queue(Reply.text("Back to apples."))
    result = run_cli("-r", "1234", "-p", "go on")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Back to apples."
    assert sent_texts(fake_server) == ["about apples", "Apples.", "go on"]

    ambiguous = run_cli("-r", "12", "-p", "go on")
    assert ambiguous.returncode == 1
    [line] = ambiguous.stderr.splitlines()
    assert line.startswith("claude-mini: '12' matches 2 sessions")
    assert "1234abcd-0000-4000-8000-000000000001" in line and "12ff0000-0000-4000-8000-000000000002" in line

    missing = run_cli("-r", "99", "-p", "go on")
    assert missing.returncode == 1
    assert missing.stderr.splitlines() == [
        "claude-mini: No session 99 in this directory. Type /resume in claude-mini to list its sessions, "
        "or run `claude-mini -c` for the latest one."
    ]


def test_a_cut_last_line_loses_nothing_after_it(run_cli, fake_server, repo, isolated_env):
    fake_server.queue(Reply.text("First answer."))
    assert run_cli("-p", "first question").returncode == 0
    [transcript] = isolated_env.home.glob("projects/*/*.jsonl")
    with transcript.open("a") as fh:
        fh.write('{"type": "system", "subtype": "cost", "usa')  # the process died mid-write
    fake_server.queue(Reply.text("Second answer."))
    second = run_cli("-c", "-p", "what was the second question?")  # trivial: no memory saving line
    assert second.returncode == 0, second.stderr
    assert second.stderr.splitlines() == [
        f"claude-mini: Skipped 1 unreadable line of the transcript {transcript}; "
        "resumed the 2 messages that could be read."
    ]
    fake_server.queue(Reply.text("Third answer."))
    third = run_cli("-c", "-p", "third question")
    assert third.returncode == 0, third.stderr
    assert sent_texts(fake_server) == [
        "first question",
        "First answer.",
        "what was the second question?",
        "Second answer.",
        "third question",
    ]


def test_costs_of_earlier_runs_count_after_continue(run_cli, fake_server):
    first = json.loads(run_cli("-p", "hello", "--output-format", "json").stdout)
    second = json.loads(run_cli("-c", "-p", "again", "--output-format", "json").stdout)
    assert first["session_id"] == second["session_id"]
    assert second["total_cost_usd"] > first["total_cost_usd"] > 0
    third = json.loads(run_cli("-c", "-p", "more", "--output-format", "json").stdout)
    assert third["total_cost_usd"] > second["total_cost_usd"]


def _small_files() -> None:
    """In the child: files may not grow past 1,000 bytes, as on a disk that is full (Python ignores
    SIGXFSZ, so the write fails with EFBIG)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))


def test_a_full_disk_gives_one_warning_the_run_goes_on_and_continue_resumes_what_was_saved(
    run_cli, isolated_env, fake_server, repo
):
    answer = "A long answer. " * 120  # its entry grows the transcript past the limit
    fake_server.queue(Reply.tools([("Read", {"file_path": "README.md"})], text=answer), Reply.text("Read it."))
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, CLAUDE_MINI_DISABLE_AUTO_MEMORY="1")
    full = subprocess.run(
        [sys.executable, "-m", "claude_mini", "-p", "read the readme"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_small_files,
    )
    assert full.returncode == 0, full.stderr
    assert full.stdout.strip().endswith("Read it.")
    [transcript] = isolated_env.home.glob("projects/*/*.jsonl")
    assert full.stderr.splitlines() == [
        f"claude-mini: Could not write the transcript {transcript}: File too large. The session goes on, "
        "but nothing more of it is saved (a resume gets it up to here)."
    ]
    assert sent_texts(fake_server) == ["read the readme", answer]  # the turn went on after the failure

    fake_server.queue(Reply.text("Resumed."))
    resumed = run_cli("-c", "-p", "what did you read?")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.splitlines() == [
        f"claude-mini: Skipped 1 unreadable line of the transcript {transcript}; "
        "resumed the 1 message that could be read."
    ]  # the answer's entry, cut at the limit
    assert sent_texts(fake_server) == ["read the readme", "what did you read?"]


def test_the_repl_redraws_a_resumed_session_finds_any_by_prefix_and_shows_its_cost(isolated_env, fake_server, repo):
    for i in range(22):  # newer than the one resumed by prefix: it is not among the 20 listed
        saved_session(repo, f"f{i:02d}00000-0000-4000-8000-000000000000", (f"filler {i}", "ok"), when=1_700_000_000 - i)
    saved_session(
        repo,
        "0ld5e551-0000-4000-8000-000000000000",
        ("about apples", "Apples are red."),
        ("about pears", "Pears are\ngreen\nand\nsweet\nin autumn."),
        when=1_600_000_000,
    )
    saved_session(repo, "5a1e0000-0000-4000-8000-000000000000", ("the latest question", "The latest answer."))
    trust_folder(isolated_env.home, repo)
    env = cli_env(
        isolated_env.home, isolated_env.managed, fake_server.base_url, TERM="xterm", CLAUDE_MINI_DISABLE_AUTO_MEMORY="1"
    )
    term = Terminal(["-c"], repo, env)
    try:
        term.expect(r"Resumed session 5a1e0000-0000-4000-8000-000000000000 \(2 messages\)\.")
        term.expect(r"> the latest question\s+● The latest answer\.")
        term.ready()
        term.submit("/resume 0ld5")
        term.expect(r"Resumed session 0ld5e551-0000-4000-8000-000000000000 \(4 messages\)\.")
        term.expect(r"> about apples\s+● Apples are red\.\s+> about pears\s+● Pears are\s+green\s+and\s+… \+2 lines")
        term.ready()
        term.submit("/cost")
        term.expect(r"main\s+2\s+2,000")  # the two answers of the earlier runs
        term.ready()
        term.submit("and plums?")
        term.expect("You said: and plums?")
    finally:
        term.child.close(force=True)
    assert sent_texts(fake_server)[:5] == [
        "about apples",
        "Apples are red.",
        "about pears",
        "Pears are\ngreen\nand\nsweet\nin autumn.",
        "and plums?",
    ]
