"""The REPL's input side: @mentions, completion, keys, the status line and background status."""

from __future__ import annotations

import asyncio
import os
import pty
import subprocess
import termios
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from claude_mini.base.notices import NoticeChannel
from claude_mini.config import load_config
from claude_mini.llm.messages import Usage
from claude_mini.ui.mentions import ProjectFiles, ReplCompleter, expand_mentions, rank_paths
from claude_mini.ui.repl import Repl
from claude_mini.ui.terminal import quiet_tty


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / ".gitignore").write_text(".env\nbuild/\n")
    (repo / ".env").write_text("TOKEN=secret\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.txt").write_text("built\n")
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("print('main')\n")
    (repo / "my notes.md").write_text("notes\n")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (repo / "data.bin").write_bytes(b"abc\x00def")
    return repo


def expand(text: str, repo: Path, **kw):
    files = ProjectFiles(repo)
    return expand_mentions(text, cwd=repo, project_root=repo, ignored=files.is_ignored, **kw)


def test_a_mention_attaches_the_file(project):
    out = expand("explain @app.py, please", project)
    assert out.warnings == []
    assert out.text.startswith("explain @app.py, please\n\n")
    assert '<attached-file path="app.py">\ndef greet():\n    return "hello"\n</attached-file>' in out.text
    assert out.read == [project / "app.py"]


def test_nested_quoted_and_repeated_mentions(project):
    out = expand('see @src/main.py and @"my notes.md" and @src/main.py again', project)
    assert out.text.count('<attached-file path="src/main.py">') == 1
    assert '<attached-file path="my notes.md">\nnotes\n' in out.text


def test_a_folder_mention_attaches_its_listing(project):
    out = expand("what is in @src", project)
    assert '<attached-folder path="src">\nmain.py\n</attached-folder>' in out.text


@pytest.mark.parametrize(
    ("mention", "problem"),
    [
        ("@missing.py", "@missing.py does not exist"),
        ("@logo.png", "@logo.png is a binary file"),
        ("@data.bin", "@data.bin is a binary file"),
        ("@.env", "@.env is ignored by .gitignore"),
        ("@build/out.txt", "@build/out.txt is ignored by .gitignore"),
        ("@../outside.txt", "@../outside.txt is outside the project"),
        ("@/etc/hostname", "@/etc/hostname is outside the project"),
    ],
)
def test_mentions_that_cannot_be_attached_warn_and_the_message_still_goes(project, mention, problem):
    (project.parent / "outside.txt").write_text("x")
    out = expand(f"look at {mention}", project)
    assert out.text == f"look at {mention}"
    assert len(out.warnings) == 1 and out.warnings[0].startswith(problem)
    assert out.warnings[0].endswith("sent without it.")


def test_a_read_deny_rule_blocks_the_mention(project):
    out = expand("show @app.py", project, read_denied=lambda path: "denied by Read(app.py)")
    assert out.text == "show @app.py" and "may not be read (denied by Read(app.py))" in out.warnings[0]


def test_emails_and_lone_at_signs_are_not_mentions(project):
    out = expand("mail me@example.com @ noon", project)
    assert out.text == "mail me@example.com @ noon" and out.warnings == []


def test_a_huge_file_is_cut(project):
    (project / "big.txt").write_text("y" * 150_000)
    out = expand("@big.txt", project)
    assert "[truncated: the first 100,000 of 150,000 characters" in out.text
    assert len(out.text) < 101_000


def test_project_files_respect_gitignore(project):
    files = ProjectFiles(project).list()
    assert "app.py" in files and "src/main.py" in files and "src/" in files and "my notes.md" in files
    assert ".env" not in files and not any(f.startswith("build") for f in files)


