"""End to end: the user's hooks through the real CLI in print mode.

Every hook is `.claude/hook.py`, written by the test: it appends its stdin JSON (plus the
CLAUDE_PROJECT_DIR it saw) to `.claude/hooklog.jsonl`, then prints, exits, waits or
touches what its one argument (a JSON spec) says. The tests read that log, the request
bodies the fake server recorded, what the CLI printed and the files on disk.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from claude_mini.hooks.lifecycle import MAX_STOP_CONTINUES
from tests.e2e.conftest import trust_folder
from tests.fake_anthropic import Reply

HOOK_PY = r"""
import json, os, sys, time
data = json.load(sys.stdin)
data["_env"] = {k: os.environ.get(k) for k in ("CLAUDE_PROJECT_DIR", "CLAUDE_MINI_PROJECT_DIR")}
spec = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hooklog.jsonl"), "a") as log:
    log.write(json.dumps(data) + "\n")
if spec.get("pid"):
    with open(spec["pid"], "w") as f:
        f.write(str(os.getpid()))
if spec.get("wait"):
    while not os.path.exists(spec["wait"]):
        time.sleep(0.02)
if spec.get("sleep"):
    time.sleep(spec["sleep"])
if spec.get("if_inactive") and data.get("stop_hook_active"):
    sys.exit(0)
out = spec.get("out")
if out is not None:
    print(out if isinstance(out, str) else json.dumps(out))
if spec.get("err"):
    print(spec["err"], file=sys.stderr)
