"""`@path` mentions: completing them at the prompt and attaching the files to the message sent.

`@src/app.py` (or `@"my notes.md"`) appends the file's contents to the message as
`<attached-file path=...>`; a folder attaches its listing. `@shot.png` (png, jpg, gif,
webp) and `@spec.pdf` go as an image or a document block beside the text, and so does an
image whose path was pasted (dragged in from a file manager: `/tmp/Shot 1.png`, quoted or
with a backslash before each space). A path outside the project and its added folders (--add-dir), ignored by
.gitignore, denied by a Read rule, binary, broken or missing is not attached: the user is
warned and the message is sent without it. An attached
file counts as read, so the model may Edit it without reading it again.
Completion lists the files git would track (`ProjectFiles`) and the slash
commands.

`@server:uri` names a resource of a connected MCP server: its text is attached
as `<attached-resource server=... uri=...>`; one that cannot be read is a warning and the
message is sent without it. Completion lists the resources the servers listed when they
connected.
"""

from __future__ import annotations

import builtins
import os
import re
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.document import Document

from claude_mini.base.gitrun import run_git
from claude_mini.base.safe_read import Unreadable, location_refusal, read_file
from claude_mini.command_table import CommandTable, builtin_table

if TYPE_CHECKING:
    from claude_mini.llm.messages import MediaBlock
    from claude_mini.runtime import Runtime

MAX_ATTACH_CHARS = 100_000
ATTACH_READ_BYTES = 4 * MAX_ATTACH_CHARS  # enough bytes for that many characters of any UTF-8
MAX_LISTED_FILES = 20_000


MENTION = re.compile(r'(?<![\w@/])@(?:"([^"\n]+)"|([^\s"]+))')
# A pasted image path: quoted, or unquoted with `\ ` for spaces; absolute, `~/` or file://.
PASTED_IMAGE = re.compile(
    r"""(?<![\w@])(?:'((?:/|~/|file://)[^'\n]+)'|"((?:/|~/|file://)[^"\n]+)"|((?:/|~/|file://)(?:\\ |[^\s'"])+))""",
)
MEDIA_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf")
TRAILING = ",.;:!?)]}'"


@dataclass
class Mentions:
    """A message with its @files attached, the warnings to show and the files read."""

    text: str
    warnings: list[str] = field(default_factory=list)
    read: list[Path] = field(default_factory=list)
    media: list[MediaBlock] = field(default_factory=list)
    attached: list[str] = field(default_factory=list)  # "shot.png (PNG 800x600)", for the user


def expand_mentions(
    text: str,
    *,
    cwd: Path,
    project_root: Path,
    ignored: Callable[[Path], bool],
    read_denied: Callable[[str], str | None] = lambda _: None,
    servers: Collection[str] = (),
    roots: Sequence[Path] = (),
    media: bool = False,
) -> Mentions:
    """Append the contents of every `@path` in `text`; a path that cannot be attached gets a
    warning. `@server:uri` of one of `servers` is a resource, left to `attach_resources`.
    `roots`: added folders mentions may name besides the project; `media`: images and PDFs
    become blocks (else they are refused as binary)."""
    out = Mentions(text)
    seen: set[Path] = set()
    for match in MENTION.finditer(text):
        raw = match.group(1) or match.group(2)
        if _resource_mention(raw, servers):
            continue
        path = _mention_path(raw, cwd)
        if path in seen:
            continue
        seen.add(path)
        shown = match.group(0)
        problem = _mention_problem(path, shown, [project_root, cwd, *roots], ignored, read_denied, media)
        if problem:
            out.warnings.append(f"{problem}; sent without it.")
            continue
        if media and _is_media(path):
            _attach_media(out, path, shown)
            continue
        try:
            out.text += "\n\n" + _attachment(path, cwd)
        except Unreadable as exc:  # it changed since the checks above (a FIFO, a link swapped in)
            out.warnings.append(f"{shown} was not attached ({exc}); sent without it.")
            continue
        if path.is_file():
            out.read.append(path)
    return out


def _mention_path(raw: str, cwd: Path) -> Path:
    """The absolute path of a mention; trailing punctuation is dropped unless it names a file."""
    candidates = [raw, raw.rstrip(TRAILING)]
    paths_ = [Path(os.path.abspath(cwd / Path(c).expanduser())) for c in candidates if c]
    return next((p for p in paths_ if p.exists()), paths_[-1] if paths_ else cwd)


