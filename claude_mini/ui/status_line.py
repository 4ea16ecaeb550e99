"""The status line under the prompt: model · mode · context used · cost · shells · background work.

prompt-toolkit draws it on every repaint, so it only reads. Until the background
loader has built the runtime it shows the configured model and the mode
Shift-Tab has chosen so far; the session's `NoticeChannel` names the background
jobs that run now (recalling, extracting, ...).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from prompt_toolkit.formatted_text import FormattedText

from claude_mini.llm.local import LocalClient
from claude_mini.ui.context_usage import compact_warning, context_used, context_window, human_tokens

if TYPE_CHECKING:
    from claude_mini.base.notices import NoticeChannel
    from claude_mini.runtime import Runtime
    from claude_mini.session import CostLine

MODE_LABELS = {
    "default": "default",
    "acceptEdits": "accept edits",
    "plan": "plan",
    "bypassPermissions": "bypass permissions",
}


def next_mode(mode: str, modes: Sequence[str]) -> str:
    """The mode after `mode` in cycling order (Shift-Tab)."""
    return modes[(list(modes).index(mode) + 1) % len(modes)] if mode in modes else modes[0]


def unknown_price_models(runtime: Runtime, lines: Iterable[CostLine]) -> set[str]:
    """The models of these requests whose cost is unknown: no price known, and not an offline
    model this session ran (those are free), whichever model answers now."""
    offline = {c.model for c in (runtime.client, *runtime.retired_clients) if isinstance(c, LocalClient)}
    return {model for line in lines for model in line.unpriced} - offline


def cost_text(runtime: Runtime) -> str:
    """The session's cost: `$0.0123`; requests to a model with no known price make it unknown
    (`$0.0123 + unknown`), except on the offline model, which is free."""
    costs = runtime.session.costs
    dollars = f"${costs.total_cost:.4f}"
    if not unknown_price_models(runtime, costs.by_purpose.values()):
        return dollars
    return f"{dollars} + unknown" if costs.total_cost else "cost unknown"


def status_line(
    runtime: Runtime | None, *, model: str, pending_mode: str, notices: NoticeChannel, exit_armed: bool
) -> FormattedText:
    """The line for `runtime` (None while it loads: then `model` and `pending_mode` are shown)."""
    if exit_armed:
        return FormattedText([("class:toolbar.warn", " Press Ctrl-C or Ctrl-D again to exit")])
    mode = runtime.policy.mode if runtime else pending_mode
    mode_style = "" if mode == "default" else "class:toolbar.mode"
    line = [
        ("", f" {runtime.agent.model if runtime else model} · "),
        (mode_style, f"mode: {MODE_LABELS.get(mode, mode)}"),
        ("", " (shift-tab)"),
    ]
    if runtime:
        used, window = context_used(runtime), context_window(runtime)
        line.append(
            (
                "",
                f" · context {human_tokens(used)}/{human_tokens(window)} "
                f"({100 * used / window:.0f}%) · {cost_text(runtime)}",
            )
        )
        shells = runtime.agent.ctx.shells
        running = len(shells.running()) if shells is not None else 0
        if running:  # background shells (Bash run_in_background); /bashes lists them
            line.append(("", f" · {running} shell{'s' if running > 1 else ''}"))
        warning = compact_warning(runtime)
        if warning:
            line.append(("class:toolbar.warn", f" · {warning}"))
    words = notices.words()
    if words:
        line.append(("class:toolbar.warn", f" · {words}…"))
    return FormattedText(line)
