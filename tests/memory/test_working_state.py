"""The working state (memory/compact/working_state.py): built exactly from the conversation, merged
across compactions, cut within its budget, kept in the transcript for a resume."""

from __future__ import annotations

import json
from pathlib import Path

from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.memory.compact.working_state import (
    HEADER,
    CommandRun,
    WorkingState,
    build_working_state,
    recorded_working_state,
    render_working_state,
    turn_errors,
)

_ids = iter(range(10_000))


def bash(command: str, output: str, *, code: int = 0) -> list[Message]:
    """A Bash call and its result as the Bash tool words them."""
    call_id = f"t{next(_ids)}"
    text = output + (f"\n\nExit code {code}" if code else "")
    return [
        Message("assistant", [ToolUseBlock(call_id, "Bash", {"command": command})]),
        Message("user", [ToolResultBlock(call_id, text, is_error=bool(code))]),
    ]


def tool(name: str, input: dict, result: str, *, error: bool = False) -> list[Message]:
    call_id = f"t{next(_ids)}"
    return [
        Message("assistant", [ToolUseBlock(call_id, name, input)]),
        Message("user", [ToolResultBlock(call_id, result, is_error=error)]),
    ]


def user(text: str) -> Message:
    return Message("user", [TextBlock(text), TextBlock("<system-reminder>\nrecalled memory\n</system-reminder>")])


def test_requests_commands_failures_and_files_are_taken_exactly():
    messages = [
        user("Fix the date parser; always run tests with -x."),
        *bash("pytest tests/test_dates.py -x", "F\nE   ValueError: bad date", code=1),
        *bash("python3 -m venv .venv", "", code=0),
        *bash("make lint", "make: *** No rule to make target 'lint'.", code=2),
        *tool(
            "Write",
            {"file_path": "/r/dates.py", "content": "x\ny\n"},
            "File created successfully at: /r/dates.py (2 lines)",
        ),
        *tool("Edit", {"file_path": "/r/app.py", "old_string": "a", "new_string": "b"}, "Edited /r/app.py"),
        *bash("rm -f /r/old.py", ""),
        *bash("pytest tests/test_dates.py -x -q", "1 passed"),
        user("Now also handle time zones."),
    ]
    cp = build_working_state(messages)
    assert cp.requests == ["Fix the date parser; always run tests with -x.", "Now also handle time zones."]
    codes = {r.command: r.exit_code for r in cp.commands}
    assert codes == {
        "pytest tests/test_dates.py -x": 1,
        "python3 -m venv .venv": 0,
        "make lint": 2,
        "rm -f /r/old.py": 0,
        "pytest tests/test_dates.py -x -q": 0,
    }
    assert [r.command for r in cp.failed] == ["make lint"]  # pytest failed, then passed: not a failed approach
    assert {p: (c.action, c.lines) for p, c in cp.files.items()} == {
        "/r/dates.py": ("created", 2),
        "/r/app.py": ("edited", None),
        "/r/old.py": ("removed", None),
    }
    text = render_working_state(cp)
    assert text.startswith(HEADER)
    assert "`make lint` → exit 2: make: *** No rule to make target 'lint'." in text
    assert "always run tests with -x" in text and "/r/dates.py: created (2 lines)" in text


def test_the_same_kind_of_command_is_its_program_and_first_argument():
    assert CommandRun("FOO=1 pytest tests/a.py -x", 1, "").kind == "pytest tests/a.py"
    assert CommandRun("python3 -m pytest -q", 1, "").kind == "python3 pytest"
    assert CommandRun("python3 -c 'print(1)'", 0, "").kind != CommandRun("python3 -m pytest", 1, "").kind
    failed = build_working_state(
        [*bash("python3 -m pytest -q", "no tests ran", code=5), *bash("python3 -c 'print(1)'", "1")]
    ).failed
    assert [r.command for r in failed] == ["python3 -m pytest -q"]


def test_a_failures_outcome_is_the_line_that_names_the_error():
    [run] = build_working_state(
        bash(
            "git push",
            "fatal: 'origin' does not appear to be a git repository\n"
            "Please make sure you have the correct access rights\n"
            "and the repository exists.",
            code=128,
        )
    ).commands
    assert run.outcome.startswith("fatal: 'origin' does not appear")


def test_a_compaction_summary_and_attachments_are_not_requests():
    messages = [
        Message("user", [TextBlock("This session continues an earlier conversation that ran out of context.")]),
        Message(
            "user", [TextBlock("<system-reminder>\nThe user's most recent request, verbatim:\nx\n</system-reminder>")]
        ),
        Message("user", [TextBlock("[Request interrupted by user]")]),
    ]
    assert build_working_state(messages).requests == []


def test_a_long_request_is_cut_with_a_pointer_to_the_transcript():
    cp = build_working_state([user("word " * 400)], transcript="/home/me/t.jsonl")
    assert len(cp.requests[0]) < 800 and "the whole request is in /home/me/t.jsonl the transcript" in cp.requests[0]


