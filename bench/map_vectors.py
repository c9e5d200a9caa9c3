"""Paper vectors for the map benchmarks (bench/map_layout.py), computed once and kept under the bench home.

Not the product's path on purpose: a library's map uses the mean of the chunk vectors ingest stored, but
ingesting SciFact with MiniLM takes 5 minutes on an idle machine (much longer on a shared one) and the
87k paperlists 86 minutes. So the benchmarks embed cheaper texts, named in every result:

- minilm-t64: MiniLM on the title and the first 64 words of the abstract (real semantic vectors);
- fake: the hashing embedder of the tests on title + abstract (lexical; fast, for timing at 87k).

    .venv/bin/python bench/map_vectors.py scifact minilm-t64
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import BENCH_HOME, PAPERLISTS, SCIFACT  # noqa: E402

KINDS = ("minilm-t64", "fake")


def records(corpus: str) -> list[dict]:
    """[{id, title, abstract, venue, year}] of the corpus, in file order."""
    out = []
    if corpus == "scifact":
        with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    out.append({"id": str(r["_id"]), "title": r.get("title", ""), "abstract": r.get("text", ""),
                                "venue": "SciFact", "year": 0})
    elif corpus == "paperlists":
        with gzip.open(PAPERLISTS, "rt", encoding="utf-8") as f:
            for i, line in enumerate(f):
                if line.strip():
                    r = json.loads(line)
                    out.append({"id": str(r.get("id") or i), "title": r.get("title", "") or "",
                                "abstract": r.get("abstract", "") or "", "venue": r.get("venue", "") or "",
                                "year": int(r.get("year") or 0)})
    else:
        raise SystemExit(f"unknown corpus {corpus!r} (scifact or paperlists)")
    return [r for r in out if r["abstract"].strip()]


def text_of(r: dict, kind: str) -> str:
    if kind == "minilm-t64":
        return f"{r['title']}. {' '.join(r['abstract'].split()[:64])}"
    return f"{r['title']}. {r['abstract']}"


def path_of(corpus: str, kind: str) -> Path:
    return BENCH_HOME / "map-vectors" / f"{corpus}-{kind}.npy"


def vectors(corpus: str, kind: str, quiet: bool = False) -> tuple[list[dict], np.ndarray]:
    recs = records(corpus)
    path = path_of(corpus, kind)
    if path.exists():
        v = np.load(path)
        if len(v) == len(recs):
            return recs, v
    from rag.embedders import get_embedder

    emb = get_embedder("minilm" if kind.startswith("minilm") else "fake")
    texts = [text_of(r, kind) for r in recs]
    t0 = time.perf_counter()
    parts = []
    for s in range(0, len(texts), 512):
        parts.append(emb.embed_array(texts[s : s + 512]).astype(np.float32))
        if not quiet:
            done = min(s + 512, len(texts))
            print(f"  {corpus} {kind}: {done}/{len(texts)} embedded ({done / (time.perf_counter() - t0):.0f}/s)",
                  flush=True)
    v = np.concatenate(parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, v)
    return recs, v


if __name__ == "__main__":
    corpus, kind = sys.argv[1], sys.argv[2]
    if kind not in KINDS:
        raise SystemExit(f"kind must be one of {KINDS}")
    recs, v = vectors(corpus, kind)
    print(f"{corpus} {kind}: {v.shape} -> {path_of(corpus, kind)}")
