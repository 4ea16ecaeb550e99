"""Fixtures for the REPL's unit tests: a console that prints to a string, a runtime with no network."""

from __future__ import annotations

import asyncio
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from claude_mini.config import load_config
from claude_mini.runtime import Runtime, build_runtime
from claude_mini.ui import commands

WIDTH = 100


def make_console(width: int = WIDTH) -> Console:
    """A plain console writing to a StringIO (read it back with `.file.getvalue()`)."""
    return Console(file=StringIO(), width=width, color_system=None, highlight=False, emoji=False)


class StubClient:
    """A model client that must not be called: commands never talk to the model themselves."""

    name = "stub"
    provider = "stub"  # ModelClient: neither the API nor the offline model

    async def stream(self, request):  # pragma: no cover - a call is a test failure
        raise AssertionError("the model was called")
        yield

    async def aclose(self) -> None:
        pass


class FakeHost:
    """What a command sees of the REPL, recording what it was asked to do."""

    def __init__(self, choice: str | None = None) -> None:
        self.turns: list[str] = []
        self.choice = choice
        self.choices: list[list[tuple[str, str]]] = []
        self.exited = False
        self.changes = 0
        self.input: str | None = None

    async def run_turn(self, text: str) -> None:
        self.turns.append(text)

    async def choose(self, message, options):
        self.choices.append(list(options))
        return self.choice

    def request_exit(self) -> None:
        self.exited = True

    def session_changed(self) -> None:
        self.changes += 1

    def put_in_input(self, text: str) -> None:
        self.input = text


@pytest.fixture
def runtime(repo: Path) -> Runtime:
    return build_runtime(load_config(repo), client=StubClient())


@pytest.fixture
def slash(runtime: Runtime):
    """`slash("/cost")` runs a command and returns what it printed; `.host` is the FakeHost."""
    host = FakeHost()

    async def get_runtime() -> Runtime:
        return runtime

    def run(line: str, *, width: int = WIDTH) -> str:
        console = make_console(width)
        asyncio.run(commands.run_command(line, host, console, get_runtime, commands.session_table(runtime)))
        return console.file.getvalue()

    return SimpleNamespace(run=run, host=host, runtime=runtime)
