"""Background shells: Bash run_in_background returns at once; BashOutput reads what is new;
KillShell and the session's end leave no process behind; output is capped on disk."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from claude_mini.agent.background_shells import BackgroundShellPart
from claude_mini.base.notices import NoticeChannel
from claude_mini.tools import ToolContext, ToolError, ToolResult
from claude_mini.tools.background import BackgroundShells, Spool
from claude_mini.tools.bash import BashTool
from claude_mini.tools.bash_output import BashOutputTool
from claude_mini.tools.kill_shell import KillShellTool
from tests.processes import alive, ends_soon, pid_in


@pytest.fixture
def shells() -> BackgroundShells:
    return BackgroundShells(kill_grace=1.0)


@pytest.fixture
def bg(tmp_path: Path, shells: BackgroundShells) -> ToolContext:
    return ToolContext(cwd=tmp_path, project_root=tmp_path, shells=shells)


def session(work: Callable[[], Awaitable[None]], shells: BackgroundShells) -> None:
    """Run `work` in one event loop, then end the shells as the session's end does."""

    async def go() -> None:
        try:
            await work()
        finally:
            await shells.close()

    asyncio.run(go())


async def call(tool: Any, ctx: ToolContext, **input: Any) -> ToolResult:
    return await tool.call(input, ctx)


