"""End to end in a pseudo-terminal: plan mode's approval, approvals that persist across sessions,
"No" stopping the turn (Esc too), and the Shift-Tab cycle."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from claude_mini.config.git_ignore import LOCAL_SETTINGS_PATTERN
from tests.e2e.test_repl import main_replies, start  # noqa: F401 (start is a fixture)
from tests.fake_anthropic import Reply

pytestmark = pytest.mark.e2e

SHIFT_TAB = "\x1b[Z"
ESC = "\x1b"
PLAN = "# Greeting\n1. Change `hello` to `hello there` in **app.py**\n2. Run the tests"


def flat(output: str) -> str:
    """What the terminal showed as one line: escape sequences gone, line breaks and runs of spaces
    as one space (a long path wraps at the terminal's width)."""
    return re.sub(r"\s+", " ", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output))


def last_results(fake_server) -> list[dict]:
    """The tool results of the last request to the main agent."""
    content = fake_server.requests_for("main")[-1].body["messages"][-1]["content"]
    return [block for block in content if block.get("type") == "tool_result"]


def first_message_text(fake_server) -> str:
    return json.dumps(fake_server.requests_for("main")[0].body["messages"][0])


def test_a_plan_is_shown_approved_with_auto_accept_and_the_edits_then_run(start, fake_server, repo):  # noqa: F811
    main_replies(
        fake_server,
        Reply.tool("ExitPlanMode", {"plan": PLAN}, text="Here is the plan."),
        Reply.tool("Write", {"file_path": "greeting.txt", "content": "hello there\n"}),
        Reply.text("Done as planned."),
    )
    term = start("--permission-mode", "plan")
    term.ready()
    term.submit("make the greeting friendlier")
    term.expect("Plan")
    term.expect("Change")
    term.expect("Run the tests")
    term.expect("Yes, and auto-accept edits")
    term.expect("Yes, and manually approve edits")
    term.expect(r"No, keep planning \(tell it why\)")
    term.child.send("1")
    term.expect(r"Plan approved; permission mode: accept edits\.")
    term.expect("Done as planned.")  # the Write ran without a question: acceptEdits
    assert (repo / "greeting.txt").read_text() == "hello there\n"
    shown = term.output.getvalue()
    assert "Create greeting.txt?" not in shown and "**app.py**" not in shown  # markdown drawn, not its source
    assert "Plan mode is on" in first_message_text(fake_server)
    [approved] = fake_server.requests_for("main")[1].body["messages"][-1]["content"][:1]
    assert not approved.get("is_error") and "approved your plan" in approved["content"]
    term.ready()
    term.submit("/permissions")
    term.expect("Permission mode: acceptEdits")


def test_keep_planning_sends_why_and_stays_in_plan_mode_and_esc_stops(start, fake_server, repo):  # noqa: F811
    main_replies(
        fake_server,
        Reply.tool("ExitPlanMode", {"plan": PLAN}),
        Reply.text("I will add a step for the docs."),
        Reply.tool("ExitPlanMode", {"plan": PLAN + "\n3. Update the README"}),
        Reply.text("never asked for"),
    )
    term = start("--permission-mode", "plan")
    term.ready()
    term.submit("plan the greeting change")
    term.expect(r"No, keep planning")
    term.child.send("3")
    term.expect("What should change in the plan")
    term.submit("update the README too")
    term.expect("I will add a step for the docs.")
    [result] = last_results(fake_server)
    assert result["is_error"] and "The user said: update the README too" in result["content"]
    term.ready()
    term.submit("show me the new plan")
    term.expect("Update the README")
    term.expect(r"No, keep planning")
    term.child.send(ESC)  # Esc on the plan's question: no, and the turn waits for the user
    term.expect("Declined: the turn stopped")
    term.ready()
    assert len(fake_server.requests_for("main")) == 3
    assert "Plan mode is on" in json.dumps(fake_server.requests_for("main")[-1].body["messages"][-1])
    term.submit("/permissions")
    term.expect("Permission mode: plan")


