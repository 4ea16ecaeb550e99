"""End to end: compaction's working state through the real REPL and the fake server.

The fake model runs real Bash commands and a Write in the repository; after `/compact` the first
request must carry, beside the summary, the checkpoint of what happened: the commands with their
outcomes, the approach that failed and was never fixed, the files written, the user's words. The
assertions read the attachment's first line and the facts, not the layout of its sections.
"""

from __future__ import annotations

from tests.e2e.test_repl import main_replies, start, wait_until  # noqa: F401 (start is a fixture)
from tests.fake_anthropic import Reply

HEADER = "Working state before this summary (taken from the conversation, not written by a model):"
SUMMARY = "<summary>SUMMARY-TEXT: the user is setting up the build.</summary>"
BUILT = "echo built-ok"
FAILING = "python3 -c 'import sys; print(\"BOOM-FAILED\"); sys.exit(3)'"  # fails every time
FLAG = "test -f ready.flag"  # fails, then succeeds once ready.flag is written: not a failed approach
SECOND = "echo second-stretch"


def bash(command: str) -> Reply:
    return Reply.tool("Bash", {"command": command, "description": "run it"})


def first_turn(fake_server) -> None:
    main_replies(
        fake_server,
        bash(BUILT),
        bash(FAILING),
        bash(FLAG),
        Reply.tool("Write", {"file_path": "ready.flag", "content": "ok\n"}),
        bash(FLAG),
        Reply.text("Set up, except the BOOM step."),
    )


def checkpoint_in(body: dict) -> str:
    """The text of the one checkpoint attached in this request's messages (asserts there is one)."""
    texts = [
        block["text"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text" and HEADER in block["text"]
    ]
    assert len(texts) == 1, f"{len(texts)} checkpoints attached"
    text = texts[0].removeprefix("<system-reminder>").strip()
    assert text.startswith(HEADER)
    return text


def assert_first_stretch(checkpoint: str) -> None:
    """The facts of the first turn: the request, each command once, the failure (with its output)
    mentioned more often than the commands that ended well (it is also listed as failed)."""
    assert "set up the build and write ready.flag" in checkpoint
    assert checkpoint.count(BUILT) == 1 and checkpoint.count(FLAG) == 1
    assert checkpoint.count(FAILING) > 1 and "BOOM-FAILED" in checkpoint
    assert "ready.flag" in checkpoint.replace(FLAG, "")  # the file written, not only the command


def test_repl_compact_attaches_the_checkpoint_and_a_second_compaction_merges_it(start, fake_server, repo):  # noqa: F811
    first_turn(fake_server)
    main_replies(fake_server, bash(SECOND), bash(BUILT), Reply.text("Went on."), Reply.text("Nothing left."))
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    term = start("--allowedTools", "Bash", "Write")
    term.ready()
    term.submit("set up the build and write ready.flag")
    term.expect("Set up, except the BOOM step.")
    assert (repo / "ready.flag").exists()  # the commands and the Write really ran
    term.ready()
    term.submit("/compact")
    term.expect("Compacted")
    term.ready()
    term.submit("go on with the second stretch")
    term.expect("Went on.")
    wait_until(lambda: len(fake_server.requests_for("main")) == 9)
    after_first = fake_server.requests_for("main")[6].body  # the first request after /compact
    assert "SUMMARY-TEXT" in str(after_first["messages"][0])
    assert_first_stretch(checkpoint_in(after_first))

    term.ready()
    term.submit("/compact")
    term.expect("Compacted")
    term.ready()
    term.submit("anything left?")
    term.expect("Nothing left.")
    wait_until(lambda: len(fake_server.requests_for("main")) == 10)
    merged = checkpoint_in(fake_server.requests_for("main")[9].body)
    assert_first_stretch(merged)  # nothing from before the first summary is lost, nothing is twice
    assert merged.count(SECOND) == 1 and "go on with the second stretch" in merged
    assert merged.count("set up the build and write ready.flag") == 1
    assert len(fake_server.requests_for("compact")) == 2


def test_compact_show_prints_it_and_compact_with_instructions_still_attaches_it(start, fake_server):  # noqa: F811
    first_turn(fake_server)
    main_replies(fake_server, Reply.text("Going on."))
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    term = start("--allowedTools", "Bash", "Write")
    term.ready()
    term.submit("set up the build and write ready.flag")
    term.expect("Set up, except the BOOM step.")
    term.ready()
    term.submit("/compact --show")
    term.expect(r"Working state before this summary \(taken from the conversation, not written by a model\):")
    term.expect("BOOM-FAILED")
    term.expect(r"tokens; a compaction now would attach this")
    assert fake_server.requests_for("compact") == []  # --show only prints
    term.ready()
    term.submit("/compact focus on the BOOM step")
    term.expect("Compacted")
    [summary_request] = fake_server.requests_for("compact")
    assert "focus on the BOOM step" in summary_request.body["messages"][-1]["content"][-1]["text"]
    term.ready()
    term.submit("what now?")
    term.expect("Going on.")
    wait_until(lambda: len(fake_server.requests_for("main")) == 7)
    assert_first_stretch(checkpoint_in(fake_server.requests_for("main")[6].body))
