"""Which MCP servers a session starts: Claude Code's files and scopes, trust, approval, `${VAR}` expansion.

    .mcp.json (project root)                 {"mcpServers": {"db": {"command": "npx", "args": [...], "env": {...}},
                                                             "api": {"type": "http", "url": ..., "headers": {...}}}}
    $CLAUDE_MINI_HOME/settings.json          "mcpServers": {...}   scope "user": every project
    .claude/settings.local.json              "mcpServers": {...}   scope "local": this project, only you

`load_servers(config)` decides every entry: started (`servers`), waiting for the user's approval
(`pending_approval`), not started and why (`ignored`), or malformed (`problems`, one line each;
the rest of the file still works). The rules, as in Claude Code:
- `type` absent or "stdio": `command`, `args`, `env`; "http" (streamable HTTP) or "sse": `url`, `headers`.
- `${VAR}` and `${VAR:-default}` are expanded in command, args, env, url and headers (the default
  is used when VAR is unset or empty); a variable that is unset and has no default skips the server.
- Project and local servers take effect only in a trusted folder (they are the repository's files).
- A project server also needs the user's approval once: `enableAllProjectMcpServers: true`, or its
  name in `enabledMcpjsonServers`; a name in `disabledMcpjsonServers` is refused (it wins).
  `approve` writes these lists to `.claude/settings.local.json`.
- One name in several scopes: local wins over project, project over user; only servers that would
  start compete, so a project server still waiting for approval does not hide a user one.

Claude Code keeps local-scope servers in `~/.claude.json` under the project's path; claude-mini has
no such file, so they live in the project's `.claude/settings.local.json` (not committed, as there).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.base import paths
from claude_mini.base.fileutil import atomic_write
from claude_mini.base.safe_read import Unreadable, read_text_file
from claude_mini.config.edit import SettingsEditError, read_for_edit
from claude_mini.config.json_text import json_kind, json_shown, parse_json
from claude_mini.config.layers import SETTINGS_MAX_BYTES, SettingsLayer, settings_files
from claude_mini.config.loader import merge_layers

if TYPE_CHECKING:
    from claude_mini.config import Config

SCOPES = ("local", "project", "user")  # precedence, highest first
FLAG_SCOPE = "flag"  # --mcp-config: given by the user for this run, above every file
TRANSPORTS = ("stdio", "http", "sse")
MCP_JSON = ".mcp.json"
MASK = "***"
UNTRUSTED_WHY = "this folder is not trusted; run claude-mini here and trust it, or pass --trust-folder"
DISABLED_WHY = "disabled: its name is in disabledMcpjsonServers"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server as the client starts it: its values expanded, where it is written."""

    name: str
    transport: str  # "stdio" | "http" | "sse"
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    scope: str = "project"  # "project" (.mcp.json) | "user" (settings mcpServers) | "local"
    file: str = ""
    written: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)  # the entry as written

    def redacted(self) -> dict[str, Any]:
        """The server for a listing: command, args and url as written (a `${TOKEN}` stays a
        placeholder, not its value), env and header values masked, their names kept."""
        return _redacted(self.name, self.scope, self.file, self.written or self._as_entry())

    def _as_entry(self) -> dict[str, Any]:
        if self.transport == "stdio":
            return {"type": "stdio", "command": self.command, "args": list(self.args), "env": dict(self.env)}
        return {"type": self.transport, "url": self.url, "headers": dict(self.headers)}


@dataclass
class IgnoredServer:
    """A server written in a file that will not start, and why (one line)."""

    name: str
    scope: str
    file: str
    why: str
    written: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def redacted(self) -> dict[str, Any]:
        """As `ServerSpec.redacted`, with why it does not start."""
        return {**_redacted(self.name, self.scope, self.file, self.written), "why": self.why}


