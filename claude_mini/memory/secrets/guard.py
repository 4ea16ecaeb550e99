"""The secret guard: nothing that looks like a credential is written into the memory folder.

Memory files are plain text, read back into every later session and easy to
commit or share, so a Write or Edit whose target is inside the memory folder
(as written or with symlinks resolved) is refused with a Deny when the file,
AS IT WILL BE after the change, holds a likely secret (memory/secrets/scan.py
says what counts). Scanning the result rather than the new text closes the
gap where a Write puts `DB_PASSWORD=` and a later Edit appends the value.
The after-text of an Edit is computed by the Edit tool's own decode/replace
code (tools/edit.plan_edit), so the guard and the tool cannot disagree about
line endings or matches; an Edit whose result cannot be computed (old_string
not found, unreadable, over MAX_SCAN_BYTES, not UTF-8), or a Write over that
size, is refused rather than scanned in part. The Deny names the kind and the
line, never the value.

`SecretGuard` is a guard of the permission chain (permissions/chain.py), so it covers
both writers: the runtime puts it in the session's chain once, and every fork's chain
(extraction around ExtractionPolicy, /dream) holds its fork form. It runs before the
rules, so neither bypassPermissions nor an allow rule lets a secret through.
`claude-mini memory add` and `/memory add` run the same scan (`refusal_text`).
It is a best effort on tool input: a secret written by a shell command is not seen.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from claude_mini.memory.secrets.scan import SecretFinding, describe_findings, find_secret, find_secrets
from claude_mini.permissions import Deny, Guard

__all__ = [
    "SecretFinding",
    "SecretGuard",
    "UncheckedChange",
    "describe_findings",
    "edited_text",
    "find_secret",
    "find_secrets",
    "lands_in",
    "refusal_text",
    "text_after",
]

MAX_SCAN_BYTES = 8 * 1024 * 1024  # a memory file this big is not a memory; a change to one is refused


class UncheckedChange(Exception):
    """A memory write whose resulting file cannot be worked out or scanned; the guard refuses it."""

    def __init__(self, reason: str, advice: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.advice = advice


def refusal_text(found: list[SecretFinding], where: str) -> str:
    """The one-line refusal for secrets in `where`: what was found, that nothing was saved, what to do."""
    return (
        f"refused to save {describe_findings(found)} in {where}. Memory files are plain text "
        "that is read back into every session and may be shared, so secrets never go there. "
        "Nothing was written. Save the memory without the secret (say where it lives "
        "instead, e.g. the name of an environment variable or a password-manager entry)."
    )


def unchecked_text(tool_name: str, unchecked: UncheckedChange, where: str) -> str:
    """The one-line refusal of a memory write the guard cannot check: why, nothing written, what to do."""
    text = (
        f"refused this {tool_name} of {where}; nothing was written, since it cannot be "
        f"checked for secrets: {unchecked.reason.rstrip('.')}."
    )
    return f"{text} {unchecked.advice}" if unchecked.advice else text


def resolve_tool_path(raw: str, cwd: Path | None) -> str:
    """The absolute, normalised path a tool would use for `raw` (`~` expanded, relative to cwd)."""
    path = os.path.expanduser(raw)
    if not os.path.isabs(path):
        path = os.path.join(str(cwd or os.getcwd()), path)
    return os.path.normpath(path)


_RETRY = "Read the file again and retry with an old_string copied from it, or rewrite it with Write."
_SPLIT = (
    f"Memory files are meant to be short (over {MAX_SCAN_BYTES // (1024 * 1024)} MiB is "
    "not a memory): move the bulk out of the memory folder, or write a shorter file."
)


def _checked_size(text: str) -> str:
    """`text`, or UncheckedChange when it is too large to be a memory worth scanning."""
    if len(text) > MAX_SCAN_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_SCAN_BYTES:
        raise UncheckedChange(f"the file would be over {MAX_SCAN_BYTES // (1024 * 1024)} MiB", _SPLIT)
    return text


def edited_text(path: Path, old: str, new: str, replace_all: bool) -> str:
    """The text `path` will hold after this Edit, computed by the Edit tool's own code.

    Raises UncheckedChange whenever the Edit tool would not produce a text we can scan:
    the Edit would fail (old_string missing or ambiguous, a folder, unreadable, binary),
    the file is over MAX_SCAN_BYTES, or it is not UTF-8 (Edit would treat it as Latin-1).
    """
    from claude_mini.tools import ToolError
    from claude_mini.tools.edit import plan_edit

    try:
        size = path.stat().st_size
    except FileNotFoundError:
        if old:
            raise UncheckedChange(
                f"{path.name} does not exist and old_string is not empty", "Create the file with Write."
            ) from None
        return _checked_size(new)  # Edit creates the file with new_string as its text
    except OSError as exc:
        raise UncheckedChange(f"{path.name} cannot be read ({exc.strerror or exc})", _RETRY) from None
    if path.is_dir():
        raise UncheckedChange(f"{path.name} is a directory", "Give the path of a memory file.")
    if size > MAX_SCAN_BYTES:
        raise UncheckedChange(f"{path.name} is over {MAX_SCAN_BYTES // (1024 * 1024)} MiB", _SPLIT)
    try:
        plan = plan_edit(path, old, new, replace_all)
    except ToolError as exc:
        raise UncheckedChange(f"the Edit would fail: {exc}") from None  # its message says what to do
    if plan.decoded.encoding == "latin-1":
        raise UncheckedChange(f"{path.name} is not UTF-8 text", "Rewrite the memory as UTF-8 text with Write.")
    return _checked_size(plan.updated)


def text_after(tool_name: str, input: dict[str, Any], cwd: Path | None = None) -> str | None:
    """The text the target file would hold after this Write or Edit (None for other tools).

    Raises UncheckedChange when that text cannot be known (see `edited_text`); the
    guard then refuses the call rather than scan only a part of the result.
    """
    if tool_name == "Write":
        content = input.get("content")
        if not isinstance(content, str):
            raise UncheckedChange("content is not a string", "Send the file's text as content.")
        return _checked_size(content)
    if tool_name != "Edit":
        return None
    raw, old, new = input.get("file_path"), input.get("old_string"), input.get("new_string")
    if not (isinstance(raw, str) and isinstance(old, str) and isinstance(new, str)):
        raise UncheckedChange("file_path, old_string and new_string must all be strings", "Send all three as strings.")
    return edited_text(Path(resolve_tool_path(raw, cwd)), old, new, input.get("replace_all") is True)


class TeamCheck(Protocol):
    """A further check on writes into the team memory folder (memory/team/guard.py)."""

    def refusal(self, tool_name: str, input: dict[str, Any], cwd: Path | None) -> Deny | None:
        """The Deny for a write that must not land there, else None."""


class SecretGuard(Guard):
    """The guard that refuses memory writes containing secrets (and, with `team`, the team
    folder's stricter check); the session's chain and every fork's hold it (permissions/chain.py)."""

    def __init__(
        self, memory_dir: Path, cwd: Path | Callable[[], Path] | None = None, *, team: TeamCheck | None = None
    ) -> None:
        self.memory_dir = Path(memory_dir)
        self._cwd = cwd
        self.team = team  # the team folder's stricter check (memory/team/guard.py)

    def before(self, tool_name: str, input: dict[str, Any]) -> Deny | None:
        """Deny a memory write that carries a secret, before any rule is consulted."""
        return self.refusal(tool_name, input)

    def for_fork(self, cwd: Path) -> SecretGuard:
        """A fork's guard: the same folder, paths resolved from the fork's `cwd`; the team check
        stays with the session (a fork writes only where its own policy lets it)."""
        return SecretGuard(self.memory_dir, cwd=cwd)

    def refusal(self, tool_name: str, input: dict[str, Any]) -> Deny | None:
        """The Deny for a memory write whose resulting file holds a secret, else None."""
        if self.team is not None and tool_name in ("Write", "Edit"):
            refused = self.team.refusal(tool_name, input, self._cwd_now())
            if refused is not None:
                return refused
        if tool_name not in ("Write", "Edit") or not self.targets_memory(input.get("file_path")):
            return None
        name = os.path.basename(str(input.get("file_path")))
        try:
            after_text = text_after(tool_name, input, self._cwd_now())
        except UncheckedChange as unchecked:
            return Deny(unchecked_text(tool_name, unchecked, f"{name} in the memory folder {self.memory_dir}"))
        found = find_secrets(after_text)
        if tool_name == "Edit" and not found:
            found = find_secrets(input.get("new_string"))  # whatever the file, never add one
        if not found:
            return None
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
