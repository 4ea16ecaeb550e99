"""What the web tools (WebFetch, WebSearch) need of the session, injected by the runtime.

A tool context without it (a test's, the memory-extraction fork's) still fetches, but cannot ask
the side model about a long page (it returns the page cut instead) and cannot search.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from claude_mini.llm.events import ResponseDone
from claude_mini.llm.messages import ModelRequest
from claude_mini.permissions.rules import DOMAIN_PREFIX, Rule

CACHE_SECONDS = 15 * 60
CACHE_ENTRIES = 64


@dataclass(frozen=True)
class SearchAvailability:
    """Whether this session offers WebSearch, and the line /status shows either way."""

    offered: bool
    why: str


@dataclass
class PageCache:
    """Fetched pages by URL for CACHE_SECONDS (a model often reads one page twice); oldest out first."""

    clock: Callable[[], float] = time.monotonic
    _pages: dict[str, tuple[float, Any]] = field(default_factory=dict)

    def get(self, url: str) -> Any | None:
        """The page fetched from `url` within the last 15 minutes, else None."""
        hit = self._pages.get(url)
        if hit is None or self.clock() - hit[0] > CACHE_SECONDS:
            self._pages.pop(url, None)
            return None
        return hit[1]

    def put(self, url: str, page: Any) -> None:
        """Keep `page` for `url`."""
        self._pages.pop(url, None)
        self._pages[url] = (self.clock(), page)
        while len(self._pages) > CACHE_ENTRIES:
            self._pages.pop(next(iter(self._pages)))


@dataclass
class WebAccess:
    """The session's side of the web tools.

    `ask_model` sends one side request and counts its cost; `side_model` and `main_model` name the
    models (read at each call: /model may change them); `names_host` says whether an allow rule
    (or `sandbox.network.allowedDomains`) names a host itself, which is what lets WebFetch reach a
    loopback or private address; `search` says whether WebSearch is offered.
    """

    ask_model: Callable[[ModelRequest], Awaitable[ResponseDone]]
    side_model: Callable[[], str]
    main_model: Callable[[], str]
    names_host: Callable[[str], bool]
    search: SearchAvailability = SearchAvailability(False, "WebSearch is not set up in this context")
    cache: PageCache = field(default_factory=PageCache)


def rules_name_host(rules: Iterable[Rule], host: str) -> bool:
    """Whether a `WebFetch(domain:host)` rule names `host` itself (a wildcard names no host)."""
    host = host.lower().rstrip(".")
    return any(
        r.tool == "WebFetch" and (r.specifier or "").removeprefix(DOMAIN_PREFIX).strip().lower().rstrip(".") == host
        for r in rules
    )
