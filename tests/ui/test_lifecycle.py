"""The declared lifecycle (agent/lifecycle.py) as the runtime drives it: start, /clear and /resume,
a compaction (before and after, in hook order), and the end of the session."""

from __future__ import annotations

import asyncio
import contextlib

from claude_mini.agent.lifecycle import Lifecycle, Part
from claude_mini.llm.messages import Message, TextBlock
from claude_mini.session import Session


class Recorder(Part):
    """Writes down every lifecycle point it is called at."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def on_session_start(self, agent, source):
        self.calls.append(("start", source))

    def on_session_change(self, session, source):
        self.calls.append(("change", source))

    async def before_compact(self, agent, request):
        self.calls.append(("before_compact", request.trigger))

    async def after_compact(self, agent):
        self.calls.append(("after_compact", str(len(agent.session.messages))))

    async def on_session_end(self, agent, reason="other"):
        self.calls.append(("end", reason))


def ready_to_compact(runtime) -> None:
    """A conversation to compact, and a summariser that needs no model."""

    async def summarise(agent, prompt, messages):
        return "<summary>the summary</summary>"

    runtime.compactor.summarise = summarise
    runtime.session.add_message(Message("user", [TextBlock("hello")]))


def test_the_runtime_calls_every_session_point_in_order(runtime, repo, slash):
    recorder = Recorder()
    runtime.agent.lifecycle = Lifecycle([*runtime.lifecycle.parts, recorder])
    ready_to_compact(runtime)

    async def go():
        await runtime.start(source="startup", dream=False)
        await runtime.compactor.compact()
        runtime.switch_session(Session(repo), "clear")
        await runtime.close()

    asyncio.run(go())
    slash.run("/clear")  # the command goes through the same switch
    assert recorder.calls == [
        ("start", "startup"),
        ("before_compact", "manual"),
        ("after_compact", "1"),
        ("change", "clear"),
        ("end", "other"),
        ("change", "clear"),
    ]


class SlowAfterCompact(Part):
    """Stands in for the user's hooks, first in the order: its after_compact is cut short (Esc)."""

    async def after_compact(self, agent):
        raise asyncio.CancelledError


def test_after_compact_unwinds_in_reverse_so_the_memory_layers_finish_first(runtime):
    recorder = Recorder()
    runtime.agent.lifecycle = Lifecycle([SlowAfterCompact(), *runtime.lifecycle.parts, recorder])
    ready_to_compact(runtime)

    async def go():
        with contextlib.suppress(asyncio.CancelledError):
            await runtime.compactor.compact()

    asyncio.run(go())
    assert ("after_compact", "1") in recorder.calls and runtime.compactor.count == 1
