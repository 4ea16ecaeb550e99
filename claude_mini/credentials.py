"""Known credential locations: files claude-mini never puts into a prompt by itself.

Every instruction file (root files, rules, nested files, `@import`s; symlinks
followed) naming one of these is refused whether or not the folder is trusted.
A path counts if it, or the file it resolves to, is one of the files or lies in
one of the folders below, or has one of the names below; callers check both spellings.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

# Under the OS home folder (and $XDG_CONFIG_HOME for the `.config/` ones): folders, then single files.
HOME_FOLDERS = (".ssh", ".aws", ".config/gh", ".config/hub", ".config/glab-cli", ".config/op",
                ".config/gcloud", ".config/doctl", ".docker", ".kube", ".gnupg", ".azure", ".oci",
                ".doppler", ".password-store", ".local/share/keyrings")
HOME_FILES = (".terraform.d/credentials.tfrc.json", ".terraformrc", ".cargo/credentials",
              ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml",
              ".m2/settings-security.xml", ".gradle/gradle.properties", ".config/git/credentials",
              ".config/rclone/rclone.conf")
# The `.config/` entries again under $XDG_CONFIG_HOME.
CONFIG_FOLDERS = ("gh", "hub", "glab-cli", "op", "gcloud", "doctl", "git/credentials", "rclone/rclone.conf")
# Anywhere: login and token files by name.
FILE_NAMES = frozenset({".netrc", "_netrc", ".git-credentials", ".npmrc", ".pypirc", ".envrc", ".env",
                        ".vault-token", ".pgpass", ".my.cnf", ".s3cfg", ".boto", ".databrickscfg"})


def homes() -> list[str]:
    """The OS home folder as written and with symlinks resolved."""
    home = os.path.expanduser("~")
    return list(dict.fromkeys([os.path.normpath(home), os.path.realpath(home)]))


def credential_folders() -> list[str]:
    """Every credential folder (and single credential file), absolute, in both spellings of the home."""
    out = [os.path.join(home, sub) for home in homes() for sub in (*HOME_FOLDERS, *HOME_FILES)]
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
