"""The tool policy of the forked memory-extraction agent (ExtractionPolicy) and what a fork's policy
honours of the session's (Restrictions: its deny and ask rules)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from claude_mini.base.text import within
from claude_mini.permissions.decisions import Allow, Ask, Decision, Deny
from claude_mini.permissions.memory_folder import memory_layout_problem
from claude_mini.permissions.protected import completes_git_dir
from claude_mini.permissions.request import build_request, cwd_of
from claude_mini.permissions.rules import EDIT_TOOLS, READ_TOOLS
from claude_mini.permissions.secret_reads import secret_read
from claude_mini.shell.read_only import is_read_only_command


class Restrictions(Protocol):
    """The session's deny and ask rules as a fork's policy honours them (PermissionPolicy, PolicyChain)."""

    @property
    def cwd(self) -> Path: ...

    def check_restrictions(self, tool_name: str, input: dict[str, Any]) -> Deny | Ask | None: ...


class ExtractionPolicy:
    """Tool policy of the forked memory-extraction agent (DESIGN.md section 5).

    Read/Grep/Glob anywhere, read-only Bash, Write/Edit only when the real path
    (symlinks followed) is inside the memory dir, every other tool denied. The
    session's deny and ask rules (`base`) still apply; an ask becomes a denial,
    since nobody is there to answer.
    """

    def __init__(
        self,
        memory_dir: Path,
        *,
        base: Restrictions | None = None,
        cwd: Path | Callable[[], Path] | None = None,
    ) -> None:
        self.memory_dir = Path(os.path.realpath(memory_dir))
        self._memory_lexical = os.path.normpath(os.path.abspath(memory_dir))
        self.base = base
        # Relative paths resolve like the tools resolve them; without a cwd they are refused.
        self._cwd: Path | Callable[[], Path] | None = cwd
        if cwd is None and base is not None:
            self._cwd = lambda: base.cwd

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Decision:
        """Allow or Deny (never Ask: a background agent has nobody to ask)."""
        input = input if isinstance(input, dict) else {}
        if self.base is not None:
            verdict = self.base.check_restrictions(tool_name, input)
            if isinstance(verdict, Deny):
                return verdict
            if isinstance(verdict, Ask):
                return Deny(f"{verdict.reason}; memory extraction runs in the background and cannot ask")
        if secret := secret_read(build_request(tool_name, input, cwd_of(self._cwd or os.getcwd()))):
            return Deny(f"{secret.reason}; memory extraction runs in the background and cannot ask")
        if tool_name in READ_TOOLS:
            return Allow()
        if tool_name == "Bash":
            command = input.get("command")
            ok, why = is_read_only_command(command if isinstance(command, str) else "")
            return Allow() if ok else Deny(f"Memory extraction may only run read-only commands: {why}")
        if tool_name in EDIT_TOOLS:
            problem = self._write_problem(input.get("file_path"))
            return Deny(problem) if problem else Allow()
        return Deny(
            f"Memory extraction may not use {tool_name}: it may read and search, "
            f"and write only inside {self.memory_dir}"
        )

    def _write_problem(self, raw: Any) -> str | None:
        """Why writing `raw` would leave the memory dir, or None if it stays inside."""
        mem = str(self.memory_dir)
        if not isinstance(raw, str) or not raw.strip():
            return f"Memory extraction needs a file_path inside {mem}"
        expanded = os.path.expanduser(raw)
        if not os.path.isabs(expanded):
            if self._cwd is None:
                return f"Memory extraction needs an absolute path inside {mem} (got {raw})"
            expanded = os.path.join(cwd_of(self._cwd), expanded)
        lexical = os.path.normpath(expanded)
        real = os.path.realpath(lexical)
        if not within(real, mem) or real == mem:
            how = self._escape_kind(raw, lexical)
            return f"Memory extraction may only write inside {mem}: {raw} {how} (it resolves to {real})"
        if ".git" in Path(os.path.relpath(real, mem)).parts or completes_git_dir(real):
            return f"Memory extraction may not write git repository files ({raw})"
        return memory_layout_problem(real, mem)

    def _escape_kind(self, raw: str, lexical: str) -> str:
        roots = (self._memory_lexical, str(self.memory_dir))
        if any(within(lexical, root) and lexical != root for root in roots):
            return "follows a symlink out of the memory dir"
        if ".." in Path(raw).parts:
            return "uses .. to leave the memory dir"
        return "is outside the memory dir"
