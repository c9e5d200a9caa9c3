"""How the abstention threshold was chosen: best-chunk cosine for on-topic vs off-topic questions on the seeds.

Reproduce: .venv/bin/python bench/abstention.py   (indexes seeds/ into a temporary home, ~20 s)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from rag.library.library import Library  # noqa: E402
from rag.library.retrieval import search  # noqa: E402
from rag.settings import Settings  # noqa: E402
from seed_questions import OFF_TOPIC, QUESTIONS  # noqa: E402

TOPICS = ["What is known about LoRA adapters?", "scaling laws", "Mamba in-context learning",
          "federated optimization", "fairness in clustering"]
MORE_OFF = ["How do I change a car tyre?", "Best hiking trails in the Alps", "Symptoms of influenza in children",
            "How to train a puppy to sit", "Which wine goes with fish?", "What time does the supermarket close?"]


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        lib = Library(Settings(home=Path(home), _env_file=None))
        lib.ingest([ROOT / "seeds"], progress=False)
        on = [(search(lib, q, 1)[0].dense, q) for q, *_ in QUESTIONS] + [(search(lib, q, 1)[0].dense, q) for q in TOPICS]
        off = [(search(lib, q, 1)[0].dense, q) for q in OFF_TOPIC + MORE_OFF]
    for label, rows in (("on-topic", on), ("off-topic", off)):
        for s, q in sorted(rows):
            print(f"{label:9} {s:6.3f}  {q}")
    lo, hi = min(s for s, _ in on), max(s for s, _ in off)
    print(f"\nlowest on-topic {lo:.3f}, highest off-topic {hi:.3f}; threshold between: {(lo + hi) / 2:.2f} "
          f"(setting: {Settings(_env_file=None).ask.abstain_below})")


if __name__ == "__main__":
    main()
