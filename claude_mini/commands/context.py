"""Plain-text views of what is in the context: instruction files (Layer 1), the prompt sections,
and the custom commands and skills listed to the model.

Shared by `claude-mini context` and the REPL's `/context`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from claude_mini.base import paths
from claude_mini.command_table import BUILTIN, builtin_table
from claude_mini.memory.compact.budget import context_window
from claude_mini.prompt import SystemPrompt
from claude_mini.skills import report
from claude_mini.skills.catalog import build_listing, listing_budget, load_catalog

if TYPE_CHECKING:
    from claude_mini.config import Config
    from claude_mini.skills.catalog import Catalog, Listing


def instructions_report(data: dict[str, Any]) -> list[str]:
    """Every instruction file considered, in load order, with status, tokens and import tree."""
    lines = [f"Instruction files ({data['tokens']:,} tokens in the system prompt):"]
    for entry in data["files"]:
        lines.append(_entry_line(entry))
    if not data["files"]:
        lines.append("  (none found: add a CLAUDE.md to this repository, or run /init)")
    if data["conditional_rules"]:
        lines.append("Path-scoped rules (attached when a Read, Edit or Write touches a match):")
        for rule in data["conditional_rules"]:
            state = "active" if rule["active"] else "waiting"
            lines.append(f"  [{state}] {rule['path']}  paths: {', '.join(rule['globs'])}")
    if data["attachments"]:
        lines.append("Attached this session:")
        for att in data["attachments"]:
            lines.append(f"  {att['kind']}: {att['path']} ({att['tokens']:,} tokens)")
    lines.extend(_outside_imports_lines(data))
    for warning in data["warnings"]:
        lines.append(f"  warning: {warning}")
    return lines


def _outside_imports_lines(data: dict[str, Any]) -> list[str]:
    """The imports that leave the repository, and whether this folder's trust lets them in."""
    entries = data.get("outside_imports") or []
    if not entries:
        return []
    state = "trusted" if data.get("trusted") else "not trusted: they are skipped"
    lines = [f"Imports from outside the repository (this folder is {state}):"]
    for entry in entries:
        source = (
            f"from {entry['imported_by']}" if entry.get("imported_by") else f"linked from {entry.get('linked_from')}"
        )
        if entry["status"] == "skipped":
            lines.append(f"  - {entry['path']} ({source}) skipped: {entry['reason']}")
        else:
            lines.append(f"  + {entry['path']} ({source}, {entry['tokens']:,} tokens)")
    return lines


def _entry_line(entry: dict[str, Any]) -> str:
    indent = "  " + "    " * entry.get("depth", 0)
    if entry["status"] == "skipped":
        return f"{indent}- {entry['path']} ({entry['kind']}) skipped: {entry['reason']}"
    if entry["status"] == "conditional":
        return f"{indent}~ {entry['path']} (rule, conditional: {', '.join(entry['globs'])})"
    return f"{indent}+ {entry['path']} ({entry['kind']}, {entry['tokens']:,} tokens)"


def prompt_report(prompt: SystemPrompt) -> list[str]:
    """The system prompt's sections with their sources and token estimates."""
    lines = [f"System prompt ({prompt.tokens:,} tokens):"]
    for section in prompt.sections:
        if section.text.strip():
            source = f"  [{section.source}]" if section.source and section.source != "built-in" else ""
            lines.append(f"  {section.name:<13} {section.tokens:>7,} tokens{source}")
    return lines


def context_catalog(config: Config) -> tuple[Catalog, Listing]:
    """The catalog on disk and the listing a session started now would send (its budget from the
    configured model's context window)."""
    catalog = load_catalog(
        config.project_root, paths.home_dir(), trusted=config.trusted, claude_code=config.claude_code_home
    )
    return catalog, build_listing(catalog.listed(), listing_budget(context_window(config, config.model)))


def builtin_command_names() -> set[str]:
    """claude-mini's own slash commands and their aliases, lower case (the registry has no heavy
    imports; discovery adds the plug-in modules' commands)."""
    return builtin_table().names_of(BUILTIN)


def catalog_lines(catalog: Catalog, listing: Listing, builtin_names: Collection[str]) -> list[str]:
    """The Skills section: the line /skills and /context start with, every entry with its state
    and file, what the budget shortened, the problems (clashes with built-in commands included)."""
    problems = [*catalog.problems, *report.builtin_clashes(catalog, builtin_names)]
    if not catalog.entries and not problems:
        return [report.none_line(paths.home_dir())]
    lines = [report.listing_line(catalog, listing) + ":"]
    lines += report.table([(r.name, r.kind, r.source, r.state, r.path) for r in report.rows(catalog)])
    shortened = report.shortened_line(listing)
    lines += [f"  {shortened}"] if shortened else []
    lines += [f"  warning: {problem}" for problem in problems]
    return lines
