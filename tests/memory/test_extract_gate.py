"""Layer 4's gate (memory/extract/gate.py): which pending turns may hold something durable.

Pure functions over messages: no server, no files. How the extractor batches what the gate
holds: test_extract.py; through the real CLI: tests/e2e/test_extract_e2e.py.
"""

from __future__ import annotations

import pytest

from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.memory.extract.gate import LONG_TEXT_CHARS, assess, count_turns, no_gate, stated_cue


def answered(text: str) -> list[Message]:
    """A turn where the user wrote `text` and the model read a file and answered."""
    read = Message(
        "assistant",
        [ToolUseBlock("t0", "Read", {"file_path": "app.py"}), ToolUseBlock("t1", "Bash", {"command": "ls -la"})],
    )
    results = Message("user", [ToolResultBlock("t0", "def greet(): ..."), ToolResultBlock("t1", "app.py")])
    return [Message.user(text), read, results, Message("assistant", [TextBlock("Done.")])]


NOT_DURABLE = [
    "hello",
    "thanks!",
    "hi there",
    "list files",
    "what does app.py do?",
    "run the tests",
    "show me the README",
    "where is the config loaded?",
    "still there?",
    "explain the cache module",
    "fix the failing test",
    "add a --port flag to the CLI",
    "rename load_cfg to load_config everywhere",
    "summarize what we changed today",
    "thanks, bye",
    "can we run the tests?",
    # Cue words that state nothing here:
    "don't worry about it",  # reassurance, not a rule
    "never mind",
    "nevermind, list the files",  # withdrawing a request
    "why does this test always fail?",  # a question: "always" describes, it does not ask
    "should we use pnpm?",  # a question, not a decision
    "what does this actually do?",  # "actually" mid-sentence is emphasis, not a correction
    "what's wrong with this test?",
    "this fails due to a timeout",
    "It owns the socket",
    "make the dataclass frozen",
    "I am a bit lost here",
    "The function returns None",
    "你好",
    "这个函数做什么？",
]

DURABLE = {
    "always run pytest with -x": "a preference",
    "I prefer pytest over unittest": "a preference",
    "use pnpm, not npm": "a preference",
    "Use tabs for indentation here": "a preference",
    "don't touch the generated files": "a preference",
    "please use ruff for formatting": "a standing instruction",
    "could you use uv instead?": "a standing instruction",  # a question can still ask this
    "from now on, write docstrings": "a standing instruction",
    "no, that's wrong: the port is 8080": "a correction",
    "Actually, the dev server listens on 8080": "a correction",
    "the timeout is wrong": "a correction",
    "we decided to drop Python 3.10": "a decision",
    "let's go with postgres": "a decision",
    "we deploy on Fridays": "a decision",
    "Dana owns the billing service": "a fact about people",
    "check with Bob before merging": "a fact about people",
    "hello, I'm Ana from the infra team": "a fact about people",
    "I'm the backend lead": "a fact about people",
    "the migration is due Friday": "a deadline or schedule",
    "the release freeze starts Monday": "a deadline or schedule",
    "standup is every Monday at 10": "a deadline or schedule",
    "the staging db is at db2.internal": "a reference",
    "is it fine? the api key is in vault now": "a reference",
    "remember that I use helix": "a request to remember",
    "note that staging is flaky": "a request to remember",
    "can you remember that I use helix?": "a request to remember",
    "what does app.py do? we never touch it on Fridays": "a preference",
    # A few Chinese cue words:
    "记住：测试用 pytest -x": "a request to remember",
    "以后都用 pnpm": "a standing instruction",
    "不要改公共接口": "a preference",
    "我们决定用 Postgres": "a decision",
    "部署在周五": "a deadline or schedule",
}


@pytest.mark.parametrize("text", NOT_DURABLE)
def test_a_turn_that_states_nothing_is_not_durable(text):
    decision = assess(answered(text))
    assert not decision.durable, decision.reason
    assert decision.reason.startswith("nothing durable in 1 turn: no preference, correction")


