"""A minimal OpenAI-protocol /v1/embeddings server around paperchat's in-process embedder, for benches.

    .venv/bin/python bench/embedding_server.py --port 8089 [--embedder minilm|fake] [--threads N] [--cpus 0,1]

It is what a lab's embedding service is to paperchat (a URL speaking the protocol), on this machine:
benches compare ingest through it with ingest in process, on the same model and cores.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def make_server(embed, port: int = 0) -> ThreadingHTTPServer:
    """A /v1/embeddings server on 127.0.0.1 answering with `embed(texts)` (an array, one row per text),
    as floats or, when asked, base64 (what the openai client asks for)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = req["input"] if isinstance(req["input"], list) else [req["input"]]
            vecs = embed(texts)
            b64 = req.get("encoding_format") == "base64"
            data = [{"object": "embedding", "index": i,
                     "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode() if b64 else v.tolist()}
                    for i, v in enumerate(vecs)]
            body = json.dumps({"object": "list", "model": req.get("model"), "data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "fake"])
    ap.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads (default: all cores)")
    ap.add_argument("--cpus", default=None, help="run on these cores only, e.g. 0 (a service on its own hardware)")
    args = ap.parse_args()
    if args.cpus:
        # before the model loads, so its thread pool inherits the cores
        os.sched_setaffinity(0, {int(c) for c in args.cpus.split(",")})
    from rag.embedders import get_embedder

    emb = get_embedder(args.embedder)
    if args.threads:
        emb.threads = args.threads
    emb.embed_array(["warm up"])
    httpd = make_server(emb.embed_array, args.port)
    print(f"serving {emb.model_id} on http://127.0.0.1:{args.port}/v1", flush=True)
    httpd.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
