"""Where other assistants keep their memory of a project, and what is in it.

Each reader returns `Source`: the folder it read and one `Foreign` memory per fact, in the
order found. Readers only read: no file of the other tool is created or changed.

Claude Code   `$CLAUDE_CONFIG_DIR` (default `~/.claude`) `/projects/<key>/memory/`, `<key>` the
              canonical git root with every non-alphanumeric character replaced by `-`
              (`autoMemoryDirectory` in its user settings moves it). Our own format: topic files
              with name/description/type frontmatter and a MEMORY.md index; a fact written in
              MEMORY.md itself (a bullet that links no file) becomes a memory too.
Codex         `$CODEX_HOME` (default `~/.codex`) `/memories/`: one folder for every project.
              MEMORY.md is a handbook of blocks, `# Task Group: ...` with `applies_to: cwd=...`,
              and sections (`## User preferences`, `## Reusable knowledge`, `## Failures and how
              to do differently`); older files head each block with a `---` block whose
              `rollout_summary_files` carry `cwd=`. Blocks whose cwd is another project are
              left out; each section of bullets becomes one memory. memory_summary.md's
              `## User Profile` becomes a user memory.
Gemini CLI    `$GEMINI_CLI_HOME` (default `~`) `/.gemini/tmp/<project id>/memory/`: the private
              project memory (MEMORY.md, legacy GEMINI.md, other .md notes; `skills/` and hidden
              folders are not memories). The id comes from `~/.gemini/projects.json`, or the
              `.project_root` file naming the project in a `tmp/<id>/` folder, or is the older
              SHA-256 of the project path. The facts `save_memory` appended to the global
              `~/.gemini/GEMINI.md` under `## Gemini Added Memories` come along as user memories.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from claude_mini.base import paths
from claude_mini.base.text import within
from claude_mini.memory.store import (
    INDEX_FILENAME,
    MemoryStore,
    MemoryStoreError,
    derive_memory,
    parse_index,
    parse_memory_text,
    read_text_head,
)

TOOLS = ("claude-code", "codex", "gemini")
TOOL_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}
READ_MAX_BYTES = 1024 * 1024
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+(?P<text>\S.*)$")
_CWD = re.compile(r"cwd=([^;,)\s]+)")
_HEADING = re.compile(r"^(?P<level>#{1,3})\s+(?P<title>.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Foreign:
    """One memory found in another assistant's folder, already in our terms."""

    origin: str  # the file it came from (and `#section` / `:line`)
    name: str
    description: str
    type: str
    body: str
    created: str | None = None


@dataclass
class Source:
    """What one reader found: the folder, the memories, files it could not use (and why)."""

    tool: str
    folder: Path
    memories: list[Foreign] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    left_out: int = 0  # blocks about other projects (Codex keeps one folder for all)

    @property
    def found(self) -> bool:
        """Whether the folder (or file) was there at all."""
        return self.folder.exists()


def read_source(tool: str, project: Path) -> Source:
    """The memory `tool` keeps for `project` (its canonical root)."""
    if tool == "claude-code":
        return read_claude_code(claude_code_folder(project))
    if tool == "codex":
        return read_codex(codex_folder(), project)
    return read_gemini(gemini_folder(project), gemini_home() / "GEMINI.md")


# --- Claude Code -------------------------------------------------------------------------
def claude_code_folder(project: Path) -> Path:
    """Claude Code's auto-memory folder of `project`."""
    home = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser()
    moved = _json_value(home / "settings.json", "autoMemoryDirectory")
    if isinstance(moved, str) and moved.strip():
        return Path(moved).expanduser()
    return home / "projects" / paths.path_key(project) / "memory"


def read_claude_code(folder: Path) -> Source:
    """Topic files as they are (our format), and facts written into MEMORY.md itself."""
    source = Source("claude-code", folder)
    store = MemoryStore(folder)  # read only: listing and reading create nothing
    for record in store.list():
        try:
            full = store.read(record.filename)
        except MemoryStoreError as exc:
            source.skipped.append(f"{record.path}: {exc}")
            continue
        if record.frontmatter_ok and record.type:
            created = full.frontmatter.get("created")
            source.memories.append(
                Foreign(
                    str(record.path),
                    record.name,
                    record.description,
                    record.type,
                    (full.body or "").strip(),
                    str(created) if created else None,
                )
            )
        elif (full.body or "").strip():
            source.memories.append(_from_text(str(record.path), full.body or "", "project"))
    source.skipped += [f"{s.path}: {s.reason}" for s in store.skipped]
    source.memories += _index_facts(folder / INDEX_FILENAME, "project")
    return source


