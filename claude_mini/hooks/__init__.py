"""User hooks: commands from settings run on the session's lifecycle events (issue 16)."""
