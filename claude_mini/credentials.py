"""Known credential locations: files claude-mini never puts into a prompt by itself (issue 13).

An instruction file's `@import` (or a CLAUDE.md that is a symlink) naming one of
these is refused whether or not the folder is trusted. A path counts if it, or
the file it resolves to, lies in one of the folders below or has one of the
names below; callers check both spellings.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

# Under the OS home folder (and $XDG_CONFIG_HOME for the `.config/` ones).
HOME_FOLDERS = (".ssh", ".aws", ".config/gh", ".docker", ".kube", ".config/gcloud", ".gnupg",
                ".azure", ".password-store")
CONFIG_FOLDERS = ("gh", "gcloud")
# Anywhere: login and token files by name.
FILE_NAMES = frozenset({".netrc", "_netrc", ".git-credentials", ".npmrc", ".pypirc", ".envrc", ".env"})


def homes() -> list[str]:
    """The OS home folder as written and with symlinks resolved."""
    home = os.path.expanduser("~")
    return list(dict.fromkeys([os.path.normpath(home), os.path.realpath(home)]))


def credential_folders() -> list[str]:
    """Every credential folder, absolute, in both spellings of the home folder."""
    out = [os.path.join(home, sub) for home in homes() for sub in HOME_FOLDERS]
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg and os.path.isabs(xdg):
        out.extend(os.path.join(base, sub) for base in {os.path.normpath(xdg), os.path.realpath(xdg)}
                   for sub in CONFIG_FOLDERS)
    return [f for f in out if os.path.dirname(f) != f]


def credential_location(*spellings: str, folders: Iterable[str] | None = None) -> str | None:
    """What makes any spelling of one path a credential location (e.g. `~/.ssh`), else None."""
    folders = list(credential_folders() if folders is None else folders)
    for path in spellings:
        path = os.path.normpath(path)
        name = os.path.basename(path)
        if name in FILE_NAMES or name.startswith(".env."):
            return f"a {name} file"
        for folder in folders:
            if path == folder or path.startswith(folder + os.sep):
                return _home_form(folder)
    return None


def _home_form(folder: str) -> str:
    """`folder` with the home folder written as `~`."""
    for home in homes():
        if folder.startswith(home + os.sep):
            return "~" + folder[len(home):]
    return folder
