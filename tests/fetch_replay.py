"""A local HTTP server on 127.0.0.1 that replays recorded service responses (tests/fixtures/fetch/), in
order, per route; every request it gets is logged so tests can say what was asked. No other network."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "fetch"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


class Replay:
    """`add(route, status, name_or_bytes)` queues a response for requests whose path starts with `route`;
    the last response of a route is repeated once its queue is down to one (a service that keeps failing)."""

    def __init__(self):
        self.routes: dict[str, list[tuple[int, str, bytes]]] = {}
        self.log: list[dict] = []
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                u = urlsplit(self.path)
                replay.log.append({"path": u.path, "query": {k: v[-1] for k, v in parse_qs(u.query).items()},
                                   "headers": dict(self.headers)})
                route = max((r for r in replay.routes if u.path.startswith(r)), key=len, default=None)
                if route is None:
                    status, ctype, body = 599, "text/plain", b"no recorded response for this route"
                else:
                    queue = replay.routes[route]
                    status, ctype, body = queue.pop(0) if len(queue) > 1 else queue[0]
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add(self, route: str, status: int, body: str | bytes, ctype: str = "") -> "Replay":
        data = fixture(body) if isinstance(body, str) else body
        if not ctype:
            ctype = "application/json" if isinstance(body, str) and body.endswith(".json") else (
                "application/atom+xml" if isinstance(body, str) and body.startswith("arxiv") else "text/xml")
        self.routes.setdefault(route, []).append((status, ctype, data))
        return self

    def asked(self, path: str) -> list[dict]:
        return [r["query"] for r in self.log if r["path"].startswith(path)]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
