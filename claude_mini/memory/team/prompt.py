"""The team tier in the system prompt: after the instruction files, before the private index.

Position is precedence, as in Layer 1: the instruction files, then the team's MEMORY.md,
then the user's private one. The team index has its own limits, the same numbers as the
private one (200 lines, 25,000 bytes) counted separately, and its own WARNING line. Lines git
left from a conflicted merge are not shown (`memory doctor --fix` rebuilds the file).
"""

from __future__ import annotations

from collections.abc import Callable

from claude_mini.memory.store import render_index_for_prompt
from claude_mini.memory.store.index import CONFLICT_MARKER
from claude_mini.memory.team.folder import TEAM_PREFIX, TeamTier

_SECTION = """\
# Team memory

Memories shared by everyone who works on this repository, in `{root}`: committed with the \
code and reviewed like it. Position is precedence: the instruction files above come first, \
then this team memory, then your private memory below; where two disagree, follow the \
earlier one. When a request needs a team memory, recall brings its file in, named \
`{prefix}<file>`.

Save new memories in your private memory, not here. A feedback or project memory that \
concerns the whole team is proposed for the team memory by memory extraction, or by the \
user with `claude-mini memory promote NAME`; write into `{root}` only when the user asks, \
and never put secrets, people's names or e-mail addresses, or paths on this machine there.

## Team MEMORY.md ({shown}/MEMORY.md)
"""


def team_prompt_section(tier: TeamTier, warn: Callable[[str], None] | None = None) -> str:
    """The team memory section: what it is and how it ranks, then the team's MEMORY.md (capped).

    `warn` hears why an index was taken as empty (a FIFO, a link out of the folder or to /proc).
    """
    head = _SECTION.format(root=tier.root, prefix=TEAM_PREFIX, shown=tier.shown)
    text = tier.store(warn).index_text()  # a FIFO or a folder in its place reads as empty
    text = "\n".join(line for line in text.splitlines() if not CONFLICT_MARKER.match(line))
    if not text.strip():
        return head + "(empty: no team memories yet)\n"
    rendered, _ = render_index_for_prompt(text, label=f"the team's {tier.shown}/MEMORY.md")
    return head + rendered + "\n"
