"""The REPL's questions, answered through a stubbed menu: a plan approved or sent back, an edit's
"don't ask again" (the session's mode, nothing saved) and a command's (saved to the local file)."""

from __future__ import annotations

import asyncio
import json
from io import StringIO
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from claude_mini.config import load_config
from claude_mini.llm.messages import ToolUseBlock
from claude_mini.runtime import build_runtime
from claude_mini.ui.render import guard_console
from claude_mini.ui.repl import Repl
from tests.ui.conftest import StubClient

PLAN = "# Steps\n1. Change **app.py**\n2. Run the tests"


def ask(repo: Path, call: ToolUseBlock, choice: str, *, text: str = "", mode: str = "default"):
    """Ask about `call` with the menu answering `choice` (and the text line `text`): the answer,
    the menus shown, what was printed and the runtime."""
    shown: list[tuple[str, list[tuple[str, str]]]] = []
    out = StringIO()

    async def go():
        with create_pipe_input() as pipe:
            repl = Repl(load_config(repo, trust_folder=True), input=pipe, output=DummyOutput())
            runtime = build_runtime(repl.config, client=StubClient())
            runtime.policy.mode = mode

            async def get_runtime():
                return runtime

            async def choose(message, options, **_):
                shown.append((message, list(options)))
                return choice

            async def ask_text(question):
                return text

            repl.get_runtime, repl.choose, repl._ask_text = get_runtime, choose, ask_text
            repl._console = guard_console(Console(file=out, width=100, color_system=None))
            return await repl.ask_permission(call, "needs approval"), runtime

    answer, runtime = asyncio.run(asyncio.wait_for(go(), 20))
    return answer, shown, out.getvalue(), runtime


@pytest.mark.parametrize(("choice", "mode"), [("acceptEdits", "acceptEdits"), ("default", "default")])
def test_an_approved_plan_switches_the_mode(repo, choice, mode):
    answer, shown, out, runtime = ask(repo, ToolUseBlock("t1", "ExitPlanMode", {"plan": PLAN}), choice, mode="plan")
    assert answer.allow and runtime.policy.mode == mode
    [(question, options)] = shown
    assert [label for _, label in options] == [
        "Yes, and auto-accept edits",
        "Yes, and manually approve edits",
        "No, keep planning (tell it why)",
    ]
    assert "Steps" in out and "Change app.py" in out and "**" not in out  # drawn as markdown


def test_a_plan_sent_back_keeps_plan_mode_with_or_without_a_reason(repo):
    call = ToolUseBlock("t1", "ExitPlanMode", {"plan": PLAN})
    answer, _, _, runtime = ask(repo, call, "keep", text="add a test first", mode="plan")
    assert not answer.allow and answer.message == "add a test first" and not answer.stops_turn
    assert runtime.policy.mode == "plan"
    escaped, _, _, _ = ask(repo, call, "stop", mode="plan")  # Esc on the menu
    assert escaped.stops_turn


def test_dont_ask_again_for_an_edit_accepts_edits_for_the_session_and_saves_nothing(repo):
    call = ToolUseBlock("t1", "Write", {"file_path": "new.txt", "content": "x\n"})
    answer, shown, _, runtime = ask(repo, call, "always")
    assert "allow all edits in this project during this session" in shown[0][1][1][1]
    assert answer.allow and runtime.policy.mode == "acceptEdits"
    assert not (repo / ".claude" / "settings.local.json").exists()


@pytest.mark.usefixtures("no_sandbox")
def test_dont_ask_again_for_a_command_saves_its_rule_and_no_stops(repo, isolated_env):
    call = ToolUseBlock("t1", "Bash", {"command": "make lint"})
    answer, shown, _, runtime = ask(repo, call, "always")
    assert answer.allow and "don't ask again in this project for" in shown[0][1][1][1]
    assert json.loads((repo / ".claude" / "settings.local.json").read_text()) == {
        "permissions": {"allow": ["Bash(make lint:*)"]}
    }
    assert isolated_env.git_ignore.exists()
    no, _, _, _ = ask(repo, call, "no")
    assert no.stops_turn
    instead, _, _, _ = ask(repo, call, "instead", text="run make check")
    assert not instead.allow and instead.message == "run make check" and not instead.stops_turn
