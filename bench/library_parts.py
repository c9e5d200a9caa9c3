"""Our hand-written parts against the well-kept PyPI library a reviewer would expect (issue 21, item 5), side by side.

    .venv/bin/python bench/library_parts.py                 # all three parts
    .venv/bin/python bench/library_parts.py --bib-papers 2000 --sets 100

- **BibTeX**: rag.loaders.bibtex against bibtexparser 2 (with its pylatexenc LaTeX decoding and co-author
  splitting), on a .bib of the first --bib-papers paperlists records written by our own exporter
  (rag.exports.documents.to_bibtex: what a user gets from `--bibtex`), with accented letters in author names written
  as LaTeX accents ({\\"o}), as Zotero and BibDesk write them. Records read, fields equal to the record the
  entry was written from (title, authors, year, venue, abstract; whitespace folded), time per 1,000 entries.
- **Sentences**: rag.reading.sentences.split_sentences against pysbd on CSAbstruct (../shared/data/csabstruct, all
  2,189 abstracts: nothing is tuned here): each abstract's given sentences joined by a space and split
  again; boundary precision, recall and F1 (micro, over all abstracts), abstracts split exactly right, time
  per 1,000 abstracts.
- **Clustering**: a summary's themes (rag.tasks.themes.cluster: scipy average linkage, our silhouette)
  against scikit-learn's AgglomerativeClustering + silhouette_score on the same distances, over --sets
  groups of 15 papers (each CSAbstruct abstract's 15 nearest, as a summary retrieves them; abstract vector =
  mean of its sentences' MiniLM vectors, cached by bench/train_roles.py); and the map's regions
  (rag.maps.regions.group: scipy kmeans2) against scikit-learn's KMeans on the map layout of all 2,189.
  Agreement (adjusted Rand index), the silhouette / inertia each reaches, time per call.

A library missing from the environment is reported and its column skipped (bibtexparser, pysbd and
scikit-learn are in the dev extra).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

CSABSTRUCT = C.DATA / "csabstruct"


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def fold(text) -> str:
    return " ".join(str(text or "").split())


# -- BibTeX ----------------------------------------------------------------------------------------------

_ACCENTS = {"\u0308": '"', "\u0301": "'", "\u0300": "`", "\u0302": "^", "\u0303": "~", "\u0327": "c", "\u030c": "v"}


def latex_accents(name: str) -> str:
    """ "Müller" -> "M{\\"u}ller", as reference managers write names in .bib files (other letters as they are)."""
    out = []
    for ch in name:
        d = unicodedata.normalize("NFD", ch)
        if len(d) == 2 and d[1] in _ACCENTS and d[0].isascii():
            cmd = _ACCENTS[d[1]]
            out.append(f"{{\\{cmd}{d[0]}}}" if not cmd.isalpha() else f"{{\\{cmd}{{{d[0]}}}}}")
        else:
            out.append(ch)
    return "".join(out)


def bib_corpus(n: int, folder: Path) -> tuple[Path, list]:
    from rag.exports.documents import to_bibtex
    from rag.loaders import load_file
    from rag.records import Citation, Paper

    papers = []
    for p in load_file(C.PAPERLISTS):
        if isinstance(p, Paper):
            papers.append(p)
            if len(papers) >= n:
                break
    text = to_bibtex([Citation(n=i + 1, paper=p.model_copy(update={"authors": [latex_accents(a) for a in p.authors]}))
                      for i, p in enumerate(papers)])
    path = folder / "paperlists.bib"
    path.write_text(text, encoding="utf-8")
    return path, papers, re.findall(r"^@\w+\{([^,\n]+),", text, re.MULTILINE)


def bib_ours(path: Path) -> tuple[list[dict], float]:
    from rag.loaders import load_file
    from rag.records import Paper

    t = time.perf_counter()
    got = [p for p in load_file(path) if isinstance(p, Paper)]
    secs = time.perf_counter() - t
    return [{"at": p.position - 1, "title": p.title, "authors": p.authors, "year": p.year, "venue": p.venue,
             "abstract": p.abstract} for p in got], secs


def bib_library(path: Path) -> tuple[list[dict], float]:
    import bibtexparser
    from bibtexparser import middlewares as mw

    t = time.perf_counter()
    lib = bibtexparser.parse_string(path.read_text(encoding="utf-8"),
                                    append_middleware=[mw.LatexDecodingMiddleware(), mw.SeparateCoAuthors()])
    out = []
    for e in lib.entries:
        f = {k.lower(): v.value for k, v in e.fields_dict.items()}
        year = str(f.get("year", ""))
        out.append({"key": e.key, "title": fold(f.get("title")), "authors": [fold(a) for a in f.get("author", [])],
                    "year": int(year) if year.isdigit() else None, "venue": fold(f.get("booktitle")),
                    "abstract": fold(f.get("abstract"))})
    return out, time.perf_counter() - t