@dataclass
class ServerSet:
    """Every configured server, decided: started, waiting for approval, ignored, or a problem."""

    servers: list[ServerSpec] = field(default_factory=list)  # will be started, sorted by name
    ignored: list[IgnoredServer] = field(default_factory=list)
    pending_approval: list[ServerSpec] = field(default_factory=list)  # project servers not yet approved
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The stable shape of `claude-mini mcp list --json`: no secret values."""
        return {
            "servers": [spec.redacted() for spec in self.servers],
            "pending_approval": [spec.redacted() for spec in self.pending_approval],
            "ignored": [server.redacted() for server in self.ignored],
            "problems": list(self.problems),
        }


def _redacted(name: str, scope: str, file: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    transport = entry.get("type") or "stdio"
    out: dict[str, Any] = {"name": name, "scope": scope, "file": file, "transport": transport}
    if transport == "stdio":
        out["command"] = entry.get("command", "")
        out["args"] = list(entry.get("args") or [])
        out["env"] = _masked(entry.get("env"))
    else:
        out["url"] = entry.get("url", "")
        out["headers"] = _masked(entry.get("headers"))
    return out


def _masked(values: Any) -> dict[str, str]:
    return {str(key): MASK for key in values} if isinstance(values, dict) else {}


# ---- where servers are written


def scope_file(config: Config, scope: str) -> Path:
    """The file a scope's servers are written in."""
    if scope == "project":
        return config.project_root / MCP_JSON
    if scope == "user":
        return paths.home_dir() / "settings.json"
    return local_settings_file(config)


def local_settings_file(config: Config) -> Path:
    """The project's `.claude/settings.local.json` (local servers, approvals)."""
    return dict(settings_files(config.cwd, config.project_root))["local"]


def written_servers(config: Config, scope: str, problems: list[str]) -> tuple[str, dict[str, Any]]:
    """(file, its `mcpServers` object) for one scope; a missing file has none, a broken one is a problem."""
    path = scope_file(config, scope)
    if scope == "project":
        data = _read_mcp_json(path, problems)
    else:  # the settings layers were read by load_config (an unreadable one is among its warnings)
        data = next((layer.data for layer in config.raw_layers if layer.path == path), {})
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        problems.append(
            f"Skipped mcpServers in {path}: it must be an object of server names, not "
            f"{json_kind(servers)}. Fix the file to use its servers."
        )
        return str(path), {}
    return str(path), servers


def _read_mcp_json(path: Path, problems: list[str]) -> dict[str, Any]:
    """`.mcp.json` as a dict, through safe_read (a link to /dev/zero or a FIFO is one problem line)."""
    try:
        text = read_text_file(path, SETTINGS_MAX_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, Unreadable) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        problems.append(
            f"Skipped {path}: {why}. Its MCP servers do not start; other servers still "
            "do. Make it a regular JSON file to use them."
        )
        return {}
    data, problem = parse_json(text) if text.strip() else ({}, None)
    if problem or not isinstance(data, dict):
        problems.append(
            f"Skipped {path}: it {problem or 'is not a JSON object'}. Its MCP servers do "
            "not start; fix the file to use them."
        )
        return {}
    return data


# ---- deciding


@dataclass
class _Approvals:
    """The user's answers about project servers, from every settings layer."""

    all_projects: bool = False
    enabled: set[str] = field(default_factory=set)
    disabled: set[str] = field(default_factory=set)


def _approvals(config: Config, problems: list[str]) -> _Approvals:
    """`enableAllProjectMcpServers` (the highest layer that sets it wins) and the union of every
    layer's `enabledMcpjsonServers` / `disabledMcpjsonServers`.

    Read from `raw_layers`: `config.layers` drops these keys in an untrusted folder, where project
    servers do not start anyway; once trusted, the project's own settings may approve them, as
    its hooks may run commands.
    """
    out = _Approvals()
    for layer in config.raw_layers:
        where = str(layer.path) if layer.path else "the command line"
        value = layer.data.get("enableAllProjectMcpServers")
        if isinstance(value, bool):
            out.all_projects = value
        elif value is not None:
            problems.append(
                f"enableAllProjectMcpServers in {where} must be true or false (got {json_shown(value)}); ignored."
            )
        for key, names in (("enabledMcpjsonServers", out.enabled), ("disabledMcpjsonServers", out.disabled)):
            value = layer.data.get(key, [])
            if isinstance(value, list) and all(isinstance(name, str) for name in value):
                names.update(value)
            else:
                problems.append(f"{key} in {where} must be a list of server names (got {json_shown(value)}); ignored.")
    return out


