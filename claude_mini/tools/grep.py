"""Grep: search file contents with regular expressions, ripgrep style.

Two engines produce the same `_Hits`, which one formatter turns into text:
the `rg` binary (shipped in the venv by the `ripgrep` package) and a pure-Python
fallback for when it is missing. Both honour .gitignore (also outside a git
repository, via --no-require-git), skip hidden files and binary files, and
report absolute paths so the model can pass them straight to Read.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import contextlib
import fnmatch
import json
import os
import re
import shutil
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec

from claude_mini.base.braces import expand_braces, split_outside_braces
from claude_mini.tools import (
    ToolContext,
    ToolError,
    ToolResult,
    bool_arg,
    int_arg,
    opt_str_arg,
    str_arg,
)
from claude_mini.tools.base import NO_READ_DENIALS, ReadDenials
from claude_mini.tools.glob import (
    EntryFilter,
    Verdict,
    denied_note,
    iter_files,
    newest_first,
)

MODES = ("content", "files_with_matches", "count")
MAX_OUTPUT_CHARS = 30_000
MAX_LINE_CHARS = 500
# Caps on what one search may collect before formatting; beyond them results are cut, with a note.
MAX_RG_OUTPUT_BYTES = 20_000_000
MAX_COLLECTED_LINES = 100_000
MAX_FALLBACK_FILE_BYTES = 50_000_000
RG_TIMEOUT_SECONDS = 60.0

# File types for the fallback's `type` filter: ripgrep's names for common languages.
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"),
    "cs": ("*.cs",),
    "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "go": ("*.go",),
    "html": ("*.html", "*.htm"),
    "java": ("*.java",),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"),
    "json": ("*.json", "*.jsonl"),
    "kotlin": ("*.kt", "*.kts"),
    "lua": ("*.lua",),
    "md": ("*.md", "*.markdown", "*.mdx"),
    "markdown": ("*.md", "*.markdown", "*.mdx"),
    "php": ("*.php",),
    "py": ("*.py", "*.pyi"),
    "rb": ("*.rb", "Gemfile", "*.gemspec"),
    "ruby": ("*.rb", "Gemfile", "*.gemspec"),
    "rust": ("*.rs",),
    "scala": ("*.scala", "*.sbt"),
    "sh": ("*.sh", "*.bash", "*.zsh", ".bashrc", ".zshrc"),
    "sql": ("*.sql",),
    "swift": ("*.swift",),
    "toml": ("*.toml",),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "txt": ("*.txt",),
    "xml": ("*.xml", "*.xsd", "*.xsl", "*.svg"),
    "yaml": ("*.yaml", "*.yml"),
}

DESCRIPTION = """\
A powerful content search built on ripgrep.

- Supports full regular expressions (e.g. "log.*Error", "def\\s+\\w+"). Literal braces need \
escaping: use "interface\\{\\}" to find "interface{}".
- path: file or folder to search (default: the current working directory).
- Filter files with glob (e.g. "*.js", "**/*.{ts,tsx}") or type (e.g. "py", "js", "rust"); \
type is more efficient for standard languages.
- output_mode: "files_with_matches" (default) lists matching files, most recently modified \
first; "content" shows matching lines (with -n line numbers by default, -A/-B/-C context); \
"count" shows the number of matching lines per file.
- -i: case-insensitive. multiline: let patterns span lines and `.` match newlines.
- head_limit: show only the first N lines/entries of the output.
- Files ignored by .gitignore, hidden files and binary files are skipped.
- ALWAYS use Grep for content search; do not run grep or rg through Bash."""


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The regular expression to search for"},
            "path": {
                "type": "string",
                "description": "File or folder to search in (default: the current working directory)",
            },
            "glob": {
                "type": "string",
                "description": 'Glob filtering which files are searched, e.g. "*.js" or "*.{ts,tsx}"',
            },
            "type": {
                "type": "string",
                "description": 'File type to search (ripgrep --type), e.g. "py", "js", "rust"',
            },
            "output_mode": {
                "type": "string",
                "enum": list(MODES),
                "description": 'What to show: "content", "files_with_matches" (default) or "count"',
            },
            "-i": {"type": "boolean", "description": "Case-insensitive search"},
            "-n": {
                "type": "boolean",
                "description": "Show line numbers (content mode only, default true)",
            },
            "-A": {"type": "integer", "description": "Lines to show after each match (content mode only)"},
            "-B": {"type": "integer", "description": "Lines to show before each match (content mode only)"},
            "-C": {
                "type": "integer",
                "description": "Lines to show before and after each match (content mode only)",
            },
            "head_limit": {
                "type": "integer",
                "description": "Show only the first N lines or entries of the output",
            },
            "multiline": {
                "type": "boolean",
                "description": "Let patterns span lines; `.` also matches newlines (default false)",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }


class GrepTool:
    """The Grep tool. `use_ripgrep=False` (or no `rg` found) selects the pure-Python engine."""

    name = "Grep"
    description = DESCRIPTION
    read_only = True

    def __init__(self, *, use_ripgrep: bool = True, rg_path: str | None = None) -> None:
        self.input_schema = _schema()
        self.use_ripgrep = use_ripgrep
        self._rg_path = rg_path

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """Nothing to check ahead: a search that finds nothing is an answer, not a failure."""

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Search and format the hits for the requested output mode."""
        query = _Query.from_input(input, ctx)
        rg = self.ripgrep() if self.use_ripgrep else None
        hits = None
        if rg is not None:
            # A broken or missing binary is not the model's problem: fall back quietly.
            with contextlib.suppress(OSError):
                hits = await _search_with_rg(rg, query)
        if hits is None:
            hits = await asyncio.to_thread(_search_in_python, query)
        return _format(query, hits)

    def ripgrep(self) -> str | None:
        """The `rg` binary to use: the venv's (next to the interpreter) first, then PATH."""
        if self._rg_path is None:
            self._rg_path = find_ripgrep() or ""
        return self._rg_path or None


