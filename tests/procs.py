"""Small helpers for tests and benches that start servers: a free loopback port, a clean stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess


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