def _mention_problem(
    path: Path,
    shown: str,
    folders: Sequence[Path],
    ignored: Callable[[Path], bool],
    read_denied: Callable[[str], str | None],
    media: bool,
) -> str | None:
    real = Path(os.path.realpath(path))
    roots = [Path(os.path.realpath(folder)) for folder in folders]
    if not any(real == root or root in real.parents for root in roots):
        return f"{shown} is outside the project"
    if not path.exists():
        return f"{shown} does not exist"
    denied = read_denied(str(path))
    if denied:
        return f"{shown} may not be read ({denied})"
    if ignored(path):
        return f"{shown} is ignored by .gitignore (ask the model to Read it if you need it)"
    refused = location_refusal(str(path), str(real))  # a command's `@.env` or `@link-to-/proc/...`
    if refused:
        return f"{shown} was not attached: {refused}"
    if path.is_file() and not (media and _is_media(path)) and _is_binary(path):
        return f"{shown} is a binary file"
    if not (path.is_file() or path.is_dir()):
        return f"{shown} is not a regular file"
    return None


def _is_media(path: Path) -> bool:
    return path.suffix.lower() in MEDIA_SUFFIXES


def _attach_media(out: Mentions, path: Path, shown: str) -> None:
    """An image or PDF as a block beside the text; a broken one is a warning."""
    from claude_mini.tools.base import ToolError  # startup: tools load after the first paint
    from claude_mini.tools.media import is_image_path, load_image, load_pdf  # startup: as above

    try:
        loaded = load_image(path, path.name) if is_image_path(path) else load_pdf(path, path.name, None)
    except ToolError as exc:
        out.warnings.append(f"{shown} was not attached: {str(exc).removesuffix(' nothing sent.')} sent without it.")
        return
    out.media.append(loaded.block)
    out.attached.append(f"{path.name} ({loaded.summary})")
    out.read.append(path)


def pasted_images(text: str, read_denied: Callable[[str], str | None]) -> Mentions:
    """The images whose paths were pasted into `text` (a file dragged into the terminal): blocks
    beside the text, which stays as typed. Anywhere on disk, as the user named it, but never a
    credential or a Read-denied file."""
    out = Mentions(text)
    seen: set[Path] = set()
    for match in PASTED_IMAGE.finditer(text):
        raw = next(g for g in match.groups() if g).removeprefix("file://").replace("\\ ", " ")
        path = Path(os.path.abspath(Path(raw).expanduser()))
        if path in seen or path.suffix.lower() not in MEDIA_SUFFIXES[:-1] or not path.is_file():
            continue
        seen.add(path)
        refused = read_denied(str(path)) or location_refusal(str(path), os.path.realpath(path))
        if refused:
            out.warnings.append(f"{path.name} was not attached ({refused}); sent without it.")
            continue
        _attach_media(out, path, path.name)
    return out


def _is_binary(path: Path) -> bool:
    from claude_mini.tools.read import (  # startup: tools load after the first paint
        BINARY_EXTENSIONS,
        SNIFF_BYTES,
        sniff_encoding,
    )

    if path.suffix.lower().lstrip(".") in BINARY_EXTENSIONS:
        return True
    try:
        return sniff_encoding(read_file(path, SNIFF_BYTES, cut=True)[:SNIFF_BYTES]) is None
    except (OSError, Unreadable):
        return True


def _attachment(path: Path, cwd: Path) -> str:
    """`<attached-file path=...>contents</attached-file>` (a folder attaches its listing)."""
    name = os.path.relpath(path, cwd)
    if path.is_dir():
        entries = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
        body = "\n".join(entries[:200]) + (f"\n… {len(entries) - 200} more" if len(entries) > 200 else "")
        return f'<attached-folder path="{name}">\n{body}\n</attached-folder>'
    # The shared reader: a capped, non-blocking read of a regular file (Unreadable otherwise).
    data = read_file(path, ATTACH_READ_BYTES, cut=True)
    text = data[:ATTACH_READ_BYTES].decode("utf-8", errors="replace")
    note = ""
    if len(data) > ATTACH_READ_BYTES or len(text) > MAX_ATTACH_CHARS:
        total = f"more than {len(text):,}" if len(data) > ATTACH_READ_BYTES else f"{len(text):,}"
        note = f"\n[truncated: the first {MAX_ATTACH_CHARS:,} of {total} characters; Read the rest]"
        text = text[:MAX_ATTACH_CHARS]
    return f'<attached-file path="{name}">\n{text.rstrip(chr(10))}{note}\n</attached-file>'


