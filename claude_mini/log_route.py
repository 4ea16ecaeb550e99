"""Where the package's log goes, set before anything runs.

With --debug, one `claude-mini: debug: ...` stderr line per record (each HTTP
request among them, llm/anthropic_client.py); without, nowhere. With no handler at all,
logging's last resort would print internal diagnostics (a cache-prefix
mismatch, a skipped memory write) onto the REPL's screen. `__main__` calls it
on every path, so it imports nothing heavy.
"""

from __future__ import annotations

import logging
import sys

_MARK = "claude_mini_route"


def route_log(debug: bool = False) -> None:
    """Send the `claude_mini` log to stderr (`debug`) or nowhere; a later call (--debug parsed) wins."""
    logger = logging.getLogger("claude_mini")
    for old in [h for h in logger.handlers if getattr(h, _MARK, False)]:
        logger.removeHandler(old)
    handler: logging.Handler = logging.StreamHandler(sys.stderr) if debug else logging.NullHandler()
    handler.setFormatter(logging.Formatter("claude-mini: debug: %(message)s"))
    setattr(handler, _MARK, True)
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if debug else logging.NOTSET)
