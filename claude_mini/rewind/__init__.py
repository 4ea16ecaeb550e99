"""File checkpoints and /rewind: go back to before one of the user's messages.

    store.py         one session's checkpoint store: $CLAUDE_MINI_HOME/file-history/<session-id>/
                     (index.json + content-addressed blobs, capped by checkpoints.maxSessionMB)
    hook.py          FileHistoryPart: the lifecycle part that fills it (before_tool/after_tool,
                     subagents included through for_subagent)
    points.py        the points to go back to: the transcript's prompts with their turns' changes
    restore.py       putting the files back (refusing a file changed outside the assistant)
    conversation.py  putting the conversation back (a `rewind` transcript entry, on_rewind)

The REPL's /rewind is ui/rewind_commands.py; `claude-mini checkpoints list|restore` is
subcommands/checkpoints_cli.py. Not to be confused with memory/compact/working_state.py: that is
compaction's working state, attached beside a summary.
"""
