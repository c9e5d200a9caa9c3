"""Ranking metrics for retrieval benchmarks: nDCG@k, Recall@k, MRR@k.

Conventions (those of BEIR / trec_eval):

* ``qrels`` maps query id -> {doc id: graded relevance}; a grade > 0 is relevant.
* ``run`` maps query id -> ranked list of doc ids, best first (or use :func:`rank` to get one
  from a {doc id: score} dict; ties broken by doc id so results are deterministic).
* Only queries present in ``qrels`` with at least one relevant document are evaluated; a query
  missing from the run scores 0.
* nDCG uses gain = relevance grade and discount log2(rank + 1), rank starting at 1; the ideal
  DCG sorts the query's judged grades, so it does not depend on what was retrieved.
* Recall@k = relevant documents in the top k / all relevant documents of the query.
* MRR@k = 1 / rank of the first relevant document in the top k, 0 if none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Sequence[str]]


def rank(scores: Mapping[str, float], k: int | None = None) -> list[str]:
    """Doc ids by descending score (ties: ascending doc id), cut at k if given."""
    ordered = sorted(scores, key=lambda d: (-scores[d], d))
    return ordered if k is None else ordered[:k]


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int = 10) -> float:
    ideal = dcg(sorted((r for r in rels.values() if r > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([max(rels.get(d, 0), 0) for d in ranked[:k]]) / ideal


def recall_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int = 100) -> float:
    relevant = {d for d, r in rels.items() if r > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def mrr_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int = 10) -> float:
    for i, d in enumerate(ranked[:k]):
        if rels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def per_query(run: Run, qrels: Qrels, metric, k: int) -> dict[str, float]:
    """metric(ranked, rels, k) for every evaluable query in qrels."""
    return {
        qid: metric(run.get(qid, ()), rels, k)
        for qid, rels in qrels.items()
        if any(r > 0 for r in rels.values())
    }


def mean(values: Mapping[str, float]) -> float:
    return sum(values.values()) / len(values) if values else 0.0


def evaluate(run: Run, qrels: Qrels, ndcg_k: int = 10, recall_k: int = 100, mrr_k: int = 10) -> dict[str, float]:
    """Mean nDCG@ndcg_k, Recall@recall_k and MRR@mrr_k over the queries in qrels."""
    return {
        f"ndcg@{ndcg_k}": mean(per_query(run, qrels, ndcg_at_k, ndcg_k)),
        f"recall@{recall_k}": mean(per_query(run, qrels, recall_at_k, recall_k)),
        f"mrr@{mrr_k}": mean(per_query(run, qrels, mrr_at_k, mrr_k)),
    }
