"""PubMedQA PQA-L (ori_pqal.json) as an answer set: each question's abstract is its CONTEXTS and LONG_ANSWER
joined, in that order (paper id: the PubMed id), and its answer sentences are the LONG_ANSWER's (the
conclusion, which answers the question). The type is the labelled decision (yes / no / maybe).
Splits as bench/pubmedqa_answers.py has them: `train` questions 1-500 (tuned on), `test` 501-1000."""

from __future__ import annotations

import json
from pathlib import Path

from rag.errors import UserError
from rag.evaluation.mlqa import EvalQuestion
from rag.reading.sentences import split_sentences

SPLITS = {"train": slice(0, 500), "test": slice(500, None), "all": slice(None)}


def read_pqal(path: Path) -> dict[str, dict]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path} is not PubMedQA's ori_pqal.json ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(r, dict) and "QUESTION" in r and "LONG_ANSWER" in r
                                             for r in data.values()):
        raise UserError(f"{path} is not PubMedQA's ori_pqal.json (expected pmid -> QUESTION, CONTEXTS, LONG_ANSWER)")
    return data


def pubmedqa_questions(path: Path, split: str = "test") -> list[EvalQuestion]:
    if split not in SPLITS:
        raise UserError(f"PubMedQA splits are {', '.join(SPLITS)}; got {split!r}")
    data = read_pqal(path)
    return [EvalQuestion(id=pid, q=r["QUESTION"], type=r.get("final_decision") or "other",
                         answer_sentences=split_sentences(r["LONG_ANSWER"]), split=split)
            for pid, r in list(data.items())[SPLITS[split]]]


def write_library_records(path: Path, dest: Path) -> Path:
    """The abstracts as JSON Lines paperchat ingests (written once, beside the eval's library)."""
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for pid, r in read_pqal(path).items():
                f.write(json.dumps({"id": pid, "abstract": " ".join([*r.get("CONTEXTS", []), r["LONG_ANSWER"]])}) + "\n")
        tmp.replace(dest)
    return dest
