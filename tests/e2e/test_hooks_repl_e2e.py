"""End to end: the user's hooks in the REPL (a pseudo-terminal, pexpect).

The hooks are test_hooks_e2e.py's `.claude/hook.py`: each logs its stdin JSON to
`.claude/hooklog.jsonl` and does what its JSON spec says.
"""

from __future__ import annotations

from tests.e2e import test_repl
from tests.e2e.test_hooks_e2e import SUMMARY, hook, logged, write_hooks
from tests.e2e.test_repl import main_replies, wait_until
from tests.fake_anthropic import Reply
from tests.processes import gone

start = test_repl.start  # the fixture: a trusted repo, auto-memory off


def events(repo, *names: str) -> list[tuple[str, str | None]]:
    """(event, its source/reason/trigger/notification_type) of what the hooks received."""
    keys = ("source", "reason", "trigger", "notification_type")
    return [
        (e["hook_event_name"], next((e[k] for k in keys if k in e), None))
        for e in logged(repo)
        if not names or e["hook_event_name"] in names
    ]


def test_the_status_line_shows_a_running_hook(start, fake_server, repo):
    release = repo / "release"
    write_hooks(repo, {"UserPromptSubmit": [hook({"wait": str(release), "out": "RELEASED"})]})
    main_replies(fake_server, Reply.text("answered"))
    term = start()
    term.ready()
    term.submit("hello")
    term.expect("running UserPromptSubmit hook")
    assert fake_server.requests_for("main") == []  # the prompt waits for its hook
    release.touch()
    term.expect("answered")
    [request] = fake_server.requests_for("main")
    assert "RELEASED" in str(request.body["messages"][-1])


def test_esc_cancels_a_running_pre_tool_use_hook_and_kills_it(start, fake_server, repo):
    pid_file = repo / "hook.pid"
    write_hooks(repo, {"PreToolUse": {"Bash": [hook({"pid": str(pid_file), "wait": str(repo / "never")})]}})
    main_replies(fake_server, Reply.tool("Bash", {"command": "touch made.txt"}), Reply.text("after"))
    term = start()
    term.ready()
    term.submit("make a file")
    term.expect("running PreToolUse hook")
    wait_until(pid_file.exists)
    wait_until(lambda: pid_file.read_text().strip() != "")
    pid = int(pid_file.read_text())
    assert not gone(pid)
    term.child.send("\x1b")
    term.expect("Interrupted")
    wait_until(lambda: gone(pid))
    assert not (repo / "made.txt").exists()
    term.ready()
    term.submit("go on")
    term.expect("after")
    messages = fake_server.requests_for("main")[-1].body["messages"]
    uses = [b["id"] for m in messages for b in m["content"] if b.get("type") == "tool_use"]
    results = [b["tool_use_id"] for m in messages for b in m["content"] if b.get("type") == "tool_result"]
    assert uses == results  # the cancelled call still has its result: the conversation stays valid
    assert not (repo / "made.txt").exists()


def test_a_permission_prompt_raises_notification(start, fake_server, repo):
    write_hooks(repo, {"Notification": [hook()]})
    main_replies(fake_server, Reply.tool("Write", {"file_path": "new.txt", "content": "x\n"}), Reply.text("Wrote it."))
    term = start()
    term.ready()
    term.submit("create new.txt")
    term.expect(r"Create new\.txt\?")
    wait_until(lambda: logged(repo, "Notification"))
    [note] = logged(repo, "Notification")
    assert note["notification_type"] == "permission_prompt" and "Write" in note["message"]
    assert {"session_id", "transcript_path", "cwd"} <= set(note)
    term.child.send("1")
    term.expect("Wrote it.")