sys.exit(spec.get("exit", 0))
"""

# Every event claude-mini fires that a print-mode run can raise.
ALL_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "InstructionsLoaded",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
COMMON = ("session_id", "transcript_path", "cwd", "hook_event_name")


def hook(
    spec: dict[str, Any] | None = None, *, timeout: float | None = None, command: str | None = None
) -> dict[str, Any]:
    """One command handler: `.claude/hook.py` doing what `spec` says (or another `command`)."""
    if command is None:
        command = "python3 .claude/hook.py" + (f" {shlex.quote(json.dumps(spec))}" if spec else "")
    handler: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        handler["timeout"] = timeout
    return handler


def write_hooks(repo: Path, hooks: dict[str, Any], **settings: Any) -> None:
    """`.claude/settings.json` with these hooks: `{event: [handler...]}` (no matcher) or
    `{event: {matcher: [handler...]}}`; and `.claude/hook.py`."""
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "hook.py").write_text(HOOK_PY)
    groups: dict[str, list[dict[str, Any]]] = {}
    for event, spec in hooks.items():
        by_matcher = spec if isinstance(spec, dict) else {"": spec}
        groups[event] = [{"matcher": m, "hooks": handlers} for m, handlers in by_matcher.items()]
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": groups, **settings}))


def logged(repo: Path, event: str | None = None) -> list[dict[str, Any]]:
    """What the hooks received, in order (of one event, if named)."""
    log = repo / ".claude" / "hooklog.jsonl"
    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return [e for e in entries if event is None or e["hook_event_name"] == event]


@pytest.fixture
def cli(run_cli, repo, isolated_env):
    """run_cli in a trusted repo with auto-memory off (memory is not the point here)."""
    trust_folder(isolated_env.home, repo)

    def run(*args: str, env: dict[str, str] | None = None, **kwargs: Any):
        return run_cli(*args, env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1", **(env or {})}, **kwargs)

    return run


def tool_results(request) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last message."""
    return [b for b in request.body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def user_texts(request) -> list[str]:
    """The text blocks of a request's last user message."""
    content = request.body["messages"][-1]["content"]
    return [content] if isinstance(content, str) else [b["text"] for b in content if b.get("type") == "text"]


# ---- 1. each event fires with the documented input


def test_a_plain_turn_raises_session_start_prompt_stop_and_session_end(cli, fake_server, repo, isolated_env):
    write_hooks(repo, {event: [hook()] for event in ALL_EVENTS})
    fake_server.on(Reply.text("hello there"), purpose="main")
    result = cli("-p", "please say hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hello there"
    entries = logged(repo)
    assert [e["hook_event_name"] for e in entries] == ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]
    [start, prompt, stop, end] = entries
    for entry in entries:
        assert set(COMMON) <= set(entry)
        assert entry["session_id"] == start["session_id"] and entry["transcript_path"] == start["transcript_path"]
        assert entry["cwd"] == str(repo)
        assert entry["_env"] == {"CLAUDE_PROJECT_DIR": str(repo), "CLAUDE_MINI_PROJECT_DIR": str(repo)}
    transcript = Path(start["transcript_path"])
    assert transcript.is_file() and transcript.stem == start["session_id"]
    assert transcript.is_relative_to(isolated_env.home)
    assert start["source"] == "startup" and "permission_mode" not in start
    assert prompt["prompt"] == "please say hi" and prompt["permission_mode"] == "default"
    assert stop["stop_hook_active"] is False and stop["last_assistant_message"] == "hello there"
    assert end["reason"] == "other"


def test_continue_raises_session_start_with_source_resume(cli, fake_server, repo):
    write_hooks(repo, {"SessionStart": [hook()]})
    assert cli("-p", "first").returncode == 0
    result = cli("-c", "-p", "second")
    assert result.returncode == 0, result.stderr
    first, second = logged(repo, "SessionStart")
    assert (first["source"], second["source"]) == ("startup", "resume")
    assert second["session_id"] == first["session_id"]
    assert second["transcript_path"] == first["transcript_path"]


def test_tool_events_get_the_call_and_its_response(cli, fake_server, repo):
    write_hooks(repo, {event: {"Bash": [hook()]} for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure")})
    fake_server.on(Reply.tool("Bash", {"command": "echo hi"}, id="toolu_ok"), purpose="main")
    fake_server.on(Reply.tool("Bash", {"command": "echo oops; exit 3"}, id="toolu_bad"), purpose="main")
    fake_server.on(Reply.text("done"), purpose="main")
    result = cli("-p", "run things", "--allowedTools", "Bash")
    assert result.returncode == 0, result.stderr
    pre_ok, post_ok, pre_bad, failure = logged(repo)
    assert [e["hook_event_name"] for e in (pre_ok, post_ok, pre_bad, failure)] == [
        "PreToolUse",
        "PostToolUse",
        "PreToolUse",
        "PostToolUseFailure",
    ]
    for entry, call in ((pre_ok, "toolu_ok"), (post_ok, "toolu_ok"), (pre_bad, "toolu_bad"), (failure, "toolu_bad")):
        assert entry["tool_name"] == "Bash" and entry["tool_use_id"] == call
        assert entry["permission_mode"] == "default" and set(COMMON) <= set(entry)
    assert pre_ok["tool_input"] == post_ok["tool_input"] == {"command": "echo hi"}
    assert post_ok["tool_response"]["stdout"].strip() == "hi"
    assert post_ok["tool_response"]["stderr"] == "" and post_ok["tool_response"]["interrupted"] is False
    assert failure["tool_input"] == {"command": "echo oops; exit 3"}
    assert "Exit code 3" in failure["error"] and "oops" in failure["error"]
    assert failure["is_interrupt"] is False and "tool_response" not in failure


def test_instructions_loaded_names_each_file_and_why(cli, fake_server, repo):
    (repo / "CLAUDE.md").write_text("@docs/style.md\nPROJECT-TEXT\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "style.md").write_text("STYLE-TEXT\n")
    write_hooks(repo, {"InstructionsLoaded": [hook()]})
    (repo / ".claude" / "rules").mkdir()
    (repo / ".claude" / "rules" / "py.md").write_text('---\npaths: "**/*.py"\n---\nPY-RULE\n')
    fake_server.on(Reply.tool("Read", {"file_path": str(repo / "app.py")}), purpose="main")
    fake_server.on(Reply.text("done"), purpose="main")
    result = cli("-p", "read app.py")
    assert result.returncode == 0, result.stderr
    loads = {Path(e["file_path"]).name: e for e in logged(repo, "InstructionsLoaded")}
    assert set(loads) == {"CLAUDE.md", "style.md", "py.md"}
    project = loads["CLAUDE.md"]
    assert project["file_path"] == str(repo / "CLAUDE.md")
    assert (project["memory_type"], project["load_reason"]) == ("Project", "session_start")
    imported = loads["style.md"]
    assert imported["load_reason"] == "include" and imported["parent_file_path"] == str(repo / "CLAUDE.md")
    rule = loads["py.md"]
    assert rule["load_reason"] == "path_glob_match" and rule["globs"] == ["**/*.py"]
    assert rule["trigger_file_path"] == str(repo / "app.py")
    assert "PY-RULE" in json.dumps(fake_server.requests_for("main")[1].body["messages"][-1])


SUMMARY = "<analysis>thinking</analysis>\n<summary>SUMMARY-TEXT: the user wants big.txt read.</summary>"


def big_file(repo: Path, fake_server) -> None:
    """A file whose Read pushes a 20,000-token window over its auto-compact threshold."""
    (repo / "big.txt").write_text("".join(f"line {i:05d} of the big file with some words\n" for i in range(1500)))
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    fake_server.on(Reply.tool("Read", {"file_path": "big.txt"}), purpose="main")
    fake_server.on(Reply.text("done"), purpose="main")


def test_auto_compaction_raises_pre_and_post_compact_then_session_start_compact(cli, fake_server, repo):
    (repo / "CLAUDE.md").write_text("PROJECT-TEXT\n")
    write_hooks(
        repo,
        {event: [hook()] for event in ("PreCompact", "PostCompact", "SessionStart", "InstructionsLoaded")},
        contextWindow=20_000,
    )
    big_file(repo, fake_server)
    result = cli("-p", "please read big.txt")
    assert result.returncode == 0, result.stderr
    assert len(fake_server.requests_for("compact")) == 1
    events = [(e["hook_event_name"], e.get("source") or e.get("trigger") or e.get("load_reason")) for e in logged(repo)]
    after = events[events.index(("PreCompact", "auto")) :]
    # InstructionsLoaded runs in the background: its place among the others is not fixed.
    assert [e for e in after if e[0] != "InstructionsLoaded"] == [
        ("PreCompact", "auto"),
        ("PostCompact", "auto"),
        ("SessionStart", "compact"),
    ]
    assert ("InstructionsLoaded", "compact") in after
    [pre] = logged(repo, "PreCompact")
    assert pre["custom_instructions"] in ("", None) and set(COMMON) <= set(pre)
    [post] = logged(repo, "PostCompact")
    assert "SUMMARY-TEXT" in post["compact_summary"] and "thinking" not in post["compact_summary"]


# ---- 2. PreToolUse decides


def bash_call(fake_server, command: str) -> None:
    fake_server.on(Reply.tool("Bash", {"command": command}, id="toolu_1"), purpose="main")
    fake_server.on(Reply.text("done"), purpose="main")


def test_a_pre_tool_use_exit_2_blocks_the_call_and_the_model_reads_why(cli, fake_server, repo):
    write_hooks(repo, {"PreToolUse": {"Bash": [hook({"err": "no touching in this repo", "exit": 2})]}})
    bash_call(fake_server, "touch made.txt")
    result = cli("-p", "make a file", "--allowedTools", "Bash")
    assert result.returncode == 0, result.stderr
    assert not (repo / "made.txt").exists()
    [blocked] = tool_results(fake_server.requests_for("main")[1])
    assert blocked["is_error"] and "no touching in this repo" in blocked["content"]
    assert "PreToolUse:Bash hook" in blocked["content"]
    assert logged(repo, "PostToolUse") == []


def test_a_pre_tool_use_json_deny_blocks_the_call_with_its_reason(cli, fake_server, repo):
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "use the Write tool instead",
        }
    }
    write_hooks(repo, {"PreToolUse": {"Bash": [hook({"out": deny})]}})
    bash_call(fake_server, "touch made.txt")
    result = cli("-p", "make a file", "--allowedTools", "Bash")
    assert result.returncode == 0, result.stderr
    assert not (repo / "made.txt").exists()
    [blocked] = tool_results(fake_server.requests_for("main")[1])
    assert blocked["is_error"] and "use the Write tool instead" in blocked["content"]


def test_a_pre_tool_use_ask_in_print_mode_is_permission_needed(cli, fake_server, repo):
    ask = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "a human should see this one",
        }
    }
    write_hooks(repo, {"PreToolUse": {"Bash": [hook({"out": ask})]}})
    bash_call(fake_server, "touch made.txt")
    result = cli("-p", "make a file", "--allowedTools", "Bash")  # the rules allow it; the hook asks
    assert result.returncode == 0, result.stderr
    assert not (repo / "made.txt").exists()
    [asked] = tool_results(fake_server.requests_for("main")[1])
    assert asked["is_error"] and asked["content"].startswith("Permission needed")
    assert "a human should see this one" in asked["content"]