# --- Codex -------------------------------------------------------------------------------
def codex_folder() -> Path:
    """Codex's memory folder (one for every project)."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex").expanduser() / "memories"


def read_codex(folder: Path, project: Path) -> Source:
    """MEMORY.md's blocks about this project (or no project in particular), and the profile."""
    source = Source("codex", folder)
    path = folder / INDEX_FILENAME
    text = _read(path, source)
    blocks = _codex_blocks(text) if text else []
    for title, scope, cwds, sections in blocks:
        if cwds and not any(_within(cwd, project) for cwd in cwds):
            source.left_out += 1
            continue
        for heading, bullets in sections:
            source.memories.append(_codex_memory(f"{path}#{title}", title, scope, heading, bullets))
    summary = _read(folder / "memory_summary.md", source, quiet=True)
    profile = dict(_sections(summary or "", "##")).get("User Profile", "").strip()
    if profile:
        _, description = derive_memory(_plain(profile))
        source.memories.append(
            Foreign(
                f"{folder / 'memory_summary.md'}#User Profile",
                "User profile (from Codex)",
                description,
                "user",
                profile,
            )
        )
    return source


def _codex_blocks(text: str) -> list[tuple[str, str, list[str], list[tuple[str, str]]]]:
    """(title, scope, cwds, [(section, bullets)]) of each block of a Codex MEMORY.md."""
    if re.search(r"^# ", text, re.MULTILINE):
        blocks = []
        for title, body in _sections(text, "#"):
            scope = _field(body, "scope")
            sections = [(h, b) for h, b in _sections(body, "##") if _is_lesson(h) and _has_bullets(b)]
            blocks.append((_group_title(title), scope, _CWD.findall(body), sections))
        return blocks
    return _legacy_codex_blocks(text)


def _group_title(title: str) -> str:
    """`Task Group: /home/me/app / billing` -> `billing`: the folder is in `applies_to`."""
    parts = [p.strip() for p in title.removeprefix("Task Group:").split(" / ")]
    named = [p for p in parts if p and not re.match(r"^(?:/|~|[A-Za-z]:\\)", p)]
    return " / ".join(named) or Path(parts[0]).name


def _legacy_codex_blocks(text: str) -> list[tuple[str, str, list[str], list[tuple[str, str]]]]:
    """Blocks headed by `---` / description, keywords, rollout_summary_files / `---`."""
    parts = re.split(r"^---\s*$", text, flags=re.MULTILINE)
    blocks = []
    for header, body in zip(parts[1::2], parts[2::2], strict=False):
        description = _field(header, "description")
        if _has_bullets(body):
            blocks.append((description or "Codex notes", description, _CWD.findall(header), [("Notes", body)]))
    return blocks


def _is_lesson(heading: str) -> bool:
    """Sections that hold lessons (not a task's routing: rollout files, keywords)."""
    return not re.match(r"(task\b|rollout_summary_files|keywords)", heading.strip(), re.IGNORECASE)


def _codex_memory(origin: str, title: str, scope: str, heading: str, bullets: str) -> Foreign:
    kind = "feedback" if re.search(r"preference|failure|differently", heading, re.I) else "project"
    what = f"{title}: {heading}" if title else heading
    description = f"{heading} for {title}" + (f" ({scope})" if scope else "")
    lines = [m.group("text") for line in bullets.splitlines() if (m := _BULLET.match(line))]
    return Foreign(origin, what, description, kind, "\n".join(f"- {t}" for t in lines))


# --- Gemini CLI ----------------------------------------------------------------------------
def gemini_home() -> Path:
    """Gemini CLI's user folder: `$GEMINI_CLI_HOME/.gemini`, default `~/.gemini`."""
    return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()).expanduser() / ".gemini"


def gemini_folder(project: Path) -> Path:
    """The private memory folder Gemini CLI keeps for `project`."""
    home = gemini_home()
    real = os.path.realpath(project)
    registry = _json_value(home / "projects.json", "projects")
    if isinstance(registry, dict) and isinstance(registry.get(real), str):
        return home / "tmp" / str(registry[real]) / "memory"
    for marker in sorted((home / "tmp").glob("*/.project_root")):
        try:
            if os.path.realpath(marker.read_text(encoding="utf-8").strip()) == real:
                return marker.parent / "memory"
        except OSError:
            continue
    return home / "tmp" / hashlib.sha256(real.encode()).hexdigest() / "memory"


