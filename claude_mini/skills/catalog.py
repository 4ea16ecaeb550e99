"""Find and parse custom commands and skills into a Catalog; the model's listing within a budget.

    load_catalog(project_root, home) -> Catalog     one read per file, no model call
    names_on_disk(project_root, home)               the names alone, from the folders
    Catalog.find(name) / listed() / names()
    build_listing(entries, listing_budget(window)) -> Listing

Where they come from (Claude Code's layout): `.claude/skills/<name>/SKILL.md` and
`.claude/commands/**/<name>.md` under the project root, `skills/` and `commands/` under
`$CLAUDE_MINI_HOME`. Listing order is Claude Code's: user skills, project skills, project
commands, user commands, each group sorted by name. On a name clash a skill beats a command
and user beats project (Claude Code), and one line says so; a command in a subfolder is
also reached as `folder:name` (Claude Code 2.1.332's name for it), so the loser of a clash
between two subfolders keeps that name. Bad files are one line each; the rest loads.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from claude_mini.base.frontmatter import parse_frontmatter
from claude_mini.base.safe_read import Unreadable, os_reason, read_file
from claude_mini.base.text import clip
from claude_mini.permissions import RuleError, parse_rule

Kind = Literal["skill", "command"]
Scope = Literal["project", "user"]
MAX_BODY_BYTES = 100_000  # a bigger (or binary, or undecodable) file: one line, skipped
MAX_ENTRY_CHARS = 1_536  # one listing entry's description is cut to this (Claude Code's cap)
LISTING_FRACTION = 0.01  # of the context window in characters (window tokens * 4), Claude Code's default
BUDGET_ENV = "SLASH_COMMAND_TOOL_CHAR_BUDGET"
BODY_DESCRIPTION_CHARS = 250  # a description taken from the body's first paragraph is cut to this
BINARY_SNIFF_BYTES = 8192  # a NUL byte in this many leading bytes means binary
MAX_FILES = 1_000  # files looked at per folder tree (a link to /usr must not list it all)

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
NAME_RULE = "letters, digits, '_', '.' and '-', starting with a letter or digit"
_OPEN_FENCE = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE_FENCE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.M)
_HEADING = re.compile(r"^#+\s+")
_TOOL_SPLIT = re.compile(r"[\s,]+")


class CatalogError(Exception):
    """One line: a body that cannot be loaded now (vanished, binary, too big)."""


@dataclass(frozen=True)
class PromptCommand:
    """One custom command (`.claude/commands/**/x.md`) or skill (`.claude/skills/x/SKILL.md`)."""

    name: str  # what /name and the Skill tool use: a skill's folder name; a command's `folder:stem`
    kind: Kind
    scope: Scope
    path: Path  # the SKILL.md or the command's .md (absolute)
    namespace: str = ""  # a command's subfolders joined by ":" ("frontend", "a:b"); "" at top level
    description: str = ""  # frontmatter `description`, else the body's first paragraph (one line, cut)
    when_to_use: str = ""  # skills: frontmatter `when_to_use` (listing: "desc - when_to_use")
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()  # `allowed-tools`: a comma/space separated string or a YAML list
    model: str | None = None  # frontmatter `model` ("inherit" -> None)
    disable_model_invocation: bool = False
    user_invocable: bool = True
    # Other names that reach it: "component" for "frontend:component" (a command in a subfolder,
    # while no other entry is called so); a skill's frontmatter `name` when it differs from the folder name.
    aliases: tuple[str, ...] = ()
    shown_path: str = field(default="", compare=False, repr=False)  # `path` as messages show it

    @property
    def source(self) -> str:
        """Where it comes from, as /help and /skills show it: "project", "user", "project:frontend"."""
        return f"{self.scope}:{self.namespace}" if self.namespace else self.scope

    @property
    def directory(self) -> Path:
        """The skill's folder (its other files: scripts, references); a command's folder."""
        return self.path.parent

    @property
    def label(self) -> str:
        """ "Skill .claude/skills/pdf/SKILL.md": how messages name it."""
        return f"{self.kind.capitalize()} {self.shown_path or shown(self.path)}"

    def body(self) -> str:
        """The text after the frontmatter, read now (edits take effect at once); CatalogError if it cannot be."""
        try:
            text = read_body(self.path)
        except CatalogError as exc:
            raise CatalogError(f"{self.label} {exc}; it was not loaded. {fix_hint(self.kind, str(exc))}") from None
        return split_body(text)[1]


@dataclass
class Catalog:
    """Every command and skill found, one per name after precedence, and what was wrong on the way."""

    entries: list[PromptCommand]  # in listing order
    problems: list[str]  # one line per bad file / clash; the rest still loads

    def __post_init__(self) -> None:
        self._by_name: dict[str, PromptCommand] = {}
        for entry in self.entries:
            for key in (entry.name, *entry.aliases):
                self._by_name.setdefault(key.lower(), entry)

    def find(self, name: str) -> PromptCommand | None:
        """The entry reached by `name` or an alias; a leading "/" is ignored; case-insensitive."""
        return self._by_name.get(name.removeprefix("/").lower())

    def listed(self) -> list[PromptCommand]:
        """What the model may invoke (not disable-model-invocation), in listing order."""
        return [e for e in self.entries if not e.disable_model_invocation]

    def names(self) -> set[str]:
        """Every name and alias (for "new since start" checks)."""
        return {n for e in self.entries for n in (e.name, *e.aliases)}


# --- paths and reading ---------------------------------------------------------------
def shown(path: Path, root: Path | None = None) -> str:
    """`path` as messages show it: relative to the project root, else `~/...`, else absolute."""
    if root is not None and path.is_relative_to(root):
        return str(path.relative_to(root))
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def read_body(path: Path) -> str:
    """The decoded text of one command or skill file; CatalogError says why not (no path in it)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise CatalogError("is not a regular file")
        if info.st_size > MAX_BODY_BYTES:
            raise CatalogError(f"is too large ({info.st_size:,} bytes; limit {MAX_BODY_BYTES:,})")
        # The shared reader: no /proc, /dev, /sys or credential target, no FIFO swapped in since.
        data = read_file(path, MAX_BODY_BYTES, cut=True)
    except OSError as exc:
        raise CatalogError(f"cannot be read ({os_reason(exc)})") from None
    except Unreadable as exc:
        raise CatalogError(f"cannot be read ({exc})") from None
    if len(data) > MAX_BODY_BYTES:  # it grew since stat
        raise CatalogError(f"is too large (over {MAX_BODY_BYTES:,} bytes)")
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise CatalogError(f"is binary (a NUL byte in its first {BINARY_SNIFF_BYTES // 1024} KB)")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})") from None


