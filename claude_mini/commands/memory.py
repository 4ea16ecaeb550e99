"""`claude-mini memory` and the REPL's /memory: look at, add, edit and repair memories.

The actions are plain functions that return lines or data and raise `MemoryCommandError` with a
one-line message; subcommands/memory_cli.py and ui/memory_commands.py only parse arguments and
print. Nothing here calls a model or imports the anthropic SDK, so every command answers at once.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from claude_mini.base import paths
from claude_mini.base.fileutil import atomic_write, locked, os_error_text
from claude_mini.base.text import clip, human_age, visible_controls
from claude_mini.commands import forget as forgetting
from claude_mini.commands import team as team_memory
from claude_mini.config import Config, load_config
from claude_mini.memory.extract.supersede import Guess, apply_link, guess_replaced, link_problem
from claude_mini.memory.instructions import load_instructions
from claude_mini.memory.maintenance.doctor import description_problem, doctor, fix
from claude_mini.memory.maintenance.forget import duplicate_findings
from claude_mini.memory.recall.staleness import stale_memories
from claude_mini.memory.secrets.scan import describe_findings, find_secrets
from claude_mini.memory.store import (
    INDEX_FILENAME,
    MEMORY_TYPES,
    MemoryRecord,
    MemoryStore,
    MemoryStoreError,
    derive_memory,
    format_memory,
    index_line,
    iso_utc,
    not_a_file,
    parse_memory_text,
    read_text_head,
)
from claude_mini.memory.store.links import record_links, successor_of
from claude_mini.memory.team import TeamTier, team_tier

LIST_DESCRIPTION_CHARS = 70
SHOW_MAX_BYTES = 1024 * 1024
DOCTOR_GIT_TIMEOUT_S = 10.0  # doctor checks every memory at once; recall's calls stop sooner
DISABLE_ENV = "CLAUDE_MINI_DISABLE_AUTO_MEMORY"


class MemoryCommandError(Exception):
    """A memory command that cannot be done; `code` is the exit status (1 error, 2 usage)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class MemoryContext:
    """The config and store a memory command works on."""

    config: Config
    store: MemoryStore

    @classmethod
    def for_cwd(cls, cwd: Path | None = None) -> MemoryContext:
        config = load_config(cwd or Path.cwd())
        paths.claim_project_folders(config.cwd, _warn)
        return cls(config, MemoryStore(paths.memory_dir(config.cwd), warn=_warn))

    @property
    def repo(self) -> tuple[Path, ...]:
        """Where the paths a memory names are checked: the repository root, then the cwd."""
        return tuple(dict.fromkeys((self.config.project_root, self.config.cwd)))


def _warn(text: str) -> None:
    sys.stderr.write(visible_controls(f"claude-mini memory: {text}") + "\n")


