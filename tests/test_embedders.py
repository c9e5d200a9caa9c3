"""Embedders past the default: an OpenAI-protocol endpoint (order, concurrency, retries, one clear line when
it keeps failing, the key never shown), MiniLM's choice of GPU or CPU, and the embedder as part of the
library's identity (refusals, the cache keyed by it). The real-server tests are in test_embedding_server.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import SEEDS, make_settings
from embedserver import serve, text_vector, unit
from procs import free_port
from rag.embedders import EmbedderMismatch, HashingEmbeddings, MiniLMEmbeddings, make_embedder
from rag.embedders.device import CPU, CUDA, choose_providers, gpu_visible
from rag.embedders.endpoint import EndpointEmbeddings, EndpointFailed
from rag.errors import UserError
from rag.library.library import Library
from rag.settings import Settings

KEY = "sk-EMBEDSENTINEL0ddba11f00d"


@pytest.fixture(scope="module")
def fake_server():
    url, behaviour, stop = serve(dim=8)
    yield url, behaviour
    stop()


# -- the endpoint --------------------------------------------------------------------------------------

@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(min_size=0, max_size=30), min_size=0, max_size=60),
       batch=st.integers(1, 9), concurrency=st.integers(1, 5))
def test_endpoint_vectors_come_back_in_input_order_whatever_the_batching(fake_server, texts, batch, concurrency):
    url, b = fake_server
    b.max_delay = 0.01  # batches finish out of order
    emb = EndpointEmbeddings(url, "fake-8", batch_size=batch, concurrency=concurrency, retries=0)
    got = emb.embed_array(texts)
    assert got.shape == (len(texts), 8 if texts else got.shape[1])
    want = [unit(text_vector(t if t.strip() else ".")) for t in texts]
    assert all(np.allclose(g, w, atol=1e-5) for g, w in zip(got, want))
    assert all(n <= batch for n in b.inputs[-((len(texts) + batch - 1) // batch) or len(b.inputs):])


def test_endpoint_sends_batches_concurrently_and_retries_a_failing_server(fake_server):
    url, b = fake_server
    b.max_delay, b.most_in_flight = 0.05, 0
    emb = EndpointEmbeddings(url, "fake-8", batch_size=4, concurrency=4, retries=3)
    emb.embed_array([f"text {i}" for i in range(64)])
    assert b.most_in_flight >= 2, "batches were sent one at a time"
    b.max_delay, b.fail_first = 0.0, 2  # two 503s, then the server recovers: retried, nothing lost
    before = b.requests
    v = emb.embed_array(["one", "two"])
    assert np.allclose(v[1], unit(text_vector("two")), atol=1e-5) and b.requests - before == 3


def test_a_server_that_keeps_failing_is_one_line_without_the_key(fake_server, monkeypatch):
    url, b = fake_server
    b.fail_when, b.failing = "", True
    try:
        emb = EndpointEmbeddings(url, "fake-8", api_key=KEY, retries=1)
        with pytest.raises(EndpointFailed) as e:
            emb.embed_array(["anything"])
    finally:
        b.failing = False
    msg = str(e.value)
    assert "HTTP 503" in msg and "2 attempts" in msg and "\n" not in msg
    assert KEY not in msg and "0ddba11f00d" not in msg
    assert b.keys[-1] == f"Bearer {KEY}"  # the key did reach the server
    dead = EndpointEmbeddings(f"http://127.0.0.1:{free_port()}/v1", "m", retries=0)
    with pytest.raises(EndpointFailed, match="cannot connect"):
        dead.embed_array(["x"])


def test_settings_nest_under_embeddings_and_the_url_makes_the_endpoint_the_embedder(monkeypatch):
    monkeypatch.setenv("PAPERCHAT_EMBEDDINGS__URL", "http://tei:8080/v1")
    monkeypatch.setenv("PAPERCHAT_EMBEDDINGS__MODEL", "BAAI/bge-small-en-v1.5")
    monkeypatch.setenv("PAPERCHAT_EMBEDDINGS__API_KEY", KEY)
    monkeypatch.setenv("PAPERCHAT_EMBEDDINGS__CONCURRENCY", "8")
    monkeypatch.setenv("PAPERCHAT_EMBEDDINGS__BATCH_SIZE", "64")
    s = Settings()
    assert s.embedder == "endpoint" and s.embeddings.concurrency == 8 and s.embeddings.batch_size == 64
    assert KEY not in repr(s) and KEY not in str(s.model_dump())
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "minilm")  # said explicitly: the URL does not override it
    assert Settings().embedder == "minilm"


# -- where MiniLM runs -----------------------------------------------------------------------------------

@pytest.mark.parametrize("device,available,visible,want", [
    ("auto", [CPU], False, [CPU]),
    ("auto", [CPU], True, [CPU]),              # a GPU but plain onnxruntime: CPU
    ("auto", [CUDA, CPU], False, [CPU]),       # onnxruntime-gpu but no GPU visible: CPU
    ("auto", [CUDA, CPU], True, [CUDA, CPU]),  # both: the GPU, CPU as onnxruntime's fallback
    ("cpu", [CUDA, CPU], True, [CPU]),
    ("cuda", [CUDA, CPU], False, [CUDA, CPU]),  # asked for: tried even if no device node is seen
])
def test_minilm_runs_on_cuda_only_when_onnxruntime_gpu_and_a_gpu_are_there(device, available, visible, want):
    assert choose_providers(device, available, visible) == want


def test_asking_for_cuda_without_onnxruntime_gpu_says_what_to_install():
    with pytest.raises(UserError, match="onnxruntime-gpu"):
        choose_providers("cuda", [CPU], True)


def test_gpu_visibility_follows_device_nodes_and_cuda_visible_devices():
    assert gpu_visible({}, ["/dev/nvidia0"])
    assert not gpu_visible({}, [])
    assert not gpu_visible({"CUDA_VISIBLE_DEVICES": "-1"}, ["/dev/nvidia0"])
    assert not gpu_visible({"CUDA_VISIBLE_DEVICES": ""}, ["/dev/nvidia0"])
    assert gpu_visible({"CUDA_VISIBLE_DEVICES": "1"}, ["/dev/nvidia0", "/dev/nvidia1"])


def test_stats_and_the_ui_say_where_the_embedder_runs(tmp_path, monkeypatch, capsys):
    import onnxruntime

    lib = Library(make_settings(tmp_path / "home", embedder="minilm"))
    st = lib.stats()
    assert (st["embedder"], st["embedder_dimension"]) == ("all-MiniLM-L6-v2-onnx-int8", 384)
    assert st["embedder_runs_on"] == "in process, onnxruntime CPU"  # no GPU on this machine
    from ui.app import PaperchatUI

    assert "in process, onnxruntime CPU" in PaperchatUI(lib.settings, library=lib).status()
    # With onnxruntime-gpu and a GPU, the same library would say CUDA (selection only: no GPU here).
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: [CUDA, CPU])
    monkeypatch.setattr("rag.embedders.device.gpu_visible", lambda: True)
    assert MiniLMEmbeddings(device="auto").runs_on == "in process, onnxruntime CUDA"
    assert MiniLMEmbeddings(device="cpu").runs_on == "in process, onnxruntime CPU"


# -- the embedder is part of the library -----------------------------------------------------------------

class _Narrow(HashingEmbeddings):
    dimension = 128  # the same model name, other vectors


def test_a_library_refuses_another_model_or_dimension_before_any_request(tmp_path, fake_server):
    url, b = fake_server
    home = tmp_path / "home"
    Library(make_settings(home, embedder="fake")).ingest([SEEDS / "000_e59311403e2266af.txt"], progress=False)
    with pytest.raises(EmbedderMismatch, match="built with embedder hashing-fake .256-dim, l2., not hashing-fake .128"):
        Library(make_settings(home, embedder="fake"), embedder=_Narrow())
    before = b.requests
    s = make_settings(home, embedder="endpoint", embeddings={"url": url, "model": "fake-8"})
    with pytest.raises(EmbedderMismatch, match="built with embedder hashing-fake, not fake-8"):
        Library(s)
    assert b.requests == before, "the model name alone decides; no request was needed"


def test_the_endpoints_identity_is_recorded_and_keys_the_cache_not_its_url(tmp_path, fake_server):
    url, b = fake_server
    home = tmp_path / "home"
    s = make_settings(home, embedder="endpoint", embeddings={"url": url, "model": "fake-8", "retries": 0})
    lib = Library(s)
    lib.ingest([SEEDS / "000_e59311403e2266af.txt"], progress=False)
    meta = lib.collections.papers.metadata
    assert (meta["embedder"], meta["embedder_dim"], meta["embedder_norm"]) == ("fake-8", 8, "l2")
    assert (home / "cache" / "fake-8-8d-l2.sqlite").exists()
    # The service moved (another URL, same model): the library opens, and the cache serves its texts.
    url2, b2, stop2 = serve(dim=8)
    try:
        moved = make_settings(home, embedder="endpoint", embeddings={"url": url2, "model": "fake-8"})
        lib2 = Library(moved, embedder=EndpointEmbeddings(url2, "fake-8", retries=0))
        assert len(lib2) == len(lib) and lib2.stats()["embedder_runs_on"].startswith(f"endpoint {url2}")
        with lib2.write_lock():
            lib2.ingestor.recut()  # rebuilt from the records: every chunk from the cache, no request
        assert b2.requests == 0
    finally:
        stop2()


def test_make_embedder_shares_one_embedder_per_configuration():
    a = make_embedder(Settings(embedder="fake"))
    assert a is make_embedder(Settings(embedder="fake"))
    e1 = make_embedder(Settings(embeddings={"url": "http://a:1/v1", "model": "m"}))
    e2 = make_embedder(Settings(embeddings={"url": "http://b:1/v1", "model": "m"}))
    assert isinstance(e1, EndpointEmbeddings) and e1 is not e2
