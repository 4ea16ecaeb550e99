"""Known credential locations: files claude-mini never puts into a prompt by itself.

Every instruction file (root files, rules, nested files, `@import`s; symlinks
followed) naming one of these is refused whether or not the folder is trusted.
A path counts if it, or the file it resolves to, is one of the files or lies in
one of the folders below, or has one of the names below; callers check both spellings.

The permission policy uses the same list for the model's reads (`secret_read_location`):
Read, Grep, Glob and Bash of a location under the home folder (the folders and files
below, and the login files of FILE_NAMES kept directly in the home folder) or of a
process's environment (`/proc/<pid>/environ`) ask first. A project's own `.env` is not
asked about there: that is what Read deny rules are for.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable

# Under the OS home folder (and $XDG_CONFIG_HOME for the `.config/` ones): folders, then single files.
HOME_FOLDERS = (
    ".ssh",
    ".aws",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".config/op",
    ".config/gcloud",
    ".config/doctl",
    ".docker",
    ".kube",
    ".gnupg",
    ".azure",
    ".oci",
    ".doppler",
    ".password-store",
    ".local/share/keyrings",
)
HOME_FILES = (
    ".terraform.d/credentials.tfrc.json",
    ".terraformrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".config/git/credentials",
    ".config/rclone/rclone.conf",
)
# The `.config/` entries again under $XDG_CONFIG_HOME.
CONFIG_FOLDERS = ("gh", "hub", "glab-cli", "op", "gcloud", "doctl", "git/credentials", "rclone/rclone.conf")
# Anywhere: login and token files by name.
FILE_NAMES = frozenset(
    {
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".envrc",
        ".env",
        ".vault-token",
        ".pgpass",
        ".my.cnf",
        ".s3cfg",
        ".boto",
        ".databrickscfg",
    }
)
# The login files of FILE_NAMES that count as credentials when kept in the home folder itself
# (a project's `.env` and `.envrc` are the project's business: Read deny rules guard them).
_HOME_LOGIN_FILES = FILE_NAMES - {".env", ".envrc"}
# A process's environment holds the API key and tokens: /proc/self/environ, /proc/<pid>/environ,
# /proc/thread-self/environ and /proc/<pid>/task/<tid>/environ.
_PROC_ENVIRON = re.compile(r"^/proc/[^/]+(?:/task/[^/]+)?/environ$")
# /proc/<pid>/root is that process's view of `/`: /proc/self/root/home/u/.ssh is ~/.ssh.
_PROC_ROOT = re.compile(r"^/proc/[^/]+(?:/task/[^/]+)?/root(?=/|$)")


def homes() -> list[str]:
    """The OS home folder as written and with symlinks resolved."""
    return list(_homes(os.path.expanduser("~")))


@functools.lru_cache(maxsize=8)
def _homes(home: str) -> tuple[str, ...]:
    # Cached by the home's spelling: the permission check asks on every tool call.
    return tuple(dict.fromkeys([os.path.normpath(home), os.path.realpath(home)]))


def credential_folders() -> list[str]:
    """Every credential folder (and single credential file), absolute, in both spellings of the home."""
    return list(_credential_folders(os.path.expanduser("~"), os.environ.get("XDG_CONFIG_HOME") or ""))


@functools.lru_cache(maxsize=8)
def _credential_folders(home: str, xdg: str) -> tuple[str, ...]:
    out = [os.path.join(base, sub) for base in _homes(home) for sub in (*HOME_FOLDERS, *HOME_FILES)]
    if xdg and os.path.isabs(xdg):
        out.extend(
            os.path.join(base, sub) for base in {os.path.normpath(xdg), os.path.realpath(xdg)} for sub in CONFIG_FOLDERS
        )
    return tuple(f for f in out if os.path.dirname(f) != f)


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
            return "~" + folder[len(home) :]
    return folder


def secret_read_location(path: str, folders: Iterable[str] | None = None) -> str | None:
    """What makes reading absolute `path` a read of credentials (`~/.ssh`, `/proc/<pid>/environ`), or None.

    Only locations outside any project count (the home folder's credential folders and
    login files, a process's environment); the caller checks both spellings of a path.
    """
    path = os.path.normpath(path)
    while _PROC_ROOT.match(path):  # /proc/self/root/proc/1/root/home/u/.aws is ~/.aws
        path = os.path.normpath("/" + _PROC_ROOT.sub("", path, count=1).lstrip("/"))
    if _PROC_ENVIRON.match(path):
        return "a process's environment (/proc/<pid>/environ)"
    folders = list(credential_folders() if folders is None else folders)
    for folder in folders:
        if path == folder or path.startswith(folder + os.sep):
            return _home_form(folder)
    if os.path.basename(path) in _HOME_LOGIN_FILES and os.path.dirname(path) in homes():
        return _home_form(path)
    return None


def secret_locations_inside(folder: str, folders: Iterable[str] | None = None) -> list[str]:
    """The credential locations that exist below `folder`: what a recursive search of it would read."""
    folder = os.path.normpath(folder)
    inside = [
        f
        for f in (credential_folders() if folders is None else folders)
        if f.startswith(folder.rstrip(os.sep) + os.sep)
    ]
    inside += [
        os.path.join(home, name)
        for home in homes()
        if home.startswith(folder.rstrip(os.sep) + os.sep) or home == folder
        for name in sorted(_HOME_LOGIN_FILES)
    ]
    if folder in ("/", "/proc") or re.match(r"^/proc/[^/]+(?:/task/[^/]+)?$", folder):
        inside.append("/proc/self/environ" if folder in ("/", "/proc") else folder + "/environ")
    return [_home_form(f) for f in inside if os.path.lexists(f)]
