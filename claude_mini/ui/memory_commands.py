"""`/memory` in the REPL: the `claude-mini memory` actions, plus what a live session needs.

/memory                      list instruction and memory files
/memory show NAME            print one memory (MEMORY.md for the index)
/memory edit NAME            open it in $VISUAL/$EDITOR, then rebuild the system prompt
/memory add TEXT [--type T] [--why W] [--how H] [--supersedes FILE]
                             (each value up to the next option, no quoting)
/memory forget NAME [--purge]  archive it (--purge: delete it, and archived copies with secrets)
/memory restore NAME | gc [--dry-run] | list --scores    (forgetting: commands/forget.py)
/memory promote NAME | demote NAME | blame NAME | list --tier team   (the team memory: commands/team.py)
/memory import --from claude-code|codex|gemini [--dry-run]
/memory path | on | off | doctor [--fix] | recall
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from claude_mini.commands import forget as forgetting
from claude_mini.commands import team as team_memory
from claude_mini.commands.memory import (
    MemoryCommandError,
    MemoryContext,
    add_memory,
    both_tiers_doctor_data,
    both_tiers_doctor_lines,
    edit_memory,
    forget_memory,
    list_data,
    list_lines,
    set_auto_memory,
    show_text,
)
from claude_mini.memory.imports import TOOLS
from claude_mini.memory.recall.part import RecallPart
from claude_mini.memory.store import MemoryStoreError
from claude_mini.ui.commands import CommandContext, command

if TYPE_CHECKING:
    from claude_mini.runtime import Runtime

USAGE = (
    "Usage: /memory [list [--scores | --tier team] | show NAME | edit NAME | add TEXT [--type T] "
    "[--why W] [--how H] [--supersedes FILE] | forget NAME [--purge] | restore NAME | "
    "gc [--dry-run] | promote NAME | demote NAME | blame NAME | import --from TOOL "
    "[--dry-run] | path | on | off | doctor [--fix] | recall]"
)
SLASH_FORGET = "/memory forget"
_OPTION = re.compile(r"(?:^|\s)(--type|-t|--why|--how|--supersedes)(?:=|\s+|$)")
_OPTION_KEYS = {"-t": "type", "--type": "type", "--why": "why", "--how": "how", "--supersedes": "supersedes"}
_ONE_WORD = ("type", "supersedes")  # options whose value is one word
_QUOTED = re.compile(r"""^("[^"]*"|'[^']*')(?:\s+|$)""")


def split_add_options(args: str) -> tuple[dict[str, str], str]:
    """`TEXT --type T --why W --how H` -> ({type, why, how, supersedes}, TEXT), as typed: no
    shell parsing.

    An option's value runs up to the next option (`--type` and `--supersedes` take one word);
    the memory text is what comes before the first option. A quoted value ends at its closing
    quote, so the options may also come first: `--why "..." --how "..." TEXT`.
    """
    matches = list(_OPTION.finditer(args))
    text = [args[: matches[0].start()] if matches else args]
    options: dict[str, str] = {}
    for match, following in zip(matches, [*matches[1:], None], strict=False):
        key = _OPTION_KEYS[match.group(1)]
        value = args[match.end() : following.start() if following else len(args)].strip()
        rest = ""
        if key in _ONE_WORD:
            value, _, rest = value.partition(" ")
        elif quoted := _QUOTED.match(value):
            value, rest = quoted.group(1)[1:-1], value[quoted.end() :]
        options[key] = value.strip()
        text.append(rest)
    return options, " ".join(part.strip() for part in text if part.strip())


def memory_command(runtime: Runtime, args: str) -> list[str]:
    """Run one /memory action on the live runtime; returns the lines to print."""
    verb, _, rest = args.strip().partition(" ")
    rest = rest.strip()
    mc = MemoryContext(runtime.config, runtime.store)
    if verb in ("", "list") and "--scores" in rest.split():
        return forgetting.scores_lines(forgetting.scores_data(runtime.store, runtime.config))
    if verb in ("", "list") and "--tier team" in rest:
        return team_memory.team_list_lines(team_memory.team_list_data(team_memory.team_for(runtime.config)))
    if verb in ("", "list"):
        data = list_data(mc)
        return [json.dumps(data, indent=2)] if rest == "--json" else list_lines(data)
    if verb in ("show", "edit", "forget") and not rest:
        raise MemoryCommandError(f"/memory {verb} needs a memory name. {USAGE}", code=2)
    if verb == "show":
        return show_text(runtime.store, rest).rstrip("\n").splitlines()
    if verb == "edit":
        lines = edit_memory(runtime.store, rest)
        runtime.rebuild_prompt()
        return [*lines, "The system prompt was rebuilt with the edited memory."]
    if verb == "add":
        options, text = split_add_options(rest)
        if not text and options:
            raise MemoryCommandError(
                "nothing to save: each option's value runs up to the next "
                "option, so put the memory text first: /memory add TEXT "
                "--why WHY --how HOW",
                code=2,
            )
        return add_memory(
            mc, text, options.get("type", "project"), options.get("why"), options.get("how"), options.get("supersedes")
        )
    if verb == "forget":
        return _forget(runtime, rest)
    if verb in ("on", "off"):
        return _toggle(runtime, verb == "on")
    return _other(runtime, verb, rest)