@pytest.mark.usefixtures("no_sandbox")
def test_dont_ask_again_is_saved_and_the_next_session_does_not_ask(start, fake_server, repo, isolated_env):  # noqa: F811
    ignore = isolated_env.git_ignore  # the tests' global git ignore file (conftest.py)
    touch = Reply.tool("Bash", {"command": "touch built.txt"})
    main_replies(fake_server, touch, Reply.text("Built once."), touch, Reply.text("Built again."))
    term = start()
    term.ready()
    term.submit("build it")
    term.expect(r"Run this command\?")
    term.expect(r"Yes, and don't ask again in this project for")
    term.expect("tell it what to do instead")
    term.child.send("2")
    term.expect("Built once.")
    said = flat(term.output.getvalue())
    assert "settings.local.json (permissions.allow): it applies now and in later sessions." in said
    assert f"Added {LOCAL_SETTINGS_PATTERN} to {ignore} (your global git ignore)" in said
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    local = repo / ".claude" / "settings.local.json"
    [rule] = json.loads(local.read_text())["permissions"]["allow"]
    assert rule.startswith("Bash(touch")
    assert ignore.read_text() == LOCAL_SETTINGS_PATTERN + "\n"
    untracked = subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=repo, capture_output=True, text=True)
    assert "settings.local.json" not in untracked.stdout and "built.txt" in untracked.stdout

    (repo / "built.txt").unlink()
    second = start()
    second.ready()
    second.submit("build it again")
    second.expect("Built again.")
    assert "Run this command?" not in second.output.getvalue()
    assert (repo / "built.txt").exists()


@pytest.mark.usefixtures("no_sandbox")
def test_no_and_esc_stop_the_turn_and_tell_it_what_to_do_goes_on(start, fake_server, repo):  # noqa: F811
    touch = Reply.tool("Bash", {"command": "touch a.txt"})
    main_replies(fake_server, touch, touch, touch, Reply.text("Using b.txt instead."))
    term = start()
    term.ready()
    term.submit("make a")
    term.expect(r"No \(esc\): the turn stops and waits for you")
    term.child.send("3")
    term.expect("Declined: the turn stopped. Say what to do instead.")
    term.ready()
    assert len(fake_server.requests_for("main")) == 1  # the model was not asked again
    term.submit("make a, please")
    term.expect(r"Run this command\?")
    term.child.send(ESC)  # Esc on a permission prompt is No
    term.expect(r"Declined: the turn stopped")
    term.ready()
    assert len(fake_server.requests_for("main")) == 2
    term.submit("try once more")
    term.expect(r"Run this command\?")
    term.child.send("4")
    term.expect("What should it do instead")
    term.submit("touch b.txt")
    term.expect("Using b.txt instead.")
    [result] = last_results(fake_server)
    assert result["is_error"] and "The user said: touch b.txt" in result["content"]
    sent = json.dumps(fake_server.requests_for("main")[2].body["messages"])
    assert "declined this Bash call" in sent and "[Request interrupted by user for tool use]" in sent
    assert not (repo / "a.txt").exists()


def test_shift_tab_cycles_three_modes_and_bypass_only_when_started_in_it(start, fake_server, repo):  # noqa: F811
    term = start()
    term.ready()
    term.submit("/permissions")  # the runtime is built: the presses change the session's mode
    term.expect("Permission mode: default")
    for expected in ("acceptEdits", "plan", "default"):
        term.ready()
        term.child.send(SHIFT_TAB)
        term.submit("/permissions")
        term.expect(f"Permission mode: {expected}")
    assert "bypass" not in term.output.getvalue().lower()

    bold = start("--dangerously-skip-permissions")
    bold.ready()
    bold.submit("/permissions")
    bold.expect("Permission mode: bypassPermissions")
    for expected in ("default", "acceptEdits", "plan", "bypassPermissions", "default"):
        bold.ready()
        bold.child.send(SHIFT_TAB)
        bold.submit("/permissions")
        bold.expect(f"Permission mode: {expected}")
    assert bold.output.getvalue().count("every tool runs without asking") == 1


def test_in_print_mode_the_plan_is_the_result(run_cli, fake_server, repo):
    replies = (
        Reply.tool("Read", {"file_path": "app.py"}),
        Reply.tool("ExitPlanMode", {"plan": PLAN}, text="Here is the plan."),
    )
    fake_server.queue(*replies, *replies, Reply.text("never asked for"))
    done = run_cli("-p", "plan the greeting change", "--permission-mode", "plan", "--output-format", "json")
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert result["subtype"] == "success" and not result["is_error"] and result["result"] == PLAN
    assert result["num_turns"] == 2
    text = run_cli("-p", "plan it again", "--permission-mode", "plan")
    assert text.returncode == 0 and text.stdout == PLAN + "\n"
    assert len(fake_server.requests_for("main")) == 4  # two per run: nothing after the plan
    assert "Plan mode is on" in first_message_text(fake_server)
