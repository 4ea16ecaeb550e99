"""interpret: Claude Code's exit-code and JSON-output contract, merged over an event's hooks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from claude_mini.hooks.config import KNOWN_EVENTS, HookCommand
from claude_mini.hooks.output import MAX_CONTEXT_CHARS, HookOutcome, interpret
from claude_mini.hooks.runner import HookRun


def ran(
    stdout: str | dict[str, Any] = "",
    stderr: str = "",
    code: int | None = 0,
    *,
    command: str = "check.sh",
    timed_out: bool = False,
    error: str = "",
) -> HookRun:
    text = json.dumps(stdout) if isinstance(stdout, dict) else stdout
    hook = HookCommand("PreToolUse", "", command, 0.5, "project", ".claude/settings.json")
    return HookRun(hook, code, text, stderr, timed_out=timed_out, error=error)


def pre_tool(decision: str, reason: str = "", **more: Any) -> dict[str, Any]:
    specific = {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
        **more,
    }
    return {"hookSpecificOutput": specific}


@pytest.mark.parametrize("event", ["UserPromptSubmit", "SessionStart", "PreCompact"])
def test_plain_stdout_of_a_success_is_context_where_the_event_takes_it(event: str) -> None:
    assert interpret(event, [ran("ticket ABC-1\n")]).context == ["ticket ABC-1"]


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse", "Stop", "Notification"])
def test_plain_stdout_is_ignored_elsewhere(event: str) -> None:
    outcome = interpret(event, [ran("formatted 3 files\n")])
    assert outcome.context == [] and outcome.errors == [] and not outcome.block


def test_stdout_is_json_only_when_it_starts_and_ends_with_braces() -> None:
    assert interpret("UserPromptSubmit", [ran("{not json\n")]).context == ["{not json"]


def test_json_that_does_not_parse_is_an_error_and_nothing_else() -> None:
    outcome = interpret("UserPromptSubmit", [ran("{bad}\n")])
    assert outcome.context == []
    [line] = outcome.errors
    assert line.startswith("UserPromptSubmit hook `check.sh` printed invalid JSON (")
    assert line.endswith("; its output was ignored")


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "SubagentStop", "PostToolUse", "PreCompact"])
def test_exit_2_blocks_with_stderr_as_the_reason(event: str) -> None:
    outcome = interpret(event, [ran("ignored", "not on main\nsecond line\n", 2)])
    assert outcome.block and outcome.reason == "not on main\nsecond line"
    assert outcome.errors == [] and outcome.context == []


def test_exit_2_on_pre_tool_use_is_a_deny() -> None:
    outcome = interpret("PreToolUse", [ran("", "rm -rf is not allowed", 2), ran(pre_tool("allow", "fine"))])
    assert (outcome.block, outcome.permission, outcome.reason) == (True, "deny", "rm -rf is not allowed")
    assert outcome.permission_reason == "rm -rf is not allowed"


def test_exit_2_takes_the_json_reason_over_stderr_and_blocks_even_beside_allow() -> None:
    outcome = interpret("UserPromptSubmit", [ran({"decision": "block", "reason": "from json"}, "from stderr", 2)])
    assert outcome.reason == "from json"
    outcome = interpret("PreToolUse", [ran(pre_tool("allow", "json says"), "stderr says", 2)])
    assert (outcome.permission, outcome.reason) == ("deny", "json says")


def test_exit_2_without_a_message_still_says_which_hook() -> None:
    outcome = interpret("Stop", [ran("", "", 2, command="./guard.sh")])
    assert outcome.reason == "The Stop hook `./guard.sh` blocked this and gave no reason."


def test_exit_2_of_an_event_that_cannot_block_goes_to_the_user_or_nowhere() -> None:
    outcome = interpret("SessionStart", [ran("", "no calendar\n", 2)])
    assert not outcome.block
    assert outcome.errors == ["SessionStart hook `check.sh` failed (exit 2): no calendar"]
    outcome = interpret("Notification", [ran("", "ignored", 2)])
    assert outcome == interpret("Notification", [])


def test_other_exit_codes_are_one_error_line_with_the_first_stderr_line() -> None:
    outcome = interpret("PreToolUse", [ran("", "\njq: command not found\nmore\n", 1)])
    assert outcome.errors == ["PreToolUse hook `check.sh` failed (exit 1): jq: command not found"]
    assert outcome.permission is None and not outcome.block
    assert interpret("PostToolUse", [ran("", "", -9)]).errors == [
        "PostToolUse hook `check.sh` failed (killed by SIGKILL)"
    ]


def test_valid_json_decides_on_any_exit_but_2_without_an_error() -> None:
    outcome = interpret(
        "UserPromptSubmit",
        [ran({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "CTX"}}, "oops", 1)],
    )
    assert (outcome.context, outcome.errors) == (["CTX"], [])


def test_a_timeout_or_a_failed_start_is_an_error_and_its_output_is_ignored() -> None:
    outcome = interpret(
        "PreToolUse",
        [
            ran(pre_tool("deny", "x"), code=None, timed_out=True),
            ran(code=None, error="No such file or directory: /bin/sh"),
        ],
    )
    assert outcome.permission is None and not outcome.block
    assert outcome.errors == [
        "PreToolUse hook `check.sh` timed out after 0.5 s",
        "PreToolUse hook `check.sh` could not start: No such file or directory: /bin/sh",
    ]


def test_a_long_command_is_cut_in_the_error_line() -> None:
    command = "python3 -c 'import sys\nprint(sys.stdin.read())'  " + "x" * 100
    [line] = interpret("Stop", [ran("", "boom", 1, command=command)]).errors
    shown = line.split("`")[1]
    assert len(shown) == 60 and shown.endswith("…") and "\n" not in shown


def test_continue_false_stops_and_system_messages_are_kept() -> None:
    outcome = interpret(
        "PostToolUse",
        [
            ran({"continue": False, "stopReason": "build broke", "systemMessage": "lint: 2 warnings"}),
            ran({"systemMessage": "second"}),
        ],
    )
    assert (outcome.stop, outcome.stop_reason) == (True, "build broke")
    assert outcome.system_messages == ["lint: 2 warnings", "second"]
    assert not outcome.block


def test_pre_compact_discards_continue_and_system_message() -> None:
    outcome = interpret(
        "PreCompact", [ran({"continue": False, "systemMessage": "x", "decision": "block", "reason": "busy"})]
    )
    assert (outcome.stop, outcome.system_messages, outcome.block, outcome.reason) == (False, [], True, "busy")


@pytest.mark.parametrize("event", ["UserPromptSubmit", "PostToolUse", "Stop", "SubagentStop"])
def test_decision_block_blocks_with_its_reason(event: str) -> None:
    outcome = interpret(event, [ran({"decision": "block", "reason": "run the tests first"})])
    assert outcome.block and outcome.reason == "run the tests first"


def test_decision_block_is_ignored_where_the_event_takes_no_decision() -> None:
    assert not interpret("SessionStart", [ran({"decision": "block", "reason": "no"})]).block


@pytest.mark.parametrize(
    ("decisions", "winner"),
    [
        (["allow", "ask"], "ask"),
        (["ask", "defer"], "defer"),
        (["defer", "deny"], "deny"),
        (["deny", "allow"], "deny"),
        (["allow", "allow"], "allow"),
    ],
)
def test_pre_tool_use_decisions_merge_deny_defer_ask_allow(decisions: list[str], winner: str) -> None:
    runs = [ran(pre_tool(d, f"{d} {i}")) for i, d in enumerate(decisions)]
    outcome = interpret("PreToolUse", runs)
    assert outcome.permission == winner
    assert outcome.permission_reason == "\n".join(f"{d} {i}" for i, d in enumerate(decisions) if d == winner)
    assert outcome.block is (winner == "deny")
    assert outcome.reason == (outcome.permission_reason if winner == "deny" else "")


def test_the_older_approve_and_block_mean_allow_and_deny() -> None:
    assert interpret("PreToolUse", [ran({"decision": "approve", "reason": "ok"})]).permission == "allow"
    outcome = interpret("PreToolUse", [ran({"decision": "block", "reason": "not here"})])
    assert (outcome.permission, outcome.permission_reason, outcome.block) == ("deny", "not here", True)


def test_updated_input_and_context_of_pre_tool_use() -> None:
    outcome = interpret(
        "PreToolUse",
        [
            ran(pre_tool("allow", updatedInput={"command": "ls -la"}, additionalContext="rewrote ls")),
            ran("plain text is not context here"),
        ],
    )
    assert outcome.updated_input == {"command": "ls -la"}
    assert outcome.context == ["rewrote ls"] and outcome.permission == "allow"


def test_every_hooks_context_is_kept_in_hook_order() -> None:
    def ctx(text: str) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}

    outcome = interpret("SessionStart", [ran(ctx("one")), ran("two\n"), ran(ctx("three"))])
    assert outcome.context == ["one", "two", "three"]


def test_additional_context_is_ignored_where_the_event_takes_none() -> None:
    run = ran({"hookSpecificOutput": {"hookEventName": "Notification", "additionalContext": "x"}})
    assert interpret("Notification", [run]).context == []


def test_output_for_another_event_is_an_error_and_ignored() -> None:
    outcome = interpret("UserPromptSubmit", [ran(pre_tool("deny", "x", additionalContext="CTX"))])
    assert outcome.context == [] and not outcome.block
    assert outcome.errors == [
        "UserPromptSubmit hook `check.sh` printed hookSpecificOutput for PreToolUse, "
        "not UserPromptSubmit; its output was ignored"
    ]


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        ({"continue": "no"}, "`continue` is not true or false"),
        ({"decision": "maybe"}, '`decision` is not "approve" or "block"'),
        ({"decision": []}, '`decision` is not "approve" or "block"'),
        ({"decision": {}}, '`decision` is not "approve" or "block"'),
        ({"hookSpecificOutput": None}, "`hookSpecificOutput` is not an object"),
        (pre_tool(["deny"]), "`permissionDecision` is not allow, deny, ask or defer"),  # type: ignore[arg-type]
        (pre_tool({"deny": 1}), "`permissionDecision` is not allow, deny, ask or defer"),  # type: ignore[arg-type]
        (pre_tool("sure"), "`permissionDecision` is not allow, deny, ask or defer"),
        (pre_tool("allow", updatedInput="ls"), "`hookSpecificOutput.updatedInput` is not an object"),
    ],
)
def test_json_of_the_wrong_shape_is_an_error_and_ignored(output: dict[str, Any], problem: str) -> None:
    outcome = interpret("PreToolUse", [ran(output)])
    assert outcome.permission is None and not outcome.stop
    [line] = outcome.errors
    assert problem in line


def test_suppress_output_is_accepted() -> None:
    outcome = interpret("PostToolUse", [ran({"suppressOutput": True})])
    assert outcome == interpret("PostToolUse", [])


def test_long_context_is_cut() -> None:
    [text] = interpret("UserPromptSubmit", [ran("y" * (MAX_CONTEXT_CHARS + 5))]).context
    assert text == "y" * MAX_CONTEXT_CHARS + "\n[... 5 more characters from the hook were cut]"


def test_hook_specific_output_is_refused_on_pre_compact_as_in_claude_code() -> None:
    """Its validation has no PreCompact entry: the hook fails and its block is ignored."""
    output = {"decision": "block", "reason": "busy", "hookSpecificOutput": {"hookEventName": "PreCompact"}}
    outcome = interpret("PreCompact", [ran(output)])
    assert not outcome.block and outcome.context == []
    assert outcome.errors == [
        "PreCompact hook `check.sh` printed hookSpecificOutput, which PreCompact "
        "hooks cannot give; its output was ignored"
    ]


@pytest.mark.parametrize("event", ["Stop", "SubagentStop"])
def test_stop_additional_context_is_feedback_and_the_turn_goes_on(event: str) -> None:
    run = ran({"hookSpecificOutput": {"hookEventName": event, "additionalContext": "the tests still fail"}})
    outcome = interpret(event, [run])
    assert (outcome.block, outcome.reason, outcome.context) == (True, "the tests still fail", [])


_HOSTILE = [
    "null",
    "[]",
    "[1, 2]",
    "0",
    "-1e999",
    '"text"',
    "true",
    "{}",
    "{ }",
    '{"a": NaN}',
    "{" * 5000 + "}" * 5000,
    '{"x": ' + "[" * 5000 + "]" * 5000 + "}",
    *(
        json.dumps({key: value})
        for key in (
            "decision",
            "continue",
            "stopReason",
            "reason",
            "systemMessage",
            "suppressOutput",
            "terminalSequence",
            "hookSpecificOutput",
        )
        for value in (None, [], [1], {}, {"a": 1}, 0, 1.5, True, "", "block", "\ud800")
    ),
    *(
        json.dumps({"hookSpecificOutput": {"hookEventName": name, key: value}})
        for name in ("PreToolUse", "Stop", "PreCompact", None, [], {})
        for key in (
            "permissionDecision",
            "permissionDecisionReason",
            "updatedInput",
            "additionalContext",
            "hookEventName",
        )
        for value in (None, [], ["deny"], {}, {"deny": 1}, 0, True, "", "deny", "\ud800")
    ),
]


@pytest.mark.parametrize("event", KNOWN_EVENTS)
def test_no_hook_output_makes_interpret_raise(event: str) -> None:
    for stdout in _HOSTILE:
        for code in (0, 1, 2):
            assert isinstance(interpret(event, [ran(stdout, stdout, code)]), HookOutcome), stdout[:80]


def test_a_lone_surrogate_in_the_json_reaches_nobody_as_is() -> None:
    outcome = interpret("Stop", [ran('{"decision": "block", "reason": "a\\ud800b", "systemMessage": "\\udc1b"}')])
    assert (outcome.reason, outcome.system_messages) == ("a\ufffdb", ["\ufffd"])
