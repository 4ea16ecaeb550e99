"""`/compact [instructions]`: summarise the conversation now (Layer 5; DESIGN.md section 5);
`/compact --show`: print the working state a compaction would attach now."""

from __future__ import annotations

from claude_mini.memory.compact.compactor import CompactionError, CompactionRefused
from claude_mini.ui.commands import CommandContext, command


@command(
    "compact",
    help="Summarise the conversation to free context; optional focus instructions; "
    "--show prints the checkpoint it would keep.",
    usage="[instructions | --show]",
)
async def compact_now(ctx: CommandContext) -> None:
    """Run a compaction with the user's instructions appended to the summary prompt."""
    if ctx.args.strip() == "--show":
        show_working_state(ctx)
        return
    compactor = ctx.rt.compactor
    if compactor is None:
        ctx.console.print("Compaction is not available in this session.", markup=False)
        return
    if not ctx.rt.session.messages:
        ctx.console.print("Nothing to compact: the conversation is empty.", markup=False)
        return
    ctx.console.print("Compacting the conversation…", markup=False)
    try:
        result = await compactor.compact(ctx.args)
    except CompactionRefused as exc:
        ctx.console.print(f"Compaction skipped: {exc}.", markup=False)
        return
    except CompactionError as exc:
        ctx.console.print(f"Compaction failed: {exc}", markup=False)
        return
    compactor.failures = 0  # a manual success re-enables auto-compact after the breaker tripped
    ctx.console.print(
        f"Compacted: {result.tokens_before:,} → {result.tokens_after:,} tokens; restored "
        f"{len(result.restored_files)} file(s), {result.reattached} rule(s) and the latest request.",
        markup=False,
    )


def show_working_state(ctx: CommandContext) -> None:
    """The checkpoint a compaction now would put beside the summary (nothing is compacted)."""
    from claude_mini.base.text import estimate_tokens
    from claude_mini.memory.compact.working_state import WorkingStatePart, render_working_state

    hook = ctx.rt.lifecycle.find(WorkingStatePart)
    text = render_working_state(hook.current(ctx.rt.agent)) if hook is not None else ""
    if not text:
        ctx.console.print("The checkpoint is empty: no request, command or file change to keep yet.", markup=False)
        return
    ctx.console.print(text, markup=False, highlight=False)
    ctx.console.print(
        f"({estimate_tokens(text):,} tokens; a compaction now would attach this beside its summary)",
        style="dim",
        markup=False,
    )
