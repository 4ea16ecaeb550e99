"""The Tool seam: what every coding tool looks like to the agent loop.

A tool is a plain class with a name, a description, a JSON input schema, a
`validate` that says ahead of time why a call would fail, and an async `call`.
Failures the model can act on are raised as `ToolError`; the loop turns them
into `is_error` tool results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from claude_mini.llm.messages import MediaBlock

if TYPE_CHECKING:
    from claude_mini.tools.background import BackgroundShells
    from claude_mini.tools.todo import Todo
    from claude_mini.tools.web_access import WebAccess


class ToolError(Exception):
    """A failure the model should see as an error tool result (and can act on)."""


class DiskError(ToolError):
    """The disk refused a change (full, read-only, no permission): not the call's mistake.
    Its result carries `metadata["disk_error"]`, so memory extraction can tell a folder it
    cannot write from a fork's own wrong Edit."""


@dataclass
class ToolResult:
    """What a tool returns: text for the model, metadata for the UI and memory layers.

    `metadata` keys in use: `path` (the file touched, absolute), `diff` (a
    unified diff for Edit/Write), `created` (Write made a new file), `disk_error` (a
    DiskError ended the call), `stops_turn` (a declined call: the turn ends after it). `media`: images
    or PDFs the model sees after the text (Read).
    """

    content: str
    is_error: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    media: list[MediaBlock] = field(default_factory=list)


def _nothing_denied(path: str) -> str | None:
    return None


def _no_exclusions(root: Path) -> list[str]:
    return []


def _all_expressed(root: Path) -> bool:
    return True


@dataclass(frozen=True)
class ReadDenials:
    """What the Read deny rules keep from the tools that list or search files (Grep, Glob).

    `reason(path)` says why a rule covers an absolute path (None: it does not); it is
    the authority. `ripgrep_excludes(root)` are `--glob=!...` patterns, relative to a
    search root, that express some of the rules so ripgrep need not read those files;
    they are an optimisation only. `rg_covers_all(root)` says whether they express
    every rule that can match below `root` (then ripgrep alone can count what the
    rules keep out). `active` is False when there are no such rules.
    """

    reason: Callable[[str], str | None] = _nothing_denied
    ripgrep_excludes: Callable[[Path], list[str]] = _no_exclusions
    rg_covers_all: Callable[[Path], bool] = _all_expressed
    active: bool = False

    def covers(self, path: str | Path) -> bool:
        """Whether a Read deny rule covers `path` (absolute)."""
        return self.active and self.reason(str(path)) is not None


NO_READ_DENIALS = ReadDenials()


class ShellSandbox(Protocol):
    """What the Bash tool needs of the session's sandbox (claude_mini/sandbox/box.py)."""

    @property
    def temp_dir(self) -> str: ...

    def runs_sandboxed(self, input: dict[str, Any]) -> bool: ...

    def missing_problem(self) -> str | None: ...

    async def prepare(self, argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[list[str], dict[str, str]]: ...

    def for_fork(self, memory_dir: Path | None) -> ShellSandbox: ...

    def absent_protected(self) -> list[str]: ...

    def remove_created(self, absent: Sequence[str]) -> str: ...


@dataclass
class ToolContext:
    """Per-session state the tools share.

    `cwd` is where relative paths resolve; Bash updates it so `cd` persists.
    `read_files` maps the absolute path of every file Read in this session to
    its mtime at that time (Write/Edit of an existing file require it).
    `read_denials` is shared with forked agents (see agent/fork.py).
    `shell_prelude` is shell text Bash runs before every command: the `export` lines the
    user's SessionStart hooks wrote to CLAUDE_ENV_FILE (hooks/lifecycle.py).
    `todos` is the model's todo list, replaced by each TodoWrite call (tools/todo.py); a forked
    agent or a subagent starts with a list of its own.
    `sandbox` confines Bash (None: commands run as the user); forks and subagents share it.
    `web` is what WebFetch and WebSearch need of the session (tools/web_access.py); subagents share it.
    `shells` are the session's background shells (tools/background.py; None: Bash cannot start
    one here); forks and subagents share them, and the session's end ends them.
    """

    cwd: Path
    project_root: Path
    read_files: dict[Path, float] = field(default_factory=dict)
    read_denials: ReadDenials = NO_READ_DENIALS
    shell_prelude: str = ""
    todos: list[Todo] = field(default_factory=list)
    sandbox: ShellSandbox | None = None
    web: WebAccess | None = None
    shells: BackgroundShells | None = None

    def resolve(self, path: str) -> Path:
        """An absolute, normalised path for `path` (relative to `cwd`, `~` expanded)."""
        p = Path(path).expanduser()
        if not p.is_absolute():
            p = self.cwd / p
        return Path(_normalise(p))


def _normalise(p: Path) -> str:
    import os.path

    return os.path.normpath(str(p))


class Tool(Protocol):
    """One coding tool. `read_only` tools of one response may run concurrently."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """Raise the ToolError the call would end with, where that can be known without acting.

        The loop asks it before a permission prompt (in a worker thread: it may read
        the disk), so nobody is asked to approve an edit that cannot apply. What it
        raises reaches the model before the user allows the call: it must not tell what
        only an allowed call may learn (the loop never asks it when a rule asks).
        """
        ...

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


def cut_with_note(text: str, limit: int, whose: str) -> str:
    """`text` within `limit` characters, ending with a note of how many more `whose` were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit:,} more characters {whose} were cut]"


def tool_spec(tool: Tool) -> dict[str, Any]:
    """The tool as listed in the request's `tools` array."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