def split_body(text: str, where: str = "") -> tuple[dict[str, Any] | None, str, str | None]:
    """(frontmatter, body, problem); a block YAML refuses is read line by line (one --debug line naming
    `where`), and one with nothing readable is still cut off the body (Claude Code ignores it)."""
    meta, body, problem = parse_frontmatter(text, where)
    if problem is None:
        return meta, body, None
    opening = _OPEN_FENCE.match(text)
    closing = _CLOSE_FENCE.search(text, opening.end()) if opening else None
    if closing is not None:
        body = text[closing.end() :]
    elif opening is not None:
        body = text[opening.end() :]
    return None, body, problem


def fix_hint(kind: Kind, why: str) -> str:
    """What to do about a file read_body refused for `why`."""
    if why.startswith(("cannot be read", "is not a regular file")):
        return "Fix or remove it."
    limit = f"{MAX_BODY_BYTES // 1000} KB"
    if kind == "skill":
        return f"Make SKILL.md a UTF-8 text file under {limit} (move long material into other files in its folder)."
    return f"Make it a UTF-8 text file under {limit}."


def first_paragraph(body: str) -> str:
    """The body's first paragraph on one line, a heading's `#`s dropped, cut to BODY_DESCRIPTION_CHARS."""
    lines: list[str] = []
    for line in body.splitlines():
        if line.strip():
            lines.append(line.strip())
        elif lines:
            break
    if not lines:
        return ""
    lines[0] = _HEADING.sub("", lines[0], count=1)
    return clip(" ".join(" ".join(lines).split()), BODY_DESCRIPTION_CHARS)


