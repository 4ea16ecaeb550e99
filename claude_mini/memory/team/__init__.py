"""The team tier: a shared, reviewable memory folder in the repository, beside each person's
private one (DESIGN.md section 8: `.claude/memory/`, setting `memory.teamDir`).

git is the engine that distributes it: the folder has the private folder's format (topic
files with frontmatter, a MEMORY.md index), one memory per file and index lines sorted by
filename, so pull requests show each memory and concurrent additions merge cleanly.

    folder.py    where it is, whether it is on, the trust rule for writing; TeamTier
    prompt.py    its MEMORY.md in the system prompt, after the instructions, before the private index
    moves.py     promote, demote, and what extraction proposes (`team: true`)
    privacy.py   the stricter check: secrets and personal data never reach it
    guard.py     the same check on the main agent's Write/Edit into the team folder
    gitinfo.py   provenance (git user name), the people of the repository, `memory blame`

Reading needs no trust (as CLAUDE.md needs none); nothing is written to the team folder of an
untrusted repository. Recall searches its files beside the private ones as `team/<file>`
(recall/team.py). Importing this package has no side effects.
"""

from claude_mini.memory.team.folder import (
    DEFAULT_TEAM_DIR,
    PROPOSED_DIR,
    TEAM_PREFIX,
    TeamTier,
    is_team_name,
    team_problem,
    team_tier,
)
from claude_mini.memory.team.prompt import team_prompt_section

__all__ = [
    "DEFAULT_TEAM_DIR",
    "PROPOSED_DIR",
    "TEAM_PREFIX",
    "TeamTier",
    "is_team_name",
    "team_problem",
    "team_prompt_section",
    "team_tier",
]
