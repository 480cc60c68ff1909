"""A local HTTP server with HEAD and single-range GET, for the remote-access tests."""

from __future__ import annotations

import contextlib
import http.server
import threading
from typing import Iterator


class RangeHandler(http.server.BaseHTTPRequestHandler):
    """Serves one in-memory object (``body``) with HEAD and single-range GET;
    records each request's headers in ``seen_headers``."""

    body = b""
    name = "data.tgm"
    seen_headers: list = []

    def log_message(self, *args):  # quiet
        pass

    def _head(self, status, length, extra=()):
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def _missing(self) -> bool:
        if self.path == "/" + self.name:
            return False
        self._head(404, 0)
        return True

    def do_HEAD(self):
        type(self).seen_headers.append(dict(self.headers))
        if not self._missing():
            self._head(200, len(self.body))

    def do_GET(self):
        type(self).seen_headers.append(dict(self.headers))
        if self._missing():
            return
        spec = self.headers.get("Range", "")
        if spec.startswith("bytes="):
            start, end = spec[6:].split("-")
            start, end = int(start), min(int(end), len(self.body) - 1)
            part = self.body[start:end + 1]
            self._head(206, len(part), [("Content-Range", f"bytes {start}-{end}/{len(self.body)}")])
            self.wfile.write(part)
        else:
            self._head(200, len(self.body))
            self.wfile.write(self.body)


@contextlib.contextmanager
def serve(body: bytes, name: str = "data.tgm") -> Iterator[tuple[str, type]]:
    """Serve *body* at ``http://127.0.0.1:<port>/<name>``; yields the URL and
    the handler class (whose ``seen_headers`` lists the requests); any other
    path is a 404."""
    handler = type("H", (RangeHandler,), {"body": body, "name": name, "seen_headers": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/{name}", handler
    finally:
        httpd.shutdown()
        httpd.server_close()