def _forget_args(rest: str) -> tuple[str, bool]:
    """(NAME, --purge given) of `/memory forget NAME [--purge]`."""
    words = rest.split()
    name = " ".join(w for w in words if w != "--purge")
    if not name:
        raise MemoryCommandError(f"/memory forget needs a memory name. {USAGE}", code=2)
    return name, "--purge" in words


def _forget(runtime: Runtime, rest: str) -> list[str]:
    """/memory forget without anyone to ask: a memory that held a secret gets the --purge hint."""
    name, purge = _forget_args(rest)
    return forget_memory(runtime.store, name, purge=purge, command=SLASH_FORGET)


async def forget_offering_purge(ctx: CommandContext) -> list[str]:
    """/memory forget in the REPL: a memory that held a secret offers to purge it from archive/."""
    name, purge = _forget_args(ctx.args.strip().partition(" ")[2])
    try:
        done = forgetting.forget_step(ctx.rt.store, name, purge=purge, command=SLASH_FORGET)
    except MemoryStoreError as exc:
        raise MemoryCommandError(str(exc)) from None
    if not done.leftovers:
        return done.lines
    choice = await ctx.host.choose(
        done.question(), [("purge", "Yes, delete it for good"), ("keep", "No, keep it in archive/")]
    )
    if choice == "purge":
        return [*done.lines, *forgetting.purge_lines(ctx.rt.store, done.filename, None)]
    return [*done.lines, done.hint(SLASH_FORGET)]


def _other(runtime: Runtime, verb: str, rest: str) -> list[str]:
    if verb == "path":
        return [str(runtime.store.root)]
    if verb == "doctor":
        data = both_tiers_doctor_data(MemoryContext(runtime.config, runtime.store), apply_fix="--fix" in rest.split())
        return [json.dumps(data, indent=2)] if "--json" in rest.split() else both_tiers_doctor_lines(data)
    if verb in ("promote", "demote", "blame", "import"):
        return _team(runtime, verb, rest)
    if verb == "gc":
        data = forgetting.gc_data(runtime.store, runtime.config, dry_run="--dry-run" in rest)
        return forgetting.gc_lines(data)
    if verb == "restore" and rest:
        return forgetting.restore_lines(runtime.store, rest)
    if verb == "recall":
        hook = runtime.lifecycle.find(RecallPart)
        return hook.summary().lines() if hook else ["Recall is not active in this session."]
    raise MemoryCommandError(f"unknown /memory action {verb!r}. {USAGE}", code=2)


def _team(runtime: Runtime, verb: str, rest: str) -> list[str]:
    """/memory promote|demote|blame NAME and /memory import --from TOOL [--dry-run]: what
    `claude-mini memory` does (commands/team.py). The system prompt stays as it is:
    a moved memory reaches the model through recall, as any memory written mid-session."""
    config, store = runtime.config, runtime.store
    if verb == "import":
        words = rest.replace("--from=", "--from ").split()
        tool = words[words.index("--from") + 1] if "--from" in words[:-1] else ""
        if tool not in TOOLS:
            raise MemoryCommandError(f"/memory import needs --from {'|'.join(TOOLS)} [--dry-run]", code=2)
        return team_memory.import_lines(team_memory.import_data(config, store, tool, "--dry-run" in words))
    if not rest:
        raise MemoryCommandError(f"/memory {verb} needs a memory name. {USAGE}", code=2)
    if verb == "promote":
        return team_memory.promote_lines(config, store, rest)
    if verb == "demote":
        return team_memory.demote_lines(config, store, rest)
    return team_memory.blame_lines(config, rest)


def _toggle(runtime: Runtime, enabled: bool) -> list[str]:
    """Write the user setting, apply the effective value to this session, rebuild the prompt."""
    from claude_mini.config import load_config

    lines = set_auto_memory(enabled, runtime.config.cwd)
    fresh = load_config(runtime.config.cwd)
    settings = runtime.config.settings
    if "autoMemoryEnabled" in fresh.settings:
        settings["autoMemoryEnabled"] = fresh.settings["autoMemoryEnabled"]
    else:
        settings.pop("autoMemoryEnabled", None)
    runtime.rebuild_prompt()
    state = "on" if runtime.config.auto_memory else "off"
    return [*lines, f"This session: auto memory {state} (system prompt rebuilt)."]


@command(
    "memory",
    help="List, show, edit, add or forget memories; team memory; on/off; doctor.",
    usage="[list|show|edit|add|forget|restore|gc|promote|demote|blame|import|path|on|off|doctor|recall] ...",
)
async def memory(ctx: CommandContext) -> None:
    """Dispatch /memory; a problem prints one line and leaves the session as it was."""
    try:
        if ctx.args.split()[:1] == ["forget"] and len(ctx.args.split()) > 1:
            lines = await forget_offering_purge(ctx)
        else:
            lines = memory_command(ctx.rt, ctx.args)
    except (MemoryCommandError, MemoryStoreError) as exc:
        ctx.console.print(str(exc), style="yellow", markup=False, highlight=False)
        return
    for line in lines:
        ctx.console.print(line, markup=False, highlight=False)
