"""Layer 1: the instruction hierarchy — CLAUDE.md, AGENTS.md, rules and @imports (issue 9).

    load_instructions(cwd) -> InstructionSet     discovery, reading, @imports, rules set aside
    InstructionSet.render()                       the system prompt section (built once per session)
    AttachmentTracker.on_path_touched(path)       path-scoped rules and nested files, lazily
    lint(), to_json()                             data for `claude-mini context [--lint|--json]`

Load order, lowest priority first (position is priority, so nothing is merged):
managed CLAUDE.md, managed rules/ -> user CLAUDE.md, user rules/ -> for each
folder from the top of the filesystem (never `/`) down to the cwd: CLAUDE.md
(AGENTS.md when there is no CLAUDE.md), .claude/CLAUDE.md, the unconditional
rules under .claude/rules/ (recursive, sorted by relative path), CLAUDE.local.md.
Each file's @imports follow it, depth first.

Decisions where issue 9 is silent:
- Every file is shown and deduplicated by its real path (symlinks resolved).
- Rules folders are searched recursively at every level (managed and user too).
  Globs of managed/user rules are relative to the project root; those of a
  `.claude/rules` folder to the folder holding `.claude/`, even when `rules`
  is a symlink elsewhere.
- The project root defaults to the checkout holding the cwd (`paths.checkout_root`:
  git's work-tree top when it holds the cwd, so a linked worktree is its own), else the cwd.
- `@~/` means the user's OS home, as in Claude Code. Imports may resolve inside
  the project root, the cwd, the OS home, $CLAUDE_MINI_HOME or the managed folder.
- Trust (DESIGN.md section 8): a project-level file whose real path is outside the project
  root, the cwd, $CLAUDE_MINI_HOME and the managed folder is loaded only when the
  folder is trusted, otherwise skipped with a notice: an import that resolves
  there, and a file found in the repository (CLAUDE.md, AGENTS.md, CLAUDE.local.md,
  a rule, a rules folder, a nested file) that is a link to there. Files found in
  folders above the repository are the user's and need no trust. `to_json` lists
  every such file for `claude-mini context`.
- Known credential locations (`credentials.py`: ~/.ssh, ~/.aws, .env files, ...)
  are never loaded, trusted or not, whatever kind of file, checked on the path as
  found and resolved.
- `@token` is an import only if it contains `/` or `.`; a missing target without
  a text extension (`@pytest.mark.skip`, `@types/node`) is prose and ignored.
- Code spans are recognised within one line; indented code blocks are not code
  (list items indented four spaces are far more common in instruction files).
- Files over MAX_FILE_BYTES are skipped; NUL bytes mean binary (skipped);
  invalid UTF-8 is loaded with U+FFFD replacements and a warning.
- Malformed frontmatter, or a `paths:` that is neither string nor list of
  strings: warning, and the whole file is loaded as unconditional text.
- Managed files cannot be excluded by `claudeMdExcludes` (managed always wins).
  Exclude globs are gitignore-style, matched against absolute paths. Those of an
  untrusted repository (`trust.RepositoryOnly`) exclude only files found inside it.
- A conditional rule's own @imports are resolved when it is attached.
- A nested folder (below the cwd) gets the same per-folder set as an ancestor:
  CLAUDE.md/AGENTS.md, .claude/CLAUDE.md, its unconditional .claude/rules,
  CLAUDE.local.md; its conditional rules join the pool from then on.
- Globs are matched both against the path as given and its real path.
- Paths in the records are absolute `str` (real paths): they go straight into
  the prompt and JSON, and building ~300 Path objects cost a third of the read time.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from claude_mini.agent.hooks import AgentHooks
from claude_mini.credentials import credential_folders, credential_location
from claude_mini.llm.messages import ToolUseBlock
from claude_mini.memory.frontmatter import parse_frontmatter
from claude_mini.memory.globs import (
    GlobSet,
    RuleIndex,
    iter_repository_files,
    relative_to,
    split_globs,
)
from claude_mini.paths import checkout_root, home_dir, managed_dir
from claude_mini.tools.base import ToolResult
from claude_mini.trust import RepositoryOnly

MAX_IMPORT_DEPTH = 5  # hops from the root file (DESIGN.md section 5)
MAX_FILE_BYTES = 200_000  # larger files are skipped: they would swamp the context
LINT_MAX_CHARS = 40_000  # `--lint` flags files above this

HEADER = (
    "The instructions below, from the user's and the project's instruction files, override "
    "your default behaviour, and you must follow them exactly as written."
)

# Imports must name a text file; this keeps `@id_rsa` or `@build/app.bin` out of the prompt.
TEXT_EXTENSIONS = frozenset({
    ".md", ".markdown", ".mdx", ".txt", ".text", ".rst", ".adoc", ".org", ".json", ".jsonc",
    ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".xml", ".csv", ".tsv", ".html", ".htm",
    ".css", ".scss", ".sql", ".graphql", ".proto", ".py", ".pyi", ".js", ".jsx", ".mjs",
    ".cjs", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".kts", ".scala", ".swift", ".c",
    ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".pl", ".lua", ".r", ".dart", ".ex",
    ".exs", ".erl", ".hs", ".ml", ".clj", ".sh", ".bash", ".zsh", ".fish", ".ps1", ".vue",
    ".svelte", ".tf", ".gradle", ".cmake", ".mk",
})
TEXT_NAMES = frozenset({"Makefile", "Dockerfile", "Justfile", "LICENSE", "README", "CODEOWNERS"})

# Skip reasons that are normal operation: shown by `context`, not warned about.
EXCLUDED = "excluded by claudeMdExcludes"
DUPLICATE = "already loaded (same real file)"
CYCLE = "import cycle"
UNTRUSTED = ("outside the repository, and this folder is not trusted: run claude-mini here and "
             "trust it (or pass --trust-folder) to follow it")
_QUIET = frozenset({EXCLUDED, DUPLICATE, CYCLE})


def estimate_tokens(text: str) -> int:
    """Rough token count (4 characters a token), enough for budgets and `context`."""
    return (len(text) + 3) // 4


# ---------------------------------------------------------------------- data


@dataclass(eq=False)
class InstructionFile:
    """One instruction file that was read; `text` is what the model sees."""

    path: str  # the real path, absolute
    kind: str  # managed | user | project | local | rule | imported
    text: str
    level: str = "project"  # managed | user | project: where its root file came from
    depth: int = 0  # import hops from its root file
    imported_by: str | None = None
    imports: list[InstructionFile | Skipped] = field(default_factory=list, repr=False)
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
class Attachment:
    """Instruction text sent lazily with the next user message, inside `<system-reminder>`."""

    path: str  # the rule or nested root file that caused it
    kind: str  # 'rule' (path-scoped rule) | 'nested' (instruction file below the cwd)
    files: list[InstructionFile]  # the file itself, then what it imports

    @property
    def tokens(self) -> int:
        """Estimated tokens of the rendered text."""
        return estimate_tokens(self.render())

    def render(self) -> str:
        """The blocks to wrap in `<system-reminder>` (the loop adds the tags)."""
        return "\n\n".join(f.render() for f in self.files if f.text)


@dataclass
class LoadContext:
    """Where instruction files come from and which paths imports may reach."""

    cwd: str
    project_root: str
    home: str  # $CLAUDE_MINI_HOME
    managed: str  # $CLAUDE_MINI_MANAGED_DIR
    user_home: str  # what `@~/` means
    excludes: tuple[str, ...] = ()
    trusted: bool = False  # may a project file import from outside the repository (the OS home)
    repo_excludes: tuple[str, ...] = ()  # an untrusted repository's claudeMdExcludes: its own files only

    def __post_init__(self) -> None:
        # GlobSet, not a bare PathSpec: brace sets work, and it is ~10x faster per file.
        self._exclude = GlobSet(list(self.excludes)) if self.excludes else None
        self._repo_exclude = GlobSet(list(self.repo_excludes)) if self.repo_excludes else None
        inside = {self.project_root, self.cwd, self.home, self.managed}
        # An OS home of `/` (some containers) must not open the whole disk to imports.
        self._inside = tuple(r for r in inside if os.path.dirname(r) != r)
        self._roots = tuple(r for r in {*inside, self.user_home} if os.path.dirname(r) != r)
        self._credential_folders = credential_folders()

    @property
    def exclude_errors(self) -> list[str]:
        """claudeMdExcludes globs that could not be compiled."""
        return [e for g in (self._exclude, self._repo_exclude) if g is not None for e in g.errors]

    def is_excluded(self, path: str, real: str) -> bool:
        """Whether `claudeMdExcludes` matches the path as found or its real path.

        Globs from an untrusted repository apply only to files found inside it, so they
        cannot hide the user's or the organisation's instruction files.
        """
        spellings = (path, real)
        for globs in (self._exclude, self._repo_exclude if self.in_repository(path) else None):
            if globs is not None and any(globs.matches(p.lstrip("/")) for p in spellings):
                return True
        return False

    def may_import(self, real: str) -> bool:
        """Whether an import may read `real` (inside one of the allowed roots)."""
        return any(real == r or real.startswith(r + os.sep) for r in self._roots)

    def is_outside(self, real: str) -> bool:
        """Whether `real` is outside the repository, the cwd, the claude-mini home and managed folder."""
        return not any(real == r or real.startswith(r + os.sep) for r in self._inside)

    def leaves_repository(self, path: str, real: str, imported: bool) -> bool:
        """Whether a project-level file reaches outside: an import whose real path is outside,
        or a file found inside (a CLAUDE.md, rule, nested file) that is a link to outside.

        Files found in folders above the repository are the user's, not the repository's.
        """
        return self.is_outside(real) and (imported or self.in_repository(path))

    def in_repository(self, path: str) -> bool:
        """Whether `path` (as found, not resolved) lies in the repository or the cwd."""
        return any(path == r or path.startswith(r + os.sep) for r in (self.project_root, self.cwd)
                   if os.path.dirname(r) != r)

    def credential(self, *spellings: str) -> str | None:
        """Which known credential location any spelling of a path is in, else None."""
        return credential_location(*spellings, folders=self._credential_folders)


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


# ------------------------------------------------------------ markdown text

# One scan finds fence lines and block-level comment starts (the leading `\n`
# is a literal prefix, so `re` jumps from line to line); `@` is found with
# str.find (memchr). Line-by-line loops or `^`-anchored MULTILINE patterns
# made loading several times slower than reading the files.
_BLOCK = re.compile(r"\n {0,3}(?:(`{3,}|~{3,})([^\n]*)|<!--)")
_IMPORT_PATH = re.compile(r"[^\s\\`]+(?:\\.[^\s\\`]*)*")  # `\ ` escapes a space
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_TRAILING_PUNCTUATION = ".,;:!?)]}\"'"
_COMMENT_NEXT = re.compile(r"[ \t]*<!--")


def _block_spans(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(fenced code regions, block-level HTML comment spans), as offsets into `text`.

    A comment inside a fence is code; a fence inside a removed comment is not a fence;
    an unclosed fence runs to the end (CommonMark).
    """
    fences, comments, opening, start, skip_to = [], [], "", 0, 0
    for m in _BLOCK.finditer("\n" + text):  # `\n` first makes the first line a line too
        line_start = m.start()  # the padding shifts offsets by one: this is the line start
        if line_start < skip_to:
            continue
        fence, info = m.group(1), m.group(2)
        if fence is None:
            end = None if opening else _comment_end(text, m.end() - 1)
            if end is not None:
                comments.append((line_start, end))
                skip_to = end
        elif not opening:
            if not (fence[0] == "`" and "`" in info):  # backtick fences' info has no backticks
                opening, start = fence, line_start
        elif fence[0] == opening[0] and len(fence) >= len(opening) and not info.strip():
            fences.append((start, m.end() - 1))
            opening = ""
    if opening:
        fences.append((start, len(text)))
    return fences, comments


