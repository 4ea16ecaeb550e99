"""The memory layers' settings (DESIGN.md sections 4 and 5), validated in one place.

`recall.*`, `memory.*`, `contextWindow`, `autoCompact` and `autoCompactThreshold` are
validated here and nowhere else: `Config.memory` gives them typed, one dataclass per
layer, each bad value replaced by its default and named once in `MemorySettings.problems`,
which `runtime.build_runtime` says.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.config.models import DEFAULT_MODEL
from claude_mini.config.validate import (
    SettingsReader,
    is_bool,
    number_at_least,
    positive_number,
    whole_at_least,
)

if TYPE_CHECKING:
    from claude_mini.config.loader import Config

RECALL_STRATEGIES = ("model", "lexical", "off")
RECALL_TIMEOUT_MS = 10_000
# The longest recall holds a turn, at each of two points: before the first request, for the
# local (lexical) pass (a warm pass takes milliseconds; a new process with 10,000 memories loads
# its on-disk index in about half a second, and then its matches join the first tool result);
# and at the first tool result, for a side-model selection still in flight.
RECALL_HOLD_MS = 300
RECALL_DRAFT_PAUSE_MS = 800  # the REPL starts recall this long after the last keystroke
EXTRACT_EVERY = 1
EXTRACT_BATCH_TURNS = 5
EXTRACT_WAIT_SECONDS = 60.0
HALF_LIFE_DAYS = 30.0
MAX_MEMORY_FILES = 200  # Claude Code's hard cap on memory files
DREAM_MAX_TURNS = 8
DREAM_MIN_HOURS = 24.0  # automatic dreaming: at most once a day...
DREAM_MIN_SESSIONS = 5  # ...and after this many sessions
AUTOCOMPACT_ENV = "CLAUDE_MINI_AUTOCOMPACT_PCT"  # wins over `autoCompactThreshold`


@dataclass(frozen=True)
class RecallSettings:
    """`recall.*`: how Layer 3 chooses memories each turn (memory/recall/)."""

    strategy: str = "model"  # unset: "lexical" for the bundled local model, else "model"
    wait_ms: int = 0
    timeout_ms: int = RECALL_TIMEOUT_MS
    hold_ms: int = RECALL_HOLD_MS
    draft_pause_ms: int = RECALL_DRAFT_PAUSE_MS  # 0: no recall while typing


@dataclass(frozen=True)
class ExtractionSettings:
    """`memory.extractGate` (skip turns with nothing durable), `memory.extractBatchTurns` (run
    anyway once this many turns wait), `memory.extractEvery` (at least N turns between runs at
    turn end), `memory.extractWaitSeconds` (print mode, exit) and the daily-log mode, for
    Layer 4 (memory/extract/)."""

    every: int = EXTRACT_EVERY
    gate: bool = True
    batch_turns: int = EXTRACT_BATCH_TURNS
    wait_seconds: float = EXTRACT_WAIT_SECONDS
    log_mode: bool = False  # `memory.mode: "log"`: append bullets to today's log, edit no file
    hooks_in_forks: bool = False  # `memory.hooksInForks`: the user's PreToolUse hooks vet fork calls


@dataclass(frozen=True)
class ForgetSettings:
    """`memory.halfLifeDays`, `memory.maxFiles` and `memory.autoGc`: forgetting (memory/maintenance/forget.py)."""

    half_life_days: float = HALF_LIFE_DAYS
    max_files: int = MAX_MEMORY_FILES
    auto_gc: bool = True

    @classmethod
    def from_config(cls, config: Config | None) -> ForgetSettings:
        """`config.memory.forget`; the defaults without a config."""
        return config.memory.forget if config is not None else cls()


@dataclass(frozen=True)
class DreamSettings:
    """`memory.autoDream` and `memory.dreamMaxTurns`: consolidation (memory/maintenance/dream.py)."""

    auto_dream: bool = True
    max_turns: int = DREAM_MAX_TURNS
    min_hours: float = DREAM_MIN_HOURS  # the auto-dream gate: constants, not settings
    min_sessions: int = DREAM_MIN_SESSIONS

    @classmethod
    def from_config(cls, config: Config | None) -> DreamSettings:
        """`config.memory.dream`; the defaults without a config."""
        return config.memory.dream if config is not None else cls()


@dataclass(frozen=True)
class CompactSettings:
    """`contextWindow`, `autoCompact` and `autoCompactThreshold` (or its environment variable),
    for Layer 5 (memory/compact/)."""

    context_window: int | None = None  # None: what the client knows, else the per-model table
    auto_compact: bool = True
    threshold: float | None = None  # a fraction of the window; None: the formula


TEAM_PROPOSALS = ("team", "private")


@dataclass(frozen=True)
class TeamSettings:
    """`memory.teamDir` and `memory.teamProposals`: the team tier in the repository
    (memory/team/). `dir`: None (the default folder when it exists), False (off), True (on, at
    the default folder) or a folder relative to the repository root; `proposals`: where a
    memory proposed for the team waits, `team` (uncommitted in the team folder) or `private`
    (the private `proposed/` folder, until `memory promote`)."""

    dir: str | bool | None = None
    proposals: str = "team"


@dataclass(frozen=True)
class MemorySettings:
    """Every memory layer's settings, validated; `problems` names each bad value once."""

    recall: RecallSettings = field(default_factory=RecallSettings)
    extraction: ExtractionSettings = field(default_factory=ExtractionSettings)
    forget: ForgetSettings = field(default_factory=ForgetSettings)
    dream: DreamSettings = field(default_factory=DreamSettings)
    compact: CompactSettings = field(default_factory=CompactSettings)
    team: TeamSettings = field(default_factory=TeamSettings)
    log_mode: bool = False  # `memory.mode: "log"` (memory/maintenance/daylog.py)
    problems: tuple[str, ...] = ()


