"""The secret guard: nothing that looks like a credential is written into the memory folder.

Memory files are plain text, read back into every later session and easy to
commit or share, so a Write or Edit whose target is inside the memory folder
(as written or with symlinks resolved) is refused with a Deny when the file,
AS IT WILL BE after the change, holds a likely secret (memory/secret_scan.py
says what counts). Scanning the result rather than the new text closes the
gap where a Write puts `DB_PASSWORD=` and a later Edit appends the value.
The Deny names the kind and the line, never the value.

`SecretGuard` wraps any tool policy, so it covers both writers: the main
agent and the extraction fork (around ExtractionPolicy). For the main agent
the extraction hook (`Extractor.before_request`) puts the guard around
`agent.policy` before every request, so a policy the UI swaps in (e.g. after
removing a session rule) is guarded too. The check runs before the wrapped
policy, so neither bypassPermissions nor an allow rule lets a secret through.
`claude-mini memory add` and `/memory add` run the same scan (`refusal_text`).
It is a best effort on tool input: a secret written by a shell command is not seen.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from claude_mini.agent.permissions import Decision, Deny, ToolPolicy
from claude_mini.memory.secret_scan import (
    SecretFinding,
    describe_findings,
    find_secret,
    find_secrets,
)

__all__ = ["SecretFinding", "SecretGuard", "describe_findings", "find_secret", "find_secrets", "lands_in",
           "refusal_text", "text_after"]

MAX_SCAN_BYTES = 8 * 1024 * 1024  # a bigger file is not a memory; only the new text is scanned


def refusal_text(found: list[SecretFinding], where: str) -> str:
    """The one-line refusal for secrets in `where`: what was found, that nothing was saved, what to do."""
    return (f"refused to save {describe_findings(found)} in {where}. Memory files are plain text "
            "that is read back into every session and may be shared, so secrets never go there. "
            "Nothing was written. Save the memory without the secret (say where it lives "
            "instead, e.g. the name of an environment variable or a password-manager entry).")


def resolve_tool_path(raw: str, cwd: Path | None) -> str:
    """The absolute, normalised path a tool would use for `raw` (`~` expanded, relative to cwd)."""
    path = os.path.expanduser(raw)
    if not os.path.isabs(path):
        path = os.path.join(str(cwd or os.getcwd()), path)
    return os.path.normpath(path)


def current_text(path: str) -> str | None:
    """The file's text as Edit decodes it (LF line ends); "" if missing, None if unusable."""
    try:
        if not os.path.isfile(path):
            return "" if not os.path.lexists(path) else None
        if os.path.getsize(path) > MAX_SCAN_BYTES:
            return None
        data = Path(path).read_bytes()
    except OSError:
        return None
    from claude_mini.tools.read import sniff_encoding

    encoding = sniff_encoding(data[:8192])
    if encoding is None:
        return None
    return data.decode(encoding, errors="replace").replace("\r\n", "\n")


def text_after(tool_name: str, input: dict[str, Any], cwd: Path | None = None) -> str | None:
    """The text the target file would hold after this Write or Edit (None for other calls).

    Edit: the current file with old_string replaced (once, or everywhere with
    replace_all). When that cannot be worked out (old_string not found, an
    unreadable file) the Edit will fail, and new_string alone is scanned.
    """
    if tool_name == "Write":
        content = input.get("content")
        return content if isinstance(content, str) else None
    if tool_name != "Edit":
        return None
    new, old = input.get("new_string"), input.get("old_string")
    if not isinstance(new, str):
        return None
    raw = input.get("file_path")
    text = current_text(resolve_tool_path(raw, cwd)) if isinstance(raw, str) and raw.strip() else None
    if text is None or not isinstance(old, str):
        return new
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    if not old:
        return text or new
    if old not in text:
        return new
    return text.replace(old, new) if input.get("replace_all") is True else text.replace(old, new, 1)


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
        """The Deny for a memory write whose resulting file holds a secret, else None."""
        if tool_name not in ("Write", "Edit") or not self.targets_memory(input.get("file_path")):
            return None
        found = find_secrets(text_after(tool_name, input, self._cwd_now()))
        if tool_name == "Edit" and not found:
            found = find_secrets(input.get("new_string"))  # whatever the file, never add one
        if not found:
            return None
        name = os.path.basename(str(input.get("file_path")))
        after = " (the file as this Edit would leave it)" if tool_name == "Edit" else ""
        return Deny(refusal_text(found, f"{name}{after} in the memory folder {self.memory_dir}"))

    def _cwd_now(self) -> Path | None:
        return self._cwd() if callable(self._cwd) else self._cwd

    def targets_memory(self, raw: Any) -> bool:
        """Whether `raw` (a tool's file_path) lands inside the memory folder."""
        return lands_in(raw, self.memory_dir, self._cwd_now())


def lands_in(raw: Any, folder: Path, cwd: Path | None) -> bool:
    """Whether the tool path `raw` is inside `folder`, as written or with symlinks resolved.

    Relative paths resolve against `cwd` (the process cwd when None), as the tools resolve them.
    """
    if not isinstance(raw, str) or not raw.strip():
        return False
    lexical = resolve_tool_path(raw, cwd)
    roots = {os.path.normpath(os.path.abspath(folder)), os.path.realpath(folder)}
    candidates = (lexical, os.path.realpath(lexical))
    return any(c == r or c.startswith(r.rstrip(os.sep) + os.sep) for c in candidates for r in roots)
