"""`paperchat eval summaries`: every research area of a set summarised by the current answerer in the eval's
own library, each summary scored by its reference list (rag.evaluation.mlqa.score_summary)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from rag.evaluation.mlqa import Topic, load_topics, score_summary, summary_figures
from rag.evaluation.runs import RunFile, ask_missing, check_answerer, provenance
from rag.evaluation.workspace import open_eval_library
from rag.errors import UserError
from rag.settings import Settings


def summarise_all(topics: Sequence[Topic], library, model=None, progress: bool | None = None,
                  fresh: bool = False) -> tuple[list, RunFile, int]:
    from rag.tasks.summarise import summarise

    settings = library.settings

    def row_of(t: Topic) -> dict:
        res = summarise(t.topic, library, settings=settings, model=model)
        return {"abstained": res.abstained, "cited": [c.paper.paper_id for c in res.citations],
                "summary": res.as_json()}

    run, now = ask_missing("summaries", topics, lambda t: t.topic, row_of, library, model, progress, fresh,
                           unit=" areas")
    rows = [run.done[t.topic] for t in topics]
    return [score_summary(t, r["cited"], r["abstained"], r.get("seconds")) for t, r in zip(topics, rows)], run, now


def evaluate_summaries(settings: Settings, *, mlqa: Path, split: str = "test", limit: int | None = None,
                       model=None, progress: bool | None = None, fresh: bool = False,
                       topics_file: Path | None = None) -> dict:
    """The report of `paperchat eval summaries` on an mlqa folder: its own areas, or those of `topics_file`
    (judged over the same library)."""
    t0 = time.perf_counter()
    check_answerer(settings, model)
    topics = load_topics(Path(mlqa), split, topics_file)
    topics = topics[:limit] if limit else topics
    areas_file = topics_file or Path(mlqa) / "topics.jsonl"
    library = open_eval_library(settings, "mlqa", Path(mlqa) / "library.jsonl", progress=progress)
    check_judged(topics, library, areas_file)
    scores, run, now = summarise_all(topics, library, model, progress, fresh)
    return {**provenance("mlqa", split, library, settings, model, run, len(topics), now, time.perf_counter() - t0),
            "areas_file": str(areas_file),
            "overall": summary_figures(scores), "per_area": [s.model_dump() for s in scores]}


def check_judged(topics: Sequence[Topic], library, path: Path) -> None:
    """Areas judged over another library would score every summary as off: say so instead."""
    have = {p.paper_id for p in library.papers()}
    judged = {i for t in topics for i in (*t.core, *t.related, *t.off)}
    missing = sorted(judged - have)
    if missing:
        raise UserError(f"{path}: {len(missing)} of its {len(judged)} judged papers are not in the set's library "
                        f"(e.g. {', '.join(missing[:3])}): its areas must be judged over that library.jsonl")
