"""What an eval has asked already, and who asked it.

One JSON line per question (or area) in a file keyed by what shapes an answer (the code, the answerer and
its model, the ask/retrieval/chunk settings, prompt overrides): a stopped run carries on where it stopped,
and a changed answerer starts a file of its own beside it instead of mixing answers of two answerers."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rag.errors import public_url
from rag.evaluation.workspace import code_version
from rag.settings import Settings


def answerer_of(settings: Settings, model=None) -> dict:
    """Who answers: the extractive writer, or a chat model (its name and where it is served)."""
    if model is not None:  # a model passed in (tests, a script): named as it names itself
        name = getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__
        return {"answerer": "llm", "model": str(name), "model_url": None}
    if settings.llm == "openai":
        return {"answerer": "llm", "model": settings.model,
                "model_url": public_url(settings.openai_base_url) or "api.openai.com"}
    return {"answerer": "extractive", "model": None, "model_url": None}


def check_answerer(settings: Settings, model=None) -> None:
    """A configured model that cannot be made (no key, no URL) fails before the library is built, not after."""
    if model is None and settings.llm == "openai":
        from rag.tasks.llm import make_chat_model

        make_chat_model(settings)


def run_key(settings: Settings, answerer: dict, task: str, model=None) -> str:
    # a model passed in is keyed by all it says of itself (its repr: class and settings, secrets masked;
    # the addresses of the clients it holds differ per process)
    passed = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(model)) if model is not None else None
    answerer = {**answerer, "passed": passed}
    shaping = settings.model_dump(mode="json", include={"ask", "retrieval", "chunk", "prompts_dir"})
    prompts = settings.prompts_dir
    overrides = sorted((p.name, p.read_text(encoding="utf-8")) for p in prompts.glob("*.txt")) if prompts else []
    blob = json.dumps([task, answerer, shaping, overrides, code_version()["code"]], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


class RunFile:
    """The answers of one run: `done` maps an id to its kept row; `add` appends one, flushed at once."""

    def __init__(self, path: Path, fresh: bool = False):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if fresh and path.exists():
            path.unlink()
        self.done: dict[str, dict] = {}
        if not path.exists():
            return
        raw = path.read_bytes()
        if raw and not raw.endswith(b"\n"):  # killed mid-line: drop the torn row, or the next would join it
            raw = raw[: raw.rfind(b"\n") + 1]
            path.write_bytes(raw)
        for line in raw.decode("utf-8").splitlines():
            row = json.loads(line)
            self.done[row["id"]] = row

    def add(self, row: dict) -> None:
        self.done[row["id"]] = row
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def ask_missing(task: str, items: Sequence, id_of: Callable, row_of: Callable[..., dict], library, model=None,
                progress: bool | None = None, fresh: bool = False, unit: str = " items") -> tuple[RunFile, int]:
    """Put to this answerer (code, settings, model) every item it has not answered yet, keeping each row
    (`row_of(item)`, with its id and seconds) as it comes; the run file, and how many were asked now."""
    from tqdm import tqdm

    settings = library.settings
    key = run_key(settings, answerer_of(settings, model), task, model)
    run = RunFile(settings.home / "runs" / f"{task}-{key}.jsonl", fresh)
    todo = [x for x in items if id_of(x) not in run.done]
    with tqdm(total=len(items), initial=len(items) - len(todo), unit=unit, leave=False,
              disable=None if progress is None else not progress) as bar:
        for x in todo:
            t0 = time.perf_counter()
            row = row_of(x)
            run.add({"id": id_of(x), "seconds": round(time.perf_counter() - t0, 4), **row})
            bar.update(1)
    return run, len(todo)


def provenance(kind: str, split: str, library, settings: Settings, model, run: RunFile, total: int,
               asked_now: int, seconds: float) -> dict:
    """What produced the figures: the set, the answerer and model, the library, the code, the kept run."""
    return {"set": kind, "split": split, **answerer_of(settings, model),
            "library": {"name": library.name, "papers": len(library), "home": str(library.settings.home)},
            **code_version(), "asked_now": asked_now, "reused": total - asked_now, "run_file": str(run.path),
            "seconds": round(seconds, 1)}
