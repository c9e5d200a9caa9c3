"""TeX in abstracts as the terminal shows it: pylatexenc alone against rag.exports.terminal (structure rules, then
pylatexenc for the symbols), on the math spans of the first N abstracts of ../shared/data/paperlists.jsonl.gz.

    .venv/bin/python bench/terminal_tex.py [N=20000]

Prints how many spans hold a fraction or a multi-symbol exponent/index (pylatexenc alone writes them without
brackets: `\\frac{1}{d+2}` as "1/d+2"), how many come out empty, and a few side by side."""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.exports.terminal import tex  # noqa: E402
from rag.reading.markup import MATH  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "paperlists.jsonl.gz"
GROUPED = re.compile(r"\\[dt]?frac|[\^_]\s*\{[^{}]*[^{}\s][^{}]*[^{}\s]")
EXAMPLES = [r"$\varepsilon^{\frac{1}{d+2}}$", r"$\mathcal{O}(\varepsilon^{-{d_{0}}/{\alpha}})$", r"$\|x\|_2$",
            r"$\frac{a+b}{c}$", r"$O(n\log n)$", r"$\eps$"]


def main() -> None:
    from pylatexenc.latex2text import LatexNodes2Text

    if not DATA.exists():
        sys.exit(f"needs {DATA}")
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    alone = LatexNodes2Text(math_mode="text")
    spans = []
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= n:
                break
            spans += [m.group(0) for m in MATH.finditer(json.loads(line).get("abstract") or "")]
    grouped = sum(1 for s in spans if GROUPED.search(s))
    empty = {"pylatexenc alone": sum(1 for s in spans if not alone.latex_to_text(s).strip()),
             "rules + pylatexenc": sum(1 for s in spans if not tex(s).strip())}
    print(f"{len(spans)} math spans in {n} abstracts; {grouped} ({100 * grouped / max(1, len(spans)):.1f} %) hold a "
          "fraction or a multi-symbol ^{}/_{} group (pylatexenc alone flattens them; the rules bracket them)")
    for name, k in empty.items():
        print(f"  {name:20} empty output: {k} ({100 * k / max(1, len(spans)):.1f} %)")
    for s in EXAMPLES:
        print(f"  {s:48} alone: {alone.latex_to_text(s)!r:22} ours: {tex(s)!r}")


if __name__ == "__main__":
    main()
