"""Train weights on one-pass (pooled, read-out) sentence vectors, from scratch, in order; or measure the shipped ones.

    .venv/bin/python bench/train_pooled.py                      # all three, mlqa library under PAPERCHAT_HOME
    .venv/bin/python bench/train_pooled.py --home /tmp/h34      # another home for the one-pass mlqa library
    .venv/bin/python bench/train_pooled.py --skip-area          # roles and answer scorer only (no library)
    .venv/bin/python bench/train_pooled.py --measure            # no training: the shipped role weights of
                                                                # each kind on its vectors, CSAbstruct test

Since the sentence read-out (rag.embedders.readout, bench/train_sentence_readout.py), a one-pass library's
pooled vectors are read out to stand in for sentences embedded alone, and the two-pass weights of the answer
and area scorers serve both kinds (docs/quality.md, "One pass per chunk"). Roles ship roles.pooled.npz (1.):
the role GRUs lose 0.018 of CSAbstruct accuracy on read-out vectors. `--measure` compares the role weights of
both kinds on CSAbstruct.
Training still works, to compare again: the files it writes are read by one-pass libraries from then on
(rag.reading.vector_kind.weights_for), so keep them only where they measure better. It never touches the
two-pass weights. It writes:

1. rag/reading/roles.pooled.npz          bench/train_roles.py --vectors pooled (CSAbstruct)
2. rag/reading/answer_scorer.pooled.npz  bench/train_answer_scorer.py --vectors pooled (its roles from 1.)
3. rag/tasks/area_scorer.pooled.npz      bench/train_area_scorer.py --vectors pooled, on the mlqa library
                                         read in one pass (its roles from 1., cosines from pooled vectors)

For 3. the mlqa eval library of `paperchat eval` under --home is used (ingested in one pass if absent, ~10 min
of embedding on 2 cores; one built in two passes is refused, or with --convert turned one-pass in place: its
sentences' pooled vectors from one chunk pass per paper, its chunk vectors untouched). Rerun it after the features or the training of any of the three change (each
script's own figures are printed as it goes); the two-pass weights are retrained by the scripts themselves.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MLQA = ROOT.parent / "shared" / "data" / "mlqa" / "library.jsonl"
if not MLQA.exists():
    MLQA = Path("/work/shared/data/mlqa/library.jsonl")


def run(*args: str) -> None:
    t = time.time()
    cmd = [sys.executable, *args]
    print(f"\n$ {' '.join(cmd[1:])}", flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)
    print(f"({time.time() - t:.0f} s)", flush=True)


def one_pass_mlqa(home: Path, convert: bool) -> tuple[Path, str]:
    """The mlqa eval library under `home`, read in one pass: (its home folder, its name). Ingested in one pass
    if absent; one built in two passes is turned one-pass only with `convert` (its sentences' pooled vectors
    read from one chunk pass per paper, its chunk vectors untouched, then marked `sentences: pooled`)."""
    from rag.evaluation.workspace import open_eval_library
    from rag.library.embcache import CachedEmbedder, pooled_kind
    from rag.library.ingest import chunking_of
    from rag.settings import ChunkSettings, Settings

    s = Settings(home=home, embedder="minilm", chunk=ChunkSettings(one_pass=True))
    lib = open_eval_library(s, "mlqa", MLQA)
    if lib.collections.sentences != "pooled":
        if not convert:
            raise SystemExit(f"the mlqa library under {lib.settings.home} was built in two passes: pass --convert to "
                             "read its sentences in one pass (in place), or another --home to ingest one afresh")
        emb = CachedEmbedder(lib.embedder, lib.ingestor.cache, lib.ingestor.windows, pooled_kind(chunking_of(s)))
        ids = [p.paper_id for p in lib.papers()]
        t = time.time()
        for i in range(0, len(ids), 200):
            emb.prime(list(lib.get_papers(ids[i : i + 200]).values()))
        col = lib.collections.papers
        col.modify(metadata={**(col.metadata or {}), "sentences": "pooled"})
        print(f"mlqa library turned one-pass: {len(ids)} papers' sentence vectors in {time.time() - t:.0f} s", flush=True)
    return lib.settings.home, lib.settings.library


def measure() -> None:
    """CSAbstruct test accuracy of the shipped role weights for each kind of vector, each on its own kind, side by
    side in one run (no training; the vectors come from bench/train_roles.py's cache)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import numpy as np
    import train_roles as tr

    from rag.reading.roles import model
    from rag.reading.vector_kind import POOLED, STANDALONE

    rows = tr.load("test")
    y = np.array([tr.ROLES.index(lab) for r in rows for lab in r["labels"]])
    for kind in (STANDALONE, POOLED):
        s = tr.scores(y, tr.predict_rows(model(kind), rows, tr.vectors("test", rows, kind)))
        print(f"CSAbstruct test ({len(y)} sentences), {kind:<10} vectors, shipped weights: accuracy {s['accuracy']:.4f}, "
              f"macro-F1 {s['macro_f1']:.4f}; per role {s['f1']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, default=Path(os.environ.get("PAPERCHAT_HOME", Path.home() / ".paperchat")),
                    help="the paperchat home whose mlqa eval library trains the area scorer")
    ap.add_argument("--skip-area", action="store_true", help="leave area_scorer.pooled.npz as it is")
    ap.add_argument("--convert", action="store_true", help="turn a two-pass mlqa eval library under --home one-pass")
    ap.add_argument("--measure", action="store_true", help="only report both shipped role weights on CSAbstruct test")
    args = ap.parse_args()
    if args.measure:
        measure()
        return 0
    run("bench/train_roles.py", "--vectors", "pooled")
    run("bench/train_answer_scorer.py", "--vectors", "pooled")
    if not args.skip_area:
        if not MLQA.exists():
            print(f"skipped the area scorer: {MLQA} is absent", file=sys.stderr)
            return 0
        folder, name = one_pass_mlqa(args.home, args.convert)
        run("bench/train_area_scorer.py", "--home", str(folder), "--library", name, "--vectors", "pooled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