ALLOW = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": "writes are fine here",
    }
}


def test_a_pre_tool_use_allow_spares_the_question_for_a_write(cli, fake_server, repo):
    write_hooks(repo, {"PreToolUse": {"Write": [hook({"out": ALLOW})]}})
    fake_server.on(Reply.tool("Write", {"file_path": str(repo / "new.txt"), "content": "hi\n"}), purpose="main")
    fake_server.on(Reply.text("done"), purpose="main")
    result = cli("-p", "write it")  # default mode: a Write would need a question
    assert result.returncode == 0, result.stderr
    assert (repo / "new.txt").read_text() == "hi\n"
    [written] = tool_results(fake_server.requests_for("main")[1])
    assert not written.get("is_error")


def test_a_pre_tool_use_allow_does_not_lift_a_deny_rule(cli, fake_server, repo):
    write_hooks(repo, {"PreToolUse": {"Write": [hook({"out": ALLOW})]}}, permissions={"deny": ["Write(./secret.txt)"]})
    fake_server.on(Reply.tool("Write", {"file_path": str(repo / "secret.txt"), "content": "x"}), purpose="main")
    fake_server.on(Reply.text("done"), purpose="main")
    result = cli("-p", "write it")
    assert result.returncode == 0, result.stderr
    assert not (repo / "secret.txt").exists()
    [denied] = tool_results(fake_server.requests_for("main")[1])
    assert denied["is_error"] and denied["content"].startswith("Permission denied")


