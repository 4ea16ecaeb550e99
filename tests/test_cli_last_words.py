"""Print mode's last words after an interruption or an internal error (printmode.run_print) say the
transcript is saved only when every write of it succeeded."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from claude_mini.base.notices import say
from claude_mini.config import load_config
from claude_mini.llm.messages import Message
from claude_mini.ui import printmode
from claude_mini.ui.printmode import PrintRun


def end_the_run(monkeypatch, *, failure: BaseException, disk_full: bool) -> None:
    """PrintRun.run saves the prompt, maybe hits a full disk with the next entry, then fails."""

    async def run(self: PrintRun, text: str) -> int:
        session = self.runtime.session
        session.add_message(Message.user(text))
        if disk_full:
            session.transcript.path.unlink()
            session.transcript.path.mkdir()  # the next write fails, as on a full disk
        session.add_message(Message.user("the answer"))
        raise failure

    monkeypatch.setattr(PrintRun, "run", run)
    display = printmode.stderr_display  # its default stream is the one of import time
    monkeypatch.setattr(printmode, "stderr_display", lambda output_format: display(output_format, sys.stderr))


@pytest.mark.parametrize("disk_full", [False, True])
def test_interrupted_says_whether_the_transcript_is_saved(repo: Path, monkeypatch, capsys, disk_full):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # no request is made
    end_the_run(monkeypatch, failure=KeyboardInterrupt(), disk_full=disk_full)
    assert printmode.run_print(load_config(repo), "hi", "text", say) == 130
    last = capsys.readouterr().err.splitlines()[-1]
    if disk_full:
        assert (
            last.startswith("claude-mini: interrupted. The transcript could not be saved completely (Is a directory); ")
            and "holds what came before the failed write." in last
        )
    else:
        assert re.fullmatch(
            r"claude-mini: interrupted\. The transcript is saved; `claude-mini -r [0-9a-f-]{36}` continues\.", last
        )


@pytest.mark.parametrize("disk_full", [False, True])
def test_an_internal_error_says_whether_the_transcript_is_saved(repo: Path, monkeypatch, capsys, disk_full):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    end_the_run(monkeypatch, failure=RuntimeError("a bug"), disk_full=disk_full)
    assert printmode.run_print(load_config(repo), "hi", "text", say) == 1
    err = capsys.readouterr().err
    assert err.count("claude-mini: ") == 1 + disk_full  # the write failure's warning, then the error
    last = err.splitlines()[-1]
    assert last.startswith("claude-mini: internal error: RuntimeError: a bug. ")
    assert ("The transcript is saved" in last) is not disk_full
    assert ("could not be saved completely" in last) is disk_full