def first_difference(want: str, got: str) -> dict:
    i = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    return {"want": want[max(0, i - 40):i + 60], "got": got[max(0, i - 40):i + 60]}


def bib_scores(got: list[dict], papers: list, keys: list[str]) -> dict:
    """Each entry read is compared with the record it was written from (by position for ours, by key for the
    library, so an entry one of them drops does not shift the rest)."""
    fields = ["title", "authors", "year", "venue", "abstract"]
    same = {k: 0 for k in fields}
    example = {}
    at = {k: i for i, k in enumerate(keys)}
    for g in got:
        p = papers[g["at"] if "at" in g else at[g["key"]]]
        want = {"title": fold(p.title), "authors": [fold(a) for a in p.authors], "year": p.year,
                "venue": fold(p.venue), "abstract": fold(p.abstract)}
        for k in fields:
            ok = (g[k] if k in ("year", "authors") else fold(g[k])) == want[k]
            same[k] += ok
            if not ok and k not in example:
                example[k] = first_difference(str(want[k]), str(g[k]))
    n = len(papers)
    return {"read": len(got), **{f"{k}_equal": round(same[k] / n, 4) for k in fields}, "example_differences": example}


def run_bibtex(n: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="paperchat-bib-") as tmp:
        path, papers, keys = bib_corpus(n, Path(tmp))
        assert len(keys) == len(papers)
        out = {"entries": len(papers), "mb": round(path.stat().st_size / 1e6, 2)}
        got, secs = bib_ours(path)
        out["ours"] = {**bib_scores(got, papers, keys), "s_per_1000": round(secs / len(papers) * 1000, 3)}
        if have("bibtexparser"):
            got, secs = bib_library(path)
            out["bibtexparser"] = {**bib_scores(got, papers, keys), "s_per_1000": round(secs / len(papers) * 1000, 3)}
    return out


# -- sentences -------------------------------------------------------------------------------------------

def csabstruct() -> list[list[str]]:
    rows = []
    for split in ("train", "dev", "test"):
        with open(CSABSTRUCT / f"{split}.jsonl", encoding="utf-8") as f:
            rows += [[fold(s) for s in json.loads(line)["sentences"] if fold(s)] for line in f]
    return rows


def starts(pieces: list[str], text: str) -> set[int]:
    """Where each piece after the first begins in `text` (pieces found in order)."""
    out, at = set(), 0
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        i = text.find(piece, at)
        if i < 0:
            i = text.find(piece[:30], at)
        if i < 0:
            continue
        if i > 0:
            out.add(i)
        at = i + len(piece)
    return out


def run_sentences(abstracts: list[list[str]]) -> dict:
    from rag.reading.sentences import split_sentences

    splitters = {"ours": split_sentences}
    if have("pysbd"):
        import pysbd

        seg = pysbd.Segmenter(language="en", clean=False)
        splitters["pysbd"] = seg.segment
    texts = [" ".join(a) for a in abstracts]
    gold = [starts(a, t) for a, t in zip(abstracts, texts)]
    out = {"abstracts": len(abstracts), "boundaries": sum(map(len, gold))}
    for name, split in splitters.items():
        t = time.perf_counter()
        pred = [split(x) for x in texts]
        secs = time.perf_counter() - t
        tp = fp = fn = exact = 0
        for g, p, x in zip(gold, pred, texts):
            b = starts(p, x)
            tp, fp, fn, exact = tp + len(b & g), fp + len(b - g), fn + len(g - b), exact + (b == g)
        prec, rec = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
        out[name] = {"precision": round(prec, 4), "recall": round(rec, 4),
                     "f1": round(2 * prec * rec / max(prec + rec, 1e-12), 4),
                     "exact_abstracts": round(exact / len(texts), 4), "s_per_1000": round(secs / len(texts) * 1000, 3)}
    return out


# -- clustering ------------------------------------------------------------------------------------------

