"""Keep `.claude/settings.local.json` out of commits: the first time claude-mini creates it, the
pattern goes into the user's global git ignore file, as Claude Code does.

The global file (git's `core.excludesFile`, by default `$XDG_CONFIG_HOME/git/ignore` or
`~/.config/git/ignore`) covers every repository on the machine and changes nothing a team
shares: a project's own `.gitignore` is never edited. Nothing is written when the file lies
outside a git repository or git already ignores it.
"""

from __future__ import annotations

import os
from pathlib import Path

from claude_mini.base.fileutil import atomic_write
from claude_mini.base.gitrun import git_output, run_git

LOCAL_SETTINGS_PATTERN = "**/.claude/settings.local.json"
GIT_TIMEOUT = 5.0


def ignore_local_settings(settings: Path) -> str | None:
    """Make git ignore `settings` (a newly created local settings file); returns the line telling
    the user where the pattern went, or None when nothing had to be done (or could be)."""
    folder = settings.parent
    if git_output(folder, ["rev-parse", "--is-inside-work-tree"], GIT_TIMEOUT) is None:
        return None  # not in a repository: nothing to commit by accident
    checked = run_git(folder, ["check-ignore", "-q", str(settings)], GIT_TIMEOUT)
    if checked is None or checked.returncode == 0:
        return None  # git missing, or the file is ignored already
    target = global_ignore_file(folder)
    try:
        text = target.read_text(encoding="utf-8") if target.exists() else ""
        if LOCAL_SETTINGS_PATTERN not in text.splitlines():
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(
                target, text + ("" if not text or text.endswith("\n") else "\n") + LOCAL_SETTINGS_PATTERN + "\n"
            )
    except (OSError, UnicodeDecodeError) as exc:
        return (
            f"Could not add {LOCAL_SETTINGS_PATTERN} to {target} ({exc}); add it to a .gitignore so "
            "your local settings are not committed."
        )
    return f"Added {LOCAL_SETTINGS_PATTERN} to {target} (your global git ignore), so it is never committed."


def global_ignore_file(folder: Path) -> Path:
    """git's global ignore file: `core.excludesFile` if set, else the XDG default."""
    configured = (git_output(folder, ["config", "--global", "--path", "core.excludesFile"], GIT_TIMEOUT) or "").strip()
    if configured:
        return Path(os.path.expanduser(configured))
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "git" / "ignore"