def load_servers(config: Config, environ: Mapping[str, str] | None = None) -> ServerSet:
    """Every server of the three scopes, decided as the module docstring says."""
    environ = os.environ if environ is None else environ
    result = ServerSet()
    approvals = _approvals(config, result.problems)
    runnable: list[ServerSpec] = []  # in precedence order
    for scope, file, written in _written(config, result.problems):
        for name, entry in written.items():
            problem = entry_problem(entry)
            if problem:
                result.problems.append(
                    f'Skipped MCP server "{name}" in {file}: it {problem}. The file\'s '
                    "other servers still apply; fix the entry to use it."
                )
            elif scope not in ("user", FLAG_SCOPE) and not config.trusted:
                result.ignored.append(IgnoredServer(name, scope, file, UNTRUSTED_WHY, entry))
            elif scope == "project" and name in approvals.disabled:
                result.ignored.append(IgnoredServer(name, scope, file, DISABLED_WHY, entry))
            elif (spec := _expanded(name, scope, file, entry, environ, result.problems)) is None:
                continue
            elif scope == "project" and not (approvals.all_projects or name in approvals.enabled):
                result.pending_approval.append(spec)
            else:
                runnable.append(spec)
    _resolve_names(runnable, result)
    result.servers.sort(key=lambda spec: spec.name)
    result.pending_approval.sort(key=lambda spec: spec.name)
    result.ignored.sort(key=lambda server: (server.name, (FLAG_SCOPE, *SCOPES).index(server.scope)))
    return result