# --- formatting --------------------------------------------------------------------------
def human_size(size: int) -> str:
    """`412 B`, `4.1 KB`, `2.0 MB`."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


# --- list ----------------------------------------------------------------------------------
def list_data(mc: MemoryContext, now: float | None = None) -> dict[str, Any]:
    """Instruction files and memory files with type, description, age and size (for --json)."""
    now = time.time() if now is None else now
    instructions = load_instructions(
        mc.config.cwd,
        trusted=mc.config.trusted,
        excludes=mc.config.get("claudeMdExcludes") or (),
        claude_code_home=mc.config.claude_code_home,
    )
    files = [_instruction_entry(f.path, f.kind, len(f.text.encode()), now) for f in instructions.files]
    records = mc.store.list()
    superseded, _ = record_links(records)
    team = team_tier(mc.config)
    return {
        "memory_dir": str(mc.store.root),
        "auto_memory": mc.config.auto_memory,
        "instruction_files": files,
        "memories": [_memory_entry(r, now, r.filename in superseded) for r in records],
        "skipped": [{"path": str(s.path), "reason": s.reason} for s in mc.store.skipped],
        "team": team_memory.team_list_data(team, now) if team is not None else None,
    }


def _instruction_entry(path: str, kind: str, size: int, now: float) -> dict[str, Any]:
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        mtime = now
    return {"kind": kind, "path": path, "size": size, "mtime": mtime, "age": human_age(now - mtime)}


def _memory_entry(r: MemoryRecord, now: float, superseded: bool = False) -> dict[str, Any]:
    return {
        "file": r.filename,
        "name": r.name,
        "type": r.type,
        "description": r.description,
        "size": r.size,
        "mtime": r.mtime,
        "age": human_age(now - r.mtime),
        "problem": r.problem,
        "superseded_by": successor_of(r.frontmatter) if superseded else None,
    }


def list_lines(data: dict[str, Any]) -> list[str]:
    """`list_data` as text for a terminal."""
    state = "on" if data["auto_memory"] else "off"
    lines = [f"Memory folder: {data['memory_dir']} (auto memory {state})"]
    lines.append(f"Instruction files ({len(data['instruction_files'])}):")
    for f in data["instruction_files"]:
        lines.append(f"  {f['kind']:<9} {human_size(f['size']):>8}  {f['age']:>9}  {f['path']}")
    if not data["instruction_files"]:
        lines.append("  (none: add a CLAUDE.md, or run /init in the REPL)")
    lines.append(f"Memories ({len(data['memories'])}):")
    for m in data["memories"]:
        flag = "  [needs attention: see `claude-mini memory doctor`]" if m["problem"] else ""
        if m.get("superseded_by"):
            flag += f"  [superseded by {m['superseded_by']}]"
        lines.append(
            f"  {m['type'] or '?':<9} {human_size(m['size']):>8}  {m['age']:>9}  "
            f"{m['file']}: {clip(m['description'], LIST_DESCRIPTION_CHARS)}{flag}"
        )
    if not data["memories"]:
        lines.append("  (none yet: `claude-mini memory add TEXT` saves one)")
    lines += [f"  skipped {s['path']}: {s['reason']}" for s in data["skipped"]]
    if data.get("team") is not None:
        lines += team_memory.team_list_lines(data["team"])
    return lines


# --- show / edit ---------------------------------------------------------------------------
def memory_path(store: MemoryStore, name: str) -> Path:
    """The file for NAME: a memory (by filename or name), or the index for MEMORY.md/index."""
    if name.strip().lower() in (INDEX_FILENAME.lower(), "memory", "index"):
        return store.index_path
    try:
        return store.resolve(name)
    except MemoryStoreError as exc:
        raise MemoryCommandError(str(exc)) from None


def show_text(store: MemoryStore, name: str) -> str:
    """The whole text of one memory file (or of MEMORY.md)."""
    path = memory_path(store, name)
    problem = not_a_file(path)
    if problem:  # a FIFO would hang the read
        raise MemoryCommandError(
            f"cannot show {path}: it is {problem}, not a file (`claude-mini memory doctor --fix` moves it aside)"
        )
    if not path.exists():
        raise MemoryCommandError(f"{path} does not exist yet (no memories saved)")
    text, reason = read_text_head(path, SHOW_MAX_BYTES)
    if text is None:
        raise MemoryCommandError(f"cannot show {path.name}: {reason}")
    return text


def pick_editor(environ: dict[str, str] | None = None) -> list[str]:
    """The editor command: $VISUAL, else $EDITOR, else vi if installed."""
    env = os.environ if environ is None else environ
    for var in ("VISUAL", "EDITOR"):
        if env.get(var, "").strip():
            return shlex.split(env[var])
    if shutil.which("vi"):
        return ["vi"]
    raise MemoryCommandError("no editor: set $VISUAL or $EDITOR (e.g. export EDITOR=nano)")


def edit_memory(store: MemoryStore, name: str, run: Callable[[list[str]], int] | None = None) -> list[str]:
    """Open a memory (or MEMORY.md) in the user's editor; returns what to tell them after."""
    path = memory_path(store, name)
    command = [*pick_editor(), str(path)]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MemoryCommandError(f"cannot create {path.parent} ({exc.strerror or exc})") from None
    run = run or (lambda argv: subprocess.run(argv).returncode)
    try:
        status = run(command)
    except OSError as exc:
        raise MemoryCommandError(f"could not start the editor {command[0]!r}: {exc}") from None
    if status != 0:
        raise MemoryCommandError(f"the editor exited with status {status}; {path.name} is as it left it")
    lines = [f"Edited {path}"]
    if path.exists():
        text, _ = read_text_head(path, SHOW_MAX_BYTES)
        found = find_secrets(text)
        if found:
            lines.append(
                f"Warning: {path.name} now holds {describe_findings(found)}; memory "
                "files are read back into every session and easy to share: take it out "
                "and say where the secret lives instead"
            )
        parsed = parse_memory_text(text or "")
        if path != store.index_path and parsed.problem:
            lines.append(f"Note: {parsed.problem}; `claude-mini memory doctor --fix` can help")
    return lines