def test_an_idle_prompt_raises_notification_after_the_threshold(start, fake_server, repo):
    write_hooks(repo, {"Notification": {"idle_prompt": [hook()]}}, messageIdleNotifThresholdMs=200)
    main_replies(fake_server, Reply.text("answered"))
    term = start()
    term.ready()
    assert logged(repo) == []  # no answer yet: nothing to wait for
    term.submit("hello")
    term.expect("answered")
    wait_until(lambda: logged(repo, "Notification"))
    [note] = logged(repo, "Notification")
    assert note["notification_type"] == "idle_prompt" and note["message"]


def test_exit_raises_session_end_prompt_input_exit(start, fake_server, repo):
    write_hooks(repo, {"SessionStart": [hook()], "SessionEnd": [hook()]})
    term = start()
    term.ready()
    term.submit("hello")
    term.expect("You said: hello")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    assert events(repo) == [("SessionStart", "startup"), ("SessionEnd", "prompt_input_exit")]


def test_clear_ends_the_session_and_starts_another(start, fake_server, repo):
    write_hooks(repo, {"SessionStart": [hook()], "SessionEnd": [hook()]})
    term = start()
    term.ready()
    term.submit("hello")
    term.expect("You said: hello")
    term.ready()
    term.submit("/clear")
    term.ready()
    term.submit("again")
    term.expect("You said: again")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    assert events(repo) == [
        ("SessionStart", "startup"),
        ("SessionEnd", "clear"),
        ("SessionStart", "clear"),
        ("SessionEnd", "prompt_input_exit"),
    ]
    first, ended, second, _ = logged(repo)
    assert ended["session_id"] == first["session_id"] != second["session_id"]


def test_compact_raises_pre_and_post_compact_with_its_instructions(start, fake_server, repo):
    write_hooks(repo, {event: [hook()] for event in ("PreCompact", "PostCompact", "SessionStart")})
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    term = start()
    term.ready()
    term.submit("hello")
    term.expect("You said: hello")
    term.ready()
    term.submit("/compact keep the bananas")
    term.expect("Compacted")
    term.ready()
    [pre] = logged(repo, "PreCompact")
    [post] = logged(repo, "PostCompact")
    assert (pre["trigger"], pre["custom_instructions"]) == ("manual", "keep the bananas")
    assert post["trigger"] == "manual" and "SUMMARY-TEXT" in post["compact_summary"]
    assert events(repo, "SessionStart") == [("SessionStart", "startup"), ("SessionStart", "compact")]
    [compact] = fake_server.requests_for("compact")
    assert "keep the bananas" in str(compact.body["messages"][-1])


def test_esc_cancels_a_running_user_prompt_submit_hook_and_the_prompt_comes_back_unsent(start, fake_server, repo):
    pid_file, release = repo / "hook.pid", repo / "release"
    write_hooks(repo, {"UserPromptSubmit": [hook({"pid": str(pid_file), "wait": str(release)})]})
    main_replies(fake_server, Reply.text("answered"))
    term = start()
    term.ready()
    term.submit("first")
    term.expect("running UserPromptSubmit hook")
    wait_until(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    pid = int(pid_file.read_text())
    term.child.send("\x1b")
    term.expect("Interrupted")
    term.expect("it is back in the input")
    wait_until(lambda: gone(pid))
    assert fake_server.requests_for("main") == []  # nothing reached the model unapproved
    release.touch()
    term.ready()
    term.submit(" again")  # the withdrawn "first" is back in the input: Enter sends it, now approved
    term.expect("answered")
    [request] = fake_server.requests_for("main")
    assert "first again" in str(request.body["messages"])


def test_a_slow_session_start_hook_holds_the_first_prompt_and_shows_it(start, fake_server, repo):
    release = repo / "release"
    context = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ON-CALL: carol"}}
    write_hooks(repo, {"SessionStart": [hook({"wait": str(release), "out": context})]})
    main_replies(fake_server, Reply.text("answered"))
    term = start()
    term.expect("running SessionStart hook")
    term.submit("hello")
    release.touch()
    term.expect("answered")
    [request] = fake_server.requests_for("main")
    assert "ON-CALL: carol" in str(request.body["messages"][0])
