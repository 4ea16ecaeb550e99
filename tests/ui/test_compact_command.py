"""`/compact` through the real runtime and the fake server: instructions reach the summary request."""

from __future__ import annotations

import asyncio
import io
import json

from rich.console import Console

from claude_mini.command_table import builtin_table
from claude_mini.config import load_config
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.runtime import build_runtime
from claude_mini.ui.commands import CommandContext
from claude_mini.ui.context_usage import compact_warning, compaction_line, context_used
from tests.fake_anthropic import Reply


async def _compact(runtime, args: str) -> str:
    out = io.StringIO()
    ctx = CommandContext(None, runtime, Console(file=out, width=100), args)  # type: ignore[arg-type]
    await builtin_table().find("compact").run(ctx)
    return out.getvalue()


def test_compact_with_instructions(tmp_path, fake_server, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    config = load_config(tmp_path)

    async def scenario():  # one event loop: the client's connections belong to it
        client = AnthropicClient(base_url=fake_server.base_url, api_key="test")
        runtime = build_runtime(config, client=client)
        assert "Nothing to compact" in await _compact(runtime, "")
        fake_server.queue(Reply.text("The answer."))
        async for _ in runtime.agent.run("explain the build"):
            pass
        fake_server.on(Reply.text("<analysis>x</analysis><summary>SUM</summary>"), purpose="compact")
        printed = await _compact(runtime, "focus on the build system")
        await client.aclose()
        return runtime, printed

    runtime, printed = asyncio.run(scenario())
    assert "Compacted" in printed
    [request] = fake_server.requests_for("compact")
    assert "focus on the build system" in json.dumps(request.body["messages"][-1])
    assert request.body["system"] == fake_server.requests_for("main")[0].body["system"]
    [message] = runtime.session.messages
    assert "SUM" in message.text and "explain the build" in message.text
    assert runtime.compactor.count == 1
    assert "1 compaction(s)" in compaction_line(runtime) and "on, at 167,000 tokens" in compaction_line(runtime)
    assert compact_warning(runtime) is None
    runtime.config.settings["autoCompactThreshold"] = (context_used(runtime) + 1_000) / 200_000  # 1k to go
    assert compact_warning(runtime).startswith("auto-compact in ")
    runtime.compactor.failures = 3
    assert "off after 3 failures" in compaction_line(runtime) and compact_warning(runtime) is None