# ---- 3. updatedInput


def test_updated_input_changes_what_runs_and_post_tool_use_sees_it(cli, fake_server, repo):
    rewrite = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "touch rewritten.txt"},
        }
    }
    write_hooks(repo, {"PreToolUse": {"Bash": [hook({"out": rewrite})]}, "PostToolUse": {"Bash": [hook()]}})
    bash_call(fake_server, "touch original.txt")
    result = cli("-p", "make a file")  # the hook's allow spares the question default mode asks
    assert result.returncode == 0, result.stderr
    assert (repo / "rewritten.txt").exists() and not (repo / "original.txt").exists()
    [pre] = logged(repo, "PreToolUse")
    [post] = logged(repo, "PostToolUse")
    assert pre["tool_input"] == {"command": "touch original.txt"}
    assert post["tool_input"] == {"command": "touch rewritten.txt"}
    [ran] = tool_results(fake_server.requests_for("main")[1])
    assert not ran.get("is_error")


# ---- 4. UserPromptSubmit


def reminders(request) -> list[str]:
    return [t for t in user_texts(request) if t.startswith("<system-reminder>")]


@pytest.mark.parametrize(
    "out",
    [
        "TICKET-42 is the current task",
        {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "TICKET-42 is the current task",
            }
        },
    ],
    ids=["plain stdout", "additionalContext"],
)
def test_user_prompt_submit_context_is_a_system_reminder_in_the_user_message(cli, fake_server, repo, out):
    write_hooks(repo, {"UserPromptSubmit": [hook({"out": out})]})
    fake_server.on(Reply.text("ok"), purpose="main")
    result = cli("-p", "what now?")
    assert result.returncode == 0, result.stderr
    [request] = fake_server.requests_for("main")
    assert "TICKET-42" not in json.dumps(request.body["system"]) + json.dumps(request.body["tools"])
    [reminder] = [t for t in reminders(request) if "TICKET-42" in t]
    assert reminder.endswith("</system-reminder>")
    assert "UserPromptSubmit hook" in reminder and "TICKET-42 is the current task" in reminder
    assert user_texts(request)[0] == "what now?"  # the prompt itself is unchanged, in its own block


