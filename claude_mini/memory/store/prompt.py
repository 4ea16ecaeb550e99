"""Layer 2 in the system prompt: how the memory folder works, then MEMORY.md (capped).

Built once per session with the rest of the system prompt; memories written
later reach the model through recall, so the cached prefix stays stable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_mini.memory.store.index import render_index_for_prompt
from claude_mini.memory.store.keep import overflow_order

if TYPE_CHECKING:
    from claude_mini.memory.store.memory_store import MemoryStore

_PROMPT_SECTION = """\
# Memory

You have a persistent, file-based memory for this project in `{root}`. It outlives this \
conversation: save what a future session would need and could not easily rediscover.

Memory types:
- user: who the user is (role, expertise, how they like to work).
- feedback: corrections or approaches the user confirmed ("don't mock the database").
- project: decisions, goals, deadlines, incidents: context that is not in the code.
- reference: where things live outside the repository (dashboards, tickets, docs).

To save a memory, write one topic file per memory in that folder (e.g. `deploy-steps.md`):

```markdown
---
name: Short title
description: One line saying what this is and when it matters (recall decides by it)
type: feedback
---
The fact or rule itself. Use absolute dates.
**Why:** the reason behind it.
**How to apply:** when and where it applies.
```

feedback and project memories need the **Why:** and **How to apply:** lines. Then add \
one line for it to `MEMORY.md`: `- [Short title](deploy-steps.md) — short hook`. Update \
or remove a memory that turns out wrong instead of adding a contradicting one.

Do not save: what can be derived from the code or git history, temporary state of the \
current task, anything already in CLAUDE.md, secrets or credentials.

"""
_INDEX_HEADING = "## MEMORY.md\n"
# With a team tier above it, the private index says which one it is.
_PRIVATE_INDEX_HEADING = "## MEMORY.md (private: yours only, on this machine; the team memory above is shared)\n"


def memory_prompt_section(store: MemoryStore, *, team: bool = False) -> str:
    """The system-prompt section explaining the memory system, followed by MEMORY.md (labelled
    private when the repository has a team tier)."""
    head = _PROMPT_SECTION.format(root=store.root) + (_PRIVATE_INDEX_HEADING if team else _INDEX_HEADING)
    text = store.index_text()
    if not text.strip():
        return head + "(empty: no memories saved yet)\n"
    rendered, _ = render_index_for_prompt(text, lambda: _overflow_order(store))
    return head + rendered + "\n"


def _overflow_order(store: MemoryStore) -> list[str]:
    """What the prompt leaves out first when MEMORY.md is over its limits (the keep-scores rank it)."""
    return overflow_order(store)
