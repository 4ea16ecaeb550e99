"""One child the Agent tool runs: what a UI shows of it live and `/agents last` prints after it ends.

It lives beside the lifecycle, below the subagents package, because lifecycle parts (the user's
hooks, file checkpoints) and the UIs are told about children without depending on how they run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_mini.llm.messages import Message


@dataclass
class SubagentRun:
    """One child: what a UI shows of it live and `/agents last` prints after it ends."""

    agent_id: str
    agent_type: str
    description: str
    tool_use_id: str
    depth: int
    transcript: Path
    status: str = "running"  # running | completed | stopped (a limit) | failed | cancelled
    tool_count: int = 0
    tokens: int = 0  # billed: input (cached or not) + output, over all its requests
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    text: str = ""  # its final answer (or why it has none)
    messages: list[Message] = field(default_factory=list)
    # The `hooks` of its type's frontmatter (settings' format), run for this child only; empty when
    # it has none or its file may not run code (a project's type in a folder not trusted).
    hooks: dict[str, Any] = field(default_factory=dict)
    hooks_file: Path | None = None

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def summary(self) -> str:
        """`[subagent Explore · 7 tool calls · 12,345 tokens · 8.2 s]`."""
        calls = f"{self.tool_count} tool call{'s' * (self.tool_count != 1)}"
        state = "" if self.status == "completed" else f" · {self.status}"
        return f"[subagent {self.agent_type} · {calls} · {self.tokens:,} tokens · {self.seconds:.1f} s{state}]"