def test_a_user_prompt_submit_exit_2_blocks_the_prompt(cli, fake_server, repo, isolated_env):
    write_hooks(repo, {"UserPromptSubmit": [hook({"err": "no prompts about secrets", "exit": 2})]})
    result = cli("-p", "tell me the secrets")
    assert fake_server.requests_for("main") == []
    assert result.stdout == ""
    assert "no prompts about secrets" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert result.returncode == 1  # as any turn that did not complete in print mode
    transcript = next(isolated_env.home.glob("projects/*/*.jsonl")).read_text()
    assert "tell me the secrets" not in transcript  # the prompt never joined the conversation


# ---- 5. Stop


def test_a_stop_hook_makes_the_turn_go_on_once(cli, fake_server, repo):
    block = {"decision": "block", "reason": "run the tests before you stop"}
    write_hooks(repo, {"Stop": [hook({"out": block, "if_inactive": True})]})
    fake_server.on(Reply.text("first answer"), purpose="main")
    fake_server.on(Reply.text("tests pass"), purpose="main")
    result = cli("-p", "fix it")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "tests pass"
    first, second = fake_server.requests_for("main")
    assert "run the tests before you stop" not in json.dumps(first.body)
    assert second.body["messages"][-1]["role"] == "user"
    assert user_texts(second) == [
        "<system-reminder>\nStop hook feedback:\nrun the tests before you stop\n</system-reminder>"
    ]
    assert [e["stop_hook_active"] for e in logged(repo, "Stop")] == [False, True]


def test_a_stop_hook_that_always_blocks_is_ended_by_the_loop_guard(cli, fake_server, repo):
    write_hooks(repo, {"Stop": [hook({"err": "never done", "exit": 2})]})
    fake_server.on(Reply.text("answer"), purpose="main", times=None)
    result = cli("-p", "fix it")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "answer"
    mains = fake_server.requests_for("main")
    assert len(mains) == MAX_STOP_CONTINUES + 1
    assert len(logged(repo, "Stop")) == MAX_STOP_CONTINUES  # the guard ends the turn without a 4th run
    assert all("Stop hook feedback:\nnever done" in user_texts(m)[-1] for m in mains[1:])
    [warning] = [line for line in result.stderr.splitlines() if "Stop hook" in line]
    assert "stop_hook_active" in warning


# ---- 6. failures are one line, and the session goes on


def hook_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "hook" in line]


@pytest.mark.parametrize(
    ("handler", "said"),
    [
        (hook({"sleep": 30}, timeout=1), "timed out after 1 s"),
        (hook({"err": "formatter crashed\nsecond line", "exit": 1}), "failed (exit 1): formatter crashed"),
        (hook(command="./.claude/missing-hook.sh"), "failed (exit 127)"),
        (hook(command="./.claude/hook.py"), "failed (exit 126)"),  # not executable
    ],
    ids=["timeout", "exit 1", "missing", "not executable"],
)
def test_a_failing_pre_tool_use_hook_is_one_line_and_the_call_runs(cli, fake_server, repo, handler, said):
    write_hooks(repo, {"PreToolUse": {"Bash": [handler]}})
    bash_call(fake_server, "touch made.txt")
    result = cli("-p", "make a file", "--allowedTools", "Bash")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done" and (repo / "made.txt").exists()
    assert "Traceback" not in result.stderr
    [line] = hook_lines(result.stderr)
    assert line.startswith("claude-mini: PreToolUse hook `") and said in line, line
    [ran] = tool_results(fake_server.requests_for("main")[1])
    assert not ran.get("is_error") and "formatter crashed" not in ran["content"]


# ---- 7. trust


