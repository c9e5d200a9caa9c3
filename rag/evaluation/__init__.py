"""Evaluation a user runs on their own machine: `paperchat eval retrieval` (retrieval.py, metrics.py)."""
