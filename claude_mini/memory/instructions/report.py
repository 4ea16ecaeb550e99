"""What `claude-mini context` shows about Layer 1: lint findings (`--lint`) and the JSON (`--json`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.memory.instructions.entries import (
    DUPLICATE,
    ConditionalRule,
    Entry,
    InstructionFile,
    InstructionSet,
    Skipped,
)
from claude_mini.memory.instructions.globs import iter_repository_files

if TYPE_CHECKING:
    from claude_mini.memory.instructions.attachments import AttachmentTracker

LINT_MAX_CHARS = 40_000  # `--lint` flags files above this


def _lint_sizes(entries: list[Entry]) -> list[str]:
    findings = []
    for e in entries:
        if isinstance(e, Skipped) and e.reason.startswith("too large"):
            findings.append(f"{e.path}: not loaded, {e.reason}")
        elif not isinstance(e, Skipped) and len(e.text) > LINT_MAX_CHARS:
            findings.append(
                f"{e.path}: {len(e.text):,} characters (over {LINT_MAX_CHARS:,}); "
                "move parts into @imports or path-scoped rules"
            )
    return findings


def _lint_imports(entries: list[Entry]) -> list[str]:
    return [
        f"broken import in {e.imported_by}: {e.path} ({e.reason})"
        for e in entries
        if isinstance(e, Skipped) and e.imported_by is not None and e.reason != DUPLICATE
    ]


def _lint_duplicates(entries: list[Entry]) -> list[str]:
    findings: list[str] = []
    first: dict[str, str] = {}
    for e in entries:
        if isinstance(e, Skipped) or not e.text.strip():
            continue
        key = e.text.strip()
        if key in first:
            findings.append(f"{e.path} has the same content as {first[key]}: keep one")
        else:
            first[key] = e.path
    return findings


def _lint_dead_rules(rules: list[ConditionalRule], repo_root: Path) -> list[str]:
    if not rules:
        return []
    files = list(iter_repository_files(os.path.realpath(repo_root)))
    findings: list[str] = []
    for rule in rules:
        findings.extend(f"{rule.path}: {error}" for error in rule.errors)
        if not any(rule.matches_any((f,)) for f in files):
            findings.append(f"{rule.path}: paths {rule.globs} match no file in the repository")
    return findings


def lint(instructions: InstructionSet, repo_root: Path) -> list[str]:
    """Findings for `claude-mini context --lint`: big files, broken imports, duplicates, dead globs."""
    entries = instructions.considered
    return [
        *_lint_sizes(entries),
        *_lint_imports(entries),
        *_lint_duplicates(entries),
        *_lint_dead_rules(instructions.conditional, repo_root),
    ]


def _entry_json(entry: Entry) -> dict[str, Any]:
    data: dict[str, Any] = {
        "path": entry.path,
        "kind": entry.kind,
        "status": "loaded",
        "reason": None,
        "tokens": 0,
        "depth": 0,
        "imported_by": None,
        "imports": [],
    }
    if isinstance(entry, Skipped):
        data.update(status="skipped", reason=entry.reason, depth=entry.depth)
    elif isinstance(entry, ConditionalRule):
        data.update(status="conditional", tokens=entry.tokens, globs=entry.globs)
    else:
        data.update(tokens=entry.tokens, depth=entry.depth, notes=entry.notes, imports=[c.path for c in entry.imports])
    if not isinstance(entry, ConditionalRule) and entry.imported_by is not None:
        data["imported_by"] = entry.imported_by
    if not isinstance(entry, ConditionalRule) and entry.linked_from is not None:
        data["linked_from"] = entry.linked_from
    return data


def to_json(instructions: InstructionSet, tracker: AttachmentTracker | None = None) -> dict[str, Any]:
    """Data for `claude-mini context --json`: every file considered in load order, and rule state."""
    ctx = instructions.context
    status = tracker.conditional_status() if tracker else [(rule, False) for rule in instructions.conditional]
    attachments = tracker.active() if tracker else []
    return {
        "cwd": ctx.cwd,
        "project_root": ctx.project_root,
        "tokens": instructions.tokens,
        "files": [_entry_json(e) for e in instructions.considered],
        "conditional_rules": [
            {"path": r.path, "globs": r.globs, "base": r.base, "active": active, "tokens": r.tokens, "errors": r.errors}
            for r, active in status
        ],
        "attachments": [
            {"path": a.path, "kind": a.kind, "tokens": a.tokens, "files": [f.path for f in a.files]}
            for a in attachments
        ],
        "attachment_files": [_entry_json(e) for e in (tracker.considered if tracker else [])],
        "warnings": [*instructions.warnings, *(tracker.warnings if tracker else [])],
        "trusted": ctx.trusted,
        "outside_imports": outside_imports(instructions, tracker),
    }


def outside_imports(instructions: InstructionSet, tracker: AttachmentTracker | None = None) -> list[dict[str, Any]]:
    """Every import, and every instruction file found through a link, that resolved outside the
    repository (loaded or not), for `claude-mini context`."""
    ctx = instructions.context
    entries = [*instructions.considered, *(tracker.considered if tracker else [])]
    return [
        _entry_json(e)
        for e in entries
        if isinstance(e, InstructionFile | Skipped)
        and ctx.is_outside(e.path)
        and (e.imported_by is not None or (e.linked_from is not None and ctx.in_repository(e.linked_from)))
    ]