def test_project_files_outside_git_use_the_gitignore_file(tmp_path):
    folder = tmp_path / "plain"
    (folder / "node_modules").mkdir(parents=True)
    (folder / "node_modules" / "x.js").write_text("")
    (folder / "keep.py").write_text("")
    (folder / ".gitignore").write_text("node_modules/\n")
    files = ProjectFiles(folder)
    assert files.list() == [".gitignore", "keep.py"]
    assert files.is_ignored(folder / "node_modules" / "x.js") or files.is_ignored(folder / "node_modules")


def test_rank_paths_prefers_prefixes():
    paths = ["docs/app.md", "app.py", "src/app/", "src/main.py", "lib/mapper.py"]
    assert rank_paths(paths, "app") == ["app.py", "docs/app.md", "src/app/", "lib/mapper.py"]
    assert rank_paths(paths, "SRC/M") == ["src/main.py"]


def completions(completer: ReplCompleter, text: str) -> list[str]:
    return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]


def test_completion_of_commands_and_files(project):
    completer = ReplCompleter(ProjectFiles(project))
    found = completions(completer, "/co")  # other modules may register more /co... commands
    assert {"/config", "/context", "/cost"} <= set(found) and all(c.startswith("/co") for c in found)
    assert completions(completer, "/cost now") == []
    assert completions(completer, "explain @app") == ["@app.py"]
    assert completions(completer, "read @my") == ['@"my notes.md"']
    assert completions(completer, "plain words") == []


def test_background_status_nests_and_notifies():
    status = NoticeChannel()
    calls = []
    status.subscribe(lambda: calls.append(status.words()))
    status.set_background("extract", True)
    status.set_background("extract", True)
    status.set_background("extract", False)
    with status.busy("recall"):
        assert status.words() == "extracting, recalling"
    status.set_background("extract", False)
    status.set_background("compact", False)  # an unmatched stop does not go negative
    assert status.running() == [] and status.words() == ""
    assert calls[-1] == "" and len(calls) == 7  # every change notifies, even a no-op stop


def test_quiet_tty_ignores_a_stream_that_is_not_a_terminal(tmp_path, monkeypatch):
    changes: list[object] = []
    monkeypatch.setattr(termios, "tcsetattr", lambda *args: changes.append(args))
    ran = []
    with (tmp_path / "f").open("w") as fh, quiet_tty(fh):
        ran.append(True)  # the body runs; no terminal setting is touched, none raised
    assert ran == [True] and changes == []


def test_quiet_tty_stops_echo_on_a_terminal_and_restores_it():
    leader, follower = pty.openpty()
    try:
        with open(follower, "w", closefd=False) as stream:
            with quiet_tty(stream):
                inside = termios.tcgetattr(follower)[3]
            after = termios.tcgetattr(follower)[3]
    finally:
        os.close(leader)
        os.close(follower)
    assert not inside & termios.ECHO and not inside & termios.ICANON
    assert after & termios.ECHO and after & termios.ICANON


# ---------------------------------------------------------------- the prompt itself


def run_prompt(repo: Path, keys: str, attempts: int = 1) -> list[object]:
    """Type `keys` into a real prompt session (a pipe instead of a terminal); what each prompt returned."""

    async def go() -> list[object]:
        with create_pipe_input() as pipe:
            repl = Repl(load_config(repo), input=pipe, output=DummyOutput())
            pipe.send_text(keys)
            results: list[object] = []
            for _ in range(attempts):
                try:
                    results.append(await repl.prompt.prompt_async(handle_sigint=False))
                except EOFError:
                    results.append(EOFError)
            return results

    return asyncio.run(asyncio.wait_for(go(), 10))


def test_enter_sends_and_backslash_or_alt_enter_continue(repo):
    assert run_prompt(repo, "one\\\rtwo\x1b\rthree\r") == ["one\ntwo\nthree"]


def test_blank_input_is_not_sent(repo):
    assert run_prompt(repo, "   \rreal\r") == ["real"]


def test_ctrl_c_clears_then_twice_exits(repo):
    assert run_prompt(repo, "draft\x03kept\r") == ["kept"]
    assert run_prompt(repo, "\x03\x03") == [EOFError]
    assert run_prompt(repo, "\x04\x04") == [EOFError]


