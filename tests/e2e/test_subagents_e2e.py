"""End to end: subagents through the real CLI against the fake server. In -p: an Explore
child's requests carry the purpose `subagent` and it comes back as one tool result; stream-json
shows its messages with the Agent call's id; json's cost counts it; the permission rules bind it;
two Agent calls of one response run together; its sidechain sits in the session's folder and -c
resumes the parent without it. In the REPL: one live line per child, then its summary line; Esc
during a child's request cancels it and the REPL goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_mini.llm.messages import Usage
from claude_mini.llm.pricing import cost_usd
from tests.e2e import test_repl
from tests.e2e.conftest import json_lines
from tests.e2e.test_repl import main_replies, wait_until
from tests.fake_anthropic import Reply

start = test_repl.start  # the fixture: a trusted repo, auto-memory off
NO_MEMORY = {"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}
EXPLORE = {"description": "Find date parsing", "prompt": "Find where dates are parsed.", "subagent_type": "Explore"}


def child_replies(server, *replies: Reply, contains: str | None = None) -> None:
    """Serve these to subagents in order (only to those whose request holds `contains`)."""
    for reply in replies:
        server.on(reply, purpose="subagent", contains=contains)


def explore_scenario(fake_server, repo: Path) -> None:
    """The parent starts an Explore child, which greps, reads dates.py and answers."""
    (repo / "dates.py").write_text("import datetime\n\ndef parse(s):\n    return datetime.date.fromisoformat(s)\n")
    main_replies(fake_server, Reply.tool("Agent", EXPLORE), Reply.text("Dates are parsed in dates.py."))
    child_replies(
        fake_server,
        Reply.tool("Grep", {"pattern": "fromisoformat"}),
        Reply.tool("Read", {"file_path": "dates.py"}),
        Reply.text("dates.py:4 parses ISO dates with date.fromisoformat."),
    )


def tool_results(request) -> list[dict]:
    return [b for b in request.body["messages"][-1]["content"] if b["type"] == "tool_result"]


def test_an_explore_child_runs_as_subagent_requests_and_returns_one_result(run_cli, fake_server, repo):
    explore_scenario(fake_server, repo)
    result = run_cli("-p", "where do we parse dates?", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Dates are parsed in dates.py.\n"
    children = fake_server.requests_for("subagent")
    assert len(children) == 3 and len(fake_server.requests_for("main")) == 2
    assert children[0].body["messages"][0]["content"][0]["text"] == "Find where dates are parsed."
    [answer] = tool_results(fake_server.requests_for("main")[-1])
    assert not answer.get("is_error")
    text, summary = answer["content"].split("\n\n")
    assert text == "dates.py:4 parses ISO dates with date.fromisoformat."
    assert summary.startswith("[subagent Explore · 2 tool calls · ") and summary.endswith(" s]")
    # The child's reads stay in its own context: the parent never sees the file or the grep.
    parent = json.dumps(fake_server.requests_for("main")[-1].body)
    assert "fromisoformat(s)" not in parent and "Found 1 file" not in parent


def test_stream_json_marks_the_childs_messages_with_the_agent_calls_id(run_cli, fake_server, repo):
    explore_scenario(fake_server, repo)
    result = run_cli("-p", "where do we parse dates?", "--output-format", "stream-json", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    lines = [line for line in json_lines(result.stdout) if line["type"] in ("user", "assistant")]
    [call] = [b for b in lines[1]["message"]["content"] if b["type"] == "tool_use"]
    assert call["name"] == "Agent"
    ids = [line["parent_tool_use_id"] for line in lines]
    assert ids == [None, None, *[call["id"]] * 6, None, None]  # prompt, 2 calls + results, answer
    child = lines[2:8]
    assert child[0]["message"]["content"] == [{"type": "text", "text": "Find where dates are parsed."}]
    assert [line["type"] for line in child] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert child[-1]["message"]["content"][0]["text"].startswith("dates.py:4 parses")
    assert {line["session_id"] for line in lines} == {lines[0]["session_id"]}  # the parent's session
    assert lines[-2]["message"]["content"][0]["tool_use_id"] == call["id"]  # the one result, the parent's
    assert json_lines(result.stdout)[-1]["num_turns"] == 2  # the parent's requests only


def test_json_cost_counts_the_childs_requests(run_cli, fake_server, repo):
    explore_scenario(fake_server, repo)
    result = run_cli("-p", "where do we parse dates?", "--output-format", "json", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    requests = fake_server.requests_for("main") + fake_server.requests_for("subagent")
    usage = sum((Usage(**r.usage) for r in requests), Usage())
    assert out["usage"] == usage.to_dict()
    assert out["total_cost_usd"] == round(sum(cost_usd(r.body["model"], Usage(**r.usage)) for r in requests), 6)
    main_only = sum(cost_usd(r.body["model"], Usage(**r.usage)) for r in fake_server.requests_for("main"))
    assert out["total_cost_usd"] > round(main_only, 6)


@pytest.mark.usefixtures("no_sandbox")
def test_the_permission_rules_bind_a_child_in_print_mode(run_cli, fake_server, repo):
    main_replies(
        fake_server,
        Reply.tool("Agent", {"description": "Make a marker", "prompt": "Create the file made."}),
        Reply.text("The subagent could not."),
    )
    child_replies(fake_server, Reply.tool("Bash", {"command": f"touch {repo}/made"}), Reply.text("Not allowed."))
    result = run_cli("-p", "make a marker with a subagent", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    assert not (repo / "made").exists()
    [denied] = tool_results(fake_server.requests_for("subagent")[-1])
    assert denied["is_error"] and "--allowedTools" in denied["content"]
    [answer] = tool_results(fake_server.requests_for("main")[-1])
    assert answer["content"].startswith("Not allowed.\n\n[subagent general-purpose · 1 tool call · ")

    fake_server.clear_requests()
    main_replies(
        fake_server,
        Reply.tool("Agent", {"description": "Make a marker", "prompt": "Create the file made."}),
        Reply.text("Done."),
    )
    child_replies(fake_server, Reply.tool("Bash", {"command": f"touch {repo}/made"}), Reply.text("Made it."))
    allowed = run_cli("-p", "make a marker with a subagent", "--allowedTools", "Bash(touch:*)", env=NO_MEMORY)
    assert allowed.returncode == 0, allowed.stderr
    assert (repo / "made").exists()  # the parent's rules are the child's


def test_two_agent_calls_of_one_response_run_together(run_cli, fake_server, repo):
    (repo / "a.txt").write_text("alpha\n")
    (repo / "b.txt").write_text("beta\n")
    main_replies(
        fake_server,
        Reply.tools(
            [
                ("Agent", {"description": "Read a", "prompt": "TASK-A: read a.txt", "subagent_type": "Explore"}),
                ("Agent", {"description": "Read b", "prompt": "TASK-B: read b.txt", "subagent_type": "Explore"}),
            ]
        ),
        Reply.text("Both done."),
    )
    # A's first answer comes late: run one after the other, B could not ask before A finished.
    child_replies(
        fake_server,
        Reply.tool("Read", {"file_path": "a.txt"}).slow_first_byte(2),
        Reply.text("a.txt says alpha."),
        contains="TASK-A",
    )
    child_replies(
        fake_server, Reply.tool("Read", {"file_path": "b.txt"}), Reply.text("b.txt says beta."), contains="TASK-B"
    )
    result = run_cli("-p", "read both with two subagents", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    order = ["A" if "TASK-A" in r.text else "B" for r in fake_server.requests_for("subagent")]
    assert order[:2] in (["A", "B"], ["B", "A"]) and order.index("B") < 2  # both asked before A's second request
    a, b = tool_results(fake_server.requests_for("main")[-1])
    assert a["content"].startswith("a.txt says alpha.") and b["content"].startswith("b.txt says beta.")


def test_the_sidechain_is_in_the_sessions_folder_and_c_resumes_the_parent_alone(
    run_cli, fake_server, repo, isolated_env
):
    explore_scenario(fake_server, repo)
    first = run_cli("-p", "where do we parse dates?", env=NO_MEMORY)
    assert first.returncode == 0, first.stderr
    [transcript] = isolated_env.home.glob("projects/*/*.jsonl")
    [sidechain] = transcript.with_suffix("").glob("subagents/agent-*.jsonl")
    assert "Find where dates are parsed." in sidechain.read_text()
    assert "fromisoformat(s)" in sidechain.read_text()  # the child's Read result is kept there
    link = [json.loads(line) for line in transcript.read_text().splitlines() if sidechain.stem[6:] in line]
    assert link and link[0]["type"] == "system"

    main_replies(fake_server, Reply.text("It is still dates.py."))
    again = run_cli("-c", "-p", "and where again?", env=NO_MEMORY)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "It is still dates.py.\n"
    sent = fake_server.requests_for("main")[-1].body["messages"]
    kinds = [b["type"] for m in sent for b in m["content"]]
    assert kinds == ["text", "tool_use", "tool_result", "text", "text"]
    assert sent[1]["content"][0]["name"] == "Agent"
    assert sent[2]["content"][0]["content"].startswith("dates.py:4 parses ISO dates")
    everything = json.dumps(sent)
    assert "Find where dates are parsed." in everything  # the call's input, not the child's messages:
    assert "fromisoformat(s)" not in everything and '"Grep"' not in everything


def running(command: str) -> bool:
    """Whether a process runs `command` (its whole command line)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes().replace(b"\0", b" ").strip() == command.encode():
                return True
        except OSError:
            pass
    return False


