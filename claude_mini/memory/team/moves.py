"""Moving memories between the tiers: promote (private -> team), demote (team -> private), and
what becomes of a memory extraction proposes for the team.

    promote   the secret guard and the personal-data check on the text as it will be written;
              then the team file (with `author` and `created`), its sorted index line, and the
              private copy archived (reason "promoted ...", never brought back by recall)
    demote    the team file becomes a private memory (a free name) and leaves the team folder
    propose   extraction saved a feedback/project memory with `team: true`: promoted at once
              (setting `memory.teamProposals: team`, the default: an uncommitted file that
              `git status` shows), or moved to the private `proposed/` folder (`private`)
              until `memory promote proposed/NAME`; refused or untrusted, it stays private

Nothing is written to the team folder of an untrusted repository. Every refusal raises
`TeamRefused` with one line saying what happened, what was kept and what to do.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_mini.base.fileutil import atomic_write
from claude_mini.base.frontmatter import dump_frontmatter
from claude_mini.base.text import one_line
from claude_mini.memory.store import (
    MemoryRecord,
    MemoryStore,
    MemoryStoreError,
    epoch_of,
    format_memory,
    index_line,
    iso_utc,
    parse_memory_text,
)
from claude_mini.memory.team import gitinfo
from claude_mini.memory.team.folder import PROPOSED_DIR, TEAM_PREFIX, TeamTier
from claude_mini.memory.team.privacy import PersonalContext, team_refusal

TEAM_FLAG = "team"  # frontmatter of a private memory extraction proposes for the team
TEAM_TYPES = ("feedback", "project")  # what extraction may propose; `memory promote` adds reference
# Fields that mean something only in the tier they were written in: session ids, links to
# other files of that folder, the proposal flag, gc's pin; provenance is written anew.
TIER_FIELDS = frozenset(
    {
        "name",
        "description",
        "type",
        "source",
        "supersedes",
        "superseded_by",
        TEAM_FLAG,
        "pinned",
        "created",
        "updated",
        "author",
    }
)


class TeamRefused(MemoryStoreError):
    """A move the team tier refuses (untrusted folder, secret, personal data, a user memory)."""


@dataclass(frozen=True)
class Move:
    """A memory that changed tiers: where it was, where it is, and the line to show."""

    source: str
    target: str
    path: Path
    message: str


# --- promote -------------------------------------------------------------------------
def promote(
    tier: TeamTier,
    private: MemoryStore,
    name: str,
    *,
    context: PersonalContext | None = None,
    author: str | None = None,
    reason: str = "promoted",
) -> Move:
    """Write a private memory to the team folder, checked first; the private copy is archived."""
    problem = tier.write_problem()
    if problem:
        raise TeamRefused(f"cannot promote {name}: {problem}; your private memory is unchanged")
    record = private.read(name)
    _check_promotable(record)
    team = tier.store(private.warn)
    twin = _same_memory(team, record)
    if twin is not None:
        raise TeamRefused(
            f"{record.filename} was not promoted: the team memory already has it as "
            f"{tier.shown}/{twin}; your private copy is unchanged "
            f"(`claude-mini memory forget {record.filename}` drops it)"
        )
    target = _free_team_name(team, Path(record.filename).name)
    now = iso_utc(private.clock())
    fields = _fields(record, {"created": now, "updated": now})
    refusal = team_refusal(format_memory(**fields), context or PersonalContext.of(tier.repo), record.filename)
    if refusal:
        raise TeamRefused(
            refusal.replace(
                "Nothing was written to the team folder;",
                "Nothing was written to the team folder and your private memory is unchanged;",
            )
        )
    tier.prepare()
    fields["extra_frontmatter"] = {"author": author or gitinfo.user_name(tier.repo), **fields["extra_frontmatter"]}
    path = team.write(target, **fields)
    private.delete(record.filename, reason=f"{reason} to the team memory: {tier.shown}/{target}")
    return Move(
        record.filename,
        target,
        path,
        f"{_verb(reason)} {record.filename} to the team memory: {tier.shown}/{target} "
        f"(uncommitted: review it, then `git add {tier.shown}` and commit; "
        f"`claude-mini memory demote {target}` takes it back)",
    )


def _verb(reason: str) -> str:
    return "Proposed" if reason.startswith("proposed") else "Promoted"


def _check_promotable(record: MemoryRecord) -> None:
    if not record.frontmatter_ok:
        raise TeamRefused(
            f"{record.filename} was not promoted: {record.problem}; run "
            "`claude-mini memory doctor --fix` (or edit it), then promote it again"
        )
    if record.type == "user":
        raise TeamRefused(
            f"{record.filename} is a user memory (about you), so it stays private; "
            "if it is really about the project, change its type "
            "(`claude-mini memory edit`) and promote it again"
        )


def _fields(record: MemoryRecord, provenance: dict[str, Any]) -> dict[str, Any]:
    """`MemoryStore.write` arguments for `record` in the other tier: its name, description,
    type and body, the fields that travel, then `provenance`."""
    extra = {k: v for k, v in record.frontmatter.items() if k not in TIER_FIELDS}
    return {
        "name": record.name,
        "description": record.description,
        "type": record.type,
        "body": (record.body or "").strip("\n"),
        "extra_frontmatter": {**extra, **provenance},
    }


def _same_memory(team: MemoryStore, record: MemoryRecord) -> str | None:
    """The team memory whose text is `record`'s (a colleague promoted it first), else None."""
    body = one_line(record.body or "").casefold()
    for other in team.list():
        if one_line(team.read(other.filename).body or "").casefold() == body:
            return other.filename
    return None


