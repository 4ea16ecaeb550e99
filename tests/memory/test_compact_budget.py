"""Past half the auto-compact threshold, the model is told how full its context is,
once per request, in the next user message (after the cached prefix)."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

from claude_mini.config import load_config
from claude_mini.config.layers import merge
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.memory.compact.budget import budget_line
from claude_mini.runtime import Runtime, build_runtime
from tests.fake_anthropic import Reply

LINE = "tokens used before auto-compaction"


def test_the_line_says_used_threshold_and_share():
    def line(used: int, auto: bool = True) -> str | None:
        compactor = SimpleNamespace(used=lambda: used, threshold=167_000, window=200_000, auto_enabled=auto)
        return budget_line(compactor)  # type: ignore[arg-type]

    assert line(83_500) is None
    assert line(92_420) == (
        "Context: 92,400 of 167,000 tokens used before auto-compaction (55%). "
        "Wrap up or save what matters if the work is long."
    )
    assert line(92_420, auto=False) is None  # off: measured against the window
    assert line(150_000, auto=False).startswith("Context: 150,000 of 200,000 tokens used of the context window")


def _count(message: dict) -> int:
    return json.dumps(message["content"]).count(LINE)


def test_below_half_nothing_above_half_once_in_each_request_after(repo, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    config = load_config(repo)
    config.settings = merge(config.settings, {"recall": {"strategy": "off"}})

    async def scenario() -> Runtime:
        rt = build_runtime(config, client=AnthropicClient(base_url=fake_server.base_url, api_key="test"))
        fake_server.queue(Reply.text("first answer"))
        async for _ in rt.agent.run("what is in this repository?"):
            pass
        # Now the context passes half the threshold, without reaching it.
        used = rt.compactor.used()
        rt.config.settings["autoCompactThreshold"] = used * 1.6 / rt.compactor.window
        fake_server.queue(
            Reply.tools([("Read", {"file_path": "app.py"}), ("Glob", {"pattern": "*.py"})]), Reply.text("second answer")
        )
        async for _ in rt.agent.run("read app.py"):
            pass
        await rt.close()
        return rt

    rt = asyncio.run(scenario())
    assert rt.compactor.count == 0
    first, with_line, after_tools = fake_server.requests_for("main")
    assert LINE not in json.dumps(first.body)  # below half: nothing
    assert _count(with_line.body["messages"][-1]) == 1  # joins the user's message, once
    last = after_tools.body["messages"][-1]
    assert _count(last) == 1  # once in the tool results' message, not beside each result
    assert sum(_count(m) for m in after_tools.body["messages"]) == 2  # once per request
    # cache-safe: the line only ever joins the newest message; what was sent before is unchanged
    sent = len(with_line.body["messages"]) - 1
    assert after_tools.body["messages"][:sent] == with_line.body["messages"][:sent]
