"""The five memory layers that let a stateless model remember (DESIGN.md section 1).

    ┌─ Layer 5  compaction ─────── when the context is nearly full, what survives?
    │     compact.py          ContextMeter, Compactor: summary, then the restore of recent files
    ├─ Layer 4  extraction ─────── what from this turn is worth remembering?
    │     extract.py          a forked agent saves memories after a turn; batching, the final run
    │     extract_gate.py     which pending turns are worth a run (no model)
    │     secrets.py          the secret guard: no credential is written into the memory folder
    │     secret_scan.py      what looks like a credential
    │     scan_fold.py        the text as the secret scan sees it
    ├─ Layer 3  recall ─────────── which stored memories does this query need?
    │     recall.py           per-turn prefetch, side-model or lexical selection, attachments
    │     lexical.py          BM25 ranking and the scan cache
    │     archive_recall.py   recall's reach into what gc archived
    │     staleness.py        what a recalled memory names in the repository that is gone or
    │                         rewritten since (no model call; also `memory doctor`)
    ├─ Layer 2  MEMORY.md index ── what memories exist at all?
    │     store/              the memory folder: topic files, MEMORY.md, archive/, usage.json,
    │                         doctor, the system-prompt section (MemoryStore)
    │     team/               the team tier: `.claude/memory/` in the repository (its index in
    │                         the prompt, its files in recall as `team/<file>`, promote/demote,
    │                         the personal-data check), shared by git
    │     imports/            `memory import --from claude-code|codex|gemini`
    │     daylog.py           daily-log mode (memory.mode "log")
    │     forget.py           keep-scores, gc, restore, likely duplicates
    │     supersede.py        corrections: `supersedes` / `superseded_by`, who is current
    │     dream.py            /dream: a forked agent consolidates the folder
    └─ Layer 1  instructions ───── who am I, how must I behave? (always present)
          instructions/       CLAUDE.md hierarchy, rules, @imports, lazy attachments, `context`
          globs.py            gitignore-style globs of path-scoped rules

The layers share the base layer's frontmatter (base/frontmatter.py), atomic_write
and lock (base/fileutil.py).

Bottom to top: injected later, shorter-lived, more flexible. Importing this
package has no side effects.
"""
