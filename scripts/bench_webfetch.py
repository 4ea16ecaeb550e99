"""Benchmark WebFetch's own cost: fetch and conversion against a loopback web server (no model).

    python scripts/bench_webfetch.py [--runs N]

Prints, for the docs-like page of the tests, a page of 1 MB of HTML and the 10 MB body (cut at
5 MB): the first call (lazy imports of httpx2, BeautifulSoup and markdownify included, in a fresh
process), the median of later uncached calls, and a cached call. A long page's side-model request
is answered in-process at once, so only claude-mini's part is measured.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claude_mini.llm.events import ResponseDone  # noqa: E402
from claude_mini.llm.messages import Message, ModelRequest, TextBlock, Usage  # noqa: E402
from claude_mini.tools.base import ToolContext  # noqa: E402
from claude_mini.tools.web_access import PageCache, WebAccess  # noqa: E402
from claude_mini.tools.web_fetch import WebFetchTool  # noqa: E402
from tests.web_server import WebServer  # noqa: E402


async def _answer(request: ModelRequest) -> ResponseDone:
    return ResponseDone(Message("assistant", [TextBlock("answered")]), "end_turn", Usage(), request.model)


def _context() -> ToolContext:
    ctx = ToolContext(cwd=ROOT, project_root=ROOT)
    ctx.web = WebAccess(_answer, lambda: "side", lambda: "main", lambda host: host == "127.0.0.1")
    return ctx


def _timed(ctx: ToolContext, url: str) -> float:
    started = time.perf_counter()
    asyncio.run(WebFetchTool().call({"url": url, "prompt": "Summarise"}, ctx))
    return time.perf_counter() - started


def first_call(path: str) -> float:
    """One fetch in a fresh process (imports included), as a session's first WebFetch is."""
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]);"
        "from scripts.bench_webfetch import _context, _timed; from tests.web_server import WebServer\n"
        "with WebServer() as web: print(_timed(_context(), web.url(sys.argv[2])))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(ROOT), path], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    """Print the figures (seconds)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    print(f"{'page':<10}{'first call':>12}{'median':>10}{'cached':>10}")
    with WebServer() as web:
        for path in ("/docs", "/mb", "/huge"):
            first = first_call(path)
            ctx = _context()
            times = []
            for _ in range(runs):
                assert ctx.web is not None
                ctx.web.cache = PageCache()
                times.append(_timed(ctx, web.url(path)))
            cached = _timed(ctx, web.url(path))
            print(f"{path:<10}{first:>11.2f}s{statistics.median(times):>9.2f}s{cached:>9.3f}s")


if __name__ == "__main__":
    main()
