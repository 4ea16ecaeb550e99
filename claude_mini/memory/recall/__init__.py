"""Layer 3: recall. Each user turn, bring back the few stored memories that this query needs.

    part.py       RecallPart: the lifecycle side (prefetch at turn start or while the user types,
                  what is injected and when, the 5-file and 60 KiB budgets)
    engine.py     RecallEngine: one selection (scan, side-model or lexical pick, rendering)
    selection.py  pure: the side model's request and answer, rendered attachments, the records
    lexical.py    the ranking: tokens, candidates, BM25 (bm25s + PyStemmer) fused with the
                  embeddings, the shortlist and the strong matches
    embed.py      the static embedding model (wordllama), loaded lazily off start-up
    scan.py       the folder scan and its on-disk index (only changed files are read)
    archive.py    what gc archived, ranked beside the live files and restored when chosen
    team.py       the team folder's files, searched beside the private ones as `team/<file>`
    staleness.py  what a recalled memory names in the repository that is gone or rewritten
                  since (no model call; also `memory doctor`)

Importing this package has no side effects; import the modules themselves.
"""
