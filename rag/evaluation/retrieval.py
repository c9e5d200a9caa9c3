"""`paperchat eval retrieval`: the product's own search path measured on a BEIR-format folder."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import tempfile
import time
from pathlib import Path

from rag.errors import UserError
from rag.evaluation.metrics import evaluate
from rag.settings import Settings


def read_beir(folder: Path, split: str) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """Queries (id -> text) and qrels (query id -> {doc id: grade}) of one split."""
    for name in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        if not (folder / name).exists():
            raise UserError(f"{folder} is not a BEIR folder: {name} is missing")
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8") as f:
        for i, row in enumerate(csv.reader(f, delimiter="\t")):
            if i == 0 and not row[-1].strip().lstrip("-").isdigit():
                continue  # header line
            if len(row) >= 3:
                qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    queries: dict[str, str] = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                q = json.loads(line)
                if str(q["_id"]) in qrels:
                    queries[str(q["_id"])] = q["text"]
    return queries, qrels


def evaluate_beir(folder: Path, split: str = "test", settings: Settings | None = None, progress: bool | None = None,
                  k: int = 100) -> dict:
    """Ingest the corpus into a throwaway library, run every query through `search`, score the run."""
    from rag.library.library import Library
    from rag.library.retrieval import search

    settings = settings or Settings()
    folder = Path(folder)
    t0 = time.perf_counter()
    queries, qrels = read_beir(folder, split)
    if not queries:
        raise UserError(f"no queries of split {split!r} in {folder}")
    # A throwaway library in a temporary store; vectors still come from (and go to) the shared
    # embedding cache under PAPERCHAT_HOME, so a second run does not embed again.
    tmp = Path(tempfile.mkdtemp(prefix="paperchat-eval-"))
    try:
        name = "eval-" + hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:8]
        lib_settings = settings.model_copy(update={"library": name, "chroma_url": None})
        from rag.library.chroma import make_client

        lib = Library(lib_settings, client=make_client(tmp), local_dir=tmp / "library")
        report = lib.ingest([folder / "corpus.jsonl"], progress=progress)
        if len(lib) == 0:
            raise UserError(f"nothing could be ingested from {folder / 'corpus.jsonl'}")
        run = {qid: [h.paper.paper_id for h in search(lib, text, k)] for qid, text in queries.items()}
        scores = evaluate(run, {q: qrels[q] for q in queries})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {**{m: round(v, 4) for m, v in scores.items()}, "queries": len(queries),
            "documents": len(lib.catalogue), "rejected": report.rejected,
            "seconds": round(time.perf_counter() - t0, 1)}