def test_a_second_compaction_merges_without_duplicating():
    first = build_working_state([user("Build it."), *bash("make", "ok"), *bash("make test", "boom", code=1)])
    second = build_working_state([user("Go on."), *bash("make", "ok again"), *bash("ls", "a b")])
    merged = first.merged(second)
    assert merged.requests == ["Build it.", "Go on."]
    assert [r.command for r in merged.commands] == ["make test", "make", "ls"]
    assert [r.command for r in merged.failed] == ["make test"]
    text = render_working_state(merged)
    assert text.count("`make` →") == 1 and text.count("`make test` →") == 2  # once as run, once as failed


def test_the_budget_cuts_old_commands_first_and_keeps_every_request_and_failure():
    messages = [user(f"Request {i}.") for i in range(20)]
    for i in range(200):
        messages += bash(f"grep -rn needle{i} src/", "src/a.py:1: needle " + "x" * 80)
    messages += bash("cargo build", "error[E0425]: cannot find value", code=101)
    text = render_working_state(build_working_state(messages), budget_tokens=1_500)
    assert len(text) <= 1_500 * 4 + 200
    assert all(f"Request {i}." in text for i in range(20))
    assert "`cargo build` → exit 101" in text
    assert "grep -rn needle199" in text and "grep -rn needle0 " not in text
    assert "older ones left out to fit the checkpoint's budget" in text


def test_the_transcript_keeps_the_checkpoint_and_the_turn_errors(tmp_path: Path):
    cp = WorkingState(requests=["Do it."], commands=[CommandRun("make", 2, "boom")], memories=["feedback_tests"])
    from dataclasses import asdict

    transcript = tmp_path / "s.jsonl"
    transcript.write_text(
        "\n".join(
            json.dumps(e)
            for e in [
                {"type": "system", "subtype": "error", "message": "The model is overloaded."},
                {"type": "system", "subtype": "checkpoint", "checkpoint": asdict(cp)},
                "not json",
            ]
        )
        + "\n{broken\n"
    )
    assert recorded_working_state(transcript) == cp
    assert turn_errors(transcript) == ["The model is overloaded."]
    assert recorded_working_state(tmp_path / "missing.jsonl") is None


def test_a_hand_edited_checkpoint_in_the_transcript_is_ignored_not_a_crash(tmp_path: Path):
    transcript = tmp_path / "s.jsonl"
    for bad in (
        {"commands": [{"command": ["x"], "exit_code": 1, "outcome": ""}]},
        {"commands": [{"command": 5, "exit_code": 1, "outcome": ""}]},
        {"requests": "hello"},
        {"files": {"a": {"path": "a", "action": 3}}},
    ):
        transcript.write_text(json.dumps({"type": "system", "subtype": "checkpoint", "checkpoint": bad}) + "\n")
        assert recorded_working_state(transcript) is None


def test_a_tight_budget_keeps_the_failed_approaches_before_old_requests():
    messages = [user(f"Request {i}: " + "word " * 100) for i in range(40)]
    messages += bash("make deploy", "error: no target", code=2)
    text = render_working_state(build_working_state(messages), budget_tokens=2_000)
    assert "`make deploy` → exit 2" in text and "Request 39:" in text
    assert "older ones left out" in text


def test_a_success_whose_output_ends_like_an_exit_code_is_still_a_success():
    [run] = build_working_state(bash("cat notes.txt", "the last line reads\nExit code 3")).commands
    assert run.exit_code == 0


def test_nothing_to_keep_renders_nothing():
    assert render_working_state(WorkingState()) == ""


def test_a_resumed_session_merges_the_checkpoint_its_transcript_kept(repo, fake_server, monkeypatch):
    """Compact, resume from the transcript, compact again: the commands from before the resume stay."""
    import asyncio

    from claude_mini.config import load_config
    from claude_mini.llm.anthropic_client import AnthropicClient
    from claude_mini.runtime import build_runtime
    from claude_mini.session import resume_session
    from tests.fake_anthropic import Reply

    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    fake_server.on(Reply.text("<summary>SUMMARY</summary>"), purpose="compact", times=None)
    fake_server.queue(Reply.tool("Bash", {"command": "false"}), Reply.text("It failed."), Reply.text("Next."))

    async def session(resume: str | None, *turns: str):
        client = AnthropicClient(base_url=fake_server.base_url, api_key="test")
        config = load_config(repo)
        runtime = build_runtime(config, client=client, session=resume_session(repo, resume) if resume else None)
        try:
            await runtime.start(source="resume" if resume else "startup", dream=False)
            for text in turns:
                async for _ in runtime.agent.run(text):
                    pass
            await runtime.compactor.compact()
            return runtime.session.id, runtime.session.messages[0].text
        finally:
            await runtime.close()

    session_id, first = asyncio.run(session(None, "try the build, never touch migrations/"))
    assert "`false` → exit 1" in first and "never touch migrations/" in first
    _, second = asyncio.run(session(session_id, "go on"))
    assert second.count("`false` → exit 1") == 2  # once in Commands, once in Failed approaches: not more
    assert "never touch migrations/" in second and "go on" in second