def memory_settings(
    settings: Mapping[str, Any], model: str = DEFAULT_MODEL, environ: Mapping[str, str] | None = None
) -> MemorySettings:
    """The memory layers' settings from merged settings; a bad value gets its default and a problem."""
    read = SettingsReader(settings)
    recall = _recall_settings(read, read.group("recall"), model)
    memory = read.group("memory")
    log_mode = read.value(memory, "memory.mode", None, "'log' or left out", _is_log_mode, shown="topic files") == "log"
    return MemorySettings(
        recall=recall,
        extraction=ExtractionSettings(
            every=read.value(memory, "memory.extractEvery", EXTRACT_EVERY, "a whole number >= 1", whole_at_least(1)),
            gate=read.value(memory, "memory.extractGate", True, "true or false", is_bool),
            batch_turns=read.value(
                memory, "memory.extractBatchTurns", EXTRACT_BATCH_TURNS, "a whole number >= 1", whole_at_least(1)
            ),
            wait_seconds=float(
                read.value(
                    memory, "memory.extractWaitSeconds", EXTRACT_WAIT_SECONDS, "a number >= 0", number_at_least(0)
                )
            ),
            log_mode=log_mode,
            hooks_in_forks=read.value(memory, "memory.hooksInForks", False, "true or false", is_bool),
        ),
        forget=ForgetSettings(
            half_life_days=float(
                read.value(memory, "memory.halfLifeDays", HALF_LIFE_DAYS, "a number of days > 0", positive_number)
            ),
            max_files=int(read.value(memory, "memory.maxFiles", MAX_MEMORY_FILES, "a number >= 1", number_at_least(1))),
            auto_gc=read.value(memory, "memory.autoGc", True, "true or false", is_bool),
        ),
        dream=DreamSettings(
            auto_dream=read.value(memory, "memory.autoDream", True, "true or false", is_bool),
            max_turns=read.value(
                memory, "memory.dreamMaxTurns", DREAM_MAX_TURNS, "a whole number >= 2", whole_at_least(2)
            ),
        ),
        compact=_compact_settings(read, os.environ if environ is None else environ),
        team=TeamSettings(
            dir=read.value(
                memory,
                "memory.teamDir",
                None,
                "true, false or a folder inside the repository (e.g. '.claude/memory')",
                _is_team_dir,
                shown="'.claude/memory' when that folder exists",
            ),
            proposals=read.value(
                memory, "memory.teamProposals", "team", "'team' or 'private'", lambda v: v in TEAM_PROPOSALS
            ),
        ),
        log_mode=log_mode,
        problems=tuple(read.problems),
    )


def _recall_settings(read: SettingsReader, recall: Mapping[str, Any], model: str) -> RecallSettings:
    """`recall.*`; unset, the strategy follows the model, a bad one is "model".

    The bundled local model is tiny and runs one request at a time: picking memories with it
    costs seconds per turn and picks badly, so local sessions default to lexical recall.
    """
    unset = "lexical" if str(model).startswith("local") else "model"
    return RecallSettings(
        strategy=read.value(
            recall,
            "recall.strategy",
            unset,
            "one of " + ", ".join(RECALL_STRATEGIES),
            lambda v: v in RECALL_STRATEGIES,
            bad="model",
        ),
        wait_ms=int(read.value(recall, "recall.waitMs", 0, "a number of milliseconds >= 0", number_at_least(0))),
        timeout_ms=int(
            read.value(
                recall, "recall.timeoutMs", RECALL_TIMEOUT_MS, "a number of milliseconds >= 0", number_at_least(0)
            )
        ),
        hold_ms=int(
            read.value(recall, "recall.holdMs", RECALL_HOLD_MS, "a number of milliseconds >= 0", number_at_least(0))
        ),
        draft_pause_ms=int(
            read.value(
                recall,
                "recall.draftPauseMs",
                RECALL_DRAFT_PAUSE_MS,
                "a number of milliseconds >= 0 (0: off)",
                number_at_least(0),
            )
        ),
    )


def _compact_settings(read: SettingsReader, environ: Mapping[str, str]) -> CompactSettings:
    """The compaction settings; the environment variable wins over `autoCompactThreshold`."""
    top = read.settings
    context_window = read.value(
        top, "contextWindow", None, "a whole number of tokens >= 1", whole_at_least(1), shown="the model's window"
    )
    auto_compact = read.value(top, "autoCompact", True, "true or false", is_bool)
    threshold = read.value(
        top,
        "autoCompactThreshold",
        None,
        "a fraction of the window from 0 to 1, or a percentage up to 100",
        lambda v: threshold_fraction(v) is not None,
        shown="the default threshold",
    )
    # The environment variable is no setting: an unusable value is ignored without a word, as before.
    fraction = threshold_fraction(environ.get(AUTOCOMPACT_ENV)) or threshold_fraction(threshold)
    return CompactSettings(context_window, auto_compact, fraction)


def threshold_fraction(value: Any) -> float | None:
    """A threshold given as a fraction (0.8) or a percentage (80, "80"); None when unusable."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if number > 1:
        number /= 100
    return number if 0 < number <= 1 else None


def _is_log_mode(value: Any) -> bool:
    return isinstance(value, str) and value == "log"


def _is_team_dir(value: Any) -> bool:
    """A usable `memory.teamDir`: a boolean, or a relative folder that does not climb out."""
    if isinstance(value, bool):
        return True
    if not isinstance(value, str) or not value.strip():
        return False
    path = Path(value.strip())
    return not path.is_absolute() and ".." not in path.parts and not value.strip().startswith("~")