# --- add / forget --------------------------------------------------------------------------
def add_memory(
    mc: MemoryContext,
    text: str,
    type_: str = "project",
    why: str | None = None,
    how: str | None = None,
    supersedes: str | None = None,
) -> list[str]:
    """Save TEXT as a memory at once (no model call); returns the lines to print.

    `supersedes` names the memory it corrects; without it, one that it clearly replaces (the
    same name, or a correction repeating most of its words) is found (memory/supersede.py).
    That memory is marked `superseded_by` the new one, which records `supersedes`.
    """
    if not text.strip():
        raise MemoryCommandError("nothing to save: give the memory text", code=2)
    if type_ not in MEMORY_TYPES:
        raise MemoryCommandError(f"unknown type {type_!r}: use one of {', '.join(MEMORY_TYPES)}", code=2)
    refuse_secrets({"the memory text": text, "--why": why, "--how": how})
    name, description = derive_memory(text)
    store = mc.store
    guess, notes = (None, "") if supersedes else guess_replaced(store, name, description)
    filename = _claim_filename(store, name)
    old, notes = _superseded_file(store, filename, supersedes, guess, notes)
    now = iso_utc(store.clock())
    extra: dict[str, Any] = {"supersedes": old} if old else {}
    fields: dict[str, Any] = {
        "name": name,
        "description": description,
        "type": type_,
        "body": text.strip(),
        "why": why,
        "how_to_apply": how,
        "extra_frontmatter": {**extra, "created": now, "updated": now},
    }
    try:
        refuse_secrets(saved_parts(filename, fields))
        path = store.write(filename, **fields)
    except MemoryCommandError:
        (store.root / filename).unlink(missing_ok=True)
        raise
    except (MemoryStoreError, OSError) as exc:
        (store.root / filename).unlink(missing_ok=True)
        raise MemoryCommandError(f"could not save the memory ({os_error_text(exc)}); nothing was changed") from None
    lines = [f"Saved {filename} ({type_}): {clip(description, LIST_DESCRIPTION_CHARS)}", f"  {path}"]
    if old:
        lines.append(apply_link(store, filename, old, guess.why if guess else "").message)
    if notes:
        lines.append(notes)
    problem = description_problem(description)
    if problem:
        lines.append(f"Tip: {problem}; `claude-mini memory edit {filename}` to improve it")
    if type_ in ("feedback", "project") and not (why and how):
        lines.append(
            "Tip: feedback and project memories should say why and when they apply "
            "(--why, --how); `claude-mini memory doctor` lists the ones that lack them"
        )
    if not mc.config.auto_memory:
        lines.append("Note: auto memory is off, so the model will not see it (`claude-mini memory on`)")
    return lines


def _superseded_file(
    store: MemoryStore, filename: str, supersedes: str | None, guess: Guess | None, notes: str
) -> tuple[str | None, str]:
    """(the memory the new one supersedes, a note): --supersedes checked, else the guess."""
    if supersedes is None:
        return (guess.filename if guess else None), notes
    old, problem = link_problem(store, filename, supersedes)
    if problem:
        return None, (
            f"Note: --supersedes {supersedes} was ignored: {problem}; the memory was "
            "saved without it (`claude-mini memory list` shows the filenames)."
        )
    return old, notes


