"""End to end: custom commands typed by the user, through the real CLI against the fake
server: `-p "/name args"` (arguments, `!` lines, @files), a refused `!` line, `claude-mini context
--lint`, and the REPL (the command runs, /help lists it with its source)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e import test_repl
from tests.e2e.conftest import json_lines, trust_folder
from tests.e2e.test_repl import main_replies
from tests.fake_anthropic import Reply

start = test_repl.start  # the fixture: a trusted repo, auto-memory off

GREET = """---
description: Greet someone by name
argument-hint: <name>
---
Say hello to $0 warmly. Today is !`echo SNIPPET-RAN`. Read @notes.txt first.
"""


def write(repo: Path, relative: str, text: str) -> Path:
    path = repo / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def last_user_text(request) -> str:
    content = request.body["messages"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def test_print_mode_sends_the_expanded_command_with_its_snippet_output_and_files(
    run_cli, fake_server, repo, isolated_env
):
    trust_folder(isolated_env.home, repo)  # an untrusted folder's `!` lines never run
    write(repo, ".claude/commands/greet.md", GREET)
    write(repo, "notes.txt", "NOTES-CONTENT\n")
    fake_server.on(Reply.text("Hello, Alice!"), purpose="main")
    result = run_cli("-p", "/greet Alice")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello, Alice!"
    [request] = fake_server.requests_for("main")
    sent = last_user_text(request)
    assert sent.startswith(
        "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n"
        "<command-args>Alice</command-args>\n\nSay hello to Alice warmly. Today is SNIPPET-RAN."
    )
    assert "!`" not in sent and "NOTES-CONTENT" in sent  # the snippet ran; @notes.txt was attached


@pytest.mark.usefixtures("no_sandbox")
def test_a_refused_bang_line_is_one_line_and_no_request(run_cli, fake_server, repo, isolated_env):
    trust_folder(isolated_env.home, repo)  # an untrusted folder's `!` lines never run
    write(repo, ".claude/commands/mark.md", "Mark it: !`touch marker.txt`\n")
    result = run_cli("-p", "/mark")
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("claude-mini: ") and "touch marker.txt" in line
    assert fake_server.requests_for("main") == []
    assert not (repo / "marker.txt").exists()
    as_json = run_cli("-p", "/mark", "--output-format", "stream-json")
    assert as_json.returncode == 1 and fake_server.requests_for("main") == []
    init, final = json_lines(as_json.stdout)
    assert init["subtype"] == "init" and final["type"] == "result" and final["is_error"] is True
    assert "touch marker.txt" in final["result"] and "touch marker.txt" in as_json.stderr


def test_an_allowed_bang_line_runs(run_cli, fake_server, repo, isolated_env):
    trust_folder(isolated_env.home, repo)  # an untrusted folder's `!` lines never run
    write(repo, ".claude/commands/mark.md", "Mark it: !`touch marker.txt && echo MARKED`\n")
    fake_server.on(Reply.text("done"), purpose="main")
    result = run_cli("-p", "/mark", "--allowedTools", "Bash(touch:*)")
    assert result.returncode == 0, result.stderr
    assert (repo / "marker.txt").exists()
    assert "Mark it: MARKED" in last_user_text(fake_server.requests_for("main")[0])


def test_context_lint_reports_a_broken_skill_and_a_builtin_clash(run_cli, repo):
    write(repo, ".claude/skills/broken/SKILL.md", "---\n[[[ nothing to read\n---\nBroken body\n")
    write(repo, ".claude/skills/fine/SKILL.md", "---\ndescription: A fine skill\n---\nBody\n")
    write(repo, ".claude/commands/help.md", "My own help\n")
    result = run_cli("context", "--lint")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert re.search(r"^  fine +skill +project +listed +\.claude/skills/fine/SKILL\.md$", out, re.M)
    lint = out[out.index("Lint:") :]
    assert "Skill .claude/skills/broken/SKILL.md: frontmatter is not valid YAML" in lint
    assert "/help is claude-mini's own command: .claude/commands/help.md is not run by /help" in lint
    data = json.loads(run_cli("context", "--json", "--lint").stdout)
    assert [e["name"] for e in data["skills"]["entries"]] == ["broken", "fine", "help"]
    assert any("broken/SKILL.md" in finding for finding in data["lint"])


def test_repl_runs_a_custom_command_and_help_lists_it_with_its_source(start, fake_server, repo):
    write(
        repo,
        ".claude/commands/frontend/component.md",
        "---\ndescription: Make a React component\nargument-hint: <name>\n---\nCreate the $0 component.\n",
    )
    write(repo, ".claude/commands/help.md", "My own help\n")
    main_replies(fake_server, Reply.text("Component made."))
    term = start()
    term.ready()
    term.submit("/component Button")
    term.expect("Component made.")
    [request] = fake_server.requests_for("main")
    assert "<command-name>/frontend:component</command-name>" in last_user_text(request)
    assert "Create the Button component." in last_user_text(request)
    term.ready()
    term.submit("/help")
    term.expect(r"/frontend:component <name>\s+Make a React component \(project:frontend, also /component\)")
    term.ready()
    term.submit("/skills")
    term.expect(r"frontend:component\s+command\s+project:frontend\s+listed\s+invoked \([\d,]+ tokens\)\s+Make a React")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    assert "/help is claude-mini's own command: .claude/commands/help.md is not run by /help" in " ".join(
        term.output.getvalue().split()
    )


def test_after_clear_the_commands_are_the_new_catalogs(start, fake_server, repo):
    old = write(repo, ".claude/commands/old-one.md", "The old command\n")
    term = start()
    term.ready()
    term.submit("/help")
    term.expect(r"/old-one\s+The old command \(project\)")
    old.unlink()
    write(repo, ".claude/commands/new-one.md", "---\ndescription: The new command\n---\nNew body\n")
    term.ready()
    term.submit("/clear")
    term.expect("Started a new session")
    term.ready()
    term.submit("/old-one")
    term.expect(r"Unknown command /old-one\. Did you mean /new-one\?")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0


SLOW = "---\nallowed-tools: Bash(sleep:*)\n---\nSlept: !`sleep 20 && echo woke`\n"


def test_esc_or_ctrl_c_cancels_a_typed_commands_bang_line_and_nothing_is_sent(start, fake_server, repo):
    write(repo, ".claude/commands/slow.md", SLOW)
    term = start()
    for key in ("\x1b", "\x03"):  # Esc, then Ctrl-C
        term.ready()
        term.submit("/slow")
        term.expect(r"Running !`sleep 20 && echo woke` for /slow… \d+s · esc to interrupt")
        term.child.send(key)
        term.expect(r"/slow was not sent \(interrupted\)\.")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
    assert fake_server.requests_for("main") == []


def test_an_initial_prompt_naming_a_command_with_a_dot_runs_it(start, fake_server, repo):
    write(repo, ".claude/commands/v1.2-notes.md", "Write the notes for 1.2.\n")
    main_replies(fake_server, Reply.text("Notes written."))
    term = start("/v1.2-notes")
    term.expect("Notes written.")
    [request] = fake_server.requests_for("main")
    assert last_user_text(request).startswith("<command-message>v1.2-notes</command-message>")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0


def test_tab_completes_an_alias_and_a_late_command_says_when_it_becomes_one(start, fake_server, repo):
    write(repo, ".claude/commands/frontend/component.md", "Create the $0 component.\n")
    main_replies(fake_server, Reply.text("Component made."))
    term = start()
    term.ready()
    term.submit("/skills")  # the custom commands are registered once the runtime is ready
    term.expect(r"component\s+command\s+project:frontend")
    term.ready()
    term.child.send("/frontend:c")
    term.expect("/frontend:component")  # the completion menu
    term.child.send("\t")
    term.submit(" Button")
    term.expect("Component made.")
    [request] = fake_server.requests_for("main")
    assert "Create the Button component." in last_user_text(request)
    write(repo, ".claude/commands/late.md", "Late body\n")
    term.ready()
    term.submit("/late")
    term.expect(r"/late was added after this conversation started; it becomes a command at the next /clear\.")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0


def test_a_skill_calls_question_names_the_skill_its_args_and_the_rules_it_grants(start, fake_server, repo):
    write(
        repo, ".claude/skills/gl/SKILL.md", "---\ndescription: Git log\nallowed-tools: Bash(git log:*)\n---\nGL BODY\n"
    )
    main_replies(fake_server, Reply.tool("Skill", {"skill": "gl", "args": "--output=/tmp/x"}), Reply.text("done"))
    term = start()
    term.ready()
    term.submit("show the log")
    term.expect(r"Skill\(gl --output=/tmp/x\)")
    term.expect(r"Load the skill gl\? It would allow Bash\(git log:\*\) without asking for the rest of this turn\.")
    term.child.send("1")
    term.expect("done")
    result = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]
    assert "GL BODY" in result["content"]
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