# --- frontmatter fields ----------------------------------------------------------------
class FrontmatterFields:
    """Reads the frontmatter of one file into PromptCommand fields, one problem line per bad value."""

    def __init__(self, meta: dict[str, Any], label: str, problems: list[str], root: Path) -> None:
        self.meta, self.label, self.problems, self.root = meta, label, problems, root

    def _bad(self, key: str, value: object, want: str, kept: str) -> None:
        self.problems.append(
            f"{self.label}: `{key}` is {_shown_value(value)}, not {want}; {kept}. Fix the frontmatter."
        )

    def text(self, key: str, kept: str = "ignored") -> str:
        value = self.meta.get(key)
        if value is None:
            return ""
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return " ".join(str(value).split())
        self._bad(key, value, "text", kept)
        return ""

    def flag(self, key: str, default: bool) -> bool:
        value = self.meta.get(key)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        self._bad(key, value, "true or false", f"using {str(default).lower()}")
        return default

    def tools(self) -> tuple[str, ...]:
        value = self.meta.get("allowed-tools")
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        if value is None:
            return ()
        if items is None or not all(isinstance(i, str) for i in items):
            self._bad("allowed-tools", value, "a string or a list of tool rules", "no tools allowed")
            return ()
        return tuple(rule for item in items for rule in split_tool_rules(item) if self._valid_rule(rule))

    def _valid_rule(self, rule: str) -> bool:
        """Whether a rule of `allowed-tools` parses (a bad one is a line and grants nothing)."""
        try:
            parse_rule(rule, source="skill", project_root=self.root)
        except RuleError as exc:
            self.problems.append(
                f"{self.label}: allowed-tools rule {rule!r} is not valid ({exc.problem}); "
                "it grants nothing, the others still do. Fix the frontmatter."
            )
            return False
        return True

    def hint(self) -> str:
        value = self.meta.get("argument-hint")
        if isinstance(value, list) and all(isinstance(i, (str, int)) for i in value):
            return " ".join(f"[{i}]" for i in value)  # `argument-hint: [file]` is a YAML list
        return self.text("argument-hint")

    def model(self) -> str | None:
        model = self.text("model", "the session's model is used")
        return None if model in ("", "inherit") else model


def _shown_value(value: object) -> str:
    text = repr(value) if isinstance(value, str) else f"a {type(value).__name__}"
    return clip(text, 60)


def split_tool_rules(text: str) -> list[str]:
    """`Read, Bash(git add:*) Grep` -> ["Read", "Bash(git add:*)", "Grep"]: commas and spaces outside (...)."""
    rules, depth, start = [], 0, 0
    for i, ch in enumerate(text + " "):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and _TOOL_SPLIT.fullmatch(ch):
            if text[start:i].strip(" ,"):
                rules.append(text[start:i].strip(" ,"))
            start = i + 1
    if depth and text[start:].strip(" ,"):  # an unclosed `(`: kept whole, so it is reported, not lost
        rules.append(text[start:].strip(" ,"))
    return rules


# --- discovery -------------------------------------------------------------------------
@dataclass(frozen=True)
class _Found:
    """A file that may become an entry: where it is and what it would be called."""

    path: Path
    kind: Kind
    scope: Scope
    name: str
    namespace: str = ""


