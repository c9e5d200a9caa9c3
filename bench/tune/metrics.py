"""The tuning script's metrics are the product's own (rag/evaluation/metrics.py), so train and eval figures agree."""

from rag.evaluation.metrics import dcg, evaluate, mean, mrr_at_k, ndcg_at_k, per_query, rank, recall_at_k  # noqa: F401
