"""What a permission check answers: Allow, Deny or Ask, the modes, and the policy protocol.

The order in which a decision is taken is in policy.py; how guards combine around it, in chain.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
# The tool that ends plan mode: the model presents its plan with it and only the user approves it.
EXIT_PLAN_TOOL = "ExitPlanMode"


@dataclass(frozen=True)
class Allow:
    """Run the tool."""


@dataclass(frozen=True)
class Deny:
    """Refuse the call; `reason` goes back to the model as the tool result."""

    reason: str


@dataclass(frozen=True)
class Ask:
    """Ask the user first; `reason` says why a prompt is needed.

    `by_rule`: a rule asks (an ask rule, or Bash reading what a Read deny rule covers), so
    what the call would find is what the prompt guards: nothing is checked ahead of it.
    `protected`: a safety question (a file that controls git or claude-mini, a doubtful
    memory-index command). Neither kind is lifted by a hook's allow: only the user answers them.
    """

    reason: str = ""
    by_rule: bool = False
    protected: bool = False

    @property
    def user_only(self) -> bool:
        """Whether only the user may answer it (a hook's allow does not)."""
        return self.by_rule or self.protected


Decision = Allow | Deny | Ask


class ToolPolicy(Protocol):
    """What the agent loop (and a forked agent) asks before running a tool."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Decision: ...


class RuleError(ValueError):
    """A permission rule or setting that cannot be used; the message names it, its source and the problem."""

    def __init__(self, rule: str, source: str, problem: str, origin: str | None = None) -> None:
        self.rule, self.source, self.problem, self.origin = rule, source, problem, origin
        where = f"{source} settings" + (f" ({origin})" if origin else "")
        super().__init__(f'Bad permission rule "{rule}" in {where}: {problem}')
