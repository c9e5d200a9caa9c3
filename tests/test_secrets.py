"""Secrets: with a sentinel OPENAI_API_KEY set, no command's stdout, stderr, log record, export or --json
output contains it, whatever the endpoint does (unreachable, malformed URL, a server that echoes the key
back in its errors, a working server). Issue 8, item 5.

Most commands run in-process through `rag.cli.main` (fast; every log record down to DEBUG is captured);
a few run as real subprocesses to see exactly what a user's terminal would.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

from procs import JSONHandler, free_port
import pytest

from conftest import SEEDS

ROOT = Path(__file__).resolve().parent.parent
UNIQUE = "5e171ee1c0ffee0ddba11f00d"  # the part of the key no redaction may leave behind
SENTINEL = f"sk-SENTINEL{UNIQUE}"
# A sentence of the mHC seed abstract: close enough under the fake embedder that no task abstains, so the
# LLM path is really taken.
Q = ("we propose Manifold-Constrained Hyper-Connections (mHC), a general framework that projects the residual "
     "connection space of HC onto a specific manifold to restore the identity mapping property")


def leaks(text: str) -> bool:
    return SENTINEL in text or UNIQUE in text


# -- a loopback OpenAI-protocol server that misbehaves on request ------------------------------------------

class _Handler(JSONHandler):
    seen_keys: list[str] = []

    def do_GET(self):
        self._send(404, {"error": {"message": "no such route"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        req = json.loads(self.rfile.read(length) or b"{}")
        auth = self.headers.get("Authorization", "")
        _Handler.seen_keys.append(auth)
        mode = self.path.strip("/").split("/")[0]
        echo = f"Incorrect API key provided: {auth.removeprefix('Bearer ')} (request {self.path})"
        if mode in ("e401", "e403", "e404", "e400", "e500", "e429"):
            code = int(mode[1:])
            self._send(code, {"error": {"message": echo, "type": "invalid_request_error", "code": "x",
                                        "param": auth}})
            return
        # "ok": a working model that cites source [1].
        text = "Manifold-Constrained Hyper-Connections restore the identity mapping of residual streams [1]."
        if req.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for piece in (text[:30], text[30:]):
                chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": req.get("model", "m"),
                         "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            end = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": req.get("model", "m"),
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
            return
        self._send(200, {"id": "c1", "object": "chat.completion", "created": 0, "model": req.get("model", "m"),
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                      "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


@pytest.fixture(scope="module")
def llm_server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """The seeds in a fake-embedder library, built once for the module."""
    from rag.library.library import Library
    from rag.settings import Settings

    h = tmp_path_factory.mktemp("secrets-home")
    Library(Settings(home=h, embedder="fake")).ingest([SEEDS], progress=False)
    return h


@pytest.fixture
def env(home, monkeypatch):
    monkeypatch.setenv("PAPERCHAT_HOME", str(home))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    monkeypatch.setenv("PAPERCHAT_REQUEST_TIMEOUT", "5")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("PAPERCHAT_LLM", raising=False)
    return monkeypatch


def run_inprocess(argv: list[str], capsys, caplog, want_stdout: bool = False):
    """Run the CLI in this process; returns (exit code or traceback text, everything it emitted[, stdout])."""
    from rag.cli import main

    caplog.clear()
    caplog.set_level(logging.DEBUG)
    try:
        rc: int | str = main(argv)
    except SystemExit as e:
        rc = int(e.code or 0)
    except Exception as e:  # noqa: BLE001 - a bug; its message is output too (the traceback a user would see)
        import traceback

        rc = "".join(traceback.format_exception(e))
    out, err = capsys.readouterr()
    logs = caplog.text + "\n".join(repr(r.args) + repr(r.__dict__.get("exc_text")) for r in caplog.records)
    text = "\n".join([out, err, logs, rc if isinstance(rc, str) else ""])
    return (rc, text, out) if want_stdout else (rc, text)


EXTRACTIVE = [
    ["ingest", str(SEEDS)], ["ingest", "--json", str(SEEDS)],
    ["papers"], ["papers", "--json"], ["stats"], ["stats", "--json"],
    ["search", Q], ["search", Q, "--json"], ["search", Q, "--venue", "ICML", "--year-from", "2020", "--json"],
    ["ask", Q], ["ask", Q, "--json"], ["ask", "quokka marsupial zebra census", "--json"],
    ["summarise", Q], ["summarise", Q, "--json"], ["cite", Q], ["cite", Q, "--json"],
    # errors a user can cause
    ["ingest", "/nonexistent/abstracts.jsonl"], ["--library", "bad name!", "papers"],
]


@pytest.mark.parametrize("argv", EXTRACTIVE, ids=lambda a: " ".join(a)[:40])
def test_extractive_commands_never_show_the_key(argv, env, capsys, caplog):
    if argv[0] in ("summarise", "cite"):
        pytest.importorskip(f"rag.tasks.{argv[0]}")
    rc, text = run_inprocess(argv, capsys, caplog)
    assert not leaks(text), text[:2000]
    assert isinstance(rc, int), rc  # no traceback
    if argv[0] != "ingest" and "bad name!" not in argv:
        assert rc == 0, text[:2000]


def _llm_cases(server: str) -> list[tuple[str, str, bool]]:
    """(base URL, what it is, whether commands succeed)"""
    port = free_port()
    return [
        (f"http://127.0.0.1:{port}/v1", "unreachable loopback port", False),
        ("not a url at all", "malformed base URL", False),
        ("http://127.0.0.1:99999/v1", "port out of range", False),
        (f"http://user:{SENTINEL}@127.0.0.1:{port}/v1", "key pasted into the base URL", False),
        (f"http://127.0.0.1:{port}/v1?api-key={SENTINEL}", "key in the base URL's query", False),
        (f"{server}/e401/v1", "401 echoing the key", False),
        (f"{server}/e403/v1", "403 echoing the key", False),
        (f"{server}/e404/v1", "404 echoing the key", False),
        (f"{server}/e400/v1", "400 echoing the key", False),
        (f"{server}/e500/v1", "500 echoing the key", False),
        (f"{server}/ok/v1", "working endpoint", True),
    ]


@pytest.mark.parametrize("case", range(11))
def test_llm_mode_never_shows_the_key(case, env, llm_server, capsys, caplog):
    base, what, works = _llm_cases(llm_server)[case]
    env.setenv("PAPERCHAT_LLM", "openai")
    env.setenv("OPENAI_BASE_URL", base)
    _Handler.seen_keys.clear()
    cmds = [["ask", Q, "--json"], ["ask", Q]]
    for task in ("summarise", "cite"):
        try:
            __import__(f"rag.tasks.{task}")
            cmds += [[task, Q, "--json"], [task, Q]]
        except ImportError:
            pass
    for argv in cmds:
        rc, text = run_inprocess(argv, capsys, caplog)
        assert not leaks(text), f"{what}: {argv[0]} leaked the key:\n{text[:3000]}"
        assert isinstance(rc, int), f"{what}: {argv[0]} crashed:\n{rc}"
        if works:
            assert rc == 0, text[:2000]
        elif argv[0] == "ask":
            # ask always calls the model here; an endpoint failure is one line and a non-zero exit
            assert rc != 0, f"{what}: {argv[0]} did not fail:\n{text[:2000]}"
    if "/e" in base or "/ok/" in base:
        assert _Handler.seen_keys and all(SENTINEL in k for k in _Handler.seen_keys), "the key was not sent"


def test_working_endpoint_json_and_bibtex_export_hold_no_key(env, llm_server, tmp_path, capsys, caplog):
    pytest.importorskip("rag.tasks.summarise")
    env.setenv("PAPERCHAT_LLM", "openai")
    env.setenv("OPENAI_BASE_URL", f"{llm_server}/ok/v1")
    bib = tmp_path / "refs.bib"
    rc, text = run_inprocess(["summarise", Q, "--json", "--bibtex", str(bib)], capsys, caplog)
    assert rc == 0, text[:2000]
    assert not leaks(text) and not leaks(bib.read_text(encoding="utf-8"))
    rc, text, out = run_inprocess(["ask", Q, "--json"], capsys, caplog, want_stdout=True)
    assert rc == 0, text[:2000]
    ans = json.loads(out)
    assert ans["mode"] == "llm" and ans["citations"] and not leaks(out)


def test_settings_dump_and_repr_hide_the_key(env):
    from rag.tasks.llm import describe
    from rag.settings import Settings

    s = Settings()
    assert s.openai_api_key is not None and s.openai_api_key.get_secret_value() == SENTINEL
    for text in (s.model_dump_json(), repr(s), str(s), str(s.model_dump()), repr(s.openai_api_key), describe(s)):
        assert not leaks(text), text
    env.setenv("PAPERCHAT_LLM", "openai")
    env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    assert not leaks(describe(Settings()))


def test_redact_masks_the_key_and_key_shaped_strings(env):
    from rag.errors import redact

    assert not leaks(redact(f"boom: {SENTINEL} in url http://u:{SENTINEL}@h/v1"))
    other = "sk-proj-" + "Q" * 40
    assert other not in redact(f"error: {other}")


def _subprocess(argv: list[str], **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERCHAT_", "OPENAI_"))}
    env.update(PYTHONPATH=str(ROOT), ANONYMIZED_TELEMETRY="False", **env_extra)
    return subprocess.run([sys.executable, "-m", "rag.cli", *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("base", ["closed", "url-with-key", "echo-500"])
def test_real_terminal_output_in_llm_mode_holds_no_key(base, home, llm_server):
    """As a user's terminal sees it: a real process, its whole stdout and stderr."""
    port = free_port()
    url = {"closed": f"http://127.0.0.1:{port}/v1", "url-with-key": f"http://k:{SENTINEL}@127.0.0.1:{port}/v1",
           "echo-500": f"{llm_server}/e500/v1"}[base]
    t = time.monotonic()
    p = _subprocess(["ask", Q, "--json"], PAPERCHAT_HOME=str(home), PAPERCHAT_EMBEDDER="fake", PAPERCHAT_LLM="openai",
                    OPENAI_API_KEY=SENTINEL, OPENAI_BASE_URL=url, PAPERCHAT_REQUEST_TIMEOUT="5", OPENAI_LOG="debug")
    assert not leaks(p.stdout + p.stderr), p.stderr[-3000:]
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout[:500], p.stderr[-2000:])
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("paperchat: ") and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert time.monotonic() - t < 60


def test_status_line_hides_a_key_pasted_into_the_base_url(env):
    from rag.tasks.llm import describe
    from rag.settings import Settings

    env.setenv("PAPERCHAT_LLM", "openai")
    env.setenv("OPENAI_BASE_URL", f"http://user:{SENTINEL}@127.0.0.1:1/v1")
    assert not leaks(describe(Settings()))


def test_output_into_a_closed_pipe_is_not_a_traceback(home):
    """`paperchat papers --json | head -1`: the reader leaves early; no traceback on stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERCHAT_", "OPENAI_"))}
    env.update(PYTHONPATH=str(ROOT), ANONYMIZED_TELEMETRY="False", PAPERCHAT_HOME=str(home), PAPERCHAT_EMBEDDER="fake")
    r, w = os.pipe()
    os.close(r)  # the reader is already gone, like `head` after its first lines
    try:
        p = subprocess.run([sys.executable, "-m", "rag.cli", "papers", "--json"], cwd=ROOT, env=env, stdout=w,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(w)
    assert "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr
    assert p.returncode == 141