def test_esc_esc_clears_the_input_into_the_history_and_on_an_empty_prompt_sends_rewind(repo, isolated_env):
    assert run_prompt(repo, "half a thought\x1b\x1bsent\r") == ["sent"]
    [history] = (isolated_env.home / "projects").glob("*/history")
    assert "+half a thought" in history.read_text()  # Up brings it back
    assert run_prompt(repo, "\x1b\x1b") == ["/rewind"]


def test_history_is_kept_per_project(repo, isolated_env):
    run_prompt(repo, "remember me\r")
    history = list((isolated_env.home / "projects").glob("*/history"))
    assert len(history) == 1 and "+remember me" in history[0].read_text()
    assert run_prompt(repo, "\x1b[A\r") == ["remember me"]  # Up recalls it in a new process


def test_status_line_before_and_after_the_runtime(repo):
    from tests.ui.conftest import StubClient

    async def go():
        with create_pipe_input() as pipe:
            repl = Repl(load_config(repo), input=pipe, output=DummyOutput())
            before = "".join(text for _, text in repl.toolbar())
            repl.cycle_mode()  # Shift-Tab before the runtime exists is kept for later
            from claude_mini.runtime import build_runtime

            runtime = build_runtime(repl.config, client=StubClient())
            runtime.agent.last_usage = Usage(input_tokens=50_000, output_tokens=1000)
            runtime.session.costs.add("main", "claude-sonnet-4-6", Usage(input_tokens=1_000_000))
            repl.loader.runtime_future.set_result(runtime)
            after = "".join(text for _, text in repl.toolbar())
            repl.notices.set_background("extract", True)
            busy = "".join(text for _, text in repl.toolbar())
            return before, after, busy, repl._pending_mode

    before, after, busy, pending = asyncio.run(go())
    assert before == " claude-sonnet-4-6 · mode: default (shift-tab)"
    assert pending == "acceptEdits"
    assert after == " claude-sonnet-4-6 · mode: default (shift-tab) · context 51k/200k (26%) · $3.0000"
    assert busy.endswith(" · extracting…")


def test_git_check_ignore_is_used_in_a_repository(project):
    assert subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=project).returncode == 0
    files = ProjectFiles(project)
    assert files.is_ignored(project / ".env") and not files.is_ignored(project / "app.py")


class Built:
    """A runtime loader whose runtime is ready (no build thread, no SDK import)."""

    def __init__(self, runtime) -> None:
        self.built = runtime

    async def runtime(self):
        return self.built

    def peek(self):
        return self.built


def test_commands_print_on_the_injected_console_from_the_sessions_table(repo):
    """`Repl(console=...)` prints there; /help lists the session's own commands, and another
    session's table (a second runtime) does not leak into it."""
    from claude_mini.command_table import Command
    from claude_mini.runtime import build_runtime
    from tests.ui.conftest import StubClient, make_console

    console = make_console()

    async def go() -> tuple[bool, bool]:
        with create_pipe_input() as pipe:
            repl = Repl(load_config(repo), input=pipe, output=DummyOutput(), console=console)
            runtime = build_runtime(repl.config, client=StubClient())
            other = build_runtime(repl.config, client=StubClient())
            runtime.commands.put("skills", [Command("ours", "Ours only.", lambda ctx: None)])
            other.commands.put("skills", [Command("theirs", "Another session's.", lambda ctx: None)])
            repl.loader = Built(runtime)  # type: ignore[assignment]
            await repl.handle("/help")
            return repl.console is console, "theirs" in repl.command_table()

    injected, leaked = asyncio.run(asyncio.wait_for(go(), 30))
    out = console.file.getvalue()
    assert injected and not leaked
    assert "/ours" in out and "Ours only." in out and "/theirs" not in out and "/help" in out
