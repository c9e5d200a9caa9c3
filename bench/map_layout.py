"""The library map, measured: the layout methods weighed side by side in one run (openTSNE's FFT t-SNE,
the map's; UMAP as before, and with 200 epochs; PaCMAP; PCA) on time, CPU, peak memory and whether the
layout is meaningful (neighbour share, trustworthiness), how well later papers are placed, and how fast
the page becomes interactive with 87k points in headless Chromium. (Opening the UI's Map tab, first and
later, before and after: bench/map_open.py.)

    .venv/bin/python bench/map_layout.py                 # all of it (vectors from bench/map_vectors.py)
    .venv/bin/python bench/map_layout.py --only quality  # one part: layout | quality | browser
    .venv/bin/python bench/map_layout.py --corpus scifact --methods tsne,umap

Each layout runs in a child process of its own, so its peak RSS is that of the layout alone (plus the
vectors it was given). Vectors: see bench/map_vectors.py (which texts were embedded, and why).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA, PAPERLISTS, ROOT, print_header, write_results  # noqa: E402
from map_vectors import path_of, vectors  # noqa: E402

K = 10


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


METHODS = ("tsne", "umap", "umap-200", "pacmap", "pca")  # (+ "tsne-short", by --methods only)


def fit_with(method: str, v: np.ndarray) -> np.ndarray:
    """The layout of `v` by one method (the map's own is rag.maps.layout.tsne_2d)."""
    from rag.maps import layout

    if method == "tsne":
        return layout.tsne_2d(v)
    if method == "tsne-short":  # a cheaper t-SNE weighed (issue 34 item 3): 100 + 200 iterations, not 150 + 300
        layout.EXAGGERATION_ITERATIONS, layout.ITERATIONS = 100, 200
        return layout.tsne_2d(v)
    if method == "pca":
        return layout.pca_2d(v)
    if method.startswith("umap"):
        import umap  # the map's layout before (bench only now: pip install umap-learn)

        epochs = int(method.split("-")[1]) if "-" in method else None
        return umap.UMAP(n_components=2, n_neighbors=15, min_dist=0.05, metric="cosine", random_state=42,
                         low_memory=True, n_epochs=epochs).fit_transform(v).astype(np.float32)
    if method == "pacmap":
        import pacmap

        return pacmap.PaCMAP(n_components=2, n_neighbors=10, random_state=42).fit_transform(v, init="pca").astype(np.float32)
    raise SystemExit(f"unknown method {method!r}")


def child_layout(corpus: str, kind: str, method: str) -> dict:
    """In a fresh child: lay the corpus out once (the first layout in a process: imports and any numba
    compile included, as a user's first map pays them), then group and name its regions."""
    from rag.maps import regions
    from rag.records import Paper

    recs, v = vectors(corpus, kind, quiet=True)
    before = _peak_mb()
    out: dict = {"corpus": corpus, "vectors": kind, "method": method, "papers": len(v)}
    t0, c0 = time.perf_counter(), time.process_time()
    xy = fit_with(method, v)
    out["layout_s"] = round(time.perf_counter() - t0, 1)
    out["layout_cpu_s"] = round(time.process_time() - c0, 1)  # what a shared machine's load does not inflate
    out["numba_loaded"] = "numba" in sys.modules
    if len(v) <= 20_000:
        t0 = time.perf_counter()
        k = regions.n_regions(len(v), 36)
        labels = regions.group(xy, k)
        k = int(labels.max()) + 1
        picks, centroids = regions.typical(v, labels, k)
        groups = [[Paper(paper_id=recs[i]["id"], title=recs[i]["title"], abstract=recs[i]["abstract"]) for i in g]
                  for g in picks]
        names = regions.name(groups, centroids, None)
        out["regions_and_names_s"] = round(time.perf_counter() - t0, 1)
        out["topics"] = len(names)
        out["example_names"] = [n for n, _ in names[:6]]
    out["peak_rss_mb"] = round(_peak_mb(), 0)
    out["peak_rss_over_vectors_mb"] = round(_peak_mb() - before, 0)
    np.save(path_of(corpus, kind).with_suffix(f".{method}.xy.npy"), xy)
    return out


def run_child(*args: str) -> dict:
    got = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True)
    if got.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{got.stderr[-3000:]}")
    return json.loads(got.stdout.strip().splitlines()[-1])