class FileLoader:
    """Reads the folders of one kind of entry, saying one line per file it cannot use (subagents/types.py
    reads agent files with it too)."""

    def __init__(self, project_root: Path, trusted: bool) -> None:
        self.root = project_root
        self.real_root = os.path.realpath(project_root)
        self.trusted = trusted  # may a project's links point outside the repository
        self.problems: list[str] = []
        self.looked_at = 0

    def shown(self, path: Path) -> str:
        return shown(path, self.root)

    def kind(self, path: Path, scope: Scope) -> str:
        """ "dir", "file", "other" (missing, a pipe: reading it says what), or "refused" (one line
        said): it cannot be looked at, or a project's link leaves the repository in a folder not
        trusted (its text would reach the model unasked)."""
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            return "other"
        except OSError as exc:
            self.problems.append(f"{self.shown(path)} cannot be read ({os_reason(exc)}); skipped. Fix or remove it.")
            return "refused"
        real = os.path.realpath(path)
        if scope == "project" and not self.trusted and not (real + os.sep).startswith(self.real_root + os.sep):
            self.problems.append(
                f"{self.shown(path)} links to {real}, outside the repository, and this folder "
                "is not trusted; skipped. Trust the folder, or copy it in."
            )
            return "refused"
        return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"

    def skills(self, folder: Path, scope: Scope) -> Iterator[_Found]:
        """Each `<folder>/<name>/SKILL.md`, sorted by name; folders without one are a line."""
        if self.kind(folder, scope) != "dir":
            return
        for sub in _sorted_dir(folder):
            if sub.name.startswith(".") or self.kind(sub, scope) != "dir":
                continue
            skill_md = sub / "SKILL.md"
            if (what := self.kind(skill_md, scope)) == "refused":
                continue
            if what != "file":
                self.problems.append(
                    f"Skill folder {self.shown(sub)} has no SKILL.md; skipped. "
                    f"Add {sub.name}/SKILL.md or remove the folder."
                )
            elif not NAME.fullmatch(sub.name):
                self.problems.append(
                    f"Skill {self.shown(skill_md)}: {sub.name!r} cannot be a skill name "
                    f"({NAME_RULE}); skipped. Rename the folder."
                )
            else:
                yield _Found(skill_md, "skill", scope, sub.name)

    def commands(self, folder: Path, scope: Scope) -> Iterator[_Found]:
        """Each `**/<name>.md` under `folder`, sorted by (name, namespace); symlinks followed once."""
        found: list[_Found] = []
        too_many = " and the other commands folders; the rest were not read. Keep commands in a smaller tree."
        for path, ns in self.markdown_files(folder, scope, too_many, folder_ok=self._namespace_ok):
            if NAME.fullmatch(path.stem):
                found.append(_Found(path, "command", scope, path.stem, ":".join(ns)))
            else:
                self.problems.append(
                    f"Command {self.shown(path)}: {path.stem!r} cannot be a command name "
                    f"({NAME_RULE}); skipped. Rename the file."
                )
        return iter(sorted(found, key=lambda f: (f.name.lower(), f.namespace.lower())))

    def _namespace_ok(self, path: Path) -> bool:
        if NAME.fullmatch(path.name):
            return True
        self.problems.append(
            f"Command folder {self.shown(path)}: {path.name!r} cannot be part of "
            f"a command name ({NAME_RULE}); skipped. Rename the folder."
        )
        return False

    def markdown_files(
        self, folder: Path, scope: Scope, too_many: str, folder_ok: Callable[[Path], bool] = lambda _: True
    ) -> list[tuple[Path, tuple[str, ...]]]:
        """Each `**/*.md` under `folder` in name order, with the subfolders it is in: linked folders
        followed once, a subfolder `folder_ok` refuses skipped, at most MAX_FILES looked at by this
        loader (then one line: "More than N files under F" + `too_many`)."""
        found: list[tuple[Path, tuple[str, ...]]] = []
        if self.kind(folder, scope) == "dir":
            self._walk(folder, (), {os.path.realpath(folder)}, scope, (too_many, folder_ok), found)
        return found

    def _walk(
        self,
        folder: Path,
        ns: tuple[str, ...],
        seen: set[str],
        scope: Scope,
        how: tuple[str, Callable[[Path], bool]],
        found: list[tuple[Path, tuple[str, ...]]],
    ) -> None:
        too_many, folder_ok = how
        for path in _sorted_dir(folder):
            if path.name.startswith("."):
                continue
            self.looked_at += 1
            if self.looked_at > MAX_FILES:
                if self.looked_at == MAX_FILES + 1:  # said once, however deep the walk is
                    self.problems.append(f"More than {MAX_FILES:,} files under {self.shown(folder)}{too_many}")
                return
            what = self.kind(path, scope)
            if what == "dir":
                real = os.path.realpath(path)
                if real not in seen and folder_ok(path):  # not a symlink loop, nor a folder linked twice
                    self._walk(path, (*ns, path.name), seen | {real}, scope, how, found)
            elif what != "refused" and path.suffix == ".md":
                found.append((path, ns))

    def parse(self, found: _Found) -> PromptCommand | None:
        """The entry for one file, or None (and a line) when it cannot be loaded."""
        label = f"{found.kind.capitalize()} {self.shown(found.path)}"
        try:
            text = read_body(found.path)
        except CatalogError as exc:
            self.problems.append(f"{label} {exc}; skipped. {fix_hint(found.kind, str(exc))}")
            return None
        meta, body, problem = split_body(text, label)
        if problem:
            what = "folder" if found.kind == "skill" else "file"
            self.problems.append(
                f"{label}: {problem}; loaded with the {what} name and its first paragraph as description. Fix the YAML."
            )
        fields = FrontmatterFields(meta or {}, label, self.problems, self.root)
        description = fields.text("description", "the first paragraph is used") or first_paragraph(body)
        # Claude Code's name for a command in a subfolder is `folder:name`; the short name also
        # reaches it while no other entry has it (`_resolve`).
        name = f"{found.namespace}:{found.name}" if found.namespace else found.name
        aliases = [found.name] if found.namespace else []
        if found.kind == "skill":
            aliases += self._skill_alias(fields, found.name, label)
        return PromptCommand(
            name=name,
            kind=found.kind,
            scope=found.scope,
            path=found.path,
            namespace=found.namespace,
            description=description,
            when_to_use=fields.text("when_to_use") if found.kind == "skill" else "",
            argument_hint=fields.hint(),
            allowed_tools=fields.tools(),
            model=fields.model(),
            disable_model_invocation=fields.flag("disable-model-invocation", False),
            user_invocable=fields.flag("user-invocable", True),
            aliases=tuple(aliases),
            shown_path=self.shown(found.path),
        )

    def _skill_alias(self, fields: FrontmatterFields, folder_name: str, label: str) -> list[str]:
        """A skill's frontmatter `name`, when it differs from its folder's (both reach it)."""
        name = fields.text("name")
        if not name or name.lower() == folder_name.lower():
            return []
        if not NAME.fullmatch(name):
            self.problems.append(
                f"{label}: `name` {name!r} cannot be a skill name ({NAME_RULE}); it is "
                f"reached as {folder_name!r} only. Fix the frontmatter."
            )
            return []
        return [name]


