"""`/permissions`: the rules in effect; a rule added to the session or to the user, project or
local settings file the user picks, or removed (from the session, or from the file it is in);
the mode set. "Yes, and don't ask again" at a permission prompt saves its rule here too
(`remember_allow`): in the local file, which claude-mini keeps out of git.

Shift-Tab cycles the mode in the same order (`status_line.next_mode`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.config.edit import SettingsEditError, add_permission_rule, remove_permission_rule
from claude_mini.config.git_ignore import ignore_local_settings
from claude_mini.config.layers import settings_files
from claude_mini.permissions import RuleError, parse_rule
from claude_mini.ui.commands import CommandContext, command, print_lines
from claude_mini.ui.status_line import next_mode

if TYPE_CHECKING:
    from claude_mini.runtime import Runtime


USAGE = "Usage: /permissions [allow|ask|deny [session|local|project|user] RULE | remove RULE | mode [NAME]]"
KINDS = ("allow", "ask", "deny")
WHERE = ("session", "local", "project", "user")  # where /permissions may add a rule
WHERE_MENU = [
    ("local", "Local settings: .claude/settings.local.json (only you, in this project; git-ignored)"),
    ("project", "Project settings: .claude/settings.json (shared with everyone who clones it)"),
    ("user", "User settings: every project of yours"),
    ("session", "This session only"),
]


@command(
    "permissions",
    help="List rules; add one (session or a file); remove one; set the mode.",
    usage="[allow|ask|deny [WHERE] RULE | remove RULE | mode [NAME]]",
    aliases=("allowed-tools",),
)
async def permissions(ctx: CommandContext) -> None:
    """`/permissions` lists; `allow Bash(npm test:*)` (asks where), `deny local Read(.env)`,
    `remove RULE` and `mode acceptEdits` edit."""
    verb, _, rule = ctx.args.strip().partition(" ")
    rule = rule.strip()
    if not verb:
        print_lines(
            ctx,
            [
                *ctx.rt.policy.describe().splitlines(),
                "Edit: /permissions allow|ask|deny RULE · /permissions remove RULE · /permissions mode NAME",
            ],
        )
        return
    if verb not in (*KINDS, "remove", "mode") or (verb != "mode" and not rule):
        ctx.console.print(USAGE, markup=False)
        return
    try:
        if verb in KINDS:
            text = await add_rule_where(ctx, verb, rule)
        else:
            text = remove_rule(ctx.rt, rule) if verb == "remove" else set_mode(ctx.rt, rule)
    except (RuleError, ValueError, SettingsEditError) as exc:
        text, style = f"Not changed: {exc}", "yellow"
    else:
        style = ""
    if text:
        ctx.console.print(text, style=style, markup=False)


async def add_rule_where(ctx: CommandContext, kind: str, text: str) -> str:
    """`/permissions allow [WHERE] RULE`: the rule checked, then added where the user says (asked
    with a menu when WHERE is left out); "" when the menu was dismissed."""
    where, _, rest = text.partition(" ")
    if where in WHERE and rest.strip():
        text = rest.strip()
    else:
        where = ""
    rt = ctx.rt
    parse_rule(text, source="session", project_root=rt.config.project_root)  # a bad rule stops here
    if not where:
        where = await ctx.host.choose(f"Where should {kind} rule {text} go?", WHERE_MENU) or ""
        if not where:
            return "Not changed."
    return add_rule(rt, kind, text, where)


def add_rule(runtime: Runtime, kind: str, rule: str, where: str) -> str:
    """Add `rule` to `permissions.<kind>` of the settings file `where` names (user, project,
    local) and to this session, or to this session only (`session`); the lines to show."""
    if where == "session":
        added = runtime.policy.add_rule(kind, rule)
        return f"Added {kind} rule {added.text} for this session."
    config = runtime.config
    if where != "user" and not config.trusted:
        raise ValueError(
            f"this folder is not trusted, so claude-mini does not read its {where} settings; "
            "trust it (restart claude-mini here and answer yes), or choose user or session"
        )
    path = settings_path(runtime, where)
    parse_rule(rule, source=where, project_root=config.project_root)  # a bad rule never reaches the file
    created = add_permission_rule(config, where, path, kind, rule)
    runtime.policy.add_rule(kind, rule, source=where, origin=str(path))
    lines = [f"Added {rule} to {path} (permissions.{kind}): it applies now and in later sessions."]
    if created and where == "local":
        lines += filter(None, [ignore_local_settings(path)])
    return "\n".join(lines)


def settings_path(runtime: Runtime, where: str) -> Path:
    """The user, project or local settings file of this session."""
    config = runtime.config
    return dict(settings_files(config.cwd, config.project_root))[where]


def remember_allow(runtime: Runtime, rule: str) -> str:
    """ "Yes, and don't ask again": `rule` saved to the local settings file, which this session
    follows from now on; the session alone where the file cannot be used (an untrusted folder,
    a file that cannot be written). Returns the line to show."""
    if not runtime.config.trusted:
        runtime.policy.add_session_allow(rule)
        return (
            f"Allowed {rule} for this session only: this folder is not trusted, so claude-mini does "
            "not read its .claude/settings.local.json."
        )
    try:
        return add_rule(runtime, "allow", rule, "local")
    except SettingsEditError as exc:
        runtime.policy.add_session_allow(rule)
        return f"Allowed {rule} for this session only: {exc}."


def set_mode(runtime: Runtime, name: str) -> str:
    """Switch to mode `name`, or to the next one when no name is given (ValueError if unknown)."""
    policy = runtime.policy
    if name == "bypassPermissions" and name not in policy.available_modes:
        raise ValueError(
            "bypassPermissions is available only in a session started with --dangerously-skip-permissions "
            "or --permission-mode bypassPermissions"
        )
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