def find_ripgrep() -> str | None:
    """Where `rg` is: the scripts folder of this interpreter (the `ripgrep` wheel), else PATH."""
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(folder, "rg")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("rg")


@dataclass
class _Query:
    """A validated Grep request."""

    pattern: str
    root: Path
    mode: str
    globs: list[str]
    file_type: str | None
    ignore_case: bool
    line_numbers: bool
    before: int
    after: int
    head_limit: int | None
    multiline: bool
    denials: ReadDenials = NO_READ_DENIALS

    @classmethod
    def from_input(cls, input: dict[str, Any], ctx: ToolContext) -> _Query:
        root = ctx.resolve(opt_str_arg(input, "path") or ".")
        if not root.exists():
            raise ToolError(f"Path does not exist: {root}.")
        mode = opt_str_arg(input, "output_mode") or "files_with_matches"
        if mode not in MODES:
            raise ToolError(f"output_mode must be one of {', '.join(MODES)}; got {mode!r}.")
        context = int_arg(input, "-C", 0, minimum=0) or 0
        glob = opt_str_arg(input, "glob")
        return cls(
            pattern=str_arg(input, "pattern"),
            root=root,
            mode=mode,
            globs=split_globs(glob) if glob else [],
            file_type=opt_str_arg(input, "type"),
            ignore_case=bool_arg(input, "-i"),
            line_numbers=bool_arg(input, "-n", True),
            before=int_arg(input, "-B", context, minimum=0) or 0,
            after=int_arg(input, "-A", context, minimum=0) or 0,
            head_limit=int_arg(input, "head_limit", None, minimum=1),
            multiline=bool_arg(input, "multiline"),
            denials=ctx.read_denials,
        )

    @property
    def has_context(self) -> bool:
        return self.before > 0 or self.after > 0


def split_globs(text: str) -> list[str]:
    """'*.py *.pyi' or '*.py,*.pyi' -> two globs; commas inside braces stay ('*.{ts,tsx}')."""
    return [g for part in text.split() for g in split_outside_braces(part) if g]


@dataclass
class _Hits:
    """What a search found, independent of the engine."""

    engine: str
    # content mode: path -> {line number: (text, is_match)}
    lines: dict[str, dict[int, tuple[str, bool]]] = field(default_factory=dict)
    # files_with_matches / count modes: path -> matching line count
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    line_count: int = 0
    denied: int = 0  # candidate files a Read deny rule kept out of the search

    def drop_denied(self, denials: ReadDenials) -> None:
        """Forget every hit in a file a Read deny rule covers (the check that does not trust rg)."""
        for table in (self.lines, self.counts):
            for path in [p for p in table if denials.covers(p)]:
                del table[path]

    def add_line(self, path: str, number: int, text: str, is_match: bool) -> None:
        entries = self.lines.setdefault(path, {})
        if number not in entries:
            self.line_count += 1
        if is_match or number not in entries:
            entries[number] = (text, is_match)