def saved_parts(filename: str, fields: dict[str, Any]) -> dict[str, str]:
    """Exactly what `store.write(filename, **fields)` puts on disk: the file, its MEMORY.md line,
    its filename. Scanned after the text is joined into them (a key on one line and its value
    on the next meet in the one-line description)."""
    return {
        "the memory as it would be saved": format_memory(**fields),
        "its filename (derived from the text)": filename,
        "its MEMORY.md line": index_line(filename, fields["name"], fields["description"]),
    }


def refuse_secrets(parts: Mapping[str, str | None]) -> None:
    """Raise MemoryCommandError naming what looks like a secret in any part (never its value)."""
    for where, part in parts.items():
        found = find_secrets(part)
        if found:
            raise MemoryCommandError(
                f"refused to save {describe_findings(found)} of {where}: memory files are plain "
                "text read back into every session and easy to share. Nothing was saved; say "
                "where the secret lives instead (an environment variable's name, a "
                "password-manager entry)"
            )


def _claim_filename(store: MemoryStore, name: str) -> str:
    """A free filename, created empty with O_EXCL so two processes never pick the same one."""
    try:
        return store.claim_filename(name)
    except OSError as exc:  # a read-only or full disk, a file where the folder should be
        raise MemoryCommandError(f"could not save the memory ({os_error_text(exc)}); nothing was saved") from None
    except MemoryStoreError as exc:
        raise MemoryCommandError(str(exc)) from None


def forget_memory(
    store: MemoryStore,
    name: str,
    *,
    purge: bool = False,
    ask: forgetting.Ask | None = None,
    command: str = forgetting.FORGET_COMMAND,
) -> list[str]:
    """Archive a memory and drop its index line; `purge` (or a yes to `ask`, offered when it
    held a secret) deletes it, and archived copies of it holding secrets, for good."""
    try:
        return forgetting.forget_lines(store, name, purge=purge, ask=ask, command=command)
    except MemoryStoreError as exc:
        raise MemoryCommandError(str(exc)) from None
    except OSError as exc:  # a read-only or full memory folder
        raise MemoryCommandError(f"could not archive {name} ({os_error_text(exc)})") from None


# --- on / off ------------------------------------------------------------------------------
def set_auto_memory(enabled: bool, cwd: Path | None = None) -> list[str]:
    """Write `autoMemoryEnabled` into the user settings file, keeping its other keys."""
    path = paths.home_dir() / "settings.json"
    with locked(path):
        data = _read_settings_strict(path)
        data["autoMemoryEnabled"] = enabled
        atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    lines = [f"Auto memory {'on' if enabled else 'off'} (autoMemoryEnabled: {json.dumps(enabled)} in {path})"]
    return lines + _override_notes(enabled, load_config(cwd or Path.cwd()), path)


def _read_settings_strict(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise MemoryCommandError(f"cannot read {path}: {exc}; it was left unchanged") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MemoryCommandError(
            f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); it was left unchanged: fix it, then try again"
        ) from None
    if not isinstance(data, dict):
        raise MemoryCommandError(f"{path} is not a JSON object; it was left unchanged")
    return data


def _override_notes(enabled: bool, config: Config, user_path: Path) -> list[str]:
    """Why the setting just written may not be the one in effect."""
    notes = []
    if enabled and os.environ.get(DISABLE_ENV, "").strip() in ("1", "true", "yes"):
        notes.append(
            f"Note: {DISABLE_ENV}=1 is set in the environment and wins: auto memory stays off until you unset it"
        )
    origin = config.origins.get("autoMemoryEnabled")
    if origin and origin != str(user_path) and config.get("autoMemoryEnabled") is not enabled:
        notes.append(
            f"Note: {origin} sets autoMemoryEnabled to "
            f"{json.dumps(config.get('autoMemoryEnabled'))}, which wins over the user "
            "settings"
        )
    return notes


