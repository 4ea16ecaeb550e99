"""The five memory layers that let a stateless model remember (DESIGN.md section 1).

One package per layer; each package's `__init__` lists its modules.

    ┌─ Layer 5  compaction ─────── when the context is nearly full, what survives?
    │     compact/        CompactPart over Compactor; the context budget; the working state
    │                     a summary must not lose (not /rewind's file checkpoints)
    ├─ Layer 4  extraction ─────── what from this turn is worth remembering?
    │     extract/        Extractor (the part) over ExtractionEngine: a forked agent saves memories
    │                     after a turn; the gate, the prompt, the write journal, corrections
    ├─ Layer 3  recall ─────────── which stored memories does this query need?
    │     recall/         RecallPart over RecallEngine: per-turn prefetch, side-model or
    │                     lexical selection, the archive and team tiers, staleness
    ├─ Layer 2  MEMORY.md index ── what memories exist at all?
    │     store/          the memory folder: topic files, MEMORY.md, archive/, usage.json, who is
    │                     current (supersession links), keep-scores, restore, the prompt section
    └─ Layer 1  instructions ───── who am I, how must I behave? (always present)
          instructions/   CLAUDE.md hierarchy, rules and their globs, @imports, lazy attachments

Beside the layers:

    maintenance/    forgetting (gc), /dream, daily logs, `memory doctor`
    secrets/        the secret guard: no credential is written into the memory folder
    team/           the team tier: `.claude/memory/` in the repository, shared by git
    imports/        `memory import --from claude-code|codex|gemini`

Each layer's package builds its own lifecycle part with a `part(ctx)` factory (compact/ two: the
working state and compaction), which `runtime.PARTS` lists; what a part reads from the runtime
later is a small protocol beside it (`CompactorRuntime`, `StoreHolder`, ...), so no layer
imports the runtime.

The layers share the base layer's frontmatter (base/frontmatter.py), atomic_write
and lock (base/fileutil.py).

Imports go down only (pyproject.toml's `memory layers` contract): store at the bottom; then
instructions and secrets; team; recall; maintenance; extract; compact and imports on top.
Bottom to top: injected later, shorter-lived, more flexible. Importing this package has no
side effects.
"""
