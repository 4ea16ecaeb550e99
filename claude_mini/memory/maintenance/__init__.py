"""Keeping the memory folder healthy: forgetting, consolidation, daily logs, the doctor.

    forget.py        gc (what to archive when the index is nearly full), likely duplicates,
                     purging archived secrets (keep-scores and restore are the store's)
    dream.py         /dream: a forked agent consolidates the folder in a staging area
    dream_commit.py  what the dream staged, checked and made live in one step
    daylog.py        daily-log mode (memory.mode "log")
    doctor.py        `memory doctor` findings and `fix` (a conflicted MEMORY.md is rebuilt)

Importing this package has no side effects; import the modules themselves.
"""