def fenced_regions(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the fenced code blocks in `text`."""
    return _block_spans(text)[0]


def _in_regions(pos: int, regions: list[tuple[int, int]]) -> bool:
    return any(start <= pos < end for start, end in regions)


def _in_code_span(text: str, pos: int) -> bool:
    """Whether `pos` lies inside a code span of its line (spans across lines are not followed)."""
    line_start = text.rfind("\n", 0, pos) + 1
    if "`" not in text[line_start:pos]:
        return False
    line_end = text.find("\n", pos)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    offset = pos - line_start
    return any(span.start() <= offset < span.end() for span in _CODE_SPAN.finditer(line))


def _comment_end(text: str, pos: int) -> int | None:
    """Where removal of the comment whose body starts at `pos` stops; None if never closed."""
    close = text.find("-->", pos)
    if close < 0:
        return None
    pos = close + 3
    while (nxt := _COMMENT_NEXT.match(text, pos)) and (close := text.find("-->", nxt.end())) >= 0:
        pos = close + 3  # `<!-- a --> <!-- b -->`: the second goes too
    eol = text.find("\n", pos)
    rest_end = eol if eol >= 0 else len(text)
    if text[pos:rest_end].strip():
        return pos  # text after `-->` on the same line stays
    return rest_end + 1 if eol >= 0 else rest_end


def _import_refs(text: str, skip: list[tuple[int, int]]) -> list[str]:
    """`@path` references outside the `skip` spans and code spans, in order."""
    found, pos = [], text.find("@")
    while pos >= 0:
        # `@` must start the text or follow whitespace: `a@b.c` is an address.
        if (pos == 0 or text[pos - 1].isspace()) and not _in_regions(pos, skip) \
                and not _in_code_span(text, pos):
            m = _IMPORT_PATH.match(text, pos + 1)
            raw = m.group().replace("\\ ", " ").rstrip(_TRAILING_PUNCTUATION) if m else ""
            if "/" in raw or "." in raw:
                found.append(raw)
        pos = text.find("@", pos + 1)
    return found


def scan_markdown(text: str) -> tuple[str, list[str]]:
    """(text without block-level HTML comments, stripped; its @imports outside code and comments)."""
    if "@" not in text and "<!--" not in text:
        return text.strip(), []
    fences, comments = _block_spans(text)
    imports = _import_refs(text, fences + comments)
    kept, cursor = [], 0
    for start, end in comments:
        kept.append(text[cursor:start])
        cursor = end
    kept.append(text[cursor:])
    return "".join(kept).strip(), imports


def strip_html_comments(text: str) -> str:
    """Text without block-level `<!-- -->` comments (those starting a line) outside fenced code."""
    return scan_markdown(text)[0]


def find_imports(text: str) -> list[str]:
    """The `@path` references in `text`, in order, outside code spans, fences and comments."""
    return scan_markdown(text)[1]


def rule_globs(meta: dict) -> tuple[list[str] | None, str | None]:
    """The `paths:` globs of a rule (None: unconditional), or a problem with them."""
    value = meta.get("paths")
    if value is None:
        return None, None
    if isinstance(value, str):
        globs = split_globs(value)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        globs = [v.strip() for v in value if v.strip()]
    else:
        return None, "`paths` must be a string or a list of strings"
    return (None if not globs or "**" in globs else globs), None


# ------------------------------------------------------------------ reading


class _Unreadable(Exception):
    """A file that exists but cannot be used; the message is the reason shown."""


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return "not found"
    if exc.errno == errno.EACCES:
        return "permission denied"
    return f"unreadable ({exc.strerror or exc})"


def _read_bytes(real: str, size: int) -> bytes:
    """Up to MAX_FILE_BYTES + 1 bytes of a file whose size was `size` when stat'ed.

    Raw os.read, sized from the stat: open() builds buffered objects, and read(n)
    allocates n bytes up front; both cost more than the read itself for small files.
    """
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        data = os.read(fd, size + 1)
        while size < len(data) <= MAX_FILE_BYTES:  # it grew since stat: read on, to the limit
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return data


def _read_text(real: str, info: os.stat_result) -> tuple[str, list[str]]:
    """Decoded text of a regular file (`info` is its stat) and notes about it; raises _Unreadable."""
    if not stat.S_ISREG(info.st_mode):  # a FIFO would block, a folder is no file
        raise _Unreadable("not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise _Unreadable(f"too large ({info.st_size:,} bytes; limit {MAX_FILE_BYTES:,})")
    try:
        data = _read_bytes(real, info.st_size)
    except OSError as exc:
        raise _Unreadable(_os_reason(exc)) from exc
    if len(data) > MAX_FILE_BYTES:  # it grew since stat
        raise _Unreadable(f"too large (over {MAX_FILE_BYTES:,} bytes)")
    if b"\0" in data:
        raise _Unreadable("binary file")
    try:
        return data.decode("utf-8").removeprefix("\ufeff"), []
    except UnicodeDecodeError:
        note = "not valid UTF-8: undecodable bytes shown as U+FFFD"
        return data.decode("utf-8", errors="replace").removeprefix("\ufeff"), [note]


def _is_text_name(path: str) -> bool:
    name = os.path.basename(path)
    return name in TEXT_NAMES or os.path.splitext(name)[1].lower() in TEXT_EXTENSIONS


def path_forms(path: Path | str) -> list[str]:
    """The absolute path as given and its real path (one entry when they agree)."""
    given = os.path.abspath(path)
    real = os.path.realpath(given)
    return [given] if real == given else [given, real]


def _is_dir(entry: os.DirEntry) -> bool:
    """DirEntry.is_dir() that answers False for a symlink loop instead of raising."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _dirs_from_top(cwd: str) -> list[str]:
    """Folders from just below the filesystem root down to `cwd`, both ends included."""
    dirs, d = [], cwd
    while os.path.dirname(d) != d:  # the root itself is never searched
        dirs.append(d)
        d = os.path.dirname(d)
    return dirs[::-1]


# ------------------------------------------------------------------ loading


class _Loader:
    """One discovery-and-reading pass; `seen` (real paths) is shared by all passes of a session."""

    def __init__(self, ctx: LoadContext, seen: set[str]) -> None:
        self.ctx, self.seen = ctx, seen
        self.entries: list[Entry] = []
        self.warnings: list[str] = []
        self._real_dirs: dict[str, str] = {}

    def load_session(self) -> None:
        """Managed, then user, then every folder from the top of the filesystem down to the cwd."""
        ctx = self.ctx
        self.load_root(os.path.join(ctx.managed, "CLAUDE.md"), "managed", "managed")
        self.load_rules(os.path.join(ctx.managed, "rules"), ctx.project_root, "managed")
        self.load_root(os.path.join(ctx.home, "CLAUDE.md"), "user", "user")
        self.load_rules(os.path.join(ctx.home, "rules"), ctx.project_root, "user")
        for folder in _dirs_from_top(ctx.cwd):
            self.load_folder(folder)

    def load_folder(self, folder: str) -> None:
        """The per-folder set: CLAUDE.md (else AGENTS.md), .claude/CLAUDE.md, rules, CLAUDE.local.md."""
        main = os.path.join(folder, "CLAUDE.md")
        if not os.path.lexists(main):
            main = os.path.join(folder, "AGENTS.md")  # the cross-tool convention
        self.load_root(main, "project")
        dot_claude = os.path.join(folder, ".claude")
        if os.path.lexists(dot_claude):
            self.load_root(os.path.join(dot_claude, "CLAUDE.md"), "project")
            self.load_rules(os.path.join(dot_claude, "rules"), folder, "project")
        self.load_root(os.path.join(folder, "CLAUDE.local.md"), "local")

    def load_root(self, path: str, kind: str, level: str = "project") -> None:
        """Load one root file (if it exists at all) and its imports."""
        if not os.path.lexists(path):
            return
        entry = self._open(path, kind, level)
        if isinstance(entry, InstructionFile):
            self.add_root(entry)
        else:
            self.entries.append(entry)

    def add_root(self, file: InstructionFile, text: str | None = None) -> None:
        """Append a root file (its text cleaned from `text`, default its own), then its imports."""
        file.text, refs = scan_markdown(file.text if text is None else text)
        self.entries.append(file)
        self._expand_imports(file, refs, (file.path,))

    def load_rules(self, rules_dir: str, base: str, level: str) -> None:
        """Every .md under `rules_dir`, sorted by relative path; conditional ones are set aside."""
        if os.path.lexists(rules_dir):
            for path in self._rule_paths(rules_dir):
                self._load_rule(path, base, level)

    def _load_rule(self, path: str, base: str, level: str) -> None:
        entry = self._open(path, "rule", level)
        if isinstance(entry, Skipped):
            self.entries.append(entry)
            return
        meta, body, problem = parse_frontmatter(entry.text)
        globs = None
        if meta is not None:
            globs, problem = rule_globs(meta)
        if problem:
            body = entry.text  # unusable frontmatter stays visible: the model sees the whole file
            self._note(entry, f"{problem}; loaded as unconditional text")
        if globs:  # cleaned and its imports resolved only when attached
            self.entries.append(ConditionalRule(entry.path, globs, base, body, level))
            return
        self.add_root(entry, body)

    def _rule_paths(self, rules_dir: str) -> list[str]:
        found: list[tuple[str, str]] = []
        self._walk_rules(rules_dir, "", (), found)
        return [path for _, path in sorted(found)]

    def _walk_rules(self, folder: str, rel: str, chain: tuple[str, ...], found: list) -> None:
        """Collect (relative, path) of .md files; symlinked folders are followed, loops are not."""
        try:
            real = self._real_dir(folder)
            if real in chain:
                raise OSError(errno.ELOOP, "symlink loop")
            children = list(os.scandir(folder))
        except OSError as exc:
            self.entries.append(self._skip(folder, "rule", _os_reason(exc)))
            return
        for child in children:
            child_rel = f"{rel}/{child.name}" if rel else child.name
            if _is_dir(child):  # follows symlinks, as Claude Code does for the rules folder
                self._walk_rules(child.path, child_rel, (*chain, real), found)
            elif child.name.lower().endswith(".md"):  # _open reports loops and broken links
                found.append((child_rel, child.path))

    def _expand_imports(self, file: InstructionFile, refs: list[str], chain: tuple[str, ...]) -> None:
        """Load what `file` imports (`refs`), each followed by its own imports: depth first."""
        for raw in refs:
            entry = self._import(raw, file, chain)
            if entry is None:
                continue
            file.imports.append(entry)
            self.entries.append(entry)
            if isinstance(entry, InstructionFile):
                entry.text, sub_refs = scan_markdown(entry.text)
                self._expand_imports(entry, sub_refs, (*chain, entry.path))

    def _import(self, raw: str, importer: InstructionFile, chain: tuple[str, ...]) -> Entry | None:
        if raw.startswith("~/"):
            path = os.path.join(self.ctx.user_home, raw[2:])
        else:  # absolute stays absolute; relative is relative to the importing file
            path = os.path.join(os.path.dirname(importer.path), raw)
        path = os.path.normpath(path)
        if not _is_text_name(path) and not os.path.lexists(path):
            return None  # prose such as `@pytest.mark.skip` or `@types/node`, not an import
        if importer.depth >= MAX_IMPORT_DEPTH:
            reason = f"too deep (more than {MAX_IMPORT_DEPTH} import hops from {chain[0]})"
            return self._skip(path, "imported", reason, importer)
        return self._open(path, "imported", importer.level, importer, chain)

    def _open(
        self, path: str, kind: str, level: str,
        importer: InstructionFile | None = None, chain: tuple[str, ...] = (),
    ) -> InstructionFile | Skipped:
        """Read one file (text not yet cleaned), or say why not."""
        try:
            real, info = self._real(path)
        except OSError as exc:
            return self._skip(path, kind, _os_reason(exc), importer)
        reason = self._refusal(path, real, level, importer is not None, chain)
        if reason is None:
            try:
                text, notes = _read_text(real, info)
            except _Unreadable as exc:
                reason = str(exc)
        linked_from = path if importer is None and real != path else None
        if reason is not None:
            return self._skip(real, kind, reason, importer, linked_from)
        self.seen.add(real)
        depth, by = (importer.depth + 1, importer.path) if importer else (0, None)
        file = InstructionFile(real, kind, text, level, depth, by, linked_from=linked_from)
        for note in notes:
            self._note(file, note)
        return file

    def _refusal(self, path: str, real: str, level: str, imported: bool, chain: tuple) -> str | None:
        credential = self.ctx.credential(path, real)
        if credential:
            return f"it is {credential}, a credential location claude-mini never reads into a prompt"
        if level != "managed" and self.ctx.is_excluded(path, real):
            return EXCLUDED
        if real in chain:
            return CYCLE
        if real in self.seen:
            return DUPLICATE
        if imported and not _is_text_name(real):
            return "not a text file type"
        if imported and not self.ctx.may_import(real):
            return "outside the project root and home folders"
        if level == "project" and not self.ctx.trusted and self.ctx.leaves_repository(path, real, imported):
            return UNTRUSTED
        return None

    def _real(self, path: str) -> tuple[str, os.stat_result]:
        """Real path of `path` and the stat of what it points to; raises OSError.

        os.path.realpath lstat()s every component of every path, which cost more than
        reading the files; folders are resolved once here, so a file costs one lstat.
        """
        head, _, name = path.rpartition(os.sep)  # not os.path.split: this runs for every file
        real_parent = self._real_dir(head or os.sep)
        joined = real_parent + name if real_parent == os.sep else f"{real_parent}{os.sep}{name}"
        info = os.lstat(joined)
        if stat.S_ISLNK(info.st_mode):
            joined = os.path.realpath(joined, strict=True)
            info = os.stat(joined)
        return joined, info

    def _real_dir(self, folder: str) -> str:
        """Real path of a folder, built from its parent's (cached) real path."""
        real = self._real_dirs.get(folder)
        if real is None:
            name = folder.rpartition(os.sep)[2]
            if name in ("", ".", ".."):  # the filesystem root, or a path normpath did not settle
                real = os.path.realpath(folder, strict=True)
            else:
                real, info = self._real(folder)
                if not stat.S_ISDIR(info.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, "not a folder", folder)
            self._real_dirs[folder] = real
        return real

    def _skip(
        self, path: str, kind: str, reason: str, importer: InstructionFile | None = None,
        linked_from: str | None = None,
    ) -> Skipped:
        depth, by = (importer.depth + 1, importer.path) if importer else (0, None)
        skipped = Skipped(path, kind, reason, by, depth, linked_from)
        if not skipped.quiet:
            where = (f"@import in {by}" if by else
                     f"instruction file, linked from {linked_from}" if linked_from else "instruction file")
            self.warnings.append(f"{path} ({where}) was skipped: {reason}. The rest was loaded.")
        return skipped

    def _note(self, file: InstructionFile, note: str) -> None:
        file.notes.append(note)
        self.warnings.append(f"{file.path}: {note}.")


def load_instructions(
    cwd: Path,
    *,
    project_root: Path | None = None,
    excludes: Sequence[str] = (),
    home: Path | None = None,
    managed: Path | None = None,
    trusted: bool = False,
) -> InstructionSet:
    """Discover and read every instruction file that applies to a session started in `cwd`.

    `project_root` defaults to the git checkout holding `cwd` (else `cwd`); it bounds
    imports and anchors the globs of managed and user rules. `excludes` is the
    `claudeMdExcludes` setting (a `trust.RepositoryOnly` list, from an untrusted repository,
    excludes only files inside it). `home`/`managed` default to paths.home_dir()/managed_dir().
    `trusted` (Config.trusted) lets project files import from elsewhere in the OS home.
    """
    real_cwd = os.path.realpath(cwd)
    root = project_root if project_root is not None else checkout_root(Path(real_cwd))
    ctx = LoadContext(
        cwd=real_cwd,
        project_root=os.path.realpath(root or real_cwd),
        home=os.path.realpath(home if home is not None else home_dir()),
        managed=os.path.realpath(managed if managed is not None else managed_dir()),
        user_home=os.path.realpath(os.path.expanduser("~")),
        excludes=() if isinstance(excludes, RepositoryOnly) else tuple(excludes),
        repo_excludes=tuple(excludes) if isinstance(excludes, RepositoryOnly) else (),
        trusted=trusted,
    )
    loader = _Loader(ctx, set())
    loader.warnings.extend(f"claudeMdExcludes: {error}; it is ignored" for error in ctx.exclude_errors)
    loader.load_session()
    return InstructionSet(loader.entries, loader.warnings, ctx)


# -------------------------------------------------------------- attachments


class AttachmentTracker:
    """Per-session record of the path-scoped rules and nested files attached so far (issue 9, 4-5).

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
            new.extend(self._activate(a) for a in self._folder_attachments(folder)
                       if a.path not in self._active)
        for rule in self._rule_index().matching(forms):
            if rule.path not in self._active:
                new.append(self._activate(self._rule_attachment(rule)))
        return new

    def active(self) -> list[Attachment]:
        """Everything attached since the session start or the last compaction, in order."""
        return list(self._active.values())

    def reattach_after_compaction(
        self, still_relevant: Iterable[Path | str] | None = None
    ) -> list[Attachment]:
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
            loader = _Loader(self._ctx, self._seen)
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
            loader = _Loader(self._ctx, self._seen)
            loader.add_root(file, rule.body)  # resolves the rule's imports now, when first needed
            imported = loader.entries[1:]
            self.considered.extend(imported)
            self.warnings.extend(loader.warnings)
            files = [file, *(e for e in imported if isinstance(e, InstructionFile))]
            attachment = self._rule_attachments[rule.path] = Attachment(rule.path, "rule", files)
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


# ------------------------------------------------------------ context, lint


def _lint_sizes(entries: list[Entry]) -> list[str]:
    findings = []
    for e in entries:
        if isinstance(e, Skipped) and e.reason.startswith("too large"):
            findings.append(f"{e.path}: not loaded, {e.reason}")
        elif not isinstance(e, Skipped) and len(e.text) > LINT_MAX_CHARS:
            findings.append(
                f"{e.path}: {len(e.text):,} characters (over {LINT_MAX_CHARS:,}); "
                "move parts into @imports or path-scoped rules"
            )
    return findings


def _lint_imports(entries: list[Entry]) -> list[str]:
    return [
        f"broken import in {e.imported_by}: {e.path} ({e.reason})"
        for e in entries
        if isinstance(e, Skipped) and e.imported_by is not None and e.reason != DUPLICATE
    ]


def _lint_duplicates(entries: list[Entry]) -> list[str]:
    findings, first = [], {}
    for e in entries:
        if isinstance(e, Skipped) or not e.text.strip():
            continue
        key = e.text.strip()
        if key in first:
            findings.append(f"{e.path} has the same content as {first[key]}: keep one")
        else:
            first[key] = e.path
    return findings


def _lint_dead_rules(rules: list[ConditionalRule], repo_root: Path) -> list[str]:
    if not rules:
        return []
    files = list(iter_repository_files(os.path.realpath(repo_root)))
    findings = []
    for rule in rules:
        findings.extend(f"{rule.path}: {error}" for error in rule.errors)
        if not any(rule.matches_any((f,)) for f in files):
            findings.append(f"{rule.path}: paths {rule.globs} match no file in the repository")
    return findings


def lint(instructions: InstructionSet, repo_root: Path) -> list[str]:
    """Findings for `claude-mini context --lint`: big files, broken imports, duplicates, dead globs."""
    entries = instructions.considered
    return [
        *_lint_sizes(entries),
        *_lint_imports(entries),
        *_lint_duplicates(entries),
        *_lint_dead_rules(instructions.conditional, repo_root),
    ]


def _entry_json(entry: Entry) -> dict:
    data = {
        "path": entry.path, "kind": entry.kind, "status": "loaded", "reason": None,
        "tokens": 0, "depth": 0, "imported_by": None, "imports": [],
    }
    if isinstance(entry, Skipped):
        data.update(status="skipped", reason=entry.reason, depth=entry.depth)
    elif isinstance(entry, ConditionalRule):
        data.update(status="conditional", tokens=entry.tokens, globs=entry.globs)
    else:
        data.update(tokens=entry.tokens, depth=entry.depth, notes=entry.notes,
                    imports=[c.path for c in entry.imports])
    if not isinstance(entry, ConditionalRule) and entry.imported_by is not None:
        data["imported_by"] = entry.imported_by
    if not isinstance(entry, ConditionalRule) and entry.linked_from is not None:
        data["linked_from"] = entry.linked_from
    return data


def to_json(instructions: InstructionSet, tracker: AttachmentTracker | None = None) -> dict:
    """Data for `claude-mini context --json`: every file considered in load order, and rule state."""
    ctx = instructions.context
    status = (tracker.conditional_status() if tracker
              else [(rule, False) for rule in instructions.conditional])
    attachments = tracker.active() if tracker else []
    return {
        "cwd": ctx.cwd,
        "project_root": ctx.project_root,
        "tokens": instructions.tokens,
        "files": [_entry_json(e) for e in instructions.considered],
        "conditional_rules": [
            {"path": r.path, "globs": r.globs, "base": r.base, "active": active,
             "tokens": r.tokens, "errors": r.errors}
            for r, active in status
        ],
        "attachments": [
            {"path": a.path, "kind": a.kind, "tokens": a.tokens,
             "files": [f.path for f in a.files]}
            for a in attachments
        ],
        "attachment_files": [_entry_json(e) for e in (tracker.considered if tracker else [])],
        "warnings": [*instructions.warnings, *(tracker.warnings if tracker else [])],
        "trusted": ctx.trusted,
        "outside_imports": outside_imports(instructions, tracker),
    }


def outside_imports(instructions: InstructionSet, tracker: AttachmentTracker | None = None) -> list[dict]:
    """Every import, and every instruction file found through a link, that resolved outside the
    repository (loaded or not), for `claude-mini context`."""
    ctx = instructions.context
    entries = [*instructions.considered, *(tracker.considered if tracker else [])]
    return [_entry_json(e) for e in entries
            if isinstance(e, InstructionFile | Skipped) and ctx.is_outside(e.path)
            and (e.imported_by is not None or (e.linked_from is not None and ctx.in_repository(e.linked_from)))]


# ------------------------------------------------------------ the loop's hook

TOUCHING_TOOLS = ("Read", "Write", "Edit")


class InstructionHook(AgentHooks):
    """Attaches path-scoped rules and nested instruction files when Read/Write/Edit touch a path."""

    def __init__(self, tracker: AttachmentTracker) -> None:
        self.tracker = tracker

    def after_tool(self, call: ToolUseBlock, result: ToolResult) -> list[str]:
        path = result.metadata.get("path")
        if call.name not in TOUCHING_TOOLS or result.is_error or not path:
            return []
        attached = self.tracker.on_path_touched(path, created=bool(result.metadata.get("created")))
        return [a.render() for a in attached if a.render()]
