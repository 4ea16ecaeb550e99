"""The team tier's stricter check: no secret and no personal data goes where it is pushed.

A team memory is committed and pushed to everyone with the repository, so on top of the
secret guard (memory/secrets/scan.py) it must not carry:

- e-mail addresses (placeholders such as `@example.com` and `git@host:` remotes pass);
- names of the other people in this repository's git history (authors and committers);
  the person saving is named in the memory's `author` field, on purpose;
- local absolute paths: a home folder (`/home/<user>/`, `/Users/<user>/`, `C:\\Users\\<user>\\`,
  this user's `~`) or this checkout's absolute location (use a path relative to the repository);
- this machine's name;
- personal identifiers (memory/team/personal_ids.py): phone numbers, IBANs, card numbers,
  national ids, birth dates, postal addresses, a person's IP address.

Like the secret scan, findings say what was found and on which line; the refusal says
that nothing was written and what to do.
"""

from __future__ import annotations

import bisect
import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.memory.secrets.scan import describe_findings, find_secrets
from claude_mini.memory.team import gitinfo
from claude_mini.memory.team.personal_ids import personal_id_hits

if TYPE_CHECKING:
    from claude_mini.memory.team.folder import TeamTier

MIN_HOST_CHARS = 3
MIN_NAME_CHARS = 3
_EMAIL = re.compile(
    r"(?<![\w.%+-])([A-Za-z0-9._%+-]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})"
    r"(?![\w-])"
)
_PLACEHOLDER_DOMAINS = re.compile(
    r"(?:^|\.)(?:example\.(?:com|org|net)|[a-z0-9-]+\.(?:example|test|"
    r"invalid|localhost))$",
    re.IGNORECASE,
)
_HOME_PATH = re.compile(
    r"(?<![\w.~-])(?:/home/|/Users/)[^/\s`'\"<>()]+|(?<![\w])[A-Za-z]:\\Users\\"
    r"[^\\\s`'\"<>()]+|(?<![\w.~-])/root(?=/)"
)
_NOT_HOSTS = frozenset({"localhost", "localhost.localdomain", "ubuntu", "debian", "fedora"})


@dataclass(frozen=True)
class PersonalFinding:
    """Personal data in a memory: its kind, a label that may be shown, its line (1-based)."""

    kind: str
    line: int
    label: str = ""

    def describe(self) -> str:
        """`an e-mail address (…@corp.example) on line 3`."""
        shown = f" ({self.label})" if self.label else ""
        return f"{self.kind}{shown} on line {self.line}"


@dataclass(frozen=True)
class PersonalContext:
    """What counts as personal in this repository, on this machine."""

    others: frozenset[str] = frozenset()  # names of the other people in the git history
    home: str = ""  # this user's home folder
    checkout: str = ""  # this checkout's absolute path
    hosts: frozenset[str] = frozenset()  # this machine's names

    @classmethod
    def of_tier(cls, tier: TeamTier) -> PersonalContext:
        """The context of the team tier's repository."""
        return cls.of(tier.repo)

    @classmethod
    def of(cls, repo: Path) -> PersonalContext:
        """The context of `repo`: its contributors except the person saving, this machine."""
        names, _ = gitinfo.contributors(repo)
        own = gitinfo.user_name(repo)
        host = socket.gethostname()
        hosts = {h for h in (host, host.split(".")[0]) if len(h) >= MIN_HOST_CHARS}
        return cls(
            frozenset(n for n in names if n.casefold() != own.casefold()),
            os.path.expanduser("~"),
            os.path.realpath(repo),
            frozenset(h for h in hosts if h.lower() not in _NOT_HOSTS),
        )


def find_personal_data(text: str, context: PersonalContext) -> list[PersonalFinding]:
    """The personal data in `text`, first by line; each kind and label once."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    hits = [
        *_email_hits(text),
        *_path_hits(text, context),
        *_host_hits(text, context),
        *_name_hits(text, context),
        *personal_id_hits(text),
    ]
    out: dict[tuple[str, str], PersonalFinding] = {}
    for offset, kind, label in sorted(hits):
        line = bisect.bisect_right(starts, offset)
        out.setdefault((kind, label), PersonalFinding(kind, line, label))
    return sorted(out.values(), key=lambda f: (f.line, f.kind, f.label))


def _email_hits(text: str) -> list[tuple[int, str, str]]:
    hits = []
    for m in _EMAIL.finditer(text):
        local, domain = m.group(1), m.group(2)
        if local.lower() == "git" or _PLACEHOLDER_DOMAINS.search(domain):
            continue  # an ssh remote (git@github.com:org/repo), or an example address
        hits.append((m.start(), "an e-mail address", f"…@{domain}"))
    return hits


def _path_hits(text: str, context: PersonalContext) -> list[tuple[int, str, str]]:
    hits = [(m.start(), "a local absolute path", m.group(0) + "…") for m in _HOME_PATH.finditer(text)]
    for folder, kind in ((context.checkout, "this checkout's absolute path"), (context.home, "a local absolute path")):
        taken = {offset for offset, _, _ in hits}  # a home folder the pattern already found
        if len(folder) > 1:
            hits += [
                (m.start(), kind, folder)
                for m in re.finditer(re.escape(folder) + r"(?![\w.-])", text)
                if m.start() not in taken
            ]
    return hits


def _host_hits(text: str, context: PersonalContext) -> list[tuple[int, str, str]]:
    return [
        (m.start(), "this machine's name", host)
        for host in context.hosts
        for m in re.finditer(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", text, re.IGNORECASE)
    ]


def _name_hits(text: str, context: PersonalContext) -> list[tuple[int, str, str]]:
    """Full names (any case), and a first name written capitalised ("ask Dana first")."""
    hits = []
    for name in context.others:
        parts = name.split()
        if len(name) < MIN_NAME_CHARS or (len(parts) == 1 and not name[:1].isupper()):
            continue  # `ci`, `root`, `dependabot[bot]`: no person's name
        for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE):
            hits.append((m.start(), "the name of a person in this repository's history", name))
        first = parts[0]
        if len(parts) > 1 and len(first) >= MIN_NAME_CHARS and first[:1].isupper():
            hits += [
                (m.start(), "the name of a person in this repository's history", first)
                for m in re.finditer(rf"(?<!\w){re.escape(first)}(?!\w)", text)
            ]
    return hits


def team_refusal(text: str, context: PersonalContext, what: str) -> str | None:
    """The one-line refusal for writing `text` (the memory `what`) to the team tier, or None.

    Secrets first (the secret guard's scan), then personal data.
    """
    secrets = find_secrets(text)
    personal = find_personal_data(text, context)
    if not secrets and not personal:
        return None
    found = describe_findings(secrets) if secrets else _describe(personal)
    return (
        f"refused to write {what} to the team memory: it holds {found}. Team memory is "
        "committed and pushed to everyone with the repository, so secrets and personal "
        "data never go there. Nothing was written to the team folder; edit the memory to "
        "take that out (say where a secret lives, use a role instead of a name, a path "
        "relative to the repository), then try again."
    )


def _describe(found: list[PersonalFinding]) -> str:
    shown = [f.describe() for f in found[:3]]
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return ", ".join(shown) + more
