"""Running a task off the event loop for the UI: stream its text as it grows, turn its errors into one line."""

from __future__ import annotations

import logging
import queue
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from rag.errors import redact, user_message

log = logging.getLogger("paperchat.ui")

_DONE = object()


class Unavailable(Exception):
    """Shown to the user as-is."""


def error_text(exc: BaseException) -> str:
    """One line for the user; an unexpected error is logged in full and shown redacted."""
    if isinstance(exc, Unavailable):
        return str(exc)
    msg = user_message(exc)
    if msg is None:
        log.error("paperchat UI: unexpected error\n%s", "".join(traceback.format_exception(exc)))
        msg = redact(f"unexpected error ({type(exc).__name__}): {exc}")
    return msg


def stream_task(fn: Callable, kwargs: dict, tokens: bool) -> Iterator[str]:
    """Run fn(**kwargs) in a worker thread; yield the text streamed through on_token as it grows.
    The generator's return value is fn's result (errors are re-raised here)."""
    q: queue.Queue = queue.Queue()
    box: dict[str, Any] = {}
    if tokens:
        kwargs = {**kwargs, "on_token": q.put}

    def work():
        try:
            box["result"] = fn(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc
        finally:
            q.put(_DONE)

    threading.Thread(target=work, daemon=True, name="paperchat-task").start()
    text, done = "", False
    while not done:
        item = q.get()
        parts = [item]
        while True:  # coalesce what has queued up since the last update
            try:
                parts.append(q.get_nowait())
            except queue.Empty:
                break
        for p in parts:
            if p is _DONE:
                done = True
            elif isinstance(p, str):
                text += p
        if not done and text:
            yield text
    if "error" in box:
        raise box["error"]
    return box.get("result")
