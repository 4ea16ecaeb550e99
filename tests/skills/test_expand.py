"""Argument substitution and `!` shell snippets in command and skill bodies."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from claude_mini.skills.expand import (
    ExpansionError,
    expand_body,
    shell_snippets,
    substitute_arguments,
)

ARGS = "\"Alice Smith\" 'b c' d"


@pytest.mark.parametrize(
    ("body", "args", "want"),
    [
        ("Hi $ARGUMENTS!", ARGS, f"Hi {ARGS}!"),  # raw, quotes kept
        ("$0|$1|$2", ARGS, "Alice Smith|b c|d"),  # 0-based, shell-split (Claude Code's current docs)
        ("$ARGUMENTS[0]|$ARGUMENTS[2]", ARGS, "Alice Smith|d"),  # 0-based
        ("$3 $ARGUMENTS[3]", ARGS, "$3 $ARGUMENTS[3]"),  # out of range: literal
        ("$0 and $10", "a", "a and $10"),  # $10 is not $1 then "0"
        ("w-$1xl w-$1. $1_a", "a b", "w-$1xl w-b. $1_a"),  # before a word character: text
        (r"\$0 costs \$ARGUMENTS but $0", "x", "$0 costs $ARGUMENTS but x"),  # \$ escapes
        (r"C:\path \$HOME", "", r"C:\path \$HOME"),  # a \ before anything else stays
        ("No placeholder", "some args", "No placeholder\n\nARGUMENTS: some args"),
        ("No placeholder", "", "No placeholder"),
        (r"Only \$0 escaped", "a", "Only $0 escaped\n\nARGUMENTS: a"),
        ("$ARGUMENTS_X $ARGUMENTSX", "a", "$ARGUMENTS_X $ARGUMENTSX\n\nARGUMENTS: a"),
        ("[$ARGUMENTS]", "", "[]"),  # a placeholder with no args: empty
        ("$0 and $1", 'unbalanced "quote', 'unbalanced and "quote'),  # shlex refuses: split on spaces
        ("$0", "$2 $ARGUMENTS", "$2"),  # one pass: arguments are not re-read
    ],
)
def test_substitute_arguments(body, args, want):
    assert substitute_arguments(body, args) == want


def test_skill_dir_and_session_id():
    body = "Run ${CLAUDE_SKILL_DIR}/x.py in ${CLAUDE_SESSION_ID} \\${CLAUDE_SKILL_DIR}"
    assert substitute_arguments(body, "", skill_dir=Path("/s/pdf"), session_id="abc") == (
        "Run /s/pdf/x.py in abc ${CLAUDE_SKILL_DIR}"
    )
    assert substitute_arguments("${CLAUDE_SKILL_DIR} ${CLAUDE_SESSION_ID}", "") == (
        "${CLAUDE_SKILL_DIR} ${CLAUDE_SESSION_ID}"
    )
    # Neither is an argument placeholder: arguments are still appended.
    assert substitute_arguments("${CLAUDE_SKILL_DIR}", "a", skill_dir=Path("/s")) == "/s\n\nARGUMENTS: a"


def test_shell_snippets_inline_and_fenced():
    body = (
        "Status: !`git status --short` and !`date`\n"
        "Not this: Hello!`nope` or `!not`\n"
        "```!\nls -la\necho two\n```\n"
        "```bash\n!`inside a plain fence still counts`\n```\n"
    )
    assert shell_snippets(body) == [
        "git status --short",
        "date",
        "ls -la\necho two",
        "inside a plain fence still counts",
    ]
    assert shell_snippets("!`at start`") == ["at start"]
    assert shell_snippets("nothing here") == []


class Runner:
    """A ShellRunner that records what it was asked to run."""

    def __init__(self, fail_on: str = "") -> None:
        self.ran: list[str] = []
        self.fail_on = fail_on

    async def __call__(self, command: str) -> str:
        self.ran.append(command)
        if command == self.fail_on:
            raise ExpansionError(f'Shell command failed for pattern "!`{command}`": boom')
        return f"<{command.upper()}>\n"


def expand(body: str, args: str, runner: Runner, **kw) -> str:
    return asyncio.run(expand_body(body, args, run_shell=runner, **kw))


def test_expand_runs_snippets_in_order_and_inlines_output():
    runner = Runner()
    body = "Before !`echo one` after $0\n```!\necho two\n```\nend"
    assert expand(body, "arg", runner) == "Before <ECHO ONE> after arg\n<ECHO TWO>\nend"
    assert runner.ran == ["echo one", "echo two"]


def test_text_from_arguments_is_never_run():
    runner = Runner()
    body = "Review $ARGUMENTS and !`git diff $0` in ${CLAUDE_SKILL_DIR}"
    out = expand(body, "!`rm -rf /` ```!\nrm -rf /\n```", runner, skill_dir=Path("/s"))
    # Only the body's snippet runs, with its placeholder filled in (the permission check judges the
    # command that results); the snippets inside the arguments never run.
    assert runner.ran == ["git diff !`rm"]
    assert out == "Review !`rm -rf /` ```!\nrm -rf /\n``` and <GIT DIFF !`RM> in /s"


def test_a_snippets_placeholders_are_filled_as_claude_code_does():
    runner = Runner()
    assert expand("Log: !`git log -n $0 $ARGUMENTS[1]`", "3 main", runner) == "Log: <GIT LOG -N 3 MAIN>"
    assert runner.ran == ["git log -n 3 main"]


def test_snippet_output_is_not_substituted_or_run():
    runner = Runner()
    runner_out = "!`echo nested` $1 $ARGUMENTS"

    async def prints_placeholders(command: str) -> str:
        runner.ran.append(command)
        return runner_out

    out = asyncio.run(expand_body("x !`cat file`", "", run_shell=prints_placeholders))
    assert out == f"x {runner_out}" and runner.ran == ["cat file"]


def test_snippet_uses_skill_dir_and_arguments_appended_without_placeholder():
    runner = Runner()
    out = expand("Run !`python ${CLAUDE_SKILL_DIR}/go.py`", "extra", runner, skill_dir=Path("/sk"))
    assert runner.ran == ["python /sk/go.py"]
    assert out == "Run <PYTHON /SK/GO.PY>\n\nARGUMENTS: extra"


def test_a_snippet_with_no_output_leaves_claude_codes_placeholder():
    async def silent(command: str) -> str:
        return "\n"

    out = asyncio.run(expand_body("Check !`true` done", "", run_shell=silent))
    assert out == "Check (Bash completed with no output) done"


def test_expansion_error_from_the_runner_propagates_and_stops():
    runner = Runner(fail_on="false")
    with pytest.raises(ExpansionError, match="Shell command failed"):
        expand("!`echo a` !`false` !`echo c`", "", runner)
    assert runner.ran == ["echo a", "false"]


def test_expand_without_snippets_matches_substitute():
    for body, args in [("Hi $1", "x"), ("plain", "x"), ("plain", "")]:
        assert expand(body, args, Runner()) == substitute_arguments(body, args)
