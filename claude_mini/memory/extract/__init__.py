"""Layer 4: extraction. After a turn, a forked agent saves what is worth remembering.

    part.py       Extractor: the lifecycle side (which turn ends start a run, the final run at
                  the session's end, flushing before a compaction, the cursor after a rewind)
    engine.py     ExtractionEngine: the schedule of runs, the cursor, what one run does
    gate.py       which pending turns may hold something durable (no model)
    prompt.py     what the fork is asked: instructions, manifest, the project's memory policies
    journal.py    the fork's policy and write journal (a failed run is rolled back), provenance,
                  what a run saved (MemoryWrites)
    supersede.py  corrections: marking what a new memory `supersedes` (who is current is
                  store/links.py)

Importing this package has no side effects; import the modules themselves.
"""
