"""Plan mode as the model sees it: a reminder with each user message while the mode is plan, and
one note when the mode left plan (Shift-Tab, /permissions mode, an approved plan).

The policy refuses edits in plan mode (permissions/policy.py); this part tells the model why
before it tries, and how to leave: present the plan with ExitPlanMode (tools/plan.py). The
reminder rides on the user's message as an attachment (DESIGN.md section 3), so the system prompt
and the tool list stay as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_mini.agent.lifecycle import Part, PartContext
from claude_mini.permissions.decisions import EXIT_PLAN_TOOL

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent
    from claude_mini.permissions import PermissionPolicy

PLAN_REMINDER = f"""\
Plan mode is on: the user wants a plan before anything changes. Do not edit, create or delete \
files, and run only commands that change nothing (reading, searching, listing, git status/log/diff); \
the harness refuses anything else. Explore what the task needs, ask the user where something is \
unclear, then call {EXIT_PLAN_TOOL} with the whole plan in markdown (the steps, the files each \
touches, how you will check the result). Wait for the user's approval before doing any of it."""

PLAN_OVER = "Plan mode is off now (permission mode: {mode}): you may make changes as that mode allows."


class PlanModePart(Part):
    """Attach the plan-mode reminder to each user turn in plan mode, and a note when it ends."""

    def __init__(self, rules: PermissionPolicy) -> None:
        self.rules = rules
        self._pending: str | None = None
        self._was_plan = False  # the mode the model last heard about was plan

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        """Decide this turn's note from the mode now."""
        mode = self.rules.mode
        if mode == "plan":
            self._pending, self._was_plan = PLAN_REMINDER, True
        elif self._was_plan:
            self._pending, self._was_plan = PLAN_OVER.format(mode=mode), False

    def attachments(self) -> list[str]:
        """The note, once: with the user's message, not with every tool result after it."""
        note, self._pending = self._pending, None
        return [note] if note else []


def part(ctx: PartContext[object]) -> PlanModePart:
    """The session's plan-mode part, over its permission rules."""
    return PlanModePart(ctx.rules)
