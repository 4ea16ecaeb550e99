"""What the sandbox enforces and what it does not: the text of /sandbox and `claude-mini sandbox status`."""

from __future__ import annotations

from typing import Any

from claude_mini.sandbox.box import Sandbox
from claude_mini.sandbox.bwrap import PACKAGE_HINT, existing

NOT_ENFORCED = (
    "Not enforced by the sandbox: Read, Write, Edit, Grep and Glob (the permission rules decide "
    "them), MCP servers and hooks (they run as you), and commands run unsandboxed "
    "(excludedCommands, or dangerouslyDisableSandbox after your approval).",
)


def status_data(box: Sandbox) -> dict[str, Any]:
    """The sandbox's state as data (`--json`)."""
    data: dict[str, Any] = {
        "enabled": box.settings.enabled,
        "available": box.availability.works,
        "enforced": box.enforced,
        "bwrap": box.availability.path,
        "version": box.availability.version,
        "problem": box.availability.problem or None,
        "failIfUnavailable": box.settings.fail_if_unavailable,
        "autoAllowBashIfSandboxed": box.settings.auto_allow,
        "allowUnsandboxedCommands": box.settings.allow_unsandboxed,
        "excludedCommands": list(box.settings.excluded_commands),
        "allowedDomains": list(box.settings.allowed_domains),
        "deniedDomains": list(box.settings.denied_domains),
        "settingsProblems": list(box.settings.problems),
    }
    if box.enforced:
        report = box.layout()
        layout = report.layout
        data["filesystem"] = {
            "writable": existing(layout.writable),
            "readOnly": existing(layout.read_only),
            "masked": existing(layout.masked_dirs + layout.masked_files),
            "notes": report.notes,
        }
    return data


def status_lines(box: Sandbox) -> list[str]:
    """The human-readable report."""
    data = status_data(box)
    if not box.settings.enabled:
        return [
            "Sandbox: off (sandbox.enabled is false). Bash runs as you, checked by the permission "
            "rules and the command-line analysis only."
        ]
    if not box.enforced:
        then = (
            "Bash refuses to run (sandbox.failIfUnavailable)"
            if box.settings.fail_if_unavailable
            else "Bash runs unsandboxed, checked by the permission rules and the command-line analysis"
        )
        return [f"Sandbox: NOT enforced: {box.availability.problem or PACKAGE_HINT}.", f"Until then {then}."]
    fs = data["filesystem"]
    auto = (
        "sandboxed commands run without a question"
        if box.settings.auto_allow
        else "sandboxed commands still ask as the mode says"
    )
    lines = [
        f"Sandbox: enforced by {data['version'] or 'bwrap'} ({data['bwrap']}); {auto}.",
        "Filesystem: the root is read-only; writable:",
    ]
    lines += [f"  {p}" for p in fs["writable"]]
    lines.append("Read-only inside those:" if fs["readOnly"] else "Read-only inside those: (none present)")
    lines += [f"  {p}" for p in fs["readOnly"]]
    lines.append("Hidden (credentials, the claude-mini home, Read deny rules):")
    lines += [f"  {p}" for p in fs["masked"]] or ["  (none present)"]
    lines += [f"  note: {n}" for n in fs["notes"]]
    domains = ", ".join(box.settings.allowed_domains) or "none"
    lines.append(
        f"Network: off except through the proxy; allowed domains: {domains} (plus WebFetch(domain:…) "
        "allow rules); a new domain asks in the REPL and is refused in -p."
    )
    approved, refused = box.session_hosts
    if approved or refused:
        lines.append(f"This session: allowed {', '.join(approved) or 'none'}; refused {', '.join(refused) or 'none'}.")
    if box.settings.excluded_commands:
        lines.append(f"Run outside the sandbox (normal questions): {', '.join(box.settings.excluded_commands)}")
    if not box.settings.allow_unsandboxed:
        lines.append("dangerouslyDisableSandbox is ignored (allowUnsandboxedCommands is false).")
    lines += [f"Settings problem: {p}" for p in box.settings.problems]
    lines += NOT_ENFORCED
    return lines