class ProjectFiles:
    """Files under the working directory that .gitignore does not exclude (for @ completion)."""

    def __init__(self, cwd: Path, ttl: float = 10.0) -> None:
        self.cwd = cwd
        self.ttl = ttl
        self._cache: tuple[float, list[str]] | None = None
        self._spec: Any = None

    def list(self) -> builtins.list[str]:
        """Relative paths of files and folders (folders end in '/'), cached for `ttl` seconds."""
        now = time.monotonic()
        if self._cache is None or now - self._cache[0] > self.ttl:
            files = self._git_files()
            files = self._walk_files() if files is None else files
            folders = {str(Path(f).parent) + "/" for f in files if "/" in f}
            self._cache = (now, sorted(folders) + files)
        return self._cache[1]

    def _git_files(self) -> builtins.list[str] | None:
        out = run_git(self.cwd, ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], timeout=5)
        if out is None or out.returncode != 0:
            return None
        names = out.stdout.decode("utf-8", "replace").split("\0")
        return sorted({n for n in names if n})[:MAX_LISTED_FILES]

    def _walk_files(self) -> builtins.list[str]:
        found: builtins.list[str] = []
        for folder, dirs, files in os.walk(self.cwd):
            rel = os.path.relpath(folder, self.cwd)
            dirs[:] = sorted(d for d in dirs if d != ".git" and not self._spec_ignores(os.path.join(rel, d) + "/"))
            found += [
                os.path.normpath(os.path.join(rel, f))
                for f in sorted(files)
                if not self._spec_ignores(os.path.join(rel, f))
            ]
            if len(found) >= MAX_LISTED_FILES:
                break
        return found[:MAX_LISTED_FILES]

    def _spec_ignores(self, rel: str) -> bool:
        if self._spec is None:
            import pathspec

            ignore = self.cwd / ".gitignore"
            lines = ignore.read_text(errors="replace").splitlines() if ignore.is_file() else []
            self._spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return bool(self._spec.match_file(os.path.normpath(rel) + ("/" if rel.endswith("/") else "")))

    def is_ignored(self, path: Path) -> bool:
        """Whether git (or, outside git, the folder's .gitignore) ignores `path`."""
        out = run_git(self.cwd, ["check-ignore", "-q", "--", str(path)], timeout=5)
        if out is not None and out.returncode in (0, 1):
            return out.returncode == 0
        return self._spec_ignores(os.path.relpath(path, self.cwd) + ("/" if path.is_dir() else ""))


class ReplCompleter(Completer):
    """Completes `/commands` (of the session's table, from `table`) at the start of the input and
    `@paths` (and `@server:uri` resources, from `resources`: (mention, description) pairs) anywhere."""

    def __init__(
        self,
        files: ProjectFiles,
        limit: int = 40,
        resources: Callable[[], builtins.list[tuple[str, str]]] = lambda: [],
        table: Callable[[], CommandTable] = builtin_table,
    ) -> None:
        self.files = files
        self.limit = limit
        self.resources = resources
        self.table = table

    def get_completions(self, document: Document, complete_event: Any) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and not any(ch.isspace() for ch in before):
            typed = before[1:].lower()
            for cmd in self.table().all():
                # The name, else the first alias that fits (`/frontend:c` -> `/frontend:component`).
                name = next((n for n in (cmd.name, *cmd.aliases) if n.startswith(typed)), None)
                if name is not None:
                    yield Completion("/" + name, -len(before), display_meta=cmd.help)
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            listed = dict(self.resources())
            for mention in rank_resources(sorted(listed), word[1:])[: self.limit]:
                yield Completion(f"@{mention}", -len(word), display=mention, display_meta=listed[mention])
            for path in rank_paths(self.files.list(), word[1:].lstrip('"'))[: self.limit]:
                text = f'@"{path}"' if " " in path else f"@{path}"
                yield Completion(text, -len(word), display=path)


