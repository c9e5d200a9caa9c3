"""`paperchat eval answers`: every question of a set asked of the current answerer (extractive, or the
configured model) in the eval's own library, each answer scored by rag.evaluation.mlqa; figures per question
type and overall, with what produced them."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from rag.evaluation.mlqa import EvalQuestion, figures_by_type, load_questions, score_answer
from rag.evaluation.runs import RunFile, ask_missing, check_answerer, provenance
from rag.evaluation.workspace import eval_folder, open_eval_library
from rag.settings import Settings


def ask_all(questions: Sequence[EvalQuestion], library, model=None, progress: bool | None = None,
            fresh: bool = False) -> tuple[list, RunFile, int]:
    """Ask every question this answerer (code, settings, model) has not answered yet, keeping each answer as
    it comes; the scores in the questions' order, the run file, and how many were asked now."""
    from rag.tasks.ask import ask

    settings = library.settings

    def row_of(q: EvalQuestion) -> dict:
        return {"question": q.q, "answer": ask(q.q, library, settings=settings, model=model).as_json()}

    run, now = ask_missing("answers", questions, lambda q: q.id, row_of, library, model, progress, fresh,
                           unit=" questions")
    scores = [score_answer(q, run.done[q.id]["answer"], run.done[q.id].get("seconds")) for q in questions]
    return scores, run, now


def evaluate_answers(settings: Settings, *, mlqa: Path | None = None, pubmedqa: Path | None = None,
                     split: str = "test", limit: int | None = None, model=None, progress: bool | None = None,
                     fresh: bool = False) -> dict:
    """The report of `paperchat eval answers` on an mlqa folder or PubMedQA's ori_pqal.json."""
    t0 = time.perf_counter()
    check_answerer(settings, model)
    if mlqa is not None:
        kind = "mlqa"
        questions = load_questions(Path(mlqa), split)
        library = open_eval_library(settings, kind, Path(mlqa) / "library.jsonl", progress=progress)
    else:
        from rag.evaluation.pubmedqa import pubmedqa_questions, write_library_records

        kind = "pubmedqa"
        questions = pubmedqa_questions(Path(pubmedqa), split)
        records = write_library_records(Path(pubmedqa), eval_folder(settings, kind, Path(pubmedqa)) / "pubmedqa.jsonl")
        library = open_eval_library(settings, kind, Path(pubmedqa), records, progress=progress)
    questions = questions[:limit] if limit else questions
    scores, run, now = ask_all(questions, library, model, progress, fresh)
    return {**provenance(kind, split, library, settings, model, run, len(questions), now, time.perf_counter() - t0),
            **figures_by_type(scores), "per_question": [s.model_dump() for s in scores]}
