"""The secret guard: nothing that looks like a credential is written into the memory folder.

Memory files are plain text, read back into every later session and easy to
commit or share, so a Write or Edit whose target is inside the memory folder
(as written or with symlinks resolved) and whose new text matches a common
secret pattern is refused with a Deny that says what was found, redacted.

`SecretGuard` wraps any tool policy, so it covers both writers: the main
agent and the extraction fork (around ExtractionPolicy). For the main agent
the extraction hook (`Extractor.before_request`) puts the guard around
`agent.policy` before every request, so a policy the UI swaps in (e.g. after
removing a session rule) is guarded too. The check runs before the wrapped
policy, so neither bypassPermissions nor an allow rule lets a secret through.
It is a best effort on tool input: a secret written by a shell command is not seen.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_mini.agent.permissions import Decision, Deny, ToolPolicy

# Values that stand for a secret without being one: `${DB_PASSWORD}`, `<token>`, `***`, `xxxx`.
_PLACEHOLDER = re.compile(
    r"^(\$\{?\w+\}?|<[^>]*>|\{\{?[^}]*\}\}?|\*+|x+|\.+|%\w+%|(your|my)[-_]?\w*|changeme|redacted)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class SecretPattern:
    """One kind of secret: what to call it and how to spot it (group `value` is the secret)."""

    kind: str
    regex: re.Pattern[str]


def _p(kind: str, pattern: str, flags: int = 0) -> SecretPattern:
    return SecretPattern(kind, re.compile(pattern, flags))


PATTERNS: tuple[SecretPattern, ...] = (
    _p("a private key", r"(?P<value>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"),
    _p("an API key", r"(?<![\w-])(?P<value>sk-(?:ant-|proj-|live-)?[A-Za-z0-9_-]{20,})"),
    _p("a Stripe key", r"(?<![\w-])(?P<value>[rs]k_(?:live|test)_[A-Za-z0-9]{16,})"),
    _p("an AWS access key id", r"(?<![A-Z0-9])(?P<value>(?:AKIA|ASIA)[A-Z0-9]{16})(?![A-Z0-9])"),
    _p("a GitHub token", r"(?<![\w])(?P<value>(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}))"),
    _p("a Slack token", r"(?<![\w-])(?P<value>xox[abposr]-[A-Za-z0-9-]{10,})"),
    _p("a Google API key", r"(?<![\w-])(?P<value>AIza[0-9A-Za-z_-]{35})"),
    _p("a JSON web token", r"(?<![\w-])(?P<value>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"),
    _p("a password in a URL", r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:(?P<value>[^\s/@]+)@", re.IGNORECASE),
    _p("a password or secret assignment",
       r"\b(?:password|passwd|pwd|secret|client_secret|api_?key|access_?key|secret_?key|"
       r"auth_?token|access_?token|private_?key)\b[\"']?\s*[:=]\s*[\"'](?P<value>[^\"'\s]{4,})[\"']",
       re.IGNORECASE),
)


@dataclass(frozen=True)
class SecretFinding:
    """A likely secret: its kind and a redacted form that is safe to show."""

    kind: str
    redacted: str


def redact(value: str) -> str:
    """The first four characters of a secret and an ellipsis (enough to recognise it)."""
    return value[:4] + "…" if len(value) > 4 else "…"


def find_secret(text: Any) -> SecretFinding | None:
    """The first likely secret in `text`, or None; placeholders like `${TOKEN}` do not count."""
    if not isinstance(text, str) or not text:
        return None
    for pattern in PATTERNS:
        for match in pattern.regex.finditer(text):
            value = match.group("value")
            if pattern.kind.startswith("a password") and _PLACEHOLDER.match(value):
                continue
            return SecretFinding(pattern.kind, redact(value))
    return None


def new_text_of(tool_name: str, input: dict[str, Any]) -> str | None:
    """The text a Write or Edit call would put into its file."""
    key = {"Write": "content", "Edit": "new_string"}.get(tool_name)
    value = input.get(key) if key else None
    return value if isinstance(value, str) else None


class SecretGuard:
    """A tool policy wrapper that refuses memory writes containing secrets; the rest is delegated.

    Attributes it does not define (mode, suggest_rule, add_session_allow, ...)
    are read from and written to the wrapped policy, so it can stand in for
    the session's PermissionPolicy.
    """

    def __init__(self, policy: ToolPolicy, memory_dir: Path,
                 cwd: Path | Callable[[], Path] | None = None) -> None:
        object.__setattr__(self, "policy", policy)
        object.__setattr__(self, "memory_dir", Path(memory_dir))
        object.__setattr__(self, "_cwd", cwd)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("policy", "memory_dir", "_cwd"):
            raise AttributeError(name)  # not set yet (copy, pickle): never recurse
        return getattr(self.policy, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.policy, name, value)

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Decision:
        """Deny a memory write that carries a secret, before any other rule is consulted."""
        refusal = self.refusal(tool_name, input if isinstance(input, dict) else {})
        return refusal or self.policy.can_use_tool(tool_name, input)

    def refusal(self, tool_name: str, input: dict[str, Any]) -> Deny | None:
        """The Deny for a memory write with a secret in it, else None."""
        text = new_text_of(tool_name, input)
        if text is None or not self.targets_memory(input.get("file_path")):
            return None
        found = find_secret(text)
        if found is None:
            return None
        return Deny(
            f"refused to save {found.kind} ({found.redacted}) in the memory folder {self.memory_dir}. "
            "Memory files are plain text that is read back into every session and may be shared, "
            "so secrets never go there. Nothing was written. Save the memory without the secret "
            "(say where it lives instead, e.g. an environment variable or a password manager)."
        )

    def targets_memory(self, raw: Any) -> bool:
        """Whether `raw` (a tool's file_path) lands inside the memory folder."""
        cwd = self._cwd() if callable(self._cwd) else self._cwd
        return lands_in(raw, self.memory_dir, cwd)


def lands_in(raw: Any, folder: Path, cwd: Path | None) -> bool:
    """Whether the tool path `raw` is inside `folder`, as written or with symlinks resolved.

    Relative paths resolve against `cwd` (the process cwd when None), as the tools resolve them.
    """
    if not isinstance(raw, str) or not raw.strip():
        return False
    path = os.path.expanduser(raw)
    if not os.path.isabs(path):
        path = os.path.join(str(cwd or os.getcwd()), path)
    lexical = os.path.normpath(path)
    roots = {os.path.normpath(os.path.abspath(folder)), os.path.realpath(folder)}
    candidates = (lexical, os.path.realpath(lexical))
    return any(c == r or c.startswith(r.rstrip(os.sep) + os.sep) for c in candidates for r in roots)