def test_hooks_of_an_untrusted_folder_do_not_run_until_it_is_trusted(run_cli, fake_server, repo):
    write_hooks(repo, {"SessionStart": [hook()], "UserPromptSubmit": [hook({"out": "INJECTED"})]})
    no_memory = {"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}
    result = run_cli("-p", "hi", env=no_memory)
    assert result.returncode == 0, result.stderr
    assert not (repo / ".claude" / "hooklog.jsonl").exists()
    assert "INJECTED" not in json.dumps(fake_server.requests_for("main")[0].body)
    [notice] = [line for line in result.stderr.splitlines() if "Ignored untrusted settings" in line]
    assert "settings.json (hooks" in notice and "--trust-folder" in notice
    trusted = run_cli("-p", "hi", "--trust-folder", env=no_memory)
    assert trusted.returncode == 0, trusted.stderr
    assert [e["hook_event_name"] for e in logged(repo)] == ["SessionStart", "UserPromptSubmit"]
    assert "Ignored untrusted settings" not in trusted.stderr
    assert "INJECTED" in json.dumps(fake_server.requests_for("main")[1].body["messages"])


def test_the_untrusted_notice_names_the_hooks_it_ignored(run_cli, repo):
    write_hooks(repo, {"SessionStart": [hook()], "UserPromptSubmit": [hook({"out": "INJECTED"})]})
    result = run_cli("-p", "hi", env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"})
    [notice] = [line for line in result.stderr.splitlines() if "Ignored untrusted settings" in line]
    assert "SessionStart" in notice and "UserPromptSubmit" in notice, notice


# ---- 8. the prompt cache


def test_the_system_prompt_and_tools_are_the_same_bytes_with_hooks(cli, fake_server, repo):
    (repo / "CLAUDE.md").write_text("PROJECT-TEXT\n")
    write_hooks(repo, {})  # the same files in the folder, no hooks
    fake_server.on(Reply.text("ok"), purpose="main")
    assert cli("-p", "hello").returncode == 0
    context = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ON-CALL: alice"}}
    write_hooks(
        repo,
        {
            "SessionStart": [hook({"out": context})],
            "UserPromptSubmit": [hook({"out": "TICKET-42"})],
            "InstructionsLoaded": [hook()],
            "PreToolUse": {"Bash": [hook()]},
            "Stop": [hook()],
        },
    )
    fake_server.on(Reply.text("ok"), purpose="main")
    result = cli("-p", "hello")
    assert result.returncode == 0, result.stderr
    without, with_hooks = fake_server.requests_for("main")
    assert json.dumps(with_hooks.body["system"]) == json.dumps(without.body["system"])
    assert json.dumps(with_hooks.body["tools"]) == json.dumps(without.body["tools"])
    added = "\n".join(reminders(with_hooks))  # the context went to the user message instead
    assert "SessionStart:startup hook additional context: ON-CALL: alice" in added and "TICKET-42" in added


# ---- 9. PreCompact decides


def test_a_pre_compact_exit_2_refuses_the_compaction(cli, fake_server, repo):
    write_hooks(
        repo,
        {"PreCompact": [hook({"err": "not during a deploy", "exit": 2})], "PostCompact": [hook()]},
        contextWindow=20_000,
    )
    big_file(repo, fake_server)
    result = cli("-p", "please read big.txt")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    assert fake_server.requests_for("compact") == [] and logged(repo, "PostCompact") == []
    [line] = [line for line in result.stderr.splitlines() if "PreCompact" in line]
    assert "not during a deploy" in line and "kept" in line
    last = fake_server.requests_for("main")[-1].body["messages"]
    assert "line 01499 of the big file" in json.dumps(last)  # the conversation as it was


def test_pre_compact_stdout_joins_the_summary_instructions(cli, fake_server, repo):
    write_hooks(
        repo, {"PreCompact": [hook({"out": "KEEP-THE-BANANAS: list every file touched"})]}, contextWindow=20_000
    )
    big_file(repo, fake_server)
    result = cli("-p", "please read big.txt")
    assert result.returncode == 0, result.stderr
    [compact] = fake_server.requests_for("compact")
    assert "KEEP-THE-BANANAS: list every file touched" in compact.body["messages"][-1]["content"][-1]["text"]
    assert "KEEP-THE-BANANAS" not in json.dumps(fake_server.requests_for("main")[-1].body)


# ---- more of the contract


def test_post_tool_use_block_and_context_reach_the_model_beside_the_result(cli, fake_server, repo):
    said = {
        "decision": "block",
        "reason": "lint failed: E501",
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "ran ruff"},
    }
    write_hooks(repo, {"PostToolUse": {"Bash": [hook({"out": said})]}})
    bash_call(fake_server, "echo hi")
    result = cli("-p", "run it", "--allowedTools", "Bash")
    assert result.returncode == 0, result.stderr
    after = fake_server.requests_for("main")[1]
    [ran] = tool_results(after)
    assert not ran.get("is_error") and ran["content"].strip() == "hi"  # the tool ran; its result is as it was
    notes = "\n".join(reminders(after))
    assert "lint failed: E501" in notes and "PostToolUse:Bash hook additional context: ran ruff" in notes


def test_the_hooks_of_one_event_run_at_the_same_time(cli, fake_server, repo):
    # Each waits for the file the other makes: run one after the other, both would time out.
    a, b = repo / "a.flag", repo / "b.flag"
    first = hook(command=f"touch {a}; while [ ! -e {b} ]; do sleep 0.02; done; echo FIRST-DONE", timeout=5)
    second = hook(command=f"touch {b}; while [ ! -e {a} ]; do sleep 0.02; done; echo SECOND-DONE", timeout=5)
    write_hooks(repo, {"UserPromptSubmit": [first, second]})
    fake_server.on(Reply.text("ok"), purpose="main")
    result = cli("-p", "hi")
    assert result.returncode == 0 and "timed out" not in result.stderr, result.stderr
    notes = "\n".join(reminders(fake_server.requests_for("main")[0]))
    assert notes.index("FIRST-DONE") < notes.index("SECOND-DONE")  # kept in the settings' order


def test_continue_false_on_pre_tool_use_ends_the_turn_before_the_call(cli, fake_server, repo):
    write_hooks(repo, {"PreToolUse": {"Bash": [hook({"out": {"continue": False, "stopReason": "freeze is on"}})]}})
    bash_call(fake_server, "touch made.txt")
    result = cli("-p", "make a file", "--allowedTools", "Bash")
    assert not (repo / "made.txt").exists()
    assert len(fake_server.requests_for("main")) == 1
    assert "freeze is on" in result.stderr and "Traceback" not in result.stderr
    assert result.returncode == 0  # the turn ended as the hook asked, as in Claude Code: not a failure
    fake_server.on(Reply.text("resumed"), purpose="main")
    resumed = cli("-c", "-p", "go on")
    assert resumed.returncode == 0, resumed.stderr
    messages = fake_server.requests_for("main")[-1].body["messages"]
    uses = [b["id"] for m in messages for b in m["content"] if b.get("type") == "tool_use"]
    results = [b["tool_use_id"] for m in messages for b in m["content"] if b.get("type") == "tool_result"]
    assert uses == results  # the stopped call has a result: the resumed conversation is valid


def test_session_start_plain_stdout_is_context_for_the_first_message(cli, fake_server, repo):
    write_hooks(repo, {"SessionStart": {"startup": [hook({"out": "ON-CALL: bob"})]}})
    fake_server.on(Reply.text("ok"), purpose="main")
    fake_server.on(Reply.text("ok again"), purpose="main")
    assert cli("-p", "hi").returncode == 0
    assert cli("-c", "-p", "and now?").returncode == 0  # resume: the matcher says startup only
    first, resumed = fake_server.requests_for("main")
    assert any("SessionStart:startup hook" in t and "ON-CALL: bob" in t for t in reminders(first))
    assert json.dumps(resumed.body["messages"]).count("ON-CALL: bob") == 1  # kept from the first turn only
    assert [e["source"] for e in logged(repo)] == ["startup"]


def test_session_end_fires_when_the_turn_fails_or_is_blocked(cli, fake_server, repo):
    write_hooks(repo, {"SessionEnd": [hook()]})
    fake_server.on(Reply.error(400, "bad request"), purpose="main")
    failed = cli("-p", "hi")
    assert failed.returncode == 1
    write_hooks(repo, {"SessionEnd": [hook()], "UserPromptSubmit": [hook({"exit": 2, "err": "no"})]})
    blocked = cli("-p", "hi")
    assert blocked.returncode == 1
    assert [e["reason"] for e in logged(repo, "SessionEnd")] == ["other", "other"]


def test_hooks_started_in_a_subfolder_run_there_with_the_project_dir(cli, fake_server, repo):
    sub = repo / "pkg"
    sub.mkdir()
    write_hooks(repo, {"UserPromptSubmit": [hook(command='python3 "$CLAUDE_PROJECT_DIR"/.claude/hook.py')]})
    fake_server.on(Reply.text("ok"), purpose="main")
    result = cli("-p", "hi", cwd=sub)
    assert result.returncode == 0, result.stderr
    [entry] = logged(repo, "UserPromptSubmit")
    assert entry["cwd"] == str(sub) and entry["_env"]["CLAUDE_PROJECT_DIR"] == str(repo)


def test_a_pre_compact_refusal_holds_for_the_turn_and_does_not_switch_auto_compaction_off(cli, fake_server, repo):
    write_hooks(repo, {"PreCompact": [hook({"err": "not during a deploy", "exit": 2})]}, contextWindow=20_000)
    (repo / "big.txt").write_text("".join(f"line {i:05d} of the big file with some words\n" for i in range(1500)))
    fake_server.on(Reply.tool("Read", {"file_path": "big.txt"}), purpose="main")
    fake_server.on(Reply.tool("Read", {"file_path": "big.txt", "limit": 10}), purpose="main", times=4)
    fake_server.on(Reply.text("done"), purpose="main")
    result = cli("-p", "read big.txt")
    assert result.returncode == 0, result.stderr
    assert len(logged(repo, "PreCompact")) == 1  # asked once: its answer holds for the rest of the turn
    assert "Auto-compact is off" not in result.stderr and result.stderr.count("Compaction skipped") == 1


# ---- a formatter on PostToolUse


FORMATTER = r"""
import json, sys
path = json.load(sys.stdin)["tool_input"]["file_path"]
text = open(path).read()
open(path, "w").write(text.replace("\t", "    "))
"""


def test_a_file_a_post_tool_use_formatter_changed_can_be_edited_without_a_new_read(cli, fake_server, repo):
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "format.py").write_text(FORMATTER)
    write_hooks(repo, {"PostToolUse": {"Write|Edit": [hook(command="python3 .claude/format.py")]}})
    fake_server.on(Reply.tool("Write", {"file_path": "calc.py", "content": "def f():\n\treturn 1\n"}), purpose="main")
    fake_server.on(
        Reply.tool("Edit", {"file_path": "calc.py", "old_string": "    return 1", "new_string": "    return 2"}),
        purpose="main",
    )
    fake_server.on(Reply.text("done"), purpose="main")
    result = cli("-p", "write calc.py", "--allowedTools", "Write", "Edit")
    assert result.returncode == 0, result.stderr
    assert (repo / "calc.py").read_text() == "def f():\n    return 2\n"
    after_write, after_edit = fake_server.requests_for("main")[1:3]
    assert "A PostToolUse hook changed" in " ".join(user_texts(after_write))
    [edit] = tool_results(after_edit)
    assert not edit.get("is_error"), edit