# --- ripgrep -----------------------------------------------------------------


async def _search_with_rg(rg: str, query: _Query) -> _Hits:
    # rg matches --glob against paths relative to its working directory: make that the root.
    cwd = query.root if query.root.is_dir() else query.root.parent
    out, err, code, cut = await _run(_rg_args(rg, query), cwd)
    if code == 2 and not out:
        raise ToolError(f"ripgrep failed: {err.strip() or 'unknown error'}")
    hits = _Hits("ripgrep")
    if query.mode == "content":
        _parse_json(out, hits)
    else:
        _parse_null_separated(out, hits, query.mode)
    if cut:
        hits.notes.append("[The search produced too much output and was stopped early; narrow it.]")
    if query.denials.active:
        hits.drop_denied(query.denials)
        hits.denied = await _count_denied_with_rg(rg, query, cwd)
    return hits


async def _count_denied_with_rg(rg: str, query: _Query, cwd: Path) -> int:
    """How many files the search would have read but for the deny rules.

    Counted from file listings, not from the matches, so the number says nothing
    about what the denied files contain. When rg's exclusions express every rule,
    two listings (with and without them) give the count; otherwise every listed
    path is checked, which costs tens of microseconds a file.
    """
    listing = [*_rg_filters(rg, query), "--files", "--null"]
    target = ["--", str(query.root)]
    out, _, _, _ = await _run([*listing, *target], cwd)
    if query.denials.rg_covers_all(cwd):
        excludes = [f"--glob={g}" for g in query.denials.ripgrep_excludes(cwd)]
        kept, _, _, _ = await _run([*listing, *excludes, *target], cwd)
        return out.count(b"\0") - kept.count(b"\0")
    paths = [_decode_path(raw) for raw in out.split(b"\0") if raw]
    return await asyncio.to_thread(lambda: sum(1 for p in paths if query.denials.covers(p)))


def _rg_filters(rg: str, query: _Query) -> list[str]:
    """rg and the options that choose which files are searched (shared with the deny count)."""
    args = [rg, "--no-config", "--no-messages", "--no-require-git", "--color=never"]
    args += [f"--glob={g}" for g in query.globs]
    if query.file_type:
        args.append(f"--type={query.file_type}")
    return args


def _rg_args(rg: str, query: _Query) -> list[str]:
    # --crlf lets `$` match before "\r\n", as the fallback (which strips "\r") does.
    args = [*_rg_filters(rg, query), "--crlf"]
    # Deny exclusions come after the user's globs: for rg, a later glob wins.
    root = query.root if query.root.is_dir() else query.root.parent
    args += [f"--glob={g}" for g in query.denials.ripgrep_excludes(root)]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.multiline:
        args += ["--multiline", "--multiline-dotall"]
    if query.mode == "files_with_matches":
        args += ["--files-with-matches", "--null"]
    elif query.mode == "count":
        args += ["--count", "--with-filename", "--null"]
    else:
        args += ["--json", f"--before-context={query.before}", f"--after-context={query.after}"]
    return [*args, "--regexp", query.pattern, "--", str(query.root)]


async def _run(args: list[str], cwd: Path) -> tuple[bytes, str, int | None, bool]:
    """Run rg; stdout (capped at MAX_RG_OUTPUT_BYTES), stderr, exit code, and whether it was cut."""
    proc = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
    )
    try:
        out, err, cut = await asyncio.wait_for(_collect(proc), RG_TIMEOUT_SECONDS)
    except TimeoutError:
        raise ToolError(
            f"The search took longer than {RG_TIMEOUT_SECONDS:g} s and was stopped. Narrow it with path, glob or type."
        ) from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    return out, err.decode("utf-8", "replace"), proc.returncode, cut


async def _collect(proc: asyncio.subprocess.Process) -> tuple[bytes, bytes, bool]:
    assert proc.stdout is not None and proc.stderr is not None
    err_task = asyncio.create_task(proc.stderr.read())
    out = bytearray()
    try:
        while chunk := await proc.stdout.read(65536):
            out += chunk
            if len(out) > MAX_RG_OUTPUT_BYTES:
                proc.kill()
                break
        err = await err_task
    finally:
        err_task.cancel()
    cut = len(out) > MAX_RG_OUTPUT_BYTES
    if cut:
        # Drop the partial last record so parsing sees only whole ones.
        del out[out.rfind(b"\n") + 1 :]
    await proc.wait()
    return bytes(out), err, cut


