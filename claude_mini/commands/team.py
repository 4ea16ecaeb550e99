"""The team memory, for `claude-mini memory` and /memory: `promote|demote|blame NAME`, `list --tier
team`, and `import --from claude-code|codex|gemini [--dry-run]`.

Actions are plain functions returning lines (or data for `--json`); subcommands/team_cli.py and
ui/memory_commands.py parse arguments and print. Nothing here calls a model or imports the anthropic SDK.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.base import paths
from claude_mini.base.text import clip
from claude_mini.memory.imports import TOOL_NAMES, apply_import, plan_import, read_source
from claude_mini.memory.store import MemoryStore, MemoryStoreError
from claude_mini.memory.team import TEAM_PREFIX, TeamTier, team_problem, team_tier
from claude_mini.memory.team.folder import DEFAULT_TEAM_DIR
from claude_mini.memory.team.gitinfo import file_history, folder_status
from claude_mini.memory.team.moves import demote, promote

if TYPE_CHECKING:
    from claude_mini.config import Config

DESCRIPTION_CHARS = 60


class TeamCommandError(MemoryStoreError):
    """A team command that cannot be done here (no team tier); the message says what to do."""


# --- which team folder ---------------------------------------------------------------------
def team_for(config: Config, *, creating: bool = False) -> TeamTier:
    """The repository's team tier; `creating` (promote): the default folder even before it
    exists, so the first promote starts the team memory."""
    tier = team_tier(config)
    if tier is not None:
        return tier
    problem = team_problem(config)
    if problem:
        raise TeamCommandError(problem)
    if config.memory.team.dir is False:
        raise TeamCommandError(
            "the team memory is off here (memory.teamDir is false in the "
            "settings); set it to true or to a folder to use it"
        )
    if creating:
        return TeamTier(
            Path(config.project_root) / DEFAULT_TEAM_DIR,
            Path(config.project_root),
            config.trusted,
            config.memory.team.proposals,
        )
    raise TeamCommandError(
        f"this repository has no team memory yet ({DEFAULT_TEAM_DIR} does not "
        "exist); `claude-mini memory promote NAME` starts it with one of "
        "your memories"
    )


# --- list --tier team ----------------------------------------------------------------------
def team_list_data(tier: TeamTier, now: float | None = None) -> dict[str, Any]:
    """Every team memory with who saved it and when, and whether git has it committed."""
    from claude_mini.commands.memory import human_age

    now = time.time() if now is None else now
    store = tier.store()
    status = folder_status(tier.repo, tier.root)
    memories = [
        {
            "file": r.filename,
            "name": r.name,
            "type": r.type,
            "description": r.description,
            "author": str(r.frontmatter.get("author") or ""),
            "created": _day(r.frontmatter.get("created")),
            "size": r.size,
            "age": human_age(now - r.mtime),
            "problem": r.problem,
            "git": _git_state(status, r.path, tier),
        }
        for r in store.list()
    ]
    return {
        "team_dir": str(tier.root),
        "trusted": tier.trusted,
        "memories": memories,
        "skipped": [{"path": str(s.path), "reason": s.reason} for s in store.skipped],
    }


def _day(value: Any) -> str:
    from claude_mini.memory.store import epoch_of, iso_utc

    when = epoch_of(value)
    return iso_utc(when)[:10] if when is not None else ""


def _git_state(status: dict[str, str] | None, path: Path, tier: TeamTier) -> str:
    """committed, uncommitted (new or changed), or '' outside git."""
    if status is None:
        return ""
    code = status.get(path.relative_to(tier.repo).as_posix(), "")
    return "uncommitted" if code else "committed"


def team_list_lines(data: dict[str, Any]) -> list[str]:
    """`team_list_data` as text."""
    trust = "" if data["trusted"] else " (folder not trusted: read only)"
    lines = [f"Team memories ({len(data['memories'])}) in {data['team_dir']}{trust}:"]
    for m in data["memories"]:
        who = f"{m['author'] or '?'}, {m['created'] or m['age']}"
        state = f"  [{m['git']}]" if m["git"] == "uncommitted" else ""
        flag = "  [needs attention: see `claude-mini memory doctor`]" if m["problem"] else ""
        lines.append(
            f"  {m['type'] or '?':<9} {m['file']} ({who}): {clip(m['description'], DESCRIPTION_CHARS)}{state}{flag}"
        )
    if not data["memories"]:
        lines.append("  (none yet: `claude-mini memory promote NAME` shares one of yours)")
    lines += [f"  skipped {s['path']}: {s['reason']}" for s in data["skipped"]]
    return lines


# --- promote / demote / blame ----------------------------------------------------------------
def promote_lines(config: Config, store: MemoryStore, name: str) -> list[str]:
    """Share a private memory (or a proposal in `proposed/`) with the team."""
    move = promote(team_for(config, creating=True), store, name)
    return [move.message]


def demote_lines(config: Config, store: MemoryStore, name: str) -> list[str]:
    """Take a team memory back into the private folder."""
    return [demote(team_for(config), store, name).message]


def blame_lines(config: Config, name: str) -> list[str]:
    """Who saved a team memory, and the git history of its file."""
    tier = team_for(config)
    record = tier.store().read(name.removeprefix(TEAM_PREFIX))
    shown = f"{tier.shown}/{record.filename}"
    author = record.frontmatter.get("author")
    lines = [
        f"{shown}: {record.name}",
        f"  saved by {author or 'unknown (no author field)'}"
        + (f" on {_day(record.frontmatter.get('created'))}" if record.frontmatter.get("created") else ""),
    ]
    history = file_history(tier.repo, record.path)
    if history is None:
        lines.append("  no git history: this folder is not a git repository")
    elif not history:
        lines.append("  not committed yet (`git status` shows it): commit it to share it")
    lines += [f"  {c.short} {c.date} {c.author}: {c.subject}" for c in history or []]
    return lines


# --- import ----------------------------------------------------------------------------------
def import_data(config: Config, store: MemoryStore, tool: str, dry_run: bool) -> dict[str, Any]:
    """What importing `tool`'s memory of this project does (or would do, `dry_run`)."""
    project = paths.git_root(config.cwd) or config.cwd.resolve()
    source = read_source(tool, project)
    planned = plan_import(store, source.memories, tool)
    if not dry_run:
        apply_import(store, planned, tool)
    return {
        "tool": tool,
        "source": str(source.folder),
        "found": source.found,
        "dry_run": dry_run,
        "memory_dir": str(store.root),
        "left_out": source.left_out,
        "skipped_files": source.skipped,
        "memories": [
            {
                "origin": p.memory.origin,
                "name": p.memory.name,
                "type": p.memory.type,
                "action": p.action,
                "why": p.why,
                "file": p.filename,
            }
            for p in planned
        ],
    }


