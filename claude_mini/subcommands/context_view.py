"""Plain-text views of what is in the context: instruction files (Layer 1) and the prompt sections.

Shared by `claude-mini context` and the REPL's `/context`.
"""

from __future__ import annotations

from typing import Any

from claude_mini.prompt import SystemPrompt


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
        source = f"from {entry['imported_by']}" if entry.get("imported_by") else f"linked from {entry.get('linked_from')}"
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
