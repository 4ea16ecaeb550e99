"""The Skill tool: the model loads one skill's (or custom command's) text into the conversation.

Progressive disclosure: the tool's description lists every skill the model may
invoke, names and descriptions only, within a character budget (`catalog.build_listing`);
a body reaches the conversation only as the result of a call. The description is part of
the tool list, the first part of the cached prefix: it is built once per conversation
(`SkillPart` rebuilds it at /clear), and forks copy the tool list, so theirs is identical.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from claude_mini.tools.base import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from claude_mini.skills.catalog import Listing
    from claude_mini.skills.lifecycle import SkillPart

GUIDE = """\
Load a skill: instructions (and a folder of scripts and references) written for a kind of \
task in this repository or by the user. When the user's request matches a skill listed \
below, call this tool with its name before doing the work, then follow what it says; the \
files its text mentions are in its folder, to Read when needed. `args` is passed to the \
skill as its arguments. A user message holding <command-name>/NAME</command-name> means \
that skill is already loaded for this turn: do not load it again. Only the names below \
exist; do not guess others. claude-mini's own commands (/help, /compact, ...) are not \
skills."""

SHORTENED = "Some descriptions were left out to keep this listing within its budget; every skill is still named."


def describe(listing: Listing) -> str:
    """The tool's description: the guide, then the listing."""
    parts = [GUIDE, "Available skills:\n" + listing.text]
    if listing.shortened:
        parts.append(SHORTENED)
    return "\n\n".join(parts)


class SkillTool:
    """`Skill`: {skill, args} -> the skill's text, as the tool result."""

    name = "Skill"
    # Not run alongside other calls: a skill's `!` lines may ask the user, one question at a time.
    read_only = False
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "The name of a skill from the list in this tool's description."},
            "args": {"type": "string", "description": "Arguments for the skill, if it takes any."},
        },
        "required": ["skill"],
        "additionalProperties": False,
    }

    def __init__(self, skills: SkillPart, listing: Listing) -> None:
        self.skills = skills
        self.description = describe(listing)

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        self.skills.entry_for_model(input.get("skill"))

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        args = input.get("args") or ""  # models often send null for an optional string
        if not isinstance(args, str):
            raise ToolError("`args` must be a string.")
        text = await self.skills.invoke_for_model(self.skills.entry_for_model(input.get("skill")), args)
        return ToolResult(text)
