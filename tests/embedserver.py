"""Loopback OpenAI-protocol embedding servers for tests: a deterministic fake, and a proxy in front of a
real server that fails, or changes its vectors, on request."""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
import urllib.request
from http.server import ThreadingHTTPServer

import numpy as np

from procs import JSONHandler, free_port


def text_vector(text: str, dim: int = 8) -> list[float]:
    """The fake server's vector for a text: deterministic, so order mistakes show."""
    h = hashlib.sha256(text.encode()).digest()
    return [(b - 127.5) / 127.5 for b in h[:dim]]


class Behaviour:
    """What the server does next; tests change it between calls."""

    def __init__(self):
        self.fail_first = 0  # answer 503 to this many requests, then work
        self.fail_when = ""  # once a request holds this text, answer 503 to everything
        self.failing = False
        self.truncate: int | None = None  # cut vectors to this many dimensions
        self.max_delay = 0.0  # a random delay per request (order must survive it)
        self.requests = 0
        self.inputs: list[int] = []  # texts per request
        self.in_flight = 0
        self.most_in_flight = 0
        self.keys: list[str] = []
        self.lock = threading.Lock()


def serve(upstream: str | None = None, dim: int = 8):
    """Start a server on 127.0.0.1 (the fake one, or a proxy to `upstream`'s /v1/embeddings).
    Returns (base URL ending in /v1, Behaviour, stop function)."""
    b = Behaviour()

    class Handler(JSONHandler):
        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            texts = req["input"] if isinstance(req["input"], list) else [req["input"]]
            with b.lock:
                b.requests += 1
                b.inputs.append(len(texts))
                b.keys.append(self.headers.get("Authorization", ""))
                if b.fail_when and any(b.fail_when in t for t in texts):
                    b.failing = True
                fail = b.failing or b.fail_first > 0
                b.fail_first = max(0, b.fail_first - 1)
                b.in_flight += 1
                b.most_in_flight = max(b.most_in_flight, b.in_flight)
            try:
                if b.max_delay:
                    time.sleep(random.uniform(0, b.max_delay))
                if fail:
                    auth = self.headers.get("Authorization", "")
                    self._send(503, {"error": {"message": f"overloaded (you sent {auth})", "type": "server_error"}})
                    return
                if upstream:
                    fwd = urllib.request.Request(upstream + "/embeddings", data=json.dumps(
                        {"model": req.get("model"), "input": texts}).encode(), headers={"Content-Type": "application/json"})
                    try:
                        with urllib.request.urlopen(fwd, timeout=120) as r:
                            vecs = [d["embedding"] for d in sorted(json.load(r)["data"], key=lambda d: d["index"])]
                    except OSError as e:  # the real server behind dropped a connection under load (seen once in CI):
                        # say so as a busy server does, for the client's retry, rather than close without a word
                        self._send(503, {"error": {"message": f"upstream: {e}", "type": "server_error"}})
                        return
                else:
                    vecs = [text_vector(t, dim) for t in texts]
                if b.truncate:
                    vecs = [v[: b.truncate] for v in vecs]
                data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vecs)]
                random.shuffle(data)  # the protocol orders by index, not by position
                self._send(200, {"object": "list", "data": data, "model": req.get("model", "m"),
                                 "usage": {"prompt_tokens": 0, "total_tokens": 0}})
            finally:
                with b.lock:
                    b.in_flight -= 1

    port = free_port()
    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()

    def stop():
        httpd.shutdown()
        httpd.server_close()

    return f"http://127.0.0.1:{port}/v1", b, stop


def unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)
