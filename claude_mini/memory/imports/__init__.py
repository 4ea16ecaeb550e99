"""`claude-mini memory import --from claude-code|codex|gemini`: another assistant's memory of
this project, as topic files in the private memory folder.

    sources.py   where Claude Code, Codex and Gemini CLI keep it, and reading it (never writing)
    plan.py      duplicates (doctor's detection) and secrets left out; the files written

Everything imported carries `source: import:<tool>` and `imported_from: <file>`; nothing is
ever overwritten.
"""

from claude_mini.memory.imports.plan import PlannedImport, apply_import, plan_import
from claude_mini.memory.imports.sources import TOOL_NAMES, TOOLS, Foreign, Source, read_source

__all__ = ["TOOLS", "TOOL_NAMES", "Foreign", "PlannedImport", "Source", "apply_import", "plan_import", "read_source"]