@pytest.mark.parametrize("text", list(DURABLE))
def test_a_turn_that_states_something_is_durable_and_says_what(text):
    decision = assess(answered(text))
    assert decision.durable and decision.reason.startswith(DURABLE[text] + ': "'), decision.reason


def test_the_reason_quotes_the_words_that_matched():
    assert (
        stated_cue("please look at it. Dana owns the billing service, ask her")
        == 'a fact about people: "Dana owns the billing service, ask her"'
    )
    long = "x " * 60 + "we decided to move the billing jobs to the new queue next quarter, " + "y " * 60
    reason = stated_cue(long)
    assert reason is not None and reason.startswith('a decision: "…') and "we decided to move" in reason
    assert reason.endswith('…"') and len(reason) < 100


def test_only_what_the_user_typed_counts():
    """Tool results, reminders and attached files may say "always": the user did not."""
    reminder = "<system-reminder>Always run pytest with -x</system-reminder>"
    messages = [
        Message("user", [TextBlock("list files"), TextBlock(reminder)]),
        Message("assistant", [ToolUseBlock("t0", "Read", {"file_path": "CONTRIBUTING.md"})]),
        Message("user", [ToolResultBlock("t0", "We always deploy on Fridays. Remember it.")]),
    ]
    assert not assess(messages).durable


def test_several_pending_turns_are_judged_together():
    turns = [*answered("hello"), *answered("list files"), *answered("we deploy on Fridays")]
    decision = assess(turns)
    assert decision.durable and "we deploy on Fridays" in decision.reason
    assert count_turns(turns) == 3 and "in 2 turns" in assess(turns[:8]).reason


def test_a_long_message_is_durable_even_without_a_cue():
    text = "Here is the stack trace from the nightly job:\n" + "  at frame\n" * (LONG_TEXT_CHARS // 10)
    decision = assess(answered(text))
    assert decision.durable and "characters typed" in decision.reason
    assert not assess(answered("here is the stack trace:\n" + "  at frame\n" * 20)).durable


def bash(id: str, command: str) -> Message:
    return Message("assistant", [ToolUseBlock(id, "Bash", {"command": command})])


def result(id: str, text: str, error: bool = False) -> Message:
    return Message("user", [ToolResultBlock(id, text, is_error=error)])


def test_a_command_that_failed_then_worked_another_way_is_durable():
    messages = [
        Message.user("run the tests"),
        bash("a", "npm test"),
        result("a", "npm ERR! missing", True),
        bash("b", "pnpm test"),
        result("b", "12 passed"),
        Message("assistant", [TextBlock("ok")]),
    ]
    decision = assess(messages)
    assert decision.durable
    assert decision.reason == 'a failure resolved: "npm test" failed, "pnpm test" worked'


@pytest.mark.parametrize(
    "steps",
    [
        # The same command passing after an edit: the fix is in the code, which git keeps.
        [("bash", "sh run_tests.sh", True), ("edit",), ("bash", "sh run_tests.sh", False)],
        # A different command passing after an edit: still the edit that fixed it.
        [("bash", "pytest tests", True), ("edit",), ("bash", "pytest tests/test_app.py", False)],
        # A lookup that found nothing is no lesson.
        [("bash", "ls build", True), ("bash", "ls dist", False)],
        # A failure nothing resolved.
        [("bash", "make test", True), ("bash", "make check", True)],
        # Two unrelated commands.
        [("bash", "npm test", True), ("bash", "git status", False)],
    ],
)
def test_a_failure_the_code_fixed_or_nothing_resolved_is_not_durable(steps):
    messages = [Message.user("run the tests")]
    for n, step in enumerate(steps):
        if step[0] == "edit":
            messages += [
                Message("assistant", [ToolUseBlock(f"e{n}", "Edit", {"file_path": "app.py"})]),
                result(f"e{n}", "edited"),
            ]
        else:
            messages += [bash(f"b{n}", step[1]), result(f"b{n}", "output", step[2])]
    assert not assess(messages).durable


def test_no_gate_passes_everything():
    assert no_gate(answered("hello")).durable
    assert no_gate([]).reason == "the gate is off (memory.extractGate: false)"
