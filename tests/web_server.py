"""A loopback web server for the WebFetch tests: a real HTML page, redirects, 1 MB and 10 MB bodies, a binary file.

with WebServer() as web:
    web.url("/docs")          # http://127.0.0.1:PORT/docs
    web.hits["/docs"]         # how often it was fetched
"""

from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DOCS_PAGE = """\
<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Configuring the widget client</title>
  <style>body { font-family: sans-serif }</style>
  <script>window.analytics = { track: function () {} };</script>
</head>
<body>
  <header class="site"><a href="/">Widget docs</a> <form><input name="q"></form></header>
  <nav><ul><li><a href="/install">Install</a></li><li><a href="/config">Configure</a></li></ul></nav>
  <main>
    <h1>Configuring the widget client</h1>
    <p>The client reads <code>widget.toml</code> from the project folder. See
       <a href="/reference/options">all options</a> or the
       <a href="https://example.org/changelog">changelog</a>.</p>
    <h2>Timeouts</h2>
    <p>Set <strong>connect_timeout</strong> in seconds; the default is 10.</p>
    <pre><code class="language-toml">[client]
connect_timeout = 5
retries = 3
</code></pre>
    <table>
      <thead><tr><th>Option</th><th>Default</th></tr></thead>
      <tbody><tr><td>retries</td><td>2</td></tr><tr><td>connect_timeout</td><td>10</td></tr></tbody>
    </table>
    <aside>Was this page helpful?</aside>
    <img src="data:image/png;base64,AAAA" alt="">
  </main>
  <footer>Copyright Widget Inc.</footer>
</body>
</html>
"""
HUGE_BYTES = 10 * 1024 * 1024


class WebServer:
    """A threaded HTTP server on 127.0.0.1 with the pages the WebFetch tests need."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        handler = _handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        """The URL of `path` on this server, named by `host` (`localhost` is another host to WebFetch)."""
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(web: WebServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            web.hits[self.path] += 1
            if self.path == "/docs":
                self._send(200, "text/html; charset=utf-8", DOCS_PAGE.encode())
            elif self.path == "/moved":  # to the same server under another name: another host
                self._redirect(f"http://localhost:{web.port}/docs")
            elif self.path == "/same":
                self._redirect("/docs")
            elif self.path == "/huge":
                self._paragraphs(HUGE_BYTES)
            elif self.path == "/mb":
                self._paragraphs(1024 * 1024)
            elif self.path == "/file.zip":
                self._send(200, "application/zip", b"PK\x03\x04" + bytes(range(256)) * 8)
            else:
                self._send(404, "text/plain", b"not found\n")

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _redirect(self, location: str) -> None:
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _paragraphs(self, size: int) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            line = b"<p>" + b"lorem ipsum dolor sit amet " * 36 + b"</p>\n"
            sent = 0
            try:
                while sent < size:
                    piece = line[: size - sent]
                    self.wfile.write(piece)
                    sent += len(piece)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the reader stopped at its cap

    return Handler
