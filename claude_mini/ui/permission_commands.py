"""`/permissions`: the rules in effect, session allow rules added or removed, the mode set.

Shift-Tab cycles the mode in the same order (`status_line.next_mode`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_mini.ui.commands import CommandContext, command, print_lines
from claude_mini.ui.status_line import next_mode

if TYPE_CHECKING:
    from claude_mini.runtime import Runtime


@command("permissions", help="List permission rules; add or remove session rules; set the mode.",
         usage="[allow RULE | remove RULE | mode [NAME]]", aliases=("allowed-tools",))
def permissions(ctx: CommandContext) -> None:
    """`/permissions` lists; `allow Bash(npm test:*)`, `remove RULE` and `mode acceptEdits` edit."""
    from claude_mini.agent.permissions import RuleError

    verb, _, rule = ctx.args.partition(" ")
    action = {"allow": allow_session_rule, "remove": remove_session_rule, "mode": set_mode}.get(verb)
    if not verb:
        print_lines(ctx, [*ctx.rt.policy.describe().splitlines(),
                           "Edit: /permissions allow RULE · /permissions remove RULE · /permissions mode NAME"])
    elif action is None or (verb != "mode" and not rule.strip()):
        ctx.console.print("Usage: /permissions [allow RULE | remove RULE | mode [NAME]]", markup=False)
    else:
        try:
            ctx.console.print(action(ctx.rt, rule.strip()), markup=False)
        except (RuleError, ValueError) as exc:
            ctx.console.print(f"Not changed: {exc}", style="yellow", markup=False)


def allow_session_rule(runtime: Runtime, rule: str) -> str:
    """Add an allow rule for the rest of this session (RuleError when malformed)."""
    added = runtime.policy.add_session_allow(rule)
    return f"Allowed {added.text} for this session."


def set_mode(runtime: Runtime, name: str) -> str:
    """Switch to mode `name`, or to the next one when no name is given (ValueError if unknown)."""
    policy = runtime.policy
    policy.mode = name or next_mode(policy.mode, policy.available_modes)
    return f"Permission mode: {policy.mode}"


def remove_session_rule(runtime: Runtime, rule: str) -> str:
    """Drop a session allow rule by rebuilding the policy from the settings layers plus the rules kept.

    Rules from settings files cannot be removed here: the message names the file.
    """
    from claude_mini.agent.permissions import PermissionPolicy

    old = runtime.policy
    session_rules = [r.text for r in old.allow_rules if r.source == "session"]
    if rule not in session_rules:
        origin = next((r for r in (*old.allow_rules, *old.ask_rules, *old.deny_rules) if r.text == rule), None)
        if origin is not None:
            return f"{rule} comes from {origin.where}; edit that file to remove it."
        return f"No session rule {rule}. Session rules: {', '.join(session_rules) or 'none'}."
    ctx = runtime.agent.ctx
    new = PermissionPolicy.from_layers(runtime.config.permission_layers(), cwd=lambda: ctx.cwd,
                                       project_root=runtime.config.project_root, mode=old.mode)
    for kept in session_rules:
        if kept != rule:
            new.add_session_allow(kept)
    runtime.policy = runtime.agent.policy = new
    return f"Removed the session rule {rule}."