def _sorted_dir(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir(), key=lambda p: p.name.lower())
    except OSError:
        return []


# --- precedence ------------------------------------------------------------------------
def _resolve(entries: list[PromptCommand], problems: list[str]) -> list[PromptCommand]:
    """One entry per name: a skill beats a command, user beats project; each clash is one line.

    `entries` is in listing order. A loser in a subfolder keeps its `folder:name` alias as its
    name; other losers are dropped. Aliases come after every plain name.
    """
    rank = {("skill", "user"): 0, ("skill", "project"): 1, ("command", "user"): 2, ("command", "project"): 3}
    by_rank = sorted(range(len(entries)), key=lambda i: rank[entries[i].kind, entries[i].scope])
    owner: dict[str, PromptCommand] = {}
    losers: list[int] = []
    for i in by_rank:
        key = entries[i].name.lower()
        if key in owner:
            losers.append(i)
        else:
            owner[key] = entries[i]
    shorts = [e.name.rsplit(":", 1)[-1].lower() for e in entries if e.namespace]
    shared = {n for n in shorts if shorts.count(n) > 1}  # `git:commit` and `hg:commit`: neither is `commit`
    result = {i: _claim_aliases(entries[i], owner, problems, shared) for i in by_rank if i not in losers}
    for i in losers:
        loser, winner = entries[i], owner[entries[i].name.lower()]
        ns_name = f"{loser.namespace}:{loser.name}" if loser.namespace else ""
        if ns_name and ns_name.lower() not in owner:
            owner[ns_name.lower()] = loser
            result[i] = replace(loser, name=ns_name, aliases=())
            problems.append(
                f"{loser.label} has the same name as {winner.shown_path}; /{winner.name} runs "
                f"that one, and this one is /{ns_name}. Rename one to reach both by name."
            )
        else:
            problems.append(
                f"{loser.label} has the same name as {winner.shown_path}; {_why(winner, loser)}, "
                f"so that one is used and this one is skipped. Rename one to keep both."
            )
    return [result[i] for i in range(len(entries)) if i in result]


def _claim_aliases(
    entry: PromptCommand, owner: dict[str, PromptCommand], problems: list[str], shared: set[str]
) -> PromptCommand:
    """`entry` with the aliases no other entry holds (each one taken is a line, except a namespaced
    command's short name: it is only a shortcut while unambiguous, and `shared` ones are none)."""
    free = []
    for alias in entry.aliases:
        other = owner.get(alias.lower())
        short = bool(entry.namespace) and entry.name.lower().endswith(f":{alias.lower()}")
        if short and (other is not None or alias.lower() in shared):
            continue
        if other is None:
            owner[alias.lower()] = entry
            free.append(alias)
        elif other is not entry:
            problems.append(
                f"{entry.label}: its other name {alias!r} is taken by {other.shown_path}; it is "
                f"reached as {entry.name!r} only. Rename one."
            )
    return entry if len(free) == len(entry.aliases) else replace(entry, aliases=tuple(free))


