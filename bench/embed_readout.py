"""Where the sentence read-out sits in a chunk pass, side by side on the same windows in one run (issue 34):

  per_batch   the read-out's product after every batch of 32 windows (how embed_chunks ran until session 27);
  once        embed_chunks as it runs now: the span means of all batches read out in one product at the end;
  noreadout   the same pass with no read-out (the floor: one pass, span means, nothing after);
  embed_array the raw embedder on the same windows (what ingest is measured against).

Only the model calls, no Chroma and no threads: the windows ingest cuts from the first --n paperlists abstracts.
numpy's product is its only BLAS call between forward passes; OpenBLAS's threads kept spinning after each one
and took the two cores from ONNX Runtime's next pass, so `once` should sit near `noreadout`, `per_batch` above.
Order rotated each round; best of --repeat per path.

  .venv/bin/python bench/embed_readout.py --n 1000 --repeat 2
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import _common as C  # noqa: E402

from rag.embedders import get_embedder  # noqa: E402
from rag.embedders.minilm import _read_out_all  # noqa: E402
from rag.library.chunking import chunk_windows  # noqa: E402
from rag.settings import Settings  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    C.add_corpus_args(ap)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--name", default="embed_readout")
    args = ap.parse_args()
    started = time.time()
    m = C.print_header("the sentence read-out inside a chunk pass")
    with tempfile.TemporaryDirectory() as tmp:
        papers = C.load_papers(C.corpus_from_args(args, Path(tmp)))
        cs = Settings(home=Path(tmp) / "home").chunk
    emb = get_embedder("minilm")
    emb.embed_array(["warm up"])
    wins = [w for p in papers for w in chunk_windows(p, cs.max_chars, cs.max_tokens, emb.count_tokens)]
    texts = [w.text for w in wins]
    spans = [[(a, b) for _, a, b in w.spans] for w in wins]

    def per_batch():
        encs = emb._tokenizer.encode_batch(texts)
        for idx in emb._batches(encs):
            vecs, per = emb._run([encs[i] for i in idx], [spans[i] for i in idx])
            _read_out_all(per, vecs)

    paths = {"per_batch": per_batch, "once": lambda: emb.embed_chunks(texts, spans),
             "noreadout": lambda: emb.embed_chunks(texts, spans, readout=False),
             "embed_array": lambda: emb.embed_array(texts)}
    names, runs = list(paths), {n: [] for n in paths}
    print(f"{len(papers)} abstracts, {len(texts)} windows, {sum(map(len, spans))} sentences\n")
    for r in range(args.repeat):
        for n in names[r % len(names):] + names[: r % len(names)]:
            t, c = time.perf_counter(), time.process_time()
            paths[n]()
            runs[n].append({"wall": time.perf_counter() - t, "cpu": time.process_time() - c})
            print(f"round {r}  {n:12s} {runs[n][-1]['wall']:7.1f} s wall {runs[n][-1]['cpu']:7.1f} s CPU", flush=True)
    best = {n: min(x["wall"] for x in v) for n, v in runs.items()}
    print("\nbest of", args.repeat, "by wall clock:", ", ".join(f"{n} {s:.1f} s" for n, s in best.items()))
    print(f"once vs per_batch: {best['per_batch'] / best['once']:.2f}x faster; "
          f"once vs embed_array: {best['embed_array'] / best['once']:.2f}x its rate; "
          f"noreadout vs embed_array: {best['embed_array'] / best['noreadout']:.2f}x")
    C.write_results(args.name, {"abstracts": len(papers), "windows": len(texts), "runs": runs, "best_wall": best}, m,
                    started)


if __name__ == "__main__":
    main()