# --- doctor --------------------------------------------------------------------------------
def doctor_data(store: MemoryStore, apply_fix: bool = False, repo: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Findings (after an optional --fix), the fixes made, and whether the folder is clean.

    With `repo` (the repository root, then the cwd) it also lists the stale memories: those
    naming files, folders or commands that are gone, or files that changed a lot since."""
    findings = doctor(store)
    try:
        fixed = fix(store, findings) if apply_fix else []
    except OSError as exc:  # a read-only or full memory folder
        raise MemoryCommandError(f"could not fix the memory folder ({os_error_text(exc)})") from None
    if fixed:
        findings = doctor(store)
    # Likely duplicates are advice for people and /dream, not problems: they don't fail the run.
    duplicates = duplicate_findings(store)
    return {
        "memory_dir": str(store.root),
        "ok": not findings,
        "findings": [asdict(f) for f in findings],
        "fixed": [asdict(f) for f in fixed],
        "duplicates": [asdict(f) for f in duplicates],
        "stale": [{"file": f, "reasons": r} for f, r in stale_data(store, repo).items()],
    }


def both_tiers_doctor_data(mc: MemoryContext, apply_fix: bool = False) -> dict[str, Any]:
    """`doctor_data` of the private folder, with the team folder's under "team" when the
    repository has one (`ok` then covers both)."""
    result = doctor_data(mc.store, apply_fix, mc.repo)
    team = team_tier(mc.config)
    if team is not None and team.root.is_dir():
        result["team"] = team_doctor_data(team, apply_fix, mc.repo)
        result["ok"] = result["ok"] and result["team"]["ok"]
    return result


def both_tiers_doctor_lines(result: dict[str, Any]) -> list[str]:
    """`both_tiers_doctor_data` as text: the private folder, then the team's, indented."""
    lines = doctor_lines(result)
    if "team" in result:
        lines += [
            f"Team memory ({result['team']['memory_dir']}):",
            *(f"  {line}" for line in doctor_lines(result["team"])),
        ]
    return lines


def team_doctor_data(tier: TeamTier, apply_fix: bool, repo: tuple[Path, ...]) -> dict[str, Any]:
    """`doctor_data` of the team folder; its fixes only where the folder is trusted (a merge
    that left MEMORY.md conflicted is rebuilt from the files)."""
    problem = tier.write_problem() if apply_fix else None
    if apply_fix and problem is None:
        tier.prepare()
    data = doctor_data(tier.store(_warn), apply_fix and problem is None, repo)
    if problem:
        data["not_fixed"] = f"nothing fixed in the team folder: {problem}"
    return data


def stale_data(store: MemoryStore, repo: tuple[Path, ...]) -> dict[str, list[str]]:
    """filename -> why it may be stale, for every memory that names something gone or rewritten."""
    texts = {}
    records = store.list()
    superseded, _ = record_links(records)  # history, not advice: what it names may be gone
    for record in records:
        if record.filename in superseded:
            continue
        text, _ = read_text_head(record.path, SHOW_MAX_BYTES)
        if text is not None:
            texts[record.filename] = (text, record.mtime)
    return stale_memories(texts, repo, timeout=DOCTOR_GIT_TIMEOUT_S)


def doctor_lines(data: dict[str, Any]) -> list[str]:
    """`doctor_data` as text: what was fixed, what is left, and what to run next."""
    lines = [f"Fixed {f['file']}: {f['message']}" for f in data["fixed"]]
    for f in data["findings"]:
        mark = " [fixable]" if f["fixable"] else ""
        lines.append(f"{f['kind']}: {f['file']}: {f['message']}{mark}")
    for f in data.get("duplicates", []):
        lines.append(f"note: {f['file']} {f['message']}")
    for f in data.get("stale", []):
        lines.append(f"stale: {f['file']} {'; '.join(f['reasons'])} (edit it, or forget it)")
    if data.get("not_fixed"):
        lines.append(data["not_fixed"])
    fixable = sum(1 for f in data["findings"] if f["fixable"])
    stale = len(data.get("stale", []))
    if not data["findings"]:
        lines.append(
            f"No problems found in {data['memory_dir']}"
            + (f"; {stale} {'memory' if stale == 1 else 'memories'} may be stale (above)." if stale else ".")
        )
    else:
        tip = f"; {fixable} fixable with `claude-mini memory doctor --fix`" if fixable else ""
        lines.append(f"{len(data['findings'])} problem(s){tip}.")
    return lines
