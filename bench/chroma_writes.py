"""What Chroma's chunk writes cost ingest, by where a chunk's text is kept: as the Chroma document (how
libraries were written before), in the chunk's metadata (`text`, as ingest writes now:
rag.library.collections.chunk_metadata), or nowhere (the floor: vectors and the filter fields alone).

Chroma indexes every document for full-text search; paperchat never searches chunk documents (BM25 is its
own index), so that index is work ingest paid for nothing. Disabling it through Chroma's Schema
(`delete_index(FtsIndexConfig(), key="#document")`) did not lower the cost of the embedded store (1.5.9).

The chunks are the real windows ingest cuts from the first N paperlists abstracts; the vectors are random
unit vectors (the model is not what is measured), upserted one write batch at a time as ingest commits them, each layout
into a fresh store, order rotated, best of --repeat.

    .venv/bin/python bench/chroma_writes.py --n 1000 --repeat 3
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

LAYOUTS = ("document", "metadata", "neither")


def write(batches: list[tuple[list, np.ndarray]], venue: dict, layout: str) -> tuple[float, float]:
    """(CPU s, wall s) of upserting each write batch's chunks in one call, as ingest's commit does."""
    import chromadb

    from rag.library.collections import _CHUNKS_CONFIG, chunk_metadata

    client = chromadb.PersistentClient(path=tempfile.mkdtemp(prefix="bench-chroma-writes-"))
    col = client.get_or_create_collection("bench-chunks", embedding_function=None, configuration=_CHUNKS_CONFIG)
    cpu, wall = time.process_time(), time.perf_counter()
    for part, vecs in batches:
        metas = [chunk_metadata(c, *venue[c.paper_id]) for c in part]
        kw = {}
        if layout != "metadata":
            for m in metas:
                del m["text"]
        if layout == "document":
            kw["documents"] = [c.text for c in part]
        col.upsert(ids=[c.chunk_id for c in part], embeddings=vecs, metadatas=metas, **kw)
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="paperlists abstracts")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from rag.embedders.minilm import MiniLMEmbeddings
    from rag.library.ingest import BATCH
    from rag.settings import Settings

    papers = C.load_papers(C.write_corpus("paperlists", args.n, Path(tempfile.mkdtemp()) / "paperlists.jsonl"))
    embedder, settings = MiniLMEmbeddings(), Settings()  # the embedder's token counter only: no model is run
    rng = np.random.default_rng(0)
    batches = []
    for s in range(0, len(papers), BATCH):  # one upsert per write batch of BATCH papers, as ingest commits
        part = C.make_chunks(papers[s : s + BATCH], settings, embedder)
        vecs = rng.normal(size=(len(part), 384)).astype(np.float32)
        batches.append((part, vecs / np.linalg.norm(vecs, axis=1, keepdims=True)))
    venue = {p.paper_id: (p.venue, p.year) for p in papers}
    n_chunks = sum(len(part) for part, _ in batches)
    print(f"{len(papers)} paperlists abstracts -> {n_chunks} chunks; one upsert per {BATCH} papers; "
          f"best of {args.repeat}, order rotated")
    best: dict[str, tuple[float, float]] = {}
    for r in range(args.repeat):
        for layout in LAYOUTS[r % 3:] + LAYOUTS[: r % 3]:
            got = write(batches, venue, layout)
            best[layout] = min(best.get(layout, got), got)
            print(f"  run {r + 1}: {layout:9s} {got[0]:.2f} s CPU, {got[1]:.2f} s wall")
    base = best["document"][0]
    print("\nlayout      CPU s   wall s   CPU vs the text as document")
    for layout in LAYOUTS:
        print(f"{layout:9s} {best[layout][0]:7.2f} {best[layout][1]:8.2f}   {best[layout][0] / base:.2f}x")
    print(f"\nthe text in the metadata saves {base - best['metadata'][0]:.2f} s of CPU per {len(papers)} abstracts")


if __name__ == "__main__":
    main()