def read_gemini(folder: Path, global_file: Path) -> Source:
    """The project's private memory folder, then the global file's `Gemini Added Memories`."""
    source = Source("gemini", folder)
    for path in _markdown_files(folder):
        if path.parent == folder and path.name in (INDEX_FILENAME, "GEMINI.md"):
            source.memories += _index_facts(path, "project")
            continue
        text = _read(path, source)
        if text is not None:
            source.memories.append(_from_text(str(path), text, "project"))
    added = dict(_sections(_read(global_file, source, quiet=True) or "", "##"))
    facts = added.get("Gemini Added Memories", "")
    source.memories += [
        _from_text(f"{global_file}#Gemini Added Memories", fact, "user") for fact in _bullet_texts(facts)
    ]
    if not folder.exists() and facts:
        source.folder = global_file
    return source


def _markdown_files(folder: Path) -> Iterator[Path]:
    """The .md files of a folder and its subfolders, sorted; not hidden, not under skills/."""
    if not folder.is_dir():
        return
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (Path(root) == folder and d == "skills"))
        yield from (Path(root) / f for f in sorted(files) if f.endswith(".md") and not f.startswith("."))


# --- shared ------------------------------------------------------------------------------
def _read(path: Path, source: Source, quiet: bool = False) -> str | None:
    if not path.is_file():
        return None
    text, reason = read_text_head(path, READ_MAX_BYTES)
    if text is None and not quiet:
        source.skipped.append(f"{path}: {reason}")
    return text


def _index_facts(path: Path, kind: str) -> list[Foreign]:
    """The bullets of an index that link no file: facts written straight into it."""
    text, _ = read_text_head(path, READ_MAX_BYTES) if path.is_file() else (None, None)
    if not text:
        return []
    return [
        _from_text(f"{path}:{no}", fact, kind)
        for no, line in enumerate(text.splitlines(), start=1)
        if not parse_index(line) and (fact := _bullet_text(line))
    ]


def _from_text(origin: str, text: str, kind: str) -> Foreign:
    """A memory from plain text (a bullet, a note without frontmatter)."""
    parsed = parse_memory_text(text)
    body = parsed.body.strip() if parsed.ok else text.strip()
    first = next((m.group("title") for line in body.splitlines() if (m := _HEADING.match(line))), "")
    name, description = derive_memory(_plain(first or body))
    if parsed.ok:
        fm = parsed.frontmatter
        return Foreign(origin, str(fm["name"]), str(fm["description"]), str(fm["type"]), body)
    return Foreign(origin, name, description, kind, body)


def _plain(text: str) -> str:
    """Markdown markers off the first lines, for a derived name and description."""
    lines = [re.sub(r"^\s*(?:#+|[-*+]|\d+\.)\s+", "", line) for line in text.splitlines()[:3]]
    return " ".join(line for line in lines if line.strip())


def _bullet_text(line: str) -> str | None:
    m = _BULLET.match(line)
    return m.group("text").strip() if m else None


def _bullet_texts(text: str) -> list[str]:
    return [t for line in text.splitlines() if (t := _bullet_text(line))]


def _has_bullets(text: str) -> bool:
    return bool(_bullet_texts(text))


def _sections(text: str, marker: str) -> list[tuple[str, str]]:
    """(heading, text under it) for each heading of exactly this level (`#`, `##`)."""
    pattern = re.compile(rf"^{re.escape(marker)}\s+(.+?)\s*$", re.MULTILINE)
    found = list(pattern.finditer(text))
    return [
        (m.group(1).strip(), text[m.end() : found[i + 1].start() if i + 1 < len(found) else len(text)])
        for i, m in enumerate(found)
    ]


def _field(text: str, key: str) -> str:
    m = re.search(rf"^\s*{re.escape(key)}\s*:\s*(.+)$", text, re.MULTILINE)
    return m.group(1).strip() if m else ""


def _within(path: str, project: Path) -> bool:
    return within(os.path.realpath(os.path.expanduser(path)), os.path.realpath(project))


def _json_value(path: Path, key: str) -> object:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get(key) if isinstance(data, dict) else None
