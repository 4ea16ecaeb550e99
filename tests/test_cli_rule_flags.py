"""`--allowedTools A B` takes every word up to the next flag, as Claude Code's variadic flags do."""

import pytest

from claude_mini.cli import _misread_prompts, spread_rule_flags


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--allowedTools", "A", "B", "-p", "hi"], ["--allowedTools", "A", "--allowedTools", "B", "-p", "hi"]),
        (
            ["-p", "hi", "--disallowed-tools", "A", "B"],
            ["-p", "hi", "--disallowed-tools", "A", "--disallowed-tools", "B"],
        ),
        (["--allowedTools", "A", "--", "B"], ["--allowedTools", "A", "--", "B"]),
        (
            ["--allowedTools", "A", "--disallowedTools", "B", "C"],
            ["--allowedTools", "A", "--disallowedTools", "B", "--disallowedTools", "C"],
        ),
        (["--allowedTools=A", "B"], ["--allowedTools=A", "B"]),  # the = form takes one value
        (["--allowedTools", "-p"], ["--allowedTools", "-p"]),  # no value: click says so
        (["--model", "m", "--", "--allowedTools", "A", "B"], ["--model", "m", "--", "--allowedTools", "A", "B"]),
    ],
)
def test_rule_flags_take_every_word_up_to_the_next_flag(args, expected):
    assert spread_rule_flags(args) == expected


@pytest.mark.parametrize(
    ("values", "named"),
    [
        (["Read", "Bash(git log:*)", "Edit Write", "mcp__github__get_issue", "WebFetch(domain:example.com)"], []),
        (["Read", "hello"], ["hello"]),  # the REPL's `--allowedTools Read hello`: one word is a prompt too
        (["fix the bug"], ["fix the bug"]),
        (["Read,summarize"], ["Read,summarize"]),
    ],
)
def test_a_value_not_shaped_like_a_rule_is_named_as_a_misread_prompt(values, named):
    lines = _misread_prompts("--allowedTools", values)
    assert [line.split('"')[1] for line in lines] == named
