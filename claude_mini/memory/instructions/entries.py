"""What Layer 1 loading produces: files read, files skipped and why, path-scoped rules, the set.

`InstructionSet.render()` is the system-prompt section, built once per session.
Paths in these records are absolute `str` (real paths): they go straight into
the prompt and JSON, and building ~300 Path objects cost a third of the read time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from claude_mini.base.text import estimate_tokens
from claude_mini.memory.instructions.globs import GlobSet, relative_to
from claude_mini.memory.instructions.markdown import scan_markdown
from claude_mini.memory.instructions.scope import LoadContext

HEADER = (
    "The instructions below, from the user's and the project's instruction files, override "
    "your default behaviour, and you must follow them exactly as written."
)


# Skip reasons that are normal operation: shown by `context`, not warned about.
EXCLUDED = "excluded by claudeMdExcludes"
DUPLICATE = "already loaded (same real file)"
CYCLE = "import cycle"
UNTRUSTED = (
    "outside the repository, and this folder is not trusted: run claude-mini here and "
    "trust it (or pass --trust-folder) to follow it"
)
_QUIET = frozenset({EXCLUDED, DUPLICATE, CYCLE})


@dataclass(eq=False)
class InstructionFile:
    """One instruction file that was read; `text` is what the model sees."""

    path: str  # the real path, absolute
    kind: str  # managed | user | project | local | rule | imported
    text: str
    level: str = "project"  # managed | user | project: where its root file came from
    depth: int = 0  # import hops from its root file
    imported_by: str | None = None
    imports: list[Entry] = field(default_factory=list, repr=False)
    notes: list[str] = field(default_factory=list)  # e.g. invalid UTF-8 replaced
    linked_from: str | None = None  # a root file found as a symlink (or in a linked folder): where

    @property
    def tokens(self) -> int:
        """Estimated tokens of the text."""
        return estimate_tokens(self.text)

    def render(self) -> str:
        """This file's block in the prompt or an attachment."""
        return f"Contents of {self.path} ({self.kind}):\n\n{self.text}"


@dataclass(eq=False)
class Skipped:
    """A file that was considered and not loaded, and why (shown by `claude-mini context`)."""

    path: str  # real when it could be resolved
    kind: str
    reason: str
    imported_by: str | None = None
    depth: int = 0
    linked_from: str | None = None  # as for InstructionFile

    @property
    def quiet(self) -> bool:
        """True for normal-operation skips (duplicates, cycles, exclusions): no warning."""
        return self.reason in _QUIET


@dataclass(eq=False)
class ConditionalRule:
    """A rule limited by frontmatter `paths:`; attached the first time a matching path is touched."""

    path: str  # the real path
    globs: list[str]  # as written, before brace expansion
    base: str  # the globs are relative to this folder
    body: str  # as read, without frontmatter; its @imports resolve when attached
    level: str = "project"
    kind: str = "rule"

    @cached_property
    def text(self) -> str:
        """The body as the model sees it (comments removed); prepared only when needed."""
        return scan_markdown(self.body)[0]

    @cached_property
    def globset(self) -> GlobSet:
        """The compiled globs; compiled on first use so that building the prompt does not pay."""
        return GlobSet(self.globs)

    @property
    def errors(self) -> list[str]:
        """Globs that could not be compiled."""
        return self.globset.errors

    @property
    def tokens(self) -> int:
        """Estimated tokens of the text."""
        return estimate_tokens(self.text)

    def matches(self, path: Path | str) -> bool:
        """Whether touching `path` (absolute) activates this rule."""
        return self.matches_any(path_forms(path))

    def matches_any(self, forms: Sequence[str]) -> bool:
        """Whether any spelling of one absolute path matches (see `path_forms`)."""
        for form in forms:
            relative = relative_to(form, self.base)
            if relative is not None and self.globset.matches(relative):
                return True
        return False


Entry = InstructionFile | Skipped | ConditionalRule


@dataclass
class InstructionSet:
    """Everything Layer 1 loaded for a session, in load order, with what was skipped and why."""

    considered: list[Entry]  # load order; imports follow their importer
    warnings: list[str]
    context: LoadContext = field(repr=False)

    @property
    def files(self) -> list[InstructionFile]:
        """Loaded files in prompt order."""
        return [e for e in self.considered if isinstance(e, InstructionFile)]

    @property
    def skipped(self) -> list[Skipped]:
        """Files considered and not loaded."""
        return [e for e in self.considered if isinstance(e, Skipped)]

    @property
    def conditional(self) -> list[ConditionalRule]:
        """Path-scoped rules kept aside for the AttachmentTracker."""
        return [e for e in self.considered if isinstance(e, ConditionalRule)]

    def loaded_paths(self) -> set[str]:
        """Real paths already in the prompt or kept as conditional rules."""
        return {e.path for e in self.considered if not isinstance(e, Skipped)}

    @property
    def tokens(self) -> int:
        """Estimated tokens of the rendered section."""
        return estimate_tokens(self.render())

    def render(self) -> str:
        """The system prompt section: header, then one block per file; empty without files."""
        blocks = [f.render() for f in self.files if f.text]
        return "\n\n".join([HEADER, *blocks]) if blocks else ""


def path_forms(path: Path | str) -> list[str]:
    """The absolute path as given and its real path (one entry when they agree)."""
    given = os.path.abspath(path)
    real = os.path.realpath(given)
    return [given] if real == given else [given, real]
