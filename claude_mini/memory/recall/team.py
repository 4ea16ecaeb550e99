"""Recall's reach into the team tier: the team folder searched beside the private one.

The team folder has its own CandidateScanner (its own on-disk index) and is ranked against
its own statistics, as the archive is (memory/recall/archive.py): fused scores are z-scores
within each tier, so the two tiers' scores compare. Its candidates are named `team/<file>`, and the
manifest line of each says `team`. RecallEngine merges the two tiers' lists in `local_pass`;
nothing else of recall changes. A team memory's use is not counted in the private usage
record (gc never archives a team memory: the team curates its folder by review).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from claude_mini.memory.recall.lexical import (
    SELECT_K,
    SHORTLIST_SIZE,
    Candidate,
    select_lexical,
    shortlist,
)
from claude_mini.memory.recall.scan import CandidateScanner
from claude_mini.memory.store.links import superseded_names
from claude_mini.memory.team.folder import TEAM_PREFIX, is_team_name

Scored = list[tuple[str, float]]


class TeamRecall:
    """The team folder indexed for recall; keep one per session (not thread-safe)."""

    def __init__(self, root: Path, *, cache_file: Path | None = None) -> None:
        self.root = root
        self.scanner = CandidateScanner(root, cache_file=cache_file)

    def local_pass(self, query: str, exclude: frozenset[str]) -> tuple[Scored, Scored]:
        """(shortlist, strong lexical matches) of the team folder, named `team/<file>`."""
        self.scanner.scan()
        index = self.scanner.index
        hidden = {f"{TEAM_PREFIX}{name}" for name in superseded_names(index.docs)}
        own = {name.removeprefix(TEAM_PREFIX) for name in exclude | hidden if is_team_name(name)}
        best = shortlist(query, index, SHORTLIST_SIZE, exclude=own)
        strong = select_lexical(query, index, exclude=own)
        return _named(best), _named(strong)

    def candidate(self, name: str) -> Candidate | None:
        """The candidate for a `team/<file>` name, named that way."""
        doc = self.scanner.index.docs.get(name.removeprefix(TEAM_PREFIX))
        return replace(doc, filename=name) if doc is not None else None

    def save_cache(self) -> None:
        """Keep what the scans learnt for the next process (advisory)."""
        self.scanner.save_cache()


def _named(scored: Scored) -> Scored:
    return [(f"{TEAM_PREFIX}{name}", score) for name, score in scored]


def merge_tiers(
    private_best: Scored, private_strong: Scored, team_best: Scored, team_strong: Scored
) -> tuple[Scored, Scored]:
    """The two tiers' lists as one: the manifest's SHORTLIST_SIZE best and the SELECT_K strong
    matches (each tier made its own cut), by fused score, ties by name."""

    def by_score(item: tuple[str, float]) -> tuple[float, str]:
        return -item[1], item[0]

    best = sorted(private_best + team_best, key=by_score)[:SHORTLIST_SIZE]
    return best, sorted(private_strong + team_strong, key=by_score)[:SELECT_K]
