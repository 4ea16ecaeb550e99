"""`/permissions`: the rules in effect, rules added for the session or removed (from the session,
or from the settings file they are in), the mode set.

Shift-Tab cycles the mode in the same order (`status_line.next_mode`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.config.edit import SettingsEditError, remove_permission_rule
from claude_mini.permissions import RuleError
from claude_mini.ui.commands import CommandContext, command, print_lines
from claude_mini.ui.status_line import next_mode

if TYPE_CHECKING:
    from claude_mini.runtime import Runtime


@command(
    "permissions",
    help="List rules; allow one for the session; remove one (from its file); set the mode.",
    usage="[allow RULE | remove RULE | mode [NAME]]",
    aliases=("allowed-tools",),
)
def permissions(ctx: CommandContext) -> None:
    """`/permissions` lists; `allow Bash(npm test:*)`, `remove RULE` and `mode acceptEdits` edit."""
    verb, _, rule = ctx.args.partition(" ")
    action = {"allow": allow_session_rule, "remove": remove_rule, "mode": set_mode}.get(verb)
    if not verb:
        print_lines(
            ctx,
            [
                *ctx.rt.policy.describe().splitlines(),
                "Edit: /permissions allow RULE · /permissions remove RULE · /permissions mode NAME",
            ],
        )
    elif action is None or (verb != "mode" and not rule.strip()):
        ctx.console.print("Usage: /permissions [allow RULE | remove RULE | mode [NAME]]", markup=False)
    else:
        try:
            ctx.console.print(action(ctx.rt, rule.strip()), markup=False)
        except (RuleError, ValueError, SettingsEditError) as exc:
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


FILE_SOURCES = ("user", "project", "local")  # settings files /permissions may edit


def remove_rule(runtime: Runtime, rule: str) -> str:
    """Drop a rule: a session rule for the rest of the session; a rule from a user, project or
    local settings file is deleted from that file (as Claude Code's /permissions does); a file
    that cannot be changed keeps its rule, in the file and in this session, the others still lose it.
    Managed and command-line rules stay: the message says why."""
    policy = runtime.policy
    found = [r for r in (*policy.deny_rules, *policy.ask_rules, *policy.allow_rules) if r.text == rule]
    if not found:
        session_rules = [r.text for r in policy.allow_rules if r.source == "session"]
        return f"No rule {rule}. Session rules: {', '.join(session_rules) or 'none'}."
    lines: list[str] = []
    failed: set[str] = set()
    for origin in sorted({r.origin for r in found if r.source in FILE_SOURCES and r.origin}):
        try:
            lists = remove_permission_rule(runtime.config, Path(origin), rule)
        except SettingsEditError as exc:
            lines.append(f"Not changed: {exc}")
            failed.add(origin)
            continue
        lines.append(
            f"Removed {rule} from {origin} ({', '.join(f'permissions.{k}' for k in lists)})."
            if lists
            else f"{rule} is no longer in {origin}; removed for this session."
        )
    if any(r.source == "session" for r in found):
        lines.append(f"Removed the session rule {rule}.")
    policy.remove_rules(r for r in found if r.source in ("session", *FILE_SOURCES) and r.origin not in failed)
    for kept in (r for r in found if r.source not in ("session", *FILE_SOURCES)):
        lines.append(
            f"Kept {kept.where}: "
            + (
                "only your administrator can change managed settings."
                if kept.source == "managed"
                else "it was given on the command line and ends with this session."
            )
        )
    return "\n".join(lines)
