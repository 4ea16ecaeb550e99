"""Plain-text views of what is in the context: instruction files (Layer 1), the prompt sections,
and the custom commands and skills listed to the model.

Shared by `claude-mini context` and the REPL's `/context`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from claude_mini.prompt import SystemPrompt, estimate_tokens

if TYPE_CHECKING:
    from claude_mini.config import Config


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


def skills_json(config: Config) -> dict[str, Any]:
    """The catalog as `claude-mini context` shows it: what the model gets listed (and in how many
    characters of which budget), the entries only the user can run, the problems."""
    from claude_mini import paths
    from claude_mini.memory.compact import context_window
    from claude_mini.skills.catalog import build_listing, listing_budget, load_catalog
    from claude_mini.ui.skill_commands import builtin_clashes, shown_path

    catalog = load_catalog(config.project_root, paths.home_dir())
    listing = build_listing(catalog.listed(), listing_budget(context_window(config, config.model)))
    listed = {entry.name for entry in catalog.listed()}
    return {
        "entries": [{"name": e.name, "kind": e.kind, "source": e.source, "path": str(e.path),
                     "shown_path": shown_path(e), "listed": e.name in listed, "user_invocable": e.user_invocable,
                     "description": e.description} for e in catalog.entries],
        "listing_chars": listing.chars, "listing_budget": listing.budget,
        "listing_tokens": estimate_tokens(listing.text), "shortened": list(listing.shortened),
        "problems": [*catalog.problems, *builtin_clashes(catalog)],
    }


def skills_report(data: dict[str, Any]) -> list[str]:
    """The Skills section: every entry (listed to the model or only typed), the listing's size."""
    entries = data["entries"]
    if not entries and not data["problems"]:
        return ["Skills and custom commands: none (.claude/skills/NAME/SKILL.md, .claude/commands/NAME.md)."]
    listed = sum(1 for entry in entries if entry["listed"])
    lines = [f"Skills and custom commands ({listed} of {len(entries)} listed to the model in the Skill tool's "
             f"description: {data['listing_tokens']:,} tokens, {data['listing_chars']:,} of "
             f"{data['listing_budget']:,} characters):"]
    for entry in entries:
        mark = "+" if entry["listed"] else "-"
        why = "" if entry["listed"] else ", not listed: disable-model-invocation"
        if not entry["user_invocable"]:
            why += ", model only"
        lines.append(f"  {mark} {entry['name']} ({entry['kind']}, {entry['source']}{why}): {entry['shown_path']}")
    if data["shortened"]:
        lines.append("  listed without their description (over the budget): " + ", ".join(data["shortened"]))
    lines += [f"  warning: {problem}" for problem in data["problems"]]
    return lines
