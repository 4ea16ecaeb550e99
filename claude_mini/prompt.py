"""System prompt assembly from ordered, cache-stable sections.

The prompt is built once per session (DESIGN.md section 6) and rebuilt only on
/clear, /compact, /memory edits or a settings change. Each section keeps its
name and source so `/context` can show what is in it and what it costs.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from claude_mini.base import paths
from claude_mini.base.text import estimate_tokens

IDENTITY = """\
You are claude_mini, an interactive coding assistant that works in the user's \
terminal, inside their repository. You help with software engineering tasks: \
reading and changing code, running commands, finding bugs, explaining things.

Be direct and concise; the user reads your answers in a terminal. Do what was \
asked, nothing more; when a request is ambiguous, ask. Never invent file \
contents, command output or APIs: look them up with your tools. Do not \
commit, push or delete work unless the user asks you to."""

TOOL_GUIDE = """\
# Using your tools
- Read a file before you edit or overwrite it; Edit changes an exact string \
(include enough context to make it unique), Write replaces a whole file.
- Prefer Grep and Glob over Bash for searching; prefer Read over `cat`.
- Calls that do not depend on each other can go in one response: read-only \
tools then run in parallel.
- Bash runs in a persistent working directory; quote paths with spaces; \
avoid interactive commands; a long command can take a `timeout`.
- A tool result may carry <system-reminder> blocks: they come from the \
harness (project rules, recalled memories), not from the user.
- When a call is denied, do not retry it unchanged: adjust, or ask the user."""


@dataclass
class Section:
    """One named piece of the system prompt, with where it came from."""

    name: str
    text: str
    source: str = "built-in"

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


@dataclass
class SystemPrompt:
    """The ordered sections; each non-empty section is one system block."""

    sections: list[Section] = field(default_factory=list)

    def blocks(self) -> list[str]:
        return [s.text for s in self.sections if s.text.strip()]

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.sections)


def environment_section(cwd: Path, today: date | None = None, added: Sequence[Path] = ()) -> Section:
    """Where the assistant is running: cwd, the added folders (--add-dir), platform, date, git."""
    root = paths.git_root(cwd)
    lines = [
        "# Environment",
        f"Working directory: {cwd}",
        *([f"Additional working directories: {', '.join(str(p) for p in added)}"] if added else []),
        f"Is a git repository: {'yes, root ' + str(root) if root else 'no'}",
        f"Platform: {platform.system().lower()} ({platform.machine()})",
        f"Today's date: {(today or date.today()).isoformat()}",
    ]
    return Section("environment", "\n".join(lines))


def build_system_prompt(
    cwd: Path,
    *,
    extra: list[Section] = (),  # type: ignore[assignment]
    append: str = "",
    replace: str | None = None,
    today: date | None = None,
    added: Sequence[Path] = (),
) -> SystemPrompt:
    """Identity, tool guide, environment, then the memory layers' sections, then --append-system-prompt.

    `replace` (--system-prompt) stands in for the identity and the tool guide; the environment and
    the memory layers' sections stay, as Claude Code keeps CLAUDE.md under its --system-prompt.
    """
    builtin = (
        [Section("system prompt", replace.strip(), "--system-prompt")]
        if replace is not None
        else [Section("identity", IDENTITY), Section("tools", TOOL_GUIDE)]
    )
    sections = [
        *builtin,
        environment_section(cwd, today, added),
        *extra,
    ]
    if append.strip():
        sections.append(Section("appended", append.strip(), "--append-system-prompt"))
    return SystemPrompt(sections)