def rank_paths(paths_: Sequence[str], query: str) -> list[str]:
    """Paths matching `query`: path prefix first, then file-name prefix, then anywhere."""
    q = query.lower()
    groups: tuple[list[str], list[str], list[str]] = ([], [], [])
    for path in paths_:
        low = path.lower()
        if low.startswith(q):
            groups[0].append(path)
        elif os.path.basename(low.rstrip("/")).startswith(q):
            groups[1].append(path)
        elif q in low:
            groups[2].append(path)
    return [*groups[0], *groups[1], *groups[2]]


def rank_resources(mentions: Sequence[str], query: str) -> list[str]:
    """`server:uri` mentions matching `query` as a path would, or whose uri holds the part of
    the query after `server:` (`@demo:read` finds `demo:demo://readme`)."""
    server, colon, rest = query.lower().partition(":")
    found = rank_paths(mentions, query)
    return found + [
        m
        for m in mentions
        if m not in found and colon and m.lower().startswith(server + ":") and rest in m.lower().partition(":")[2]
    ]


def attach_mentions(
    text: str,
    runtime: Runtime,
    *,
    project_root: Path,
    files: ProjectFiles,
    warn: Callable[[str], None],
    media: list[MediaBlock] | None = None,
    note: Callable[[str], None] = lambda _: None,
) -> str:
    """The message to send for `text`: its @files attached (each recorded as read), `warn` told
    about each one left out. With `media`, @images and @PDFs and pasted image paths go there as
    blocks (`note` names each), else they are refused as binary."""
    from claude_mini.tools.read import record_read  # startup: tools load after the first paint
    from claude_mini.ui.mcp_commands import connections  # startup: MCP loads after the first paint

    found = expand_mentions(
        text,
        cwd=runtime.agent.ctx.cwd,
        project_root=project_root,
        ignored=files.is_ignored,
        read_denied=runtime.policy.read_denied,
        servers=connections(runtime),
        roots=runtime.policy.rules.roots,
        media=media is not None,
    )
    pasted = pasted_images(text, runtime.policy.read_denied) if media is not None else Mentions(text)
    for warning in found.warnings + pasted.warnings:
        warn(warning)
    for path in found.read + pasted.read:
        record_read(runtime.agent.ctx, path, path.stat().st_mtime)
    if media is not None:
        media += found.media + pasted.media
        for name in found.attached + pasted.attached:
            note(f"Attached {name}")
    return found.text


def _resource_mention(raw: str, servers: Collection[str]) -> tuple[str, str] | None:
    """(server, uri) when `raw` (a mention without its @) is `server:uri` of one of `servers`."""
    server, colon, uri = raw.partition(":")
    return (server, uri) if colon and uri and server in servers else None


async def attach_resources(text: str, runtime: Runtime, *, warn: Callable[[str], None]) -> str:
    """The attachments for the `@server:uri` mentions in `text` ('' if none); `warn` is told
    about each one that could not be read."""
    from claude_mini.mcp_servers import extras  # startup: MCP loads after the first paint
    from claude_mini.mcp_servers.client import McpError  # startup: MCP loads after the first paint
    from claude_mini.ui.mcp_commands import connections  # startup: MCP loads after the first paint

    conns = connections(runtime)
    attached: builtins.list[str] = []
    seen: set[tuple[str, str]] = set()
    for match in MENTION.finditer(text):
        found = _resource_mention(match.group(1) or match.group(2), conns)
        if found is None or found in seen:
            continue
        seen.add(found)
        server, uri = found
        listing = extras.cached(conns[server])
        listed = {r.uri for r in listing.resources} if listing is not None else set()
        if uri not in listed and uri.rstrip(TRAILING) in listed:
            uri = uri.rstrip(TRAILING)  # `see @demo:demo://readme.`
        try:
            body = await extras.read_resource(conns[server], uri)
        except McpError as exc:
            warn(f"@{server}:{uri} was not attached ({exc}); sent without it.")
            continue
        attached.append(
            f'\n\n<attached-resource server="{server}" uri="{uri}">\n{body.rstrip(chr(10))}\n</attached-resource>'
        )
    return "".join(attached)