def test_the_repl_shows_a_child_as_one_live_line_then_its_summary_and_esc_cancels_it(start, fake_server):
    main_replies(
        fake_server,
        Reply.tool("Agent", EXPLORE),
        Reply.text("FIRST-ANSWER from the parent."),
        Reply.tool("Agent", {**EXPLORE, "description": "Look again"}),
        Reply.text("Fine, stopping."),
    )
    child_replies(
        fake_server,
        Reply.text("CHILD-REPORT: dates.py:4."),
        Reply.tool("Grep", {"pattern": "fromisoformat"}),
        Reply.text("never arrives").hang(),
    )
    term = start()
    term.ready()
    term.submit("where do we parse dates?")
    term.expect(
        r"Explore\(Find date parsing\)\S*\s+⎿  \S*\[subagent Explore · 0 tool calls · [\d,]+ tokens · [\d.]+ s\]"
    )
    term.expect("FIRST-ANSWER from the parent.")
    assert "CHILD-REPORT" not in term.output.getvalue()  # the child's answer is the parent's to read
    term.ready()

    term.submit("look again")
    term.expect(r"Explore\(Look again\) · 1 tool call · thinking… \d+s · esc to interrupt")
    wait_until(lambda: len(fake_server.requests_for("subagent")) == 3)  # its request hangs now
    term.child.send("\x1b")
    term.expect("Interrupted")
    term.ready()
    term.submit("never mind")
    term.expect("Fine, stopping.")
    *_, asked, answered = fake_server.requests_for("main")[-1].body["messages"]
    [call] = [b for b in asked["content"] if b["type"] == "tool_use"]
    result = answered["content"][0]
    assert result["tool_use_id"] == call["id"] and result["is_error"] and "interrupted" in result["content"]
    assert len(fake_server.requests_for("subagent")) == 3  # nothing more from the cancelled child


def test_esc_during_a_childs_bash_command_ends_the_command(start, fake_server, repo):
    command = "touch started && sleep 31.7"
    main_replies(
        fake_server,
        Reply.tool("Agent", {"description": "Wait a bit", "prompt": "Run the slow command."}),
        Reply.text("Understood."),
    )
    child_replies(fake_server, Reply.tool("Bash", {"command": command}), Reply.text("never needed"))
    term = start("--allowedTools", "Bash(touch:*)", "Bash(sleep:*)")
    term.ready()
    term.submit("run it in a subagent")
    wait_until((repo / "started").exists)
    term.expect(r"general-purpose\(Wait a bit\) · 0 tool calls · Bash\(touch started && sleep 31.7\)")
    assert running("sleep 31.7")
    term.child.send("\x1b")
    term.expect("Interrupted")
    wait_until(lambda: not running("sleep 31.7"))
    term.ready()
    term.submit("ok")
    term.expect("Understood.")
    result = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]
    assert result["is_error"] and "interrupted" in result["content"]
