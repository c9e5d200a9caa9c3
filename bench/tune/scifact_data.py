"""SciFact (BEIR) loading and the texts that get embedded / indexed, shared by the tuning scripts."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from rag.library.chunking import chunk_paper, chunk_prefix
from rag.records import Chunk, Paper
from rag.reading.sentences import split_sentences

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "scifact"
if not DATA.exists():
    DATA = Path("/work/shared/data/scifact")


@lru_cache(maxsize=1)
def papers() -> list[Paper]:
    out = []
    with open(DATA / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out.append(Paper(paper_id=str(d["_id"]), abstract=d["text"], title=d.get("title", "")))
    return out


@lru_cache(maxsize=1)
def queries() -> dict[str, str]:
    out = {}
    with open(DATA / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out[str(d["_id"])] = d["text"]
    return out


@lru_cache(maxsize=2)
def qrels(split: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(dict)
    with open(DATA / "qrels" / f"{split}.tsv", encoding="utf-8") as f:
        rows = csv.reader(f, delimiter="\t")
        next(rows)  # header
        for qid, did, score in rows:
            out[str(qid)][str(did)] = int(score)
    return dict(out)


def whole_text(p: Paper) -> str:
    """Title + whole abstract, whitespace-folded exactly as chunk_paper builds a single-chunk text
    (so a paper that fits one chunk shares its vector). The embedder truncates it at 256 tokens."""
    return chunk_prefix(p) + " ".join(split_sentences(p.abstract) or [p.abstract.strip()])


def chunks(max_chars: int, count_tokens) -> list[Chunk]:
    return [c for p in papers() for c in chunk_paper(p, max_chars=max_chars, max_tokens=256, count_tokens=count_tokens)]
