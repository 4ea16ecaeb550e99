"""Lazy instructions: path-scoped rules and nested CLAUDE.md files, attached when a path is touched.

When Read, Write or Edit touches a file, `InstructionPart` asks the
`AttachmentTracker` what is newly due: the conditional rules whose `paths:`
match it, and the instruction files of folders below the cwd that hold it.
They reach the model as `<system-reminder>` blocks with the tool results,
never through the system prompt, so the cached prefix survives.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from claude_mini.agent.lifecycle import (
    ConversationRewind,
    InstructionLoad,
    LoadReason,
    Part,
    PartContext,
    system_reminder,
)
from claude_mini.base.text import estimate_tokens
from claude_mini.llm.messages import Message, TextBlock, ToolUseBlock
from claude_mini.memory.instructions.entries import (
    ConditionalRule,
    Entry,
    InstructionFile,
    InstructionSet,
    path_forms,
)
from claude_mini.memory.instructions.globs import RuleIndex, relative_to
from claude_mini.memory.instructions.loader import Loader
from claude_mini.tools.base import ToolResult

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent


@dataclass
class Attachment:
    """Instruction text sent lazily with the next user message, inside `<system-reminder>`."""

    path: str  # the rule or nested root file that caused it
    kind: str  # 'rule' (path-scoped rule) | 'nested' (instruction file below the cwd)
    files: list[InstructionFile]  # the file itself, then what it imports
    globs: tuple[str, ...] = ()  # a rule's `paths:`, as written

    @property
    def tokens(self) -> int:
        """Estimated tokens of the rendered text."""
        return estimate_tokens(self.render())

    def render(self) -> str:
        """The blocks to wrap in `<system-reminder>` (the loop adds the tags)."""
        return "\n\n".join(f.render() for f in self.files if f.text)


class AttachmentTracker:
    """Per-session record of the path-scoped rules and nested files attached so far.

    Make a new tracker whenever the InstructionSet is rebuilt (/clear, /memory edits):
    it never attaches what that set already put in the system prompt.
    """

    def __init__(self, instructions: InstructionSet, cwd: Path | None = None) -> None:
        self._ctx = instructions.context
        self._cwd = os.path.realpath(cwd) if cwd is not None else self._ctx.cwd
        self._seen = instructions.loaded_paths()  # never attach what the prompt already has
        self._rules: list[ConditionalRule] = list(instructions.conditional)
        self._index: RuleIndex[ConditionalRule] | None = None  # built on first touch
        self._folders: dict[str, list[Attachment]] = {}  # nested folder -> attachments, read once
        self._rule_attachments: dict[str, Attachment] = {}  # rule path -> attachment, read once
        self._active: dict[str, Attachment] = {}  # attached since the last compaction, in order
        self.considered: list[Entry] = []  # files read for attachments (for `context`)
        self.warnings: list[str] = []

    def on_path_touched(self, path: Path | str, *, created: bool = False) -> list[Attachment]:
        """Attachments newly due because a Read, Edit or Write touched the file `path`.

        A file being created (`created=True`) matches exactly like an existing one:
        rules fire on Write of a new file too, which Claude Code misses.
        """
        forms = path_forms(path)
        new: list[Attachment] = []
        for folder in self._nested_folders(forms):
            new.extend(self._activate(a) for a in self._folder_attachments(folder) if a.path not in self._active)
        for rule in self._rule_index().matching(forms):
            if rule.path not in self._active:
                new.append(self._activate(self._rule_attachment(rule)))
        return new

    def active(self) -> list[Attachment]:
        """Everything attached since the session start or the last compaction, in order."""
        return list(self._active.values())

    def reattach_after_compaction(self, still_relevant: Iterable[Path | str] | None = None) -> list[Attachment]:
        """What to attach again after a compaction removed earlier attachments from the messages.

        With `still_relevant` (the paths restored into context after compacting) only
        what they activate is re-sent, and everything else fires again on its next
        touch; with None every active attachment is re-sent.
        """
        if still_relevant is None:
            return self.active()
        self._active.clear()
        return [a for path in still_relevant for a in self.on_path_touched(path)]

    def adopt(self, attachments: Iterable[Attachment]) -> None:
        """Count `attachments` as attached (re-sent by a compaction before this tracker was
        made), so their next touch does not attach them once more."""
        for attachment in attachments:
            self._activate(attachment)

    def keep_only_in(self, messages: Iterable[Message]) -> None:
        """Forget the attachments `messages` no longer hold (a /rewind dropped the part they came
        in), so the next touch of a matching file attaches them again."""
        present = {b.text for m in messages for b in m.content if isinstance(b, TextBlock)}
        for path, attachment in list(self._active.items()):
            if system_reminder(attachment.render()).text not in present:
                del self._active[path]

    def conditional_status(self) -> list[tuple[ConditionalRule, bool]]:
        """Every known path-scoped rule (nested folders' included) and whether it is attached."""
        return [(rule, rule.path in self._active) for rule in self._rules]

    def _activate(self, attachment: Attachment) -> Attachment:
        self._active[attachment.path] = attachment
        return attachment

    def _nested_folders(self, forms: list[str]) -> list[str]:
        """Folders strictly below the cwd that contain the touched file, top first."""
        for form in forms:
            relative = relative_to(form, self._cwd)
            if relative is not None:
                folders, folder = [], self._cwd
                for part in relative.split("/")[:-1]:
                    folder = os.path.join(folder, part)
                    folders.append(folder)
                return folders
        return []

    def _folder_attachments(self, folder: str) -> list[Attachment]:
        cached = self._folders.get(folder)
        if cached is None:
            loader = Loader(self._ctx, self._seen)
            loader.load_folder(folder)
            cached = self._folders[folder] = self._collect(loader.entries, loader.warnings)
        return cached

    def _collect(self, entries: list[Entry], warnings: list[str]) -> list[Attachment]:
        """Group a nested folder's entries: one attachment per root file with its imports."""
        self.considered.extend(entries)
        self.warnings.extend(warnings)
        attachments: list[Attachment] = []
        for entry in entries:
            if isinstance(entry, ConditionalRule):
                self._add_rule(entry)
            elif isinstance(entry, InstructionFile) and entry.depth == 0:
                attachments.append(Attachment(entry.path, "nested", [entry]))
            elif isinstance(entry, InstructionFile):
                attachments[-1].files.append(entry)
        return attachments

    def _rule_attachment(self, rule: ConditionalRule) -> Attachment:
        attachment = self._rule_attachments.get(rule.path)
        if attachment is None:
            file = InstructionFile(rule.path, "rule", "", rule.level)
            loader = Loader(self._ctx, self._seen)
            loader.add_root(file, rule.body)  # resolves the rule's imports now, when first needed
            imported = loader.entries[1:]
            self.considered.extend(imported)
            self.warnings.extend(loader.warnings)
            files = [file, *(e for e in imported if isinstance(e, InstructionFile))]
            attachment = self._rule_attachments[rule.path] = Attachment(rule.path, "rule", files, tuple(rule.globs))
        return attachment

    def _add_rule(self, rule: ConditionalRule) -> None:
        self._rules.append(rule)
        if self._index is not None:
            self._index.add(rule.base, rule.globset, rule)

    def _rule_index(self) -> RuleIndex[ConditionalRule]:
        if self._index is None:
            self._index = RuleIndex()
            for rule in self._rules:
                self._index.add(rule.base, rule.globset, rule)
        return self._index


TOUCHING_TOOLS = ("Read", "Write", "Edit")


class InstructionPart(Part):
    """Attaches path-scoped rules and nested instruction files when Read/Write/Edit touch a path."""

    def __init__(self, tracker: AttachmentTracker) -> None:
        self.tracker = tracker

    async def on_rewind(self, agent: Agent, rewind: ConversationRewind) -> None:
        """Rules and nested files attached in the part rewound away are due again."""
        self.tracker.keep_only_in(agent.session.messages)

    async def after_tool(self, agent: Agent, call: ToolUseBlock, result: ToolResult) -> list[str]:
        """The rendered attachments a successful Read/Write/Edit of a path makes due (announced
        to the lifecycle as loaded)."""
        path = result.metadata.get("path")
        if call.name not in TOUCHING_TOOLS or result.is_error or not path:
            return []
        attached = [
            a for a in self.tracker.on_path_touched(path, created=bool(result.metadata.get("created"))) if a.render()
        ]
        if attached:
            agent.announce_instructions(attachment_loads(attached, trigger=str(path)))
        return [a.render() for a in attached]


_MEMORY_TYPES = {"managed": "Managed", "user": "User"}


def instruction_loads(
    files: Iterable[InstructionFile], reason: LoadReason, *, globs: tuple[str, ...] = (), trigger: str | None = None
) -> list[InstructionLoad]:
    """The lifecycle's record of `files` entering the context: imported ones say `include` and
    who imported them; a root file says `reason`."""
    loads = []
    for f in files:
        memory_type = "Local" if f.kind == "local" else _MEMORY_TYPES.get(f.level, "Project")
        imported = f.depth > 0
        loads.append(
            InstructionLoad(
                f.path,
                memory_type,
                "include" if imported else reason,
                () if imported else globs,
                trigger,
                f.imported_by if imported else None,
            )
        )
    return loads


def attachment_loads(
    attachments: Iterable[Attachment], *, trigger: str | None = None, reason: LoadReason | None = None
) -> list[InstructionLoad]:
    """`instruction_loads` of attachments: a rule says `path_glob_match`, a nested folder's file
    `nested_traversal`, unless `reason` (a compaction re-sending them) says otherwise."""
    loads: list[InstructionLoad] = []
    for a in attachments:
        why: LoadReason = reason or ("path_glob_match" if a.kind == "rule" else "nested_traversal")
        loads += instruction_loads(a.files, why, globs=a.globs, trigger=trigger)
    return loads


class TrackerHolder(Protocol):
    """What Layer 1's part reads from the runtime: the session's tracker (a rebuilt prompt brings a
    new one, which the runtime hands to the part itself)."""

    @property
    def tracker(self) -> AttachmentTracker:
        """The tracker of the instruction files the system prompt holds now."""
        ...


def part(ctx: PartContext[TrackerHolder]) -> InstructionPart:
    """Layer 1's attachments over the runtime's tracker."""
    return InstructionPart(ctx.runtime.tracker)
