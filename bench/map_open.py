"""Opening the UI's Map tab, as a reader does, before and after in one run: `paperchat serve` started on
a library with no map cached and a fresh numba cache (a fresh install), the page loaded in headless
Chromium, the Map tab clicked, the time until the map is drawn; then later opens (the tab again in the
same page, a new page), and a second server process on the same library (its map cache dropped, the numba
cache kept: what a second process's first map costs).

    .venv/bin/python bench/map_open.py                      # the seeds and SciFact's 5,183 papers
    .venv/bin/python bench/map_open.py --libraries seeds    # the seeds only
    .venv/bin/python bench/map_open.py --before-rev main    # "before" = that revision's code (git archive)

Libraries: the bundled seeds (76 papers) and SciFact's corpus (5,183), both ingested once with the
hashing embedder under the bench home (embedding SciFact with MiniLM takes 15-25 min under load; the
layout's cost depends on the number of papers, not on what the vectors mean). The reader clicks the tab
`--idle` seconds after the page is ready (default 0: at once, the worst case).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

sys.path.insert(0, str(C.ROOT / "tests"))
from procs import free_port, stop_group  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
LIBRARIES = {"seeds": [C.ROOT / "seeds"], "scifact": [C.SCIFACT / "corpus.jsonl"]}


def library_home(name: str) -> Path:
    os.environ["PAPERCHAT_EMBEDDER"] = "fake"  # read by the Settings ensure_library makes
    home = C.BENCH_HOME / "map-open"
    C.ensure_library(f"map-{name}", LIBRARIES[name], home=home, progress=False)
    return home


def serve(code: Path, home: Path, library: str, numba_cache: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERCHAT_", "OPENAI_", "NUMBA_"))}
    env.update(PAPERCHAT_HOME=str(home), PAPERCHAT_LIBRARY=library, PAPERCHAT_EMBEDDER="fake",
               PAPERCHAT_LLM="extractive", NUMBA_CACHE_DIR=str(numba_cache), PYTHONPATH=str(code),
               ANONYMIZED_TELEMETRY="False", GRADIO_ANALYTICS_ENABLED="False")
    proc = subprocess.Popen([sys.executable, "-m", "rag.cli", "serve", "--port", str(port)], cwd=code, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "config", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.3)
    stop_group(proc)
    raise SystemExit("paperchat serve did not come up in 300 s")


def open_map(browser, url: str, idle: float, timeout_s: float, again: bool) -> dict:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(url)
    page.wait_for_selector("#pc-input textarea", timeout=120_000)
    time.sleep(idle)
    t0 = time.perf_counter()
    page.get_by_role("tab", name="Map").click()
    page.wait_for_selector("#pc-map[data-ready='1']", timeout=timeout_s * 1000)
    out = {"open_s": round(time.perf_counter() - t0, 2)}
    if again:
        page.get_by_role("tab", name="Chat").click()
        time.sleep(0.5)
        t0 = time.perf_counter()
        page.get_by_role("tab", name="Map").click()
        page.wait_for_selector("#pc-map[data-ready='1']", timeout=timeout_s * 1000)
        out["same_page_again_s"] = round(time.perf_counter() - t0, 2)
    page.close()
    return out


def measure(code: Path, name: str, idle: float, timeout_s: float, second_process: bool) -> dict:
    from playwright.sync_api import sync_playwright

    home = library_home(name)
    lib_dir = home / "libraries" / f"map-{name}"
    shutil.rmtree(lib_dir / "map", ignore_errors=True)  # no map cached: a first open
    numba_cache = Path(tempfile.mkdtemp(prefix="map-open-numba-"))  # nothing compiled yet: a fresh install
    out: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            proc, url = serve(code, home, f"map-{name}", numba_cache)
            try:
                out["first_open"] = open_map(browser, url, idle, timeout_s, again=True)
                out["new_page"] = open_map(browser, url, 0, timeout_s, again=False)
            finally:
                stop_group(proc, timeout=15)
            if second_process:
                shutil.rmtree(lib_dir / "map", ignore_errors=True)  # the map again, numba's cache kept
                proc, url = serve(code, home, f"map-{name}", numba_cache)
                try:
                    out["second_process_first_map"] = open_map(browser, url, idle, timeout_s, again=False)
                finally:
                    stop_group(proc, timeout=15)
        except Exception as exc:  # noqa: BLE001 - a timeout is a figure too
            out["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        finally:
            browser.close()
    shutil.rmtree(numba_cache, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--libraries", default="seeds,scifact")
    ap.add_argument("--before-rev", default="main", help="the code measured as 'before' ('' for none)")
    ap.add_argument("--idle", type=float, default=0.0, help="seconds between the page ready and the click")
    ap.add_argument("--timeout", type=float, default=900.0, help="per open, seconds")
    args = ap.parse_args()
    m = C.print_header("the Map tab opened in Chromium: first open, later opens, a second process; before and after")
    started = time.time()
    figures: dict = {"idle_s": args.idle, "runs": []}
    codes = [("after", C.ROOT)] + ([("before", C.checkout(args.before_rev, "map-open-before-"))] if args.before_rev else [])
    for name in [x for x in args.libraries.split(",") if x]:
        for label, code in codes:
            # UMAP's second process on SciFact would take as long again as its first: the seeds show it
            second = not (label == "before" and name == "scifact")
            r = {"library": name, "code": label, **measure(code, name, args.idle, args.timeout, second)}
            figures["runs"].append(r)
            print(f"{name:8} {label:6}: " + ", ".join(f"{k} {v}" for k, v in r.items() if k not in ("library", "code")),
                  flush=True)
    for name in {r["library"] for r in figures["runs"]}:
        got = {r["code"]: r for r in figures["runs"] if r["library"] == name and "first_open" in r}
        if "before" in got and "after" in got:
            ratio = got["before"]["first_open"]["open_s"] / max(got["after"]["first_open"]["open_s"], 1e-3)
            figures[f"{name}_first_open_before_over_after"] = round(ratio, 1)
            print(f"{name}: first open before/after = {ratio:.1f}x")
    C.write_results("map_open" + ("" if args.libraries == "seeds,scifact" else "_" + args.libraries.replace(",", "_")),
                    figures, m, started)
    for _, code in codes[1:]:
        shutil.rmtree(code, ignore_errors=True)


if __name__ == "__main__":
    main()