async def until(condition: Callable[[], bool]) -> None:
    """Wait for `condition` (a file written, output arrived); the ceiling only stops a hung test."""
    for _ in range(3000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never became true")


def written(path: Path) -> Callable[[], bool]:
    return lambda: path.exists() and bool(path.read_text().strip())


def test_bash_returns_an_id_at_once_and_bashoutput_reads_what_is_new(bg, shells, tmp_path) -> None:
    script = (
        "echo first; touch said1; until [ -e go ]; do sleep 0.02; done; echo second; echo third; touch said2; sleep 300"
    )

    async def work() -> None:
        started = await call(BashTool(), bg, command=script, run_in_background=True, description="counter")
        assert started.content.startswith("Command running in the background as bash_1.")
        assert started.metadata["bash_id"] == "bash_1"
        await until(lambda: (tmp_path / "said1").exists() and shells.get("bash_1").spool.total >= 6)
        first = await call(BashOutputTool(), bg, bash_id="bash_1")
        assert first.content.splitlines()[0].startswith("Shell bash_1: running · echo first")
        assert first.content.endswith("New output:\nfirst\n")
        again = await call(BashOutputTool(), bg, bash_id="bash_1")
        assert again.content.endswith("(no new output)")
        (tmp_path / "go").touch()
        await until(lambda: (tmp_path / "said2").exists() and shells.get("bash_1").spool.total >= 19)
        second = await call(BashOutputTool(), bg, bash_id="bash_1", filter="^th")
        assert second.content.endswith("New matching lines:\nthird")  # `second` did not match: consumed
        assert (await call(BashOutputTool(), bg, bash_id="bash_1")).content.endswith("(no new output)")

    session(work, shells)


def test_a_cd_in_the_background_does_not_move_later_calls(bg, shells, tmp_path) -> None:
    (tmp_path / "sub").mkdir()

    async def work() -> None:
        await call(BashTool(), bg, command="cd sub && pwd", run_in_background=True)
        await until(lambda: not shells.get("bash_1").running)
        assert bg.cwd == tmp_path
        result = await call(BashOutputTool(), bg, bash_id="bash_1")
        assert result.content.startswith("Shell bash_1: completed (exit code 0)")
        assert result.content.endswith(f"{tmp_path / 'sub'}\n")

    session(work, shells)


def test_a_failed_command_says_its_exit_code(bg, shells) -> None:
    async def work() -> None:
        await call(BashTool(), bg, command="echo oops >&2; exit 3", run_in_background=True)
        await until(lambda: not shells.get("bash_1").running)
        result = await call(BashOutputTool(), bg, bash_id="bash_1")
        assert result.content.startswith("Shell bash_1: failed (exit code 3)")
        assert "oops" in result.content and result.metadata["exit_code"] == 3

    session(work, shells)


def test_killshell_ends_the_shell_and_what_it_started(bg, shells, tmp_path) -> None:
    command = f"sleep 300 & echo $! > {tmp_path}/child.pid; echo $$ > {tmp_path}/shell.pid; wait"

    async def work() -> None:
        await call(BashTool(), bg, command=command, run_in_background=True)
        await until(written(tmp_path / "child.pid"))
        await until(written(tmp_path / "shell.pid"))
        killed = await call(KillShellTool(), bg, shell_id="bash_1")
        assert killed.content.startswith("Killed background shell bash_1")
        assert ends_soon(pid_in(tmp_path / "child.pid")) and ends_soon(pid_in(tmp_path / "shell.pid"))
        again = await call(KillShellTool(), bg, shell_id="bash_1")
        assert again.content == "Background shell bash_1 had already ended: killed. Nothing left running."
        status = await call(BashOutputTool(), bg, bash_id="bash_1")
        assert status.content.startswith("Shell bash_1: killed")

    session(work, shells)


def test_the_sessions_end_kills_every_shell_and_removes_the_spools(bg, shells, tmp_path) -> None:
    pids: list[int] = []

    async def work() -> None:
        for n in range(2):
            await call(BashTool(), bg, command=f"echo $$ > {tmp_path}/{n}.pid; sleep 300", run_in_background=True)
        # one that ended but left a child running in its group
        await call(BashTool(), bg, command=f"sleep 300 & echo $! > {tmp_path}/left.pid", run_in_background=True)
        for name in ("0.pid", "1.pid", "left.pid"):
            await until(written(tmp_path / name))
            pids.append(pid_in(tmp_path / name))
        await until(lambda: not shells.get("bash_3").running)
        assert all(alive(pid) for pid in pids)

    folder = None

    async def go() -> None:
        nonlocal folder
        await work()
        folder = shells.folder()
        await shells.close()

    asyncio.run(go())
    assert all(ends_soon(pid) for pid in pids)
    assert folder is not None and not os.path.exists(folder)


def test_an_unknown_id_and_a_broken_filter_are_one_clear_line(bg, shells) -> None:
    async def work() -> None:
        with pytest.raises(ToolError, match=r"^No background shell 'bash_9' in this session \(shells: none yet\)\.$"):
            BashOutputTool().validate({"bash_id": "bash_9"}, bg)
        await call(BashTool(), bg, command="echo kept", run_in_background=True)
        await until(lambda: not shells.get("bash_1").running)
        with pytest.raises(ToolError, match=r"shells: bash_1\)"):
            await call(KillShellTool(), bg, shell_id="bash_2")
        with pytest.raises(ToolError, match="^filter is not a valid regular expression .*nothing was read"):
            await call(BashOutputTool(), bg, bash_id="bash_1", filter="(")
        assert (await call(BashOutputTool(), bg, bash_id="bash_1")).content.endswith("kept\n")

    session(work, shells)


def test_without_a_session_registry_background_is_refused(tmp_path) -> None:
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    with pytest.raises(ToolError, match="^Background shells are not available here"):
        asyncio.run(BashTool().call({"command": "true", "run_in_background": True}, ctx))


def test_the_model_hears_once_when_a_shell_ends_on_its_own(bg, shells) -> None:
    notices = NoticeChannel()
    part = BackgroundShellPart(shells, notices)

    async def work() -> None:
        await call(BashTool(), bg, command="echo done", run_in_background=True)
        await call(BashTool(), bg, command="sleep 300", run_in_background=True)
        await until(lambda: not shells.get("bash_1").running)
        notes = part.attachments()
        assert notes == [
            "Background shell bash_1 (echo done) has ended: completed (exit code 0), 5 bytes of output unread. "
            'Read it with BashOutput (bash_id "bash_1").'
        ]
        assert part.attachments() == []  # once
        assert [n.text for n in notices.said()] == ["Background shell bash_1 ended: completed (exit code 0)."]
        await call(KillShellTool(), bg, shell_id="bash_2")
        assert part.attachments() == []  # killed by the model: it knows
        assert part.context_report() == []
        assert [n.text for n in notices.said()] == ["Background shell bash_1 ended: completed (exit code 0)."]

    session(work, shells)


def test_the_spool_keeps_the_newest_output_within_its_cap(tmp_path) -> None:
    spool = Spool(tmp_path / "out", cap=1000)
    for n in range(100):
        spool.write(f"line {n:03}\n".encode())  # 9 bytes each: 900
    assert spool.read(0, 10_000) == (b"".join(f"line {n:03}\n".encode() for n in range(100)), 0)
    for n in range(100, 300):
        spool.write(f"line {n:03}\n".encode())
    assert os.path.getsize(tmp_path / "out") <= 1000
    data, dropped = spool.read(0, 10_000)
    assert data.endswith(b"line 299\n") and dropped == spool.start > 0
    assert len(data) + dropped == 300 * 9
    head_tail, _ = spool.read(spool.start, 100)
    assert b"bytes of output omitted" in head_tail and head_tail.endswith(b"line 299\n")
    spool.close()


def test_a_cut_utf8_character_waits_for_its_last_byte(bg, shells, tmp_path) -> None:
    async def work() -> None:
        await call(BashTool(), bg, command="sleep 300", run_in_background=True)
        shell = shells.get("bash_1")
        shell.spool.write("é".encode()[:1])
        assert (await call(BashOutputTool(), bg, bash_id="bash_1")).content.endswith("(no new output)")
        shell.spool.write("é".encode()[1:])
        assert (await call(BashOutputTool(), bg, bash_id="bash_1")).content.endswith("New output:\né")

    session(work, shells)


def test_a_disk_that_refuses_the_output_stops_the_spool_not_the_command(tmp_path) -> None:
    spool = Spool(tmp_path / "out", cap=1000)
    spool.write(b"kept\n")
    os.unlink(tmp_path / "out")
    (tmp_path / "out").mkdir()  # the next rewrite past the cap cannot replace it
    spool.write(b"x" * 2000)
    assert "Later output was dropped" in spool.problem
    spool.write(b"more")  # ignored, no error
    spool.close()


class MarkingSandbox:
    """A sandbox stand-in that runs commands as they are and, like the real one, removes a
    protected file a command created once it ends (sandbox/box.py's remove_created)."""

    def __init__(self, protected: Path) -> None:
        self.protected = protected
        self.temp_dir = str(protected.parent)
        self.prepared: list[list[str]] = []

    def runs_sandboxed(self, input: dict[str, Any]) -> bool:
        return True

    def missing_problem(self) -> str | None:
        return None

    async def prepare(self, argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        self.prepared.append(argv)
        return argv, env

    def for_fork(self, memory_dir: Path | None) -> MarkingSandbox:
        return self

    def absent_protected(self) -> list[str]:
        return [] if self.protected.exists() else [str(self.protected)]

    def remove_created(self, absent: Any) -> str:
        made = [p for p in absent if os.path.lexists(p)]
        for path in made:
            os.unlink(path)
        return f"[The sandbox removed {', '.join(made)}]" if made else ""


def test_a_sandboxed_background_shell_is_prepared_and_cleaned_after_like_any_bash_call(shells, tmp_path) -> None:
    box = MarkingSandbox(tmp_path / ".mcp.json")
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path, shells=shells, sandbox=box)

    async def work() -> None:
        await call(BashTool(), ctx, command="echo '{}' > .mcp.json", run_in_background=True)
        await until(lambda: shells.get("bash_1").ended.is_set())
        result = await call(BashOutputTool(), ctx, bash_id="bash_1")
        assert f"[The sandbox removed {tmp_path / '.mcp.json'}]" in result.content

    session(work, shells)
    assert len(box.prepared) == 1 and box.prepared[0][-1].endswith("echo '{}' > .mcp.json\n")
    assert not (tmp_path / ".mcp.json").exists()