def _parse_null_separated(out: bytes, hits: _Hits, mode: str) -> None:
    """Parse `--files-with-matches --null` ("path\\0...") or `--count --null` ("path\\0N\\n")."""
    if mode == "files_with_matches":
        for raw in out.split(b"\0"):
            if raw:
                hits.counts[_decode_path(raw)] = 1
        return
    for record in out.split(b"\n"):
        raw, sep, number = record.rpartition(b"\0")
        if sep and number.strip().isdigit():
            hits.counts[_decode_path(raw)] = int(number)


def _parse_json(out: bytes, hits: _Hits) -> None:
    """Collect match and context lines from rg's --json messages."""
    for record in out.splitlines():
        try:
            message = json.loads(record)
        except ValueError:
            continue
        kind = message.get("type")
        if kind not in ("match", "context"):
            continue
        data = message["data"]
        path = _json_path(data["path"])
        lines = _json_text(data["lines"]).removesuffix("\n").split("\n")
        for offset, text in enumerate(lines):
            hits.add_line(path, data["line_number"] + offset, text.rstrip("\r"), kind == "match")


def _json_text(value: dict[str, str]) -> str:
    """rg's JSON gives UTF-8 as `text` and anything else as base64 `bytes`."""
    if "text" in value:
        return value["text"]
    return base64.b64decode(value["bytes"]).decode("utf-8", "replace")


def _json_path(value: dict[str, str]) -> str:
    """A path from rg's JSON, non-UTF-8 bytes kept as the file system has them."""
    if "text" in value:
        return value["text"]
    return _decode_path(base64.b64decode(value["bytes"]))


def _decode_path(raw: bytes) -> str:
    return os.fsdecode(raw)


# --- the pure-Python fallback ------------------------------------------------


def _search_in_python(query: _Query) -> _Hits:
    """Search like rg does, walking with .gitignore rules and matching with `re`."""
    flags = re.IGNORECASE if query.ignore_case else 0
    if query.multiline:
        flags |= re.MULTILINE | re.DOTALL
    try:
        regex = re.compile(query.pattern, flags)
    except re.error as exc:
        raise ToolError(f"Invalid regular expression {query.pattern!r}: {exc}.") from None
    hits = _Hits("python")
    for path in _candidate_files(query):
        if query.denials.covers(path):
            hits.denied += 1
            continue
        text = _read_text(path, hits)
        if text is None:
            continue
        matched = _matching_lines(regex, text, query.multiline)
        if matched:
            _record(hits, query, str(path), text, matched)
        if hits.line_count > MAX_COLLECTED_LINES:
            hits.notes.append("[The search produced too much output and was stopped early; narrow it.]")
            break
    return hits


def _candidate_files(query: _Query) -> Iterable[Path]:
    if query.root.is_file():
        return [query.root]  # an explicit file is searched even if ignored, as rg does
    return iter_files(query.root, overrides=_glob_filter(query.globs), types=_type_filter(query.file_type))


def _glob_filter(globs: list[str]) -> EntryFilter | None:
    """rg's --glob: gitignore-style globs, `!` to exclude, that override .gitignore and hiding.

    A file matching an including glob is searched even if ignored; once any including
    glob is given, files matching none are skipped. Folders are only skipped by `!` globs.
    """
    if not globs:
        return None
    try:
        lines = [alt for glob in globs for alt in expand_braces(glob)]
    except ValueError as exc:
        raise ToolError(f"Invalid glob: {exc}.") from None
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    whitelist = any(not line.startswith("!") for line in lines)

    def verdict(relative: str, is_dir: bool) -> Verdict:
        matched = spec.check_file(relative + "/" if is_dir else relative).include
        if matched is None and whitelist and not is_dir:
            return False
        return matched

    return verdict


def _type_filter(file_type: str | None) -> EntryFilter | None:
    """rg's --type: take files whose name fits the type, skip other files, leave folders alone."""
    if not file_type:
        return None
    if file_type not in FILE_TYPES:
        known = ", ".join(sorted(FILE_TYPES))
        raise ToolError(f"Unknown file type {file_type!r}. Known types: {known}.")
    patterns = FILE_TYPES[file_type]

    def verdict(relative: str, is_dir: bool) -> Verdict:
        if is_dir:
            return None
        name = relative.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)

    return verdict