def quality(corpus: str, kind: str, methods: list[str]) -> dict:
    """Neighbour share (k=10) and trustworthiness of each method's layout (the child saved it), and of
    papers placed after a t-SNE fit on the other 80 % (how the map adds papers between refits)."""
    from sklearn.manifold import trustworthiness

    from rag.maps import layout
    from rag.maps.quality import map_neighbours, neighbour_share, vector_neighbours

    _, v = vectors(corpus, kind, quiet=True)
    sample = None if len(v) <= 10_000 else 2000
    out: dict = {"corpus": corpus, "vectors": kind, "k": K, "rows_checked": sample or len(v),
                 "random_share": round(K / (len(v) - 1), 4), "methods": {}}
    for method in methods:
        f = path_of(corpus, kind).with_suffix(f".{method}.xy.npy")
        if not f.exists():
            continue
        xy = np.load(f)
        q = {"share": round(neighbour_share(v, xy, K, sample), 3)}
        if len(v) <= 10_000:
            q["trustworthiness"] = round(float(trustworthiness(v, xy, n_neighbors=K, metric="cosine")), 3)
        out["methods"][method] = q
    full = path_of(corpus, kind).with_suffix(".tsne.xy.npy")
    if len(v) <= 10_000 and full.exists():
        rng = np.random.default_rng(1)
        late = np.zeros(len(v), dtype=bool)
        late[rng.choice(len(v), len(v) // 5, replace=False)] = True
        early_xy = layout.tsne_2d(v[~late])
        xy = np.zeros((len(v), 2), dtype=np.float32)
        xy[~late] = early_xy
        xy[late] = layout.place(v[late], v[~late], early_xy)
        rows = np.flatnonzero(late)
        a, b = vector_neighbours(v, K, rows), map_neighbours(xy, K, rows)
        c = map_neighbours(np.load(full), K, rows)
        out["placed_share"] = round(float(np.mean([len(set(x) & set(y)) / K for x, y in zip(a, b)])), 3)
        out["same_papers_full_fit_share"] = round(float(np.mean([len(set(x) & set(y)) / K for x, y in zip(a, c)])), 3)
    return out


def browser(n_expected: int) -> dict:
    """Time until the 87k-point page is interactive in headless Chromium, and a zoom and a filter on it."""
    from playwright.sync_api import sync_playwright

    from rag.maps.page import standalone_html
    from rag.maps.records import LibraryMap, Topic

    recs, v = vectors("paperlists", "fake", quiet=True)
    # The t-SNE layout of the layout step when there is one; else PCA (what the browser draws costs the
    # same: 87k points and 36 labels either way). Regions: k-means on the positions, unnamed.
    from rag.maps import layout, regions

    method = "tsne" if path_of("paperlists", "fake").with_suffix(".tsne.xy.npy").exists() else "pca"
    xy = np.load(path_of("paperlists", "fake").with_suffix(".tsne.xy.npy")) if method == "tsne" else layout.pca_2d(v)
    lab = regions.group(xy, 36)
    meta = {"labels": lab.tolist(), "topics": [f"Region {i + 1}" for i in range(int(lab.max()) + 1)]}
    labels = np.array(meta["labels"], dtype=np.int32)
    topics = [Topic(id=i, name=nm, x=float(xy[labels == i, 0].mean()), y=float(xy[labels == i, 1].mean()),
                    size=int((labels == i).sum())) for i, nm in enumerate(meta["topics"])]
    m = LibraryMap(library="paperlists", generation="bench", method=method, ids=[r["id"] for r in recs], xy=xy,
                   region=labels, placed=np.zeros(len(recs), dtype=bool), topics=topics, fitted_papers=len(recs))
    catalogue = {r["id"]: {"title": r["title"], "venue": r["venue"], "year": r["year"]} for r in recs}
    page = Path("/tmp") / "paperchat-map-87k.html"
    page.write_text(standalone_html(m, catalogue), encoding="utf-8")
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run"]
    out = {"papers": len(recs), "layout": method, "page_mb": round(page.stat().st_size / 1e6, 1), "runs": []}
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        for _ in range(3):
            pg = b.new_page(viewport={"width": 1400, "height": 900})
            t0 = time.perf_counter()
            pg.goto(page.as_uri(), timeout=300_000)
            pg.wait_for_function("window.paperMapReady", timeout=300_000, polling=50)
            ready = time.perf_counter() - t0
            assert pg.evaluate("document.querySelector('.pcm-plot').data[0].x.length") == n_expected
            zoom = pg.evaluate("""async () => { const gd = document.querySelector('.pcm-plot'), t = performance.now();
                await Plotly.relayout(gd, {'xaxis.range': [gd._fullLayout.xaxis.range[0] / 2, gd._fullLayout.xaxis.range[1] / 2]});
                return performance.now() - t; }""")
            filt = pg.evaluate("""() => { const s = document.querySelector('.pcm-venue'), t = performance.now();
                s.selectedIndex = 1; s.dispatchEvent(new Event('change')); return performance.now() - t; }""")
            out["runs"].append({"interactive_s": round(ready, 2), "zoom_ms": round(zoom), "venue_filter_ms": round(filt)})
            pg.close()
        b.close()
    out["interactive_s_median"] = sorted(r["interactive_s"] for r in out["runs"])[1]
    return out


CORPORA = (("scifact", "minilm-t64"), ("paperlists", "minilm-t64"), ("paperlists", "minilm-t64-sample20000"),
           ("paperlists", "fake"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["layout", "quality", "browser"])
    ap.add_argument("--corpus", choices=["scifact", "paperlists"], help="one corpus only (layout, quality)")
    ap.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated, of {', '.join(METHODS)}")
    ap.add_argument("--child", nargs=3, metavar=("CORPUS", "KIND", "METHOD"))
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child_layout(*args.child)))
        return
    if not (DATA / "scifact").exists():
        print(f"skipped: {DATA / 'scifact'} is missing (the map benchmarks read ../shared/data)")
        return
    m = print_header("library map: layout methods side by side (time, memory, meaningfulness), 87k points in a browser")
    started = time.time()
    figures: dict = {}
    methods = [x for x in args.methods.split(",") if x]
    corpora = [(c, k) for c, k in CORPORA if args.corpus in (None, c)]
    if not PAPERLISTS.exists():
        print(f"paperlists parts skipped: {PAPERLISTS} is missing")
        corpora = [(c, k) for c, k in corpora if c != "paperlists"]
    # paperlists' MiniLM vectors (all 87k, ~25 min of embedding on an idle machine, or a sample) are embedded only
    # by an explicit `bench/map_vectors.py paperlists minilm-t64 [--sample N]`
    corpora = [(c, k) for c, k in corpora if c != "paperlists" or k == "fake" or path_of(c, k).exists()]
    if args.only in (None, "layout"):
        figures["layout"] = []
        for corpus, kind in corpora:
            for method in methods:
                if kind == "fake" and method not in ("tsne", "pca"):
                    continue  # 87k hashed vectors: the map's method and the baseline only (UMAP took 1,608 s before)
                r = run_child(corpus, kind, method)
                figures["layout"].append(r)
                print(f"{corpus:10} {kind:22} {method:8}: {r['papers']:6,} papers, layout {r['layout_s']:7.1f} s wall, "
                      f"{r['layout_cpu_s']:7.1f} s CPU (first in a process; numba loaded: {r['numba_loaded']}), "
                      f"peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
    if args.only in (None, "quality"):
        figures["quality"] = []
        for corpus, kind in corpora:
            q = quality(corpus, kind, methods)
            figures["quality"].append(q)
            print(f"{corpus:10} {kind:22}: share of the {K} nearest by vector among the {K} nearest on the map "
                  f"(random {q['random_share']:.4f}; {q['rows_checked']} papers checked), trustworthiness:")
            for method, mq in q["methods"].items():
                print(f"    {method:8} share {mq['share']:.3f}" +
                      (f", trustworthiness {mq['trustworthiness']:.3f}" if "trustworthiness" in mq else ""))
            if "placed_share" in q:
                print(f"    papers placed after a t-SNE fit on the other 80 %: share {q['placed_share']} "
                      f"(the same papers in the full fit: {q['same_papers_full_fit_share']})")
    if args.only in (None, "browser") and PAPERLISTS.exists():
        b = browser(len(vectors("paperlists", "fake", quiet=True)[0]))
        figures["browser"] = b
        print(f"browser: {b['papers']:,} points ({b['page_mb']} MB page): interactive after "
              f"{b['interactive_s_median']} s (median of 3; runs {b['runs']})")
    write_results("map_layout" + "".join(f"_{x}" for x in (args.only, args.corpus) if x), figures, m, started)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
