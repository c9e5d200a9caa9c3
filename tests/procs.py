"""Small helpers for tests and benches that start servers: a free loopback port, a clean stop, a JSON handler."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler


class JSONHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing (quiet test output) and answers JSON with `_send`."""

    def log_message(self, *args):
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def free_port() -> int:
    """A loopback port nothing listens on (also what tests use as an unreachable endpoint)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_group(proc: subprocess.Popen, timeout: float = 10) -> None:
    """Stop a server started with start_new_session=True, and everything it started."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_healthy(port: int, timeout: float = 90, proc: subprocess.Popen | None = None) -> bool:
    """Wait until a llama.cpp server on `port` answers /health with 200. Its port opens before the model has
    loaded (it answers 503 meanwhile), and on a loaded machine the first requests then fail."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return True
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.2)
    return False