def test_what_session_start_hooks_write_to_claude_env_file_reaches_every_bash_command(cli, fake_server, repo):
    env_hook = 'echo "export DEPLOY_TARGET=staging" >> "$CLAUDE_ENV_FILE"; echo "if then fi" >> "$CLAUDE_ENV_FILE"'
    write_hooks(repo, {"SessionStart": [hook(command=env_hook)]})
    fake_server.on(Reply.tool("Bash", {"command": "echo target=$DEPLOY_TARGET"}), purpose="main")
    fake_server.on(Reply.text("done"), purpose="main")
    result = cli("-p", "where do we deploy?", "--allowedTools", "Bash")
    assert result.returncode == 0, result.stderr
    [bash] = tool_results(fake_server.requests_for("main")[1])
    assert "target=staging" in bash["content"]  # the broken second line did not stop the command


def test_an_async_hook_does_not_hold_the_turn_and_a_once_hook_runs_once(cli, fake_server, repo):
    release = repo / "release"
    waiting = {**hook({"wait": str(release), "out": "AFTER-RELEASE"}), "async": True, "timeout": 20}
    write_hooks(repo, {"PostToolUse": {"Bash": [waiting]}, "PreToolUse": {"Bash": [{**hook(), "once": True}]}})
    fake_server.on(Reply.tool("Bash", {"command": "true"}), purpose="main")
    fake_server.on(Reply.tool("Bash", {"command": "touch release"}), purpose="main")  # only reached unblocked
    fake_server.on(Reply.text("done"), purpose="main")
    result = cli("-p", "go", "--allowedTools", "Bash")
    assert result.returncode == 0, result.stderr
    assert "timed out" not in result.stderr and release.exists()
    assert len(logged(repo, "PreToolUse")) == 1  # `once`: the second Bash call ran no PreToolUse hook
    assert len(logged(repo, "PostToolUse")) == 2  # each call's, the first still waiting when the second ran