def abstract_vectors() -> np.ndarray:
    import train_roles

    vecs = []
    for split in ("train", "dev", "test"):
        rows = train_roles.load(split)
        vecs += [v.mean(axis=0) for v in train_roles.vectors(split, rows)]
    x = np.asarray(vecs, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def sk_cluster(vecs: np.ndarray, max_themes: int) -> list[np.ndarray]:
    """rag.tasks.themes.cluster with scikit-learn's agglomerative clustering and silhouette."""
    import math

    from sklearn.cluster import AgglomerativeClustering
    from sklearn.metrics import silhouette_score

    n = len(vecs)
    c = vecs - vecs.mean(axis=0, keepdims=True)
    c = c / np.clip(np.linalg.norm(c, axis=1, keepdims=True), 1e-12, None)
    d = np.clip(1.0 - c @ c.T, 0.0, 2.0)
    np.fill_diagonal(d, 0.0)
    d = (d + d.T) / 2
    best, best_labels = -2.0, None
    for k in range(max(2, math.ceil(n / 5)), max(2, min(max_themes, n // 2)) + 1):
        labels = AgglomerativeClustering(n_clusters=k, metric="precomputed", linkage="average").fit_predict(d)
        s = silhouette_score(d, labels, metric="precomputed")
        if s > best + 1e-9:
            best, best_labels = s, labels
    return [np.flatnonzero(best_labels == k) for k in np.unique(best_labels)]


def labels_of(groups: list[np.ndarray], n: int) -> np.ndarray:
    out = np.zeros(n, dtype=int)
    for k, g in enumerate(groups):
        out[g] = k
    return out


def run_clustering(n_sets: int) -> dict:
    from rag.maps.layout import fit
    from rag.maps.regions import group, n_regions
    from rag.tasks.themes import MAX_THEMES, cluster

    x = abstract_vectors()
    rng = np.random.default_rng(0)
    sets = [np.argsort(-(x @ x[i]))[:15] for i in rng.choice(len(x), n_sets, replace=False)]
    out: dict = {"themes": {"sets": len(sets), "papers_per_set": 15}, "regions": {}}
    t = time.perf_counter()
    ours = [cluster(x[s]) for s in sets]
    out["themes"]["ours_ms"] = round((time.perf_counter() - t) / len(sets) * 1000, 2)
    if have("sklearn"):
        from sklearn.cluster import KMeans
        from sklearn.metrics import adjusted_rand_score

        t = time.perf_counter()
        theirs = [sk_cluster(x[s], MAX_THEMES) for s in sets]
        out["themes"]["sklearn_ms"] = round((time.perf_counter() - t) / len(sets) * 1000, 2)
        out["themes"]["same_k"] = round(float(np.mean([len(a) == len(b) for a, b in zip(ours, theirs)])), 4)
        out["themes"]["same_groups"] = round(float(np.mean([
            adjusted_rand_score(labels_of(a, 15), labels_of(b, 15)) > 0.999 for a, b in zip(ours, theirs)])), 4)
        out["themes"]["mean_ari"] = round(float(np.mean([
            adjusted_rand_score(labels_of(a, 15), labels_of(b, 15)) for a, b in zip(ours, theirs)])), 4)
        # The silhouette alone, on the same labels: ours against scikit-learn's
        from rag.tasks.themes import _silhouette, centred_distances
        from sklearn.metrics import silhouette_score

        diffs, t_ours, t_sk = [], 0.0, 0.0
        for s, g in zip(sets, ours):
            if len(g) < 2:
                continue
            d = centred_distances(x[s])
            lab = labels_of(g, 15)
            t = time.perf_counter()
            a = _silhouette(d, lab)
            t_ours += time.perf_counter() - t
            t = time.perf_counter()
            b = silhouette_score(d, lab, metric="precomputed")
            t_sk += time.perf_counter() - t
            diffs.append(abs(a - b))
        out["themes"]["silhouette_max_abs_diff"] = float(f"{max(diffs):.2g}") if diffs else None
        out["themes"]["silhouette_ours_ms"] = round(t_ours / max(len(diffs), 1) * 1000, 3)
        out["themes"]["silhouette_sklearn_ms"] = round(t_sk / max(len(diffs), 1) * 1000, 3)

    coords, method = fit(x)
    k = n_regions(len(x), 36)
    r = out["regions"] = {"points": len(x), "layout": method, "regions": k}
    t = time.perf_counter()
    ours_lab = group(coords, k)
    r["ours_ms"] = round((time.perf_counter() - t) * 1000, 1)
    xs = np.asarray(coords, dtype=np.float64)
    xs = (xs - xs.mean(axis=0)) / max(float(xs.std()), 1e-9)  # as group() scales them

    def inertia(lab):
        return float(sum(((xs[lab == j] - xs[lab == j].mean(axis=0)) ** 2).sum() for j in np.unique(lab)))

    r["ours_inertia"] = round(inertia(ours_lab), 2)
    if have("sklearn"):
        t = time.perf_counter()
        sk_lab = KMeans(n_clusters=k, n_init="auto", random_state=42).fit_predict(xs)
        r["sklearn_ms"] = round((time.perf_counter() - t) * 1000, 1)
        r["sklearn_inertia"] = round(inertia(sk_lab), 2)
        r["ari"] = round(float(adjusted_rand_score(ours_lab, sk_lab)), 4)
    return out


# -- the table -------------------------------------------------------------------------------------------

def table(fig: dict) -> list[tuple[str, str, str]]:
    rows = []
    b = fig.get("bibtex")
    if b:
        o, L = b["ours"], b.get("bibtexparser", {})
        g = lambda d, k: "-" if k not in d else str(d[k])  # noqa: E731
        rows.append((f"BibTeX ({b['entries']} entries, {b['mb']} MB): records read", g(o, "read"), g(L, "read")))
        for k in ("title", "authors", "year", "venue", "abstract"):
            rows.append((f"BibTeX: {k} equal to the source record", g(o, f"{k}_equal"), g(L, f"{k}_equal")))
        rows.append(("BibTeX: seconds per 1,000 entries", g(o, "s_per_1000"), g(L, "s_per_1000")))
    s = fig.get("sentences")
    if s:
        o, L = s["ours"], s.get("pysbd", {})
        g = lambda d, k: "-" if k not in d else str(d[k])  # noqa: E731
        rows.append((f"sentences ({s['abstracts']} abstracts, {s['boundaries']} boundaries): boundary F1",
                     g(o, "f1"), g(L, "f1")))
        rows.append(("sentences: precision / recall", f"{o['precision']} / {o['recall']}",
                     f"{L['precision']} / {L['recall']}" if L else "-"))
        rows.append(("sentences: abstracts split exactly", g(o, "exact_abstracts"), g(L, "exact_abstracts")))
        rows.append(("sentences: seconds per 1,000 abstracts", g(o, "s_per_1000"), g(L, "s_per_1000")))
    c = fig.get("clustering")
    if c:
        t, r = c["themes"], c["regions"]
        g = lambda d, k: "-" if k not in d else str(d[k])  # noqa: E731
        rows.append((f"themes ({t['sets']} sets of 15): same grouping as the other / mean ARI",
                     f"{g(t, 'same_groups')} / {g(t, 'mean_ari')}", "(same)"))
        rows.append(("themes: ms per clustering (k = 3..6 tried)", g(t, "ours_ms"), g(t, "sklearn_ms")))
        rows.append(("themes: silhouette, ms per call (max |difference|)",
                     f"{g(t, 'silhouette_ours_ms')} ({g(t, 'silhouette_max_abs_diff')})", g(t, "silhouette_sklearn_ms")))
        rows.append((f"map regions ({r['points']} points, {r['layout']}, k={r['regions']}): inertia (lower is tighter)",
                     g(r, "ours_inertia"), g(r, "sklearn_inertia")))
        rows.append(("map regions: ms / ARI between the two", f"{g(r, 'ours_ms')} / {g(r, 'ari')}", g(r, "sklearn_ms")))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bib-papers", type=int, default=5000)
    ap.add_argument("--sets", type=int, default=300, help="groups of 15 papers clustered as a summary's themes")
    ap.add_argument("--only", choices=["bibtex", "sentences", "clustering"], default=None)
    args = ap.parse_args()
    started = time.time()
    m = C.print_header("hand-written parts vs PyPI libraries: BibTeX, sentences, clustering")
    missing = [x for x in ("bibtexparser", "pysbd", "sklearn") if not have(x)]
    if missing:
        print(f"not installed (their columns are skipped): {', '.join(missing)}  (pip install -e '.[dev]')")
    fig: dict = {}
    if args.only in (None, "bibtex"):
        if C.PAPERLISTS.exists():
            fig["bibtex"] = run_bibtex(args.bib_papers)
        else:
            print(f"BibTeX skipped: needs {C.PAPERLISTS}")
    if args.only in (None, "sentences"):
        if CSABSTRUCT.exists():
            fig["sentences"] = run_sentences(csabstruct())
        else:
            print(f"sentences skipped: needs {CSABSTRUCT}")
    if args.only in (None, "clustering"):
        if CSABSTRUCT.exists():
            fig["clustering"] = run_clustering(args.sets)
        else:
            print(f"clustering skipped: needs {CSABSTRUCT}")
    rows = table(fig)
    w = max(len(r[0]) for r in rows) if rows else 10
    lib = "library (bibtexparser 2 / pysbd / scikit-learn)"
    print(f"\n{'':{w}}  {'ours':>18}  {lib}")
    for label, a, b in rows:
        print(f"{label:{w}}  {a:>18}  {b}")
    for part in ("ours", "bibtexparser"):
        ex = fig.get("bibtex", {}).get(part, {}).get("example_differences")
        if ex:
            print(f"\nBibTeX, {part}: a first difference per field: {json.dumps(ex, ensure_ascii=False)[:1200]}")
    C.write_results("library_parts", fig, m, started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
