"""The `sandbox` settings key, in Claude Code's format, validated into one dataclass.

    sandbox.enabled                    on by default here (Claude Code: off); false turns it off
    sandbox.failIfUnavailable          true: Bash refuses to run when bwrap cannot start
    sandbox.autoAllowBashIfSandboxed   true: a sandboxed command runs without the mode's question
    sandbox.excludedCommands           commands that run outside the sandbox (normal questions)
    sandbox.allowUnsandboxedCommands   false: the model's dangerouslyDisableSandbox is ignored
    sandbox.network.allowedDomains     hosts the proxy lets through (`*.x.com` for subdomains)
    sandbox.network.deniedDomains      hosts always refused
    sandbox.network.allowManagedDomainsOnly   managed only: other layers' domains are ignored
    sandbox.network.allowAllUnixSockets       keep the usual sockets (docker, ssh-agent) reachable
    sandbox.filesystem.allowWrite | denyWrite | denyRead | allowRead   paths, as permission rules
                                       write them (`//abs`, `~/x`, `./x` or `x` in the project)

An untrusted project cannot set any of this (config/untrusted.py ignores the whole key there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from claude_mini.config.validate import settings_problem

_BOOLS = {  # key -> (attribute, default)
    "enabled": ("enabled", True),
    "failIfUnavailable": ("fail_if_unavailable", False),
    "autoAllowBashIfSandboxed": ("auto_allow", True),
    "allowUnsandboxedCommands": ("allow_unsandboxed", True),
}
_LISTS = {
    "excludedCommands": "excluded_commands",
    "network.allowedDomains": "allowed_domains",
    "network.deniedDomains": "denied_domains",
    "filesystem.allowWrite": "allow_write",
    "filesystem.denyWrite": "deny_write",
    "filesystem.denyRead": "deny_read",
    "filesystem.allowRead": "allow_read",
}


@dataclass(frozen=True)
class SandboxSettings:
    """What the settings ask of the sandbox; `problems` are the values that were replaced."""

    enabled: bool = True
    fail_if_unavailable: bool = False
    auto_allow: bool = True
    allow_unsandboxed: bool = True
    excluded_commands: tuple[str, ...] = ()
    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    allow_write: tuple[str, ...] = ()
    deny_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()
    allow_read: tuple[str, ...] = ()
    all_unix_sockets: bool = False
    problems: tuple[str, ...] = ()


def sandbox_settings(
    settings: Mapping[str, Any], layers: Sequence[tuple[str, Mapping[str, Any]]] = ()
) -> SandboxSettings:
    """Read the merged `sandbox` object; each bad value becomes its default with one problem.

    `layers` (source, settings) let `network.allowManagedDomainsOnly` in the managed layer keep
    only the managed file's allowed domains, as Claude Code does.
    """
    group = settings.get("sandbox", {})
    problems: list[str] = []
    if not isinstance(group, Mapping):
        return SandboxSettings(problems=(settings_problem("sandbox", "an object", group, "the defaults"),))
    values: dict[str, Any] = {}
    for key, (attr, default) in _BOOLS.items():
        values[attr] = _bool(group, key, default, problems)
    for dotted, attr in _LISTS.items():
        values[attr] = _strings(group, dotted, problems)
    network = group.get("network")
    network = network if isinstance(network, Mapping) else {}
    values["all_unix_sockets"] = _bool(network, "allowAllUnixSockets", False, problems, "network.")
    if _managed_only(layers):
        values["allowed_domains"] = _managed_domains(layers)
    return SandboxSettings(**values, problems=tuple(problems))


def _bool(group: Mapping[str, Any], key: str, default: bool, problems: list[str], prefix: str = "") -> bool:
    value = group.get(key, default)
    if isinstance(value, bool):
        return value
    problems.append(settings_problem(f"sandbox.{prefix}{key}", "true or false", value, "true" if default else "false"))
    return default


def _strings(group: Mapping[str, Any], dotted: str, problems: list[str]) -> tuple[str, ...]:
    node: Any = group
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    if node is None:
        return ()
    if isinstance(node, list) and all(isinstance(item, str) and item.strip() for item in node):
        return tuple(item.strip() for item in node)
    problems.append(settings_problem(f"sandbox.{dotted}", "a list of strings", node, "its string entries only"))
    return (
        tuple(item.strip() for item in node if isinstance(item, str) and item.strip()) if isinstance(node, list) else ()
    )


def _managed_only(layers: Sequence[tuple[str, Mapping[str, Any]]]) -> bool:
    return any(source == "managed" and _network(data).get("allowManagedDomainsOnly") is True for source, data in layers)


def _managed_domains(layers: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[str, ...]:
    found: list[str] = []
    for source, data in layers:
        domains = _network(data).get("allowedDomains") if source == "managed" else None
        if isinstance(domains, list):
            found += [d.strip() for d in domains if isinstance(d, str) and d.strip()]
    return tuple(found)


def _network(data: Mapping[str, Any]) -> Mapping[str, Any]:
    sandbox = data.get("sandbox")
    network = sandbox.get("network") if isinstance(sandbox, Mapping) else None
    return network if isinstance(network, Mapping) else {}
