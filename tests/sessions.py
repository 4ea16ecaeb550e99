"""Running a real runtime in a test: files in a scratch repository, a session against the fake server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from claude_mini.base.notices import NoticeChannel
from claude_mini.config import load_config
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.runtime import Runtime, build_runtime


def write(path: Path, text: str | bytes) -> Path:
    """`text` (or bytes) at `path`, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def run_session(
    fake_server: Any,
    root: Path,
    scenario: Callable[[Runtime], Awaitable[Any]],
    *,
    settings: dict | None = None,
    trusted: bool = False,
) -> Any:
    """`scenario(runtime)` in one event loop, on a started runtime for `root` talking to `fake_server`
    (`settings` as the repository's .claude/settings.local.json; `trusted` trusts the folder for this run)."""
    if settings is not None:
        (root / ".claude").mkdir(exist_ok=True)
        (root / ".claude" / "settings.local.json").write_text(json.dumps(settings))
    config = load_config(root)
    if trusted:
        config.grant_trust(this_run_only=True)

    async def go() -> Any:
        client = AnthropicClient(base_url=fake_server.base_url, api_key="test")
        runtime = build_runtime(config, client=client, notices=NoticeChannel())
        try:
            await runtime.start(source="startup", dream=False)
            return await scenario(runtime)
        finally:
            await runtime.close()

    return asyncio.run(go())


async def turn(runtime: Runtime, text: str) -> None:
    """One user turn, its events consumed."""
    async for _ in runtime.agent.run(text):
        pass