def import_lines(data: dict[str, Any]) -> list[str]:
    """`import_data` as text: one line per memory found, then what happened in all."""
    tool = TOOL_NAMES[data["tool"]]
    if not data["memories"]:
        where = "is empty" if data["found"] else "does not exist"
        return [f"Nothing to import: {tool}'s memory for this project ({data['source']}) {where}."]
    lines = [f"{tool} memory for this project: {data['source']}"]
    would = "would import" if data["dry_run"] else "imported"
    for m in data["memories"]:
        origin = Path(m["origin"].split("#")[0]).name + (
            f"#{m['origin'].split('#', 1)[1]}" if "#" in m["origin"] else ""
        )
        if m["action"] == "import":
            target = f" -> {m['file']}" if m["file"] else ""
            lines.append(f"  {would:<12}  {m['type']:<9} {origin}{target}: {clip(m['name'], 50)}")
        else:
            lines.append(f"  {'skipped':<12}  {origin}: {m['action']} ({m['why']})")
    lines += [f"  {'unreadable':<12}  {s}" for s in data["skipped_files"]]
    counts = {a: sum(1 for m in data["memories"] if m["action"] == a) for a in ("import", "duplicate", "refused")}
    left = f"; {data['left_out']} block(s) about other projects left out" if data["left_out"] else ""
    if data["dry_run"]:
        lines.append(
            f"Dry run: {counts['import']} would be imported into {data['memory_dir']}, "
            f"{counts['duplicate']} duplicate(s), {counts['refused']} refused{left}; "
            "nothing was written."
        )
    else:
        lines.append(
            f"Imported {counts['import']} memories into {data['memory_dir']} (source: "
            f"import:{data['tool']}); skipped {counts['duplicate']} duplicate(s) and "
            f"{counts['refused']} refused{left}. Nothing existing was changed."
        )
    return lines