def _written(config: Config, problems: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
    """(scope, file, servers) in precedence order: each --mcp-config value, then the files' scopes
    (none with --strict-mcp-config)."""
    out = [(FLAG_SCOPE, label, servers) for label, servers in config.mcp_configs]
    if not config.strict_mcp_config:
        out += [(scope, *written_servers(config, scope, problems)) for scope in SCOPES]
    return out


def _resolve_names(runnable: list[ServerSpec], result: ServerSet) -> None:
    """The first server of each name (the highest scope) starts; the others are ignored, as is a
    pending project server that a local one of its name would hide even once approved."""
    winners: dict[str, ServerSpec] = {}
    for spec in runnable:
        if spec.name in winners:
            result.ignored.append(_overridden(spec, winners[spec.name]))
        else:
            winners[spec.name] = spec
            result.servers.append(spec)
    for spec in list(result.pending_approval):
        winner = winners.get(spec.name)
        if winner is not None and winner.scope == "local":
            result.pending_approval.remove(spec)
            result.ignored.append(_overridden(spec, winner))


def _overridden(spec: ServerSpec, winner: ServerSpec) -> IgnoredServer:
    why = f"overridden by the {winner.scope} server of the same name ({winner.file})"
    return IgnoredServer(spec.name, spec.scope, spec.file, why, spec.written)


def entry_problem(entry: Any) -> str | None:
    """What makes a written server unusable, in words for a problem line, or None."""
    if not isinstance(entry, dict):
        return f"must be an object, not {json_kind(entry)}"
    transport = entry.get("type", "stdio")
    if transport not in TRANSPORTS:
        return f"has the type {json_shown(transport)}; claude-mini knows stdio (the default), http and sse"
    if transport == "stdio":
        if not isinstance(entry.get("command"), str) or not entry["command"].strip():
            return 'needs "command": the program to run'
        if not _strings(entry.get("args", []), list):
            return f'has "args" that is not a list of strings ({json_shown(entry.get("args"))})'
        if not _strings(entry.get("env", {}), dict):
            return f'has "env" that is not an object of strings ({_kinds(entry.get("env"))})'
        return None
    if not isinstance(entry.get("url"), str) or not entry["url"].strip():
        return f'needs "url": the address of the {transport} server'
    if not _strings(entry.get("headers", {}), dict):
        return f'has "headers" that is not an object of strings ({_kinds(entry.get("headers"))})'
    return None


def _kinds(values: Any) -> str:
    """What is wrong in an env or headers object, without its values (they may be secrets)."""
    if not isinstance(values, dict):
        return json_kind(values)
    return ", ".join(f"{key} is {json_kind(value)}" for key, value in values.items() if not isinstance(value, str))


def _strings(value: Any, kind: type) -> bool:
    values = value.values() if isinstance(value, dict) else value
    return isinstance(value, kind) and all(isinstance(item, str) for item in values)


def _expanded(
    name: str, scope: str, file: str, entry: dict[str, Any], environ: Mapping[str, str], problems: list[str]
) -> ServerSpec | None:
    """The spec with `${VAR}`s expanded; None (and one problem) when a variable is missing."""
    missing: list[str] = []

    def sub(text: str) -> str:
        return expand(text, environ, missing)

    transport = entry.get("type", "stdio")
    if transport == "stdio":
        spec = ServerSpec(
            name,
            transport,
            command=sub(entry["command"]),
            args=tuple(sub(arg) for arg in entry.get("args", [])),
            env={key: sub(value) for key, value in entry.get("env", {}).items()},
            scope=scope,
            file=file,
            written=entry,
        )
    else:
        spec = ServerSpec(
            name,
            transport,
            url=sub(entry["url"]),
            headers={key: sub(value) for key, value in entry.get("headers", {}).items()},
            scope=scope,
            file=file,
            written=entry,
        )
    if missing:
        names = ", ".join(dict.fromkeys(missing))
        problems.append(
            f'Skipped MCP server "{name}" in {file}: it uses the environment variable(s) '
            f"{names}, not set and without a default. Claude Code would start it with the literal "
            f"text in their place; claude-mini does not, so a placeholder is never sent as a password "
            f"or a URL. Set them, or write ${{NAME:-default}}."
        )
        return None
    return spec


def expand(text: str, environ: Mapping[str, str], missing: list[str]) -> str:
    """`${VAR}` and `${VAR:-default}` replaced; each variable without a value or default is added to `missing`."""

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if environ.get(name):
            return environ[name]
        if default is not None:
            return default
        if name in environ:
            return ""  # set but empty, and no default: empty, as a shell would
        missing.append(name)
        return match.group(0)

    return _VARIABLE.sub(value, text)


# ---- writing the user's answers


def approve(config: Config, names: list[str], *, approved: bool) -> None:
    """Record the user's answer about project servers in `.claude/settings.local.json`, as Claude
    Code does: approved names join `enabledMcpjsonServers` (and leave `disabledMcpjsonServers`),
    refused ones the other way round. The file is created if needed and rewritten atomically with
    its other keys kept; this session's settings follow it. Raises config.SettingsEditError."""
    path = local_settings_file(config)
    add, drop = ("enabledMcpjsonServers", "disabledMcpjsonServers")[:: 1 if approved else -1]

    def change(data: dict[str, Any]) -> None:
        data[add] = _plain_list(data.get(add)) + [name for name in names if name not in _plain_list(data.get(add))]
        if drop in data:
            data[drop] = [name for name in _plain_list(data[drop]) if name not in names]

    edit_settings(config, path, change)


def _plain_list(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def edit_settings(config: Config, path: Path, change: Any, *, source: str = "local") -> None:
    """Read a JSON file (missing: empty), let `change` edit the dict, write it back atomically
    (2-space indent, other keys kept, a link stays a link), and let the session's settings
    layers follow when it is one of them. Raises config.SettingsEditError, leaving the file as it was."""
    target = path.resolve()
    data = read_for_edit(target) if target.exists() else {}
    change(data)
    try:
        atomic_write(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise SettingsEditError(f"cannot write {path}: {exc.strerror or exc}; it was left unchanged") from None
    if path.name != MCP_JSON:
        _follow_layer(config, path, source, data)


def _follow_layer(config: Config, path: Path, source: str, data: dict[str, Any]) -> None:
    """This session's raw settings layer for `path` gets `data` (a new file becomes a layer), and
    the merged settings are rebuilt, as `config.remove_permission_rule` does."""
    layer = next((layer for layer in config.raw_layers if layer.path == path), None)
    if layer is not None:
        layer.data = data
    else:
        order = ["user", "project", "local", "flags", "managed"]
        at = next(
            (i for i, other in enumerate(config.raw_layers) if order.index(other.source) > order.index(source)),
            len(config.raw_layers),
        )
        config.raw_layers.insert(at, SettingsLayer(source, path, data))
    merge_layers(config)
