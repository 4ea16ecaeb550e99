"""What the REPL says of the transcript after an internal error, and what a signal's exit line
says: built from session.transcript_state, so a failed write is never called saved."""

from __future__ import annotations

import asyncio
import errno
import signal

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from claude_mini import signals
from claude_mini.config import load_config
from claude_mini.runtime import build_runtime
from claude_mini.session import transcript_state
from claude_mini.ui.repl import Repl
from tests.ui.conftest import StubClient

DISK_FULL = OSError(errno.ENOSPC, "No space left on device")


def internal_error_line(repo, monkeypatch, *, disk_full: bool) -> str:
    """The error line of a turn that failed with a bug (after a full disk, maybe)."""
    said: list[str] = []

    async def go() -> None:
        with create_pipe_input() as pipe:
            repl = Repl(load_config(repo), input=pipe, output=DummyOutput())
            runtime = build_runtime(repl.config, client=StubClient())
            runtime.session.transcript.error = DISK_FULL if disk_full else None
            repl.loader.runtime_future.set_result(runtime)

            async def run_turn(text: str) -> None:
                raise RuntimeError("a bug")

            monkeypatch.setattr(repl, "run_turn", run_turn)
            monkeypatch.setattr(type(repl.renderer), "error", lambda self, text: said.append(text))
            await repl.handle("hi")

    asyncio.run(go())
    [line] = said
    return line


def test_an_internal_error_in_the_repl_says_whether_the_transcript_is_saved(repo, monkeypatch):
    line = internal_error_line(repo, monkeypatch, disk_full=True)
    assert line.startswith(
        "internal error: RuntimeError: a bug. The transcript could not be saved completely (No space left on device); "
    )
    assert "The conversation is saved" not in line


class Ended(Exception):
    pass


@pytest.mark.parametrize("disk_full", [False, True])
def test_a_signal_says_whether_the_transcript_of_the_current_session_is_saved(repo, monkeypatch, capsys, disk_full):
    runtime = build_runtime(load_config(repo), client=StubClient())
    runtime.session.transcript.path.parent.mkdir(parents=True, exist_ok=True)
    runtime.session.transcript.path.write_text("{}\n")
    runtime.session.transcript.error = DISK_FULL if disk_full else None
    monkeypatch.setattr(signals, "_last_words", lambda: transcript_state(runtime.session))
    monkeypatch.setattr(signals.os, "_exit", lambda code: (_ for _ in ()).throw(Ended(code)))
    with pytest.raises(Ended):
        signals._exit(signal.SIGTERM, stopped=False)
    last = capsys.readouterr().err.splitlines()[-1]
    if disk_full:
        assert last.startswith("claude-mini: ended by SIGTERM. The transcript could not be saved completely")
    else:
        resume = f"`claude-mini -r {runtime.session.id}` continues."
        assert last == f"claude-mini: ended by SIGTERM. The transcript is saved; {resume}"
