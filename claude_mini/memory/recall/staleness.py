"""Stale memories say so: the repository files, folders and commands a memory names, checked.

A memory written weeks ago may name `src/billing.py`, `make deploy-billing` or
`npm run build:web` when none of them exists any more, or cite a file that was
rewritten since. Recall puts what this finds in the recalled memory's header
("mentions src/x.py, which no longer exists"), and `memory doctor` lists it.
No model is asked: references are found by patterns, checked with a stat, the
Makefile's targets and package.json's scripts; for files that exist, one
`git log --since=<memory's mtime> --numstat` call counts what changed since
(capped by a timeout; outside git, or without git, that part is skipped).

What counts as a reference is deliberately narrow, since a wrong warning costs
more than a missed one: a relative path with a `/` whose last part has an
extension (`src/x.py`, `./scripts/deploy.sh`), a folder ending in `/` (`web/`
in backticks, `src/legacy/` anywhere), `make TARGET`, `npm|pnpm|yarn|bun run
SCRIPT`, and a script run by name (`python manage.py`, `bash deploy.sh`). Not
references: URLs and domains (`grafana.internal/d/x.json`), absolute and home
paths, `..`, globs and placeholders (`path/to/file.py`, `foo/bar.py`, `<x>/y.py`),
paths said to be examples ("e.g. src/a.py"), words like `and/or` or
`client/server`, and build output (`dist/`, `node_modules/`, `.venv/`). A path
missing at the root that git tracks deeper (`models/user.py` for
`app/models/user.py`) is not missing.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from claude_mini.base.gitrun import git_output
from claude_mini.memory.store.topic import field_text, parse_memory_text

GIT_TIMEOUT_S = 2.0  # per git call: past it, the check goes without what git would add
CHANGED_LINES_ALWAYS = 200  # lines added + deleted since the memory that count as "a lot"...
CHANGED_LINES_MIN = 40  # ...or at least this many and CHANGED_SHARE of the file's size now
CHANGED_SHARE = 0.5
MAX_REASONS = 3  # in a recalled memory's header
CONFIG_READ_BYTES = 256 * 1024  # of a Makefile or package.json

GENERATED_DIRS = frozenset(
    {
        "node_modules",
        "dist",
        "build",
        "out",
        "target",
        "coverage",
        "tmp",
        "__pycache__",
        ".venv",
        "venv",
        ".git",
        ".next",
        ".cache",
        ".tox",
        ".pytest_cache",
        ".mypy_cache",
    }
)
PLACEHOLDER_PARTS = frozenset(
    {"foo", "bar", "baz", "qux", "your", "yours", "some", "example", "something", "somewhere", "xxx"}
)
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_DOMAIN = re.compile(r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$")
_PART = re.compile(r"^[\w.@+-]+$")
_TOKEN = re.compile(r"[^\s`'\"()<>\[\]{},;|]+")
_CODE_SPAN = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)|`([^`\n]+)`", re.DOTALL)
_EXAMPLE_CUE = re.compile(r"\b(?:e\.g\.|i\.e\.|for example|for instance|such as|like)[\s:,(`'\"]*$", re.IGNORECASE)
# `make [flags] TARGET`; with -C/-f/--directory/--file it is another Makefile: not checked.
_MAKE = re.compile(r"(?<![\w-])make((?:\s+-[\w=-]+)*)\s+([A-Za-z_][\w.:/-]*)")
_OTHER_MAKEFILE = re.compile(r"\s-(?:C|f|-directory|-file)\b")
_MAKE_VERB = re.compile(r"(?:run|runs|running|use|using|via|with|then|try)\s*$", re.IGNORECASE)
_RUN_SCRIPT = re.compile(r"(?<![\w-])(?:npm|pnpm|yarn|bun)\s+run(?:-script)?\s+([\w:.@/-]+)")
_SCRIPT_FILE = re.compile(
    r"(?<![\w-])(?:python3?|bash|sh|zsh|node|ruby|perl|tsx|ts-node|uv\s+run|poetry\s+run|"
    r"pdm\s+run)\s+(?:-\S+\s+)*(\.?/?[\w.-]+\.(?:py|sh|js|mjs|cjs|ts|rb|pl))(?![\w/])"
)
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_MAKE_RULE = re.compile(r"^([^\s:#=][^:#=]*?)\s*::?(?!=)")


@dataclass(frozen=True)
class Reference:
    """One thing of the repository a memory names: a file, a folder, a make target, a script."""

    kind: str  # path | folder | make | npm
    target: str  # a path relative to the repository, or the target's / script's name
    shown: str  # as the user reads it: `src/x.py`, `make deploy`, `npm run build`


# --- finding references (pure) -------------------------------------------------------
def memory_text(text: str) -> str:
    """What of a memory file is searched: its name, description and body (not the other
    frontmatter fields, such as `source` or `supersedes`)."""
    parsed = parse_memory_text(text)
    fm = parsed.frontmatter
    return "\n".join(p for p in (field_text(fm, "name"), field_text(fm, "description"), parsed.body) if p)


def find_references(text: str) -> list[Reference]:
    """The repository references in `text`, each once, in the order they appear."""
    found: list[tuple[int, Reference]] = []
    for m in _CODE_SPAN.finditer(text):
        group = 1 if m.group(1) is not None else 2
        found += _references_in(m.group(group), text, m.start(group), in_code=True)
    prose = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)
    found += _references_in(prose, text, 0, in_code=False)
    unique: dict[tuple[str, str], Reference] = {}
    for _, ref in sorted(found, key=lambda item: item[0]):
        unique.setdefault((ref.kind, ref.target), ref)
    return list(unique.values())


def _references_in(chunk: str, whole: str, offset: int, *, in_code: bool) -> list[tuple[int, Reference]]:
    """(position in `whole`, reference) of each reference in `chunk`, which starts at `offset`."""
    out: list[tuple[int, Reference]] = []
    for m in _TOKEN.finditer(chunk):
        if _EXAMPLE_CUE.search(whole[max(0, offset + m.start() - 20) : offset + m.start()]):
            continue
        ref = path_reference(m.group(0), in_code=in_code)
        if ref is not None:
            out.append((offset + m.start(), ref))
    for m in _MAKE.finditer(chunk):
        target = m.group(2).rstrip(".:")
        if _OTHER_MAKEFILE.search(m.group(1)):
            continue
        if in_code or re.search(r"[-_:]", target) or _MAKE_VERB.search(chunk[: m.start()]):
            out.append((offset + m.start(), Reference("make", target, f"make {target}")))
    for m in _RUN_SCRIPT.finditer(chunk):
        script = m.group(1).rstrip(".")
        shown = f"npm run {script}" if m.group(0).startswith("npm") else m.group(0)
        out.append((offset + m.start(), Reference("npm", script, shown)))
    for m in _SCRIPT_FILE.finditer(chunk):
        ref = path_reference(m.group(1), in_code=True, bare_ok=True)
        if ref is not None:
            out.append((offset + m.start(1), ref))
    return out


def path_reference(token: str, *, in_code: bool = False, bare_ok: bool = False) -> Reference | None:
    """The Reference a token is, if it is a path of the repository (see the module docstring)."""
    t = token.strip().rstrip(".,:;!?)")
    t = re.sub(r"(?::\d+){1,2}$|#.*$", "", t)  # src/x.py:42, src/x.py#L10
    if (
        not t
        or "://" in t
        or "@" in t
        or t.startswith(("/", "~", "$", "-", "www.", "../"))
        or any(c in t for c in "*?$%{}<>\\=")
    ):
        return None
    t = t.removeprefix("./")
    folder = t.endswith("/")
    parts = t.rstrip("/").split("/")
    if not all(p and p not in (".", "..") and _PART.match(p) for p in parts):
        return None
    if len(parts) == 1 and not (bare_ok or (folder and in_code) or token.startswith("./")):
        return None
    if (
        (_DOMAIN.match(parts[0]) and not parts[0].startswith(".") and len(parts) > 1)
        or parts[0] in GENERATED_DIRS
        or "path/to" in t.lower()
        or any(p.lower() in PLACEHOLDER_PARTS for p in parts)
    ):
        return None
    if folder:
        if len(parts) == 1 and not in_code:
            return None
        return Reference("folder", "/".join(parts), "/".join(parts) + "/")
    if not _EXTENSION.search(parts[-1]) or parts[-1].startswith("."):
        return None
    return Reference("path", t, t)


# --- checking them -------------------------------------------------------------------
@dataclass(frozen=True)
class Change:
    """What git says changed in one file since a memory was written."""

    lines: int  # added + deleted
    commits: int


def stale_reasons(text: str, mtime: float, roots: Sequence[Path], *, timeout: float = GIT_TIMEOUT_S) -> list[str]:
    """Why a memory's text may be stale: `mentions src/x.py, which no longer exists`, ...

    `roots[0]` is the repository (git runs there); later roots (the working folder) are
    other places a relative path may start from. Never raises, never asks a model.
    """
    return stale_memories({"": (text, mtime)}, roots, timeout=timeout).get("", [])


def stale_memories(
    texts: Mapping[str, tuple[str, float]], roots: Sequence[Path], *, timeout: float = GIT_TIMEOUT_S
) -> dict[str, list[str]]:
    """name -> reasons for each stale memory of `texts` (name -> (text, mtime)).

    However many memories, at most two git calls: one `ls-files` for the paths missing at
    the roots, one `log --numstat` for every file they cite (since the oldest memory; each
    memory counts only the commits after its own time).
    """
    if not roots:
        return {}
    refs = {name: r for name, (text, _) in texts.items() if (r := find_references(memory_text(text)))}
    absent = [
        ref.target
        for rs in refs.values()
        for ref in rs
        if ref.kind in ("path", "folder") and _locate(ref, roots) is None
    ]
    deeper = tracked_elsewhere(roots[0], list(dict.fromkeys(absent)), timeout) if absent else set()
    checked = {name: check_references(rs, roots, deeper) for name, rs in refs.items()}
    cited = list(dict.fromkeys(f for _, files in checked.values() for f in files))
    since = min((texts[n][1] for n, (_, files) in checked.items() if files), default=0.0)
    history = git_history(roots[0], cited, since, timeout) if cited else {}
    out = {}
    for name, (missing, files) in checked.items():
        mtime = texts[name][1]
        reasons = [missing_phrase(ref, why) for ref, why in missing]
        reasons += [
            changed_phrase(f, c)
            for f in files
            if (c := change_since(history.get(f, []), mtime)) is not None and changed_a_lot(c, roots[0] / f)
        ]
        if reasons:
            out[name] = reasons
    return out


def check_references(
    refs: Iterable[Reference], roots: Sequence[Path], deeper: Collection[str]
) -> tuple[list[tuple[Reference, str]], list[str]]:
    """(missing references with why, the existing files relative to roots[0] whose history
    may be checked); `deeper` are the missing paths git tracks deeper in the tree."""
    root = roots[0].resolve()
    missing: list[tuple[Reference, str]] = []
    files: list[str] = []
    for ref in refs:
        if ref.kind in ("path", "folder"):
            found = _locate(ref, roots)
            if found is None and ref.target not in deeper:
                missing.append((ref, "gone"))
            elif found is not None and ref.kind == "path" and found.resolve().is_relative_to(root):
                files.append(found.resolve().relative_to(root).as_posix())
        elif why := _command_problem(ref, roots):
            missing.append((ref, why))
    return missing, list(dict.fromkeys(files))


def _locate(ref: Reference, roots: Sequence[Path]) -> Path | None:
    """Where a path or folder reference is, under the first root that has it."""
    return next((base / ref.target for base in roots if _exists(base / ref.target, ref.kind == "folder")), None)


def _exists(path: Path, folder: bool) -> bool:
    try:
        return path.is_dir() if folder else path.exists()
    except OSError:
        return False


def _command_problem(ref: Reference, roots: Sequence[Path]) -> str | None:
    """Why a make target / npm script is defined in no root's Makefile / package.json, or None
    (it is, or no root has a file that could tell)."""
    known = False
    for base in roots:
        names = make_targets(base) if ref.kind == "make" else package_scripts(base)
        if names is None:
            continue  # no Makefile / package.json here, or one we cannot be sure about
        if any(fnmatch.fnmatchcase(ref.target, n.replace("%", "*")) for n in names):
            return None
        known = True
    if not known:
        return None
    return "no_target" if ref.kind == "make" else "no_script"


def make_targets(base: Path) -> list[str] | None:
    """The targets of `base`'s Makefile; None without one, or when it includes others or
    builds target names from variables (then nobody can tell a missing target cheaply)."""
    text = next((t for name in _MAKEFILES if (t := _read(base / name)) is not None), None)
    if text is None:
        return None
    targets: list[str] = []
    for line in text.splitlines():
        if re.match(r"\s*-?s?include\s", line):
            return None
        m = _MAKE_RULE.match(line)
        if m is None:
            continue
        if "$" in m.group(1):
            return None
        targets += m.group(1).split()
    return targets


def package_scripts(base: Path) -> list[str] | None:
    """The `scripts` of `base`'s package.json; None without one, one that is not JSON, or a
    workspace root (a script may then live in any of its packages)."""
    text = _read(base / "package.json")
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        return None
    if isinstance(data, dict) and ("workspaces" in data or (base / "pnpm-workspace.yaml").exists()):
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return list(scripts) if isinstance(scripts, dict) else ([] if isinstance(data, dict) else None)


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(CONFIG_READ_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


# --- git ----------------------------------------------------------------------------
def tracked_elsewhere(root: Path, paths: Sequence[str], timeout: float = GIT_TIMEOUT_S) -> set[str]:
    """The `paths` that git tracks deeper in the tree (`a/b.py` as `pkg/a/b.py`): one call."""
    specs = [f":(glob)**/{p}" for p in paths] + [f":(glob)**/{p}/**" for p in paths]
    out = git_output(root, ["ls-files", "-z", "--", *specs], timeout)
    if not out:
        return set()
    tracked = [f for f in out.split("\0") if f]
    return {p for p in paths if any(f.endswith("/" + p) or f"/{p}/" in f"/{f}" for f in tracked)}


def git_history(
    root: Path, files: Sequence[str], since: float, timeout: float = GIT_TIMEOUT_S
) -> dict[str, list[tuple[float, int]]]:
    """file -> [(commit time, lines added + deleted)] of the commits after `since` that touched
    it; one `git log --numstat` call; {} outside git or when it fails or is too slow."""
    if not files:
        return {}
    out = git_output(
        root,
        ["log", f"--since=@{int(since)}", "--no-renames", "--relative", "--numstat", "--format=%x1e%ct", "--", *files],
        timeout,
    )
    return parse_numstat(out) if out else {}


def parse_numstat(out: str) -> dict[str, list[tuple[float, int]]]:
    """`git log --format=%x1e%ct --numstat` output as file -> [(commit time, lines)]."""
    history: dict[str, list[tuple[float, int]]] = {}
    for commit in out.split("\x1e")[1:]:
        lines = commit.strip("\n").split("\n")
        try:
            when = float(lines[0])
        except ValueError:
            continue
        for line in lines[1:]:
            parts = line.split("\t", 2)
            if len(parts) != 3:
                continue
            added, deleted, path = parts
            count = (int(added) if added.isdigit() else 0) + (int(deleted) if deleted.isdigit() else 0)
            history.setdefault(path, []).append((when, count))
    return history


def change_since(history: Iterable[tuple[float, int]], since: float) -> Change | None:
    """The lines and commits of `history` after `since` (None when there are none)."""
    after = [lines for when, lines in history if when > since]
    return Change(sum(after), len(after)) if after else None


def changed_a_lot(change: Change, path: Path) -> bool:
    """CHANGED_LINES_ALWAYS lines, or CHANGED_LINES_MIN and CHANGED_SHARE of the file now."""
    if change.lines >= CHANGED_LINES_ALWAYS:
        return True
    if change.lines < CHANGED_LINES_MIN:
        return False
    text = _read(path)
    size = text.count("\n") + 1 if text else 1
    return change.lines >= CHANGED_SHARE * size


# --- words ---------------------------------------------------------------------------
def missing_phrase(ref: Reference, why: str) -> str:
    """`mentions src/x.py, which no longer exists` and its kin for folders and commands."""
    if why == "no_target":
        return f"mentions `{ref.shown}`, but the Makefile has no {ref.target} target"
    if why == "no_script":
        return f"mentions `{ref.shown}`, but package.json has no {ref.target} script"
    return f"mentions {ref.shown}, which no longer exists"


def changed_phrase(file: str, change: Change) -> str:
    """`cites app/models.py, which changed a lot since (412 lines in 9 commits)`."""
    commits = "1 commit" if change.commits == 1 else f"{change.commits} commits"
    return f"cites {file}, which changed a lot since ({change.lines} lines in {commits})"


def header_line(reasons: Sequence[str]) -> str:
    """The line a recalled memory's header gets: `Possibly stale: it mentions ...; check ...`."""
    shown = list(reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        shown.append(f"and {len(reasons) - MAX_REASONS} more")
    return f"Possibly stale: it {'; it '.join(shown)}. Check before relying on it."
