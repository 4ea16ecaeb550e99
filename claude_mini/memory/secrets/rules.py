"""The typed-token half of the secret scan comes from a well-kept rule set, not from our own list.

The rule set is Kingfisher's bundled catalog (MongoDB's `kingfisher-secret-scanner`
on PyPI, Apache-2.0): about 460 Betterleaks rules (Betterleaks is the successor of
gitleaks, by its author, and carries gitleaks' rules forward) and Google's Veles
detectors, each with its own regex, entropy floor and filters. It runs in-process
and offline: scanning never touches the network (validation and revocation, which
would, are never called here). Keeping up with new token formats is then a
dependency upgrade, not a hand edit.

What we keep of our own (memory/secrets/scan.py) is only what the catalog does not
do: context (`KEY=value` assignments, cookies, flags, passphrases, key bodies
without a header) and a few documented token formats it lacks.

The compiled catalog is built once per process, on first use (not at import): about
0.8 s with Kingfisher's own compiled-rule cache, several seconds without. If the
package cannot be loaded the scan goes on with our own detectors only and says so
once in the log; it never raises.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

CONFIDENCE: Final = "medium"  # the catalog's default; "low" adds no rule today and more noise later
_log = logging.getLogger(__name__)
_lock = threading.Lock()
_state: dict[str, Any] = {}  # "scanner" once built, or "failed" with the reason


@dataclass(frozen=True)
class RuleHit:
    """A rule-set match: where it starts in the text (characters) and the rule's short id."""

    start: int
    rule: str  # `github-pat`, `vault-service-token`: names the format, never the value


def _build() -> Any:
    """The catalog's scanner, redacting values so no secret lingers in its findings."""
    from kingfisher_sdk import Rules, Scanner  # ~40 ms; the rules compile here

    return Scanner(Rules(confidence=CONFIDENCE), redact=True)


def scanner() -> Any | None:
    """The process's scanner (built on first call), or None when the package cannot load."""
    if "scanner" in _state or "failed" in _state:
        return _state.get("scanner")
    with _lock:
        if "scanner" not in _state and "failed" not in _state:
            try:
                _state["scanner"] = _build()
            except Exception as exc:  # ImportError, a native load or compile error
                _state["failed"] = str(exc)
                _log.warning(
                    "the secret rule set (kingfisher-secret-scanner) could not be "
                    "loaded (%s); memory writes are checked by claude-mini's own "
                    "patterns only. Reinstall claude-mini's dependencies.",
                    exc,
                )
    return _state.get("scanner")


def short_id(rule_id: str) -> str:
    """`github-pat` for `betterleaks.github-pat`, `npmjsaccesstoken` for `veles.secrets/npmjs…`."""
    return rule_id.split(".", 1)[-1].rsplit("/", 1)[-1]


# A token whose fixed prefix was upper-cased (`GHP_…`, `GLPAT-…`): still a token once a reader
# lower-cases it, but the catalog's prefixes are case-sensitive. Such texts are scanned twice.
_UPPER_PREFIX = re.compile(r"(?<![\w-])([A-Z]{2,12}[_-])(?=[A-Za-z0-9]{16})")


def rule_hits(text: str) -> Iterator[RuleHit]:
    """Every visible match of the catalog in `text`, also with upper-cased prefixes lowered."""
    seen = set()
    lowered = _UPPER_PREFIX.sub(lambda m: m.group(1).lower(), text)
    for variant in (text, lowered) if lowered != text else (text,):
        for hit in _scan(variant):
            if hit not in seen:
                seen.add(hit)
                yield hit


# Every token format of the catalog is a run of 16 or more token characters, random enough to mix
# letters and digits (or, rarely, 32 or more without a digit). Text without one (most memories
# are prose) cannot match, and skipping it spares the catalog's build (about 1.7 s a process,
# measured) where nothing could be found.
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-+/=.~]{16,}")


def may_hold_token(text: str) -> bool:
    """Whether `text` has a run that a token rule could match (see `_TOKEN_RUN`)."""
    return any(
        len(run) >= 32 or (any(c.isdigit() for c in run) and any(c.isalpha() for c in run))
        for run in _TOKEN_RUN.findall(text)
    )


def _scan(text: str) -> Iterator[RuleHit]:
    """The visible, not-doubted matches of the catalog in `text`."""
    if not text or not may_hold_token(text):
        return
    scan = scanner()
    if scan is None:
        return
    data = text.encode("utf-8", "replace")  # a lone surrogate becomes one `?`: offsets still map
    for finding in scan.scan(data):
        if not finding.visible:
            continue  # e.g. an AWS secret key without its id: our own AWS checks judge those
        if finding.confidence == "low":
            continue  # the catalog's own doubt about this match (`https://user:pass@host`)
        offset = int(finding.location.get("start_offset", 0))
        yield RuleHit(len(data[:offset].decode("utf-8", "replace")), short_id(finding.rule_id))
