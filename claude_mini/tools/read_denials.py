"""Read deny rules as Grep and Glob need them.

The permission policy decides whether a whole Grep/Glob call may run (its
search folder); the files found inside an allowed folder are the tools'
business. `read_denials_of(policy)` gives them a `ReadDenials`: the policy's
own per-path verdict, plus a translation of the simple rules into ripgrep
`--glob=!pattern` exclusions so rg does not even open those files.

The translation is an optimisation only: the tools filter every result path
through the verdict, so a rule that cannot be expressed for rg (or one
translated imperfectly) is still enforced.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from claude_mini.tools.base import NO_READ_DENIALS, ReadDenials

# Characters whose meaning differs between gitignore patterns and ripgrep globs.
_UNTRANSLATABLE = frozenset("{}")


class _Policy(Protocol):
    """The part of PermissionPolicy this module reads."""

    @property
    def deny_rules(self) -> tuple[Any, ...]: ...

    def read_denied(self, path: str) -> str | None: ...


def read_denials_of(policy: _Policy) -> ReadDenials:
    """The policy's Read deny rules for the searching tools; NO_READ_DENIALS when it has none."""
    rules = [r for r in policy.deny_rules if r.tool == "Read" and r.path is not None]
    if not rules:
        return NO_READ_DENIALS
    pairs = [(r.path.base, p.pattern) for r in rules for p in r.path.spec.patterns if p.include]
    return ReadDenials(
        reason=policy.read_denied,
        ripgrep_excludes=lambda root: ripgrep_plan(pairs, root)[0],
        rg_covers_all=lambda root: ripgrep_plan(pairs, root)[1],
        active=True,
    )


def ripgrep_excludes(patterns: Iterable[tuple[str, str]], root: Path) -> list[str]:
    """`!glob` arguments, relative to `root`, for the (base folder, gitignore pattern) pairs."""
    return ripgrep_plan(patterns, root)[0]


def ripgrep_plan(patterns: Iterable[tuple[str, str]], root: Path) -> tuple[list[str], bool]:
    """The `!glob` arguments for a search of `root`, and whether they express every rule there.

    Only patterns whose meaning is the same for rg can be given: an unanchored one
    (`.env`, `*.pem`) when `root` is inside its base, an anchored one (`/secrets/**`)
    when its literal leading folders lead to `root`. The rest are left out (and the
    second value is False); a rule whose base is not above `root` cannot match there.
    """
    out, complete = [], True
    for base, pattern in patterns:
        if not _applies_below(base, str(root)):
            continue
        glob = _relative_to_root(base, pattern, str(root))
        if glob is None or _UNTRANSLATABLE.intersection(glob):
            complete = False
        else:
            out.append("!" + glob)
    return out, complete


def _applies_below(base: str, root: str) -> bool:
    rel = os.path.relpath(root, base)
    return not (rel == ".." or rel.startswith("../"))


def _relative_to_root(base: str, pattern: str, root: str) -> str | None:
    """`pattern` (anchored at `base`, which is `root` or above it) re-anchored at `root`,
    or None if that is not exact."""
    rel = os.path.relpath(root, base)
    anchored = "/" in pattern.rstrip("/")
    if not anchored:
        return pattern
    if pattern.startswith("**/") and "/" not in pattern[3:].rstrip("/"):
        return pattern
    body = pattern.lstrip("/")
    if rel == ".":
        return "/" + body
    prefix = rel + "/"
    if body.startswith(prefix) and len(body) > len(prefix):
        return "/" + body[len(prefix) :]
    return None
