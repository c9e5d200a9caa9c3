"""Evaluation a user runs on their own machine: `paperchat eval retrieval` (retrieval.py, metrics.py), `eval answers`
(answers.py; PubMedQA as a set: pubmedqa.py) and `eval summaries` (summaries.py), scored by the mlqa yardstick
(mlqa.py, pure functions), each in an eval folder of its own with the answers already asked (workspace.py, runs.py)."""
