"""How full the context is, in the words the status line, /context and /config use.

The numbers come from the compactor's meter (Layer 5, memory/compact/) when
the session has one, else from the last response's usage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from claude_mini.runtime import Runtime


def human_tokens(n: int) -> str:
    """1234 -> '1.2k', 200000 -> '200k'."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M".replace(".0M", "M")


def context_window(runtime: Runtime) -> int:
    """The model's context window (the `contextWindow` setting, the client's, or the table)."""
    from claude_mini.memory.compact.budget import context_window as window_of  # startup: memory loads later

    return window_of(runtime.config, runtime.agent.model, runtime.client)


def context_used(runtime: Runtime) -> int:
    """Tokens the next request would carry: the last request's usage plus what was added since."""
    if runtime.compactor is not None:
        return runtime.compactor.used()
    usage = runtime.agent.last_usage
    return usage.total_input + usage.output_tokens


def compaction_line(runtime: Runtime) -> str:
    """Where auto-compact triggers, whether it is on, and how many compactions happened."""
    from claude_mini.memory.compact.compactor import MAX_FAILURES  # startup: memory loads after the first paint

    c = runtime.compactor
    if c is None:
        return "Auto-compact: not available"
    state = (
        "on"
        if c.auto_enabled
        else (
            f"off after {MAX_FAILURES} failures (/compact still works)"
            if c.failures >= MAX_FAILURES
            else "off (autoCompact setting)"
        )
    )
    return f"Auto-compact: {state}, at {c.threshold:,} tokens · {c.count} compaction(s) this session"


def compact_warning(runtime: Runtime) -> str | None:
    """A short warning once the context is near the auto-compact threshold (memory/compact/'s margin)."""
    from claude_mini.memory.compact.budget import warning_margin  # startup: memory loads after the first paint

    c = runtime.compactor
    if c is None or not c.auto_enabled:
        return None
    left = c.threshold - context_used(runtime)
    return f"auto-compact in {human_tokens(max(left, 0))}" if left < warning_margin(c.window) else None
