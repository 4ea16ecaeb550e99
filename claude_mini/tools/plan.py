"""ExitPlanMode: the model presents its plan and asks the user to approve it (plan mode's way out).

The call only runs once the user approved it (the permission policy asks in plan mode, refuses it
in any other mode); approving switches the permission mode (the REPL does that in its question),
so what runs here only tells the model to go ahead. Claude Code's input shape: `{plan}`.
"""

from __future__ import annotations

from typing import Any

from claude_mini.permissions.decisions import EXIT_PLAN_TOOL
from claude_mini.tools.base import ToolContext, ToolError, ToolResult

DESCRIPTION = """\
Use this in plan mode, when you have finished planning and want the user to approve the plan \
before you change anything. Pass the whole plan as markdown in `plan`: the steps, the files each \
one touches, and how you will check the result. The user approves it (then you carry it out) or \
asks you to keep planning, saying why. Do not use it for research or questions: only to present \
a plan of work that changes something."""

APPROVED = (
    "The user approved your plan and plan mode is over. Carry it out now, starting with the first "
    "step; keep the todo list up to date as you go."
)


class ExitPlanModeTool:
    """Present a plan for the user's approval."""

    name = EXIT_PLAN_TOOL
    description = DESCRIPTION
    read_only = False

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {"plan": {"type": "string", "description": "The plan to approve, in markdown"}},
            "required": ["plan"],
            "additionalProperties": False,
        }

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """A plan must be some text: an empty one is refused before the user is asked."""
        plan_text(input)

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The user approved: tell the model to go ahead."""
        plan_text(input)
        return ToolResult(APPROVED)


def plan_text(input: dict[str, Any]) -> str:
    """The call's plan, or a ToolError saying what is wrong with it."""
    plan = input.get("plan")
    if not isinstance(plan, str) or not plan.strip():
        raise ToolError("Missing required parameter `plan`: the whole plan, as markdown text.")
    return plan
