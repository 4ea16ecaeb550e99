"""The memory layers' lifecycle parts, each built from the session's `PartContext`.

    working_state_part    compaction's working state, beside the summary
    compaction_part    Layer 5: auto-compaction, the budget line, files read on resume
    instructions_part  Layer 1: path-scoped rules and nested CLAUDE.md files as attachments
    recall_part        Layer 3: the prefetch and its attachments
    extraction_part    Layer 4: the gate and the batched fork at turn end

The runtime lists them, with the other features' parts, in `runtime.PARTS`.
"""

from __future__ import annotations

from claude_mini.agent.lifecycle import PartContext
from claude_mini.base import paths
from claude_mini.memory.compact.compactor import Compactor, fork_summary
from claude_mini.memory.compact.part import CompactPart
from claude_mini.memory.compact.working_state import WorkingStatePart
from claude_mini.memory.extract.part import Extractor
from claude_mini.memory.instructions import InstructionPart
from claude_mini.memory.recall.part import RecallPart


def working_state_part(ctx: PartContext) -> WorkingStatePart:
    """Compaction's working state: the rules and nested files attached so far, the memories saved."""
    runtime = ctx.runtime

    def memories() -> list[str]:
        extractor = runtime.extractor
        return extractor.saved_names if extractor is not None else []

    return WorkingStatePart(instructions=lambda: [a.path for a in runtime.tracker.active()], memories=memories)


def compaction_part(ctx: PartContext) -> CompactPart:
    """Layer 5 over the session's compactor (summaries from a forked request)."""
    return CompactPart(Compactor(ctx.runtime, fork_summary), ctx.notices)


def instructions_part(ctx: PartContext) -> InstructionPart:
    """Layer 1's attachments over the runtime's tracker (the runtime points it at a rebuilt one)."""
    return InstructionPart(ctx.runtime.tracker)


def recall_part(ctx: PartContext) -> RecallPart:
    """Layer 3 over the project's memory folder and, when the tier is on, the team's."""
    return RecallPart(ctx.store, ctx.config, ctx.notices, cache_dir=paths.recall_cache_dir(), team_root=ctx.team_root)


def extraction_part(ctx: PartContext) -> Extractor:
    """Layer 4 for the session's first conversation (auto memory is checked at each turn end)."""
    return Extractor.for_runtime(ctx.config, ctx.session, ctx.store, ctx.policy, ctx.notices)