def _why(winner: PromptCommand, loser: PromptCommand) -> str:
    if winner.kind != loser.kind:
        return "a skill comes before a command"
    if winner.scope != loser.scope:
        return "a user one comes before a project one"
    return "it comes first in name order"


def _files(loader: FileLoader, project_root: Path, home: Path, claude_code: Path | None = None) -> list[_Found]:
    """Every file that may become an entry, in listing order (nothing read yet but the folders);
    Claude Code's user folders (`claude_code`) come after claude-mini's home, so its files win a clash."""
    project = project_root / ".claude"
    same_folder = os.path.realpath(project) == os.path.realpath(home)  # a home that is the project's .claude
    users = [home, *([claude_code] if claude_code is not None else [])]
    groups: list[Iterator[_Found]] = [loader.skills(user / "skills", "user") for user in users]
    if not same_folder:
        groups += [loader.skills(project / "skills", "project"), loader.commands(project / "commands", "project")]
    groups += [loader.commands(user / "commands", "user") for user in users]
    return [found for group in groups for found in group]


def load_catalog(project_root: Path, home: Path, *, trusted: bool = False, claude_code: Path | None = None) -> Catalog:
    """Project `.claude/skills`, `.claude/commands` under project_root, and `home/skills`, `home/commands`
    (then Claude Code's `~/.claude/skills`, `commands` when `claude_code` is given). A project's links
    that leave the repository are followed only in a `trusted` folder."""
    loader = FileLoader(project_root, trusted)
    found = _files(loader, project_root, home, claude_code)
    entries = [entry for item in found if (entry := loader.parse(item)) is not None]
    return Catalog(_resolve(entries, loader.problems), loader.problems)


def names_on_disk(
    project_root: Path, home: Path, *, trusted: bool = False, claude_code: Path | None = None
) -> set[str]:
    """The names the command and skill files on disk would have (a command's `folder:name` too),
    from the folders alone: no file is read, so a check at every turn stays cheap."""
    names: set[str] = set()
    for found in _files(FileLoader(project_root, trusted), project_root, home, claude_code):
        names.add(found.name)
        if found.namespace:
            names.add(f"{found.namespace}:{found.name}")
    return names


# --- the model's listing ---------------------------------------------------------------
@dataclass(frozen=True)
class Listing:
    """The entries as the model sees them, within a character budget."""

    text: str  # the entries, one `- name: description` line each ("" when none)
    chars: int
    budget: int
    shortened: tuple[str, ...]  # names whose description was dropped to fit the budget


def listing_budget(context_window: int) -> int:
    """Characters for the listing: `$SLASH_COMMAND_TOOL_CHAR_BUDGET` if a positive int, else 1% of the window."""
    raw = os.environ.get(BUDGET_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return int(context_window * 4 * LISTING_FRACTION)


def entry_line(entry: PromptCommand) -> str:
    """`- name: description - when_to_use` (the description cut to MAX_ENTRY_CHARS), or `- name`."""
    text = " - ".join(t for t in (entry.description, entry.when_to_use) if t)
    return f"- {entry.name}: {clip(text, MAX_ENTRY_CHARS)}" if text else f"- {entry.name}"


def build_listing(entries: Sequence[PromptCommand], budget: int) -> Listing:
    """Every entry, never dropped: in order, each keeps its description while the budget allows; the
    rest become `- name` (Claude Code does the same, without usage ranking here)."""
    full = [entry_line(e) for e in entries]
    bare = [f"- {e.name}" for e in entries]
    lines, shortened = list(full), []
    if sum(map(len, full)) + max(0, len(full) - 1) > budget:
        room = budget - sum(map(len, bare)) - max(0, len(bare) - 1)
        for i, entry in enumerate(entries):
            extra = len(full[i]) - len(bare[i])
            if extra <= room:
                room -= extra
            else:
                lines[i] = bare[i]
                shortened.append(entry.name)
    text = "\n".join(lines)
    return Listing(text=text, chars=len(text), budget=budget, shortened=tuple(shortened))
