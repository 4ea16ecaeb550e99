"""Layer 5: compaction. When the context is nearly full, what survives?

    part.py           CompactPart: the lifecycle side (auto-compact before a request that would
                      cross the threshold, once on "prompt too long", the budget line, resume)
    compactor.py      Compactor: the summary fork, then the conversation replaced and the recent
                      files restored
    budget.py         the context window, ContextMeter, the auto-compact threshold
    working_state.py  what a summary must not lose, taken exactly from the conversation and
                      attached beside it (not /rewind's file checkpoints: claude_mini/rewind/)

Importing this package has no side effects; import the modules themselves.
"""
