"""The team tier's check on the main agent's own writes: a Write or Edit whose target is in
the team folder is refused when the folder is not trusted, or when the file as it will be
holds a secret or personal data (memory/team/privacy.py).

The secret guard (memory/secrets/guard.py) carries it: `SecretGuard(..., team=TeamWriteCheck(...))`
asks it after its own check, so it sits in front of every rule and mode as the secret guard
does. The model is told to write there only when the user asks; promote and extraction's
proposals run the same check in memory/team/moves.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from claude_mini.memory.secrets.guard import UncheckedChange, lands_in, text_after, unchecked_text
from claude_mini.memory.team.folder import TeamTier
from claude_mini.memory.team.privacy import PersonalContext, team_refusal
from claude_mini.permissions import Deny


class TeamWriteCheck:
    """Refusals for the Write/Edit calls that land in the team folder."""

    def __init__(
        self,
        tier: Callable[[], TeamTier | None],
        context: Callable[[TeamTier], PersonalContext] = PersonalContext.of_tier,
    ) -> None:
        self.tier = tier  # asked at each call: trusting the folder mid-session takes effect
        self._context_of = context
        self._context: PersonalContext | None = None  # git is asked once, at the first write

    def refusal(self, tool_name: str, input: dict[str, Any], cwd: Path | None) -> Deny | None:
        """The Deny for a team-folder write that must not happen, else None."""
        raw = input.get("file_path")
        tier = self.tier() if tool_name in ("Write", "Edit") else None
        if tier is None or not lands_in(raw, tier.root, cwd):
            return None
        name = os.path.basename(str(raw))
        problem = tier.write_problem()
        if problem:
            return Deny(f"refused this {tool_name} of {name}: {problem}")
        try:
            after = text_after(tool_name, input, cwd)
        except UncheckedChange as unchecked:
            return Deny(unchecked_text(tool_name, unchecked, f"{name} in the team memory folder"))
        if self._context is None:
            self._context = self._context_of(tier)
        refusal = team_refusal(after or "", self._context, name)
        return Deny(refusal) if refusal else None
