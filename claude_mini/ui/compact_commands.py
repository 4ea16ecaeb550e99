"""`/compact [instructions]`: summarise the conversation now (Layer 5; DESIGN.md section 5)."""

from __future__ import annotations

from claude_mini.memory.compact import CompactionError, CompactionRefused
from claude_mini.ui.commands import CommandContext, command


@command("compact", help="Summarise the conversation to free context; optional focus instructions.",
         usage="[instructions]")
async def compact_now(ctx: CommandContext) -> None:
    """Run a compaction with the user's instructions appended to the summary prompt."""
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