def _read_text(path: Path, hits: _Hits) -> str | None:
    """The file's text, or None for binary, oversized or unreadable files (as rg skips them)."""
    try:
        if path.stat().st_size > MAX_FALLBACK_FILE_BYTES:
            hits.notes.append(f"[Skipped {path}: larger than {MAX_FALLBACK_FILE_BYTES:,} bytes.]")
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def _matching_lines(regex: re.Pattern[str], text: str, multiline: bool) -> list[int]:
    """0-based numbers of the lines a match touches."""
    if not multiline:
        return [i for i, line in enumerate(_lines(text)) if regex.search(line)]
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    if len(starts) > 1 and starts[-1] == len(text):
        starts.pop()  # no line after the final newline
    touched: set[int] = set()
    for match in regex.finditer(text):
        first = bisect.bisect_right(starts, match.start()) - 1
        last = bisect.bisect_right(starts, max(match.start(), match.end() - 1)) - 1
        touched.update(range(first, last + 1))
    return sorted(touched)


def _lines(text: str) -> list[str]:
    if not text:
        return []
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines and lines[-1] == "" and text.endswith("\n"):
        lines.pop()
    return lines


def _record(hits: _Hits, query: _Query, path: str, text: str, matched: list[int]) -> None:
    if query.mode != "content":
        hits.counts[path] = len(matched)
        return
    lines = _lines(text)
    for index in matched:
        for ctx_index in range(max(0, index - query.before), min(len(lines), index + query.after + 1)):
            hits.add_line(path, ctx_index + 1, lines[ctx_index], ctx_index == index)


# --- formatting --------------------------------------------------------------


def _format(query: _Query, hits: _Hits) -> ToolResult:
    if query.mode == "content":
        entries = _content_lines(query, hits)
        summary = ""
    elif query.mode == "count":
        entries = [f"{p}:{n}" for p, n in sorted(hits.counts.items())]
        total = sum(hits.counts.values())
        summary = f"Found {total} matching line{'s' * (total != 1)} in {_files(len(hits.counts))}."
    else:
        entries = [str(p) for p in newest_first(Path(p) for p in hits.counts)]
        summary = f"Found {_files(len(entries))}"
    meta = {
        "engine": hits.engine,
        "mode": query.mode,
        "num_files": len(hits.lines or hits.counts),
        "denied": hits.denied,
    }
    deny_notes = [denied_note(hits.denied)] if hits.denied else []
    if not entries:
        return ToolResult("\n\n".join(["No matches found", *deny_notes]), metadata=meta)
    shown, notes = _limit(entries, query.head_limit)
    meta["truncated"] = bool(notes)
    body = "\n".join(shown)
    after = f"\n\n{summary}" if summary else ""
    text = f"{summary}\n{body}" if query.mode == "files_with_matches" else body + after
    return ToolResult("\n\n".join([text, *notes, *hits.notes, *deny_notes]), metadata=meta)


def _files(n: int) -> str:
    return f"{n} file{'s' * (n != 1)}"


def _content_lines(query: _Query, hits: _Hits) -> list[str]:
    """rg's layout: `path:N:text` for matches, `path-N-text` for context, `--` between groups."""
    out: list[str] = []
    for path in sorted(hits.lines):
        previous = None
        if query.has_context and out:
            out.append("--")
        for number, (text, is_match) in sorted(hits.lines[path].items()):
            if query.has_context and previous is not None and number > previous + 1:
                out.append("--")
            previous = number
            sep = ":" if is_match else "-"
            where = f"{path}{sep}{number}{sep}" if query.line_numbers else f"{path}{sep}"
            out.append(where + _cut(text))
    return out


def _cut(text: str) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]} [... {len(text) - MAX_LINE_CHARS:,} more characters]"


def _limit(entries: list[str], head_limit: int | None) -> tuple[list[str], list[str]]:
    """Apply head_limit, then the character budget; notes say what was left out."""
    total = len(entries)
    shown = entries[:head_limit] if head_limit else entries
    size, kept = 0, 0
    for line in shown:
        size += len(line) + 1
        if size > MAX_OUTPUT_CHARS:
            break
        kept += 1
    shown = shown[:kept]
    if len(shown) == total:
        return shown, []
    why = "head_limit" if head_limit and len(shown) == head_limit else f"the {MAX_OUTPUT_CHARS:,}-character limit"
    return shown, [
        f"[Showing {len(shown)} of {total} lines ({why}). Narrow the search with path, glob "
        "or type, or use head_limit.]"
    ]