def _free_team_name(team: MemoryStore, filename: str) -> str:
    """`filename` when the team folder has no such file, else `x-2.md`, `x-3.md`, ..."""
    return filename if not (team.root / filename).exists() else team.free_filename(filename)


# --- demote --------------------------------------------------------------------------
def demote(tier: TeamTier, private: MemoryStore, name: str) -> Move:
    """Make a team memory private again: written to the private folder, deleted from the team's."""
    problem = tier.write_problem()
    if problem:
        raise TeamRefused(f"cannot demote {name}: {problem}; the team memory is unchanged")
    team = tier.store(private.warn)
    record = team.read(name.removeprefix(TEAM_PREFIX))
    if not record.frontmatter_ok or record.type is None:
        raise TeamRefused(
            f"{tier.shown}/{record.filename} was not demoted: {record.problem}; fix its frontmatter first"
        )
    tier.prepare()  # a folder from before `.gitignore` was written gets it now (the lock file)
    target = private.free_filename(Path(record.filename).name)
    created = epoch_of(record.frontmatter.get("created"))
    fields = _fields(record, {"created": iso_utc(created)} if created is not None else {})
    author = record.frontmatter.get("author")
    if author:  # who saved it for the team stays known
        fields["extra_frontmatter"]["author"] = author
    path = private.write(target, **fields)
    os.unlink(record.path)
    team.update_index(remove=[record.filename])
    return Move(
        record.filename,
        target,
        path,
        f"Demoted {tier.shown}/{record.filename} to your private memory as {target}; "
        "the team file is deleted (commit the deletion to share it)",
    )


# --- what extraction proposes ----------------------------------------------------------
def proposed_for_team(record: MemoryRecord) -> bool:
    """Whether extraction marked this private memory for the team (`team: true`)."""
    return record.frontmatter.get(TEAM_FLAG) is True


def propose(
    tier: TeamTier, private: MemoryStore, filename: str, *, context: Callable[[], PersonalContext] | None = None
) -> tuple[str, bool]:
    """Handle one memory extraction saved with `team: true`: (the line to tell the user,
    whether it was proposed)."""
    record = private.read(filename)
    if record.type not in TEAM_TYPES:
        drop_team_flag(record.path)
        return (f"Kept {filename} private: only feedback and project memories are proposed for the team memory"), False
    if tier.proposals == "private":
        moved = _move_to_proposed(private, record)
        return (
            f"Proposed {filename} for the team memory: it waits in your private "
            f"{moved} until `claude-mini memory promote {moved.removesuffix('.md')}`"
        ), True
    try:
        return promote(tier, private, filename, reason="proposed", context=context() if context else None).message, True
    except TeamRefused as exc:
        drop_team_flag(record.path)
        return f"Kept {filename} private, not proposed for the team: {exc}", False


def drop_team_flag(path: Path) -> None:
    """Take `team: true` out of a private memory that stays private (a decision was made)."""
    text = path.read_text(encoding="utf-8")
    parsed = parse_memory_text(text)
    if TEAM_FLAG not in parsed.frontmatter or parsed.problem_kind in (
        "missing",
        "unclosed",
        "invalid_yaml",
        "not_mapping",
    ):
        return
    fm = {k: v for k, v in parsed.frontmatter.items() if k != TEAM_FLAG}
    atomic_write(path, f"---\n{dump_frontmatter(fm)}---\n\n{parsed.body}")


def _move_to_proposed(private: MemoryStore, record: MemoryRecord) -> str:
    """Move a private memory into `proposed/` (its index line follows); its new filename."""
    drop_team_flag(record.path)
    folder = private.root / PROPOSED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    base = Path(record.filename).name
    target = f"{PROPOSED_DIR}/{base}"
    n = 2
    while (private.root / target).exists():
        target, n = f"{PROPOSED_DIR}/{Path(base).stem}-{n}.md", n + 1
    os.replace(record.path, private.root / target)
    private.update_index(
        add_or_replace={target: index_line(target, record.name, record.description)}, remove=[record.filename]
    )
    return target
