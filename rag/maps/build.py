"""The map of a library, computed once per library generation and brought up to date cheaply.

    library_map(library)            # the current map: cached, updated, or fitted (what the CLI calls)
    library_map(library, refit="never") + refit_in_background(library)   # what the UI does

- Same generation as the cached map: the cached map, as is.
- Papers added, edited or removed since: only the new ones' vectors are read; they are placed by their
  nearest laid-out neighbours (rag.maps.layout.place) into the region of the nearest centre; the
  others keep their positions and the regions their names.
- Once the papers placed or removed since the fit pass `refit_share` (20 %) of those it was fitted on,
  the layout is fitted again: placed papers cannot open regions of their own, so a library that grew by
  a new field would show it squeezed into old regions. The CLI refits then and there; the UI keeps
  showing the updated map and refits in a background thread.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Literal

import numpy as np

from rag.maps import cache, layout, regions
from rag.maps.records import LibraryMap, Topic
from rag.maps.vectors import paper_vectors

log = logging.getLogger(__name__)


class TooFewPapers(Exception):
    """Nothing to map: an empty or one-paper library. Not an error; the message says what to do."""


def _params(library, s) -> dict:
    return {"method": "tsne", "perplexity": s.perplexity, "seed": s.seed, "max_topics": s.max_topics,
            "embedder": f"{library.identity.model}/{library.identity.dimension}"}


def _check_size(library, n: int) -> None:
    if n == 0:
        raise TooFewPapers(f"library {library.name!r} is empty: there is nothing to map yet; "
                           f"add abstracts first (paperchat ingest FILES)")
    if n == 1:
        raise TooFewPapers(f"library {library.name!r} holds one paper: a map needs at least two to show what "
                           f"lies near what; add abstracts first (paperchat ingest FILES)")


def needs_refit(m: LibraryMap, settings) -> bool:
    return m.method != "single" and m.drift > settings.map.refit_share


def library_map(library, settings=None, refit: Literal["auto", "never", "now"] = "auto") -> LibraryMap:
    """The map of the library's current generation (see the module docstring). Raises TooFewPapers
    for an empty or one-paper library."""
    settings = settings or library.settings
    s = settings.map
    t0 = time.perf_counter()
    library.refresh()
    gen = library.records.generation or ""  # the generation stamp the caches are keyed on
    catalogue = library.catalogue
    _check_size(library, len(catalogue))
    params = _params(library, s)
    cached = cache.load(library.dir)
    if cached is not None and cached.params != params:
        cached = None  # fitted under other settings or another embedder
    if cached is not None and refit != "now":
        if cached.map.generation == gen and not (refit == "auto" and needs_refit(cached.map, settings)):
            return cached.map
        updated = _update(library, cached, gen, catalogue, t0)
        if updated is not None:
            if refit == "auto" and needs_refit(updated.map, settings):
                log.info("map of %r: %.0f %% placed or removed since the fit; fitting again", library.name,
                         100 * updated.map.drift)
            else:
                cache.save(library.dir, updated)
                return updated.map
    fitted = _fit(library, gen, catalogue, params, t0)
    cache.save(library.dir, fitted)
    return fitted.map


def _fit(library, gen: str, catalogue: dict, params: dict, t0: float) -> cache.Cached:
    s = library.settings.map
    ids, vecs = paper_vectors(library)
    _check_size(library, len(ids))
    xy, method = layout.fit(vecs, s.perplexity, s.seed)
    k = regions.n_regions(len(ids), s.max_topics)
    labels = regions.group(xy, k, s.seed)
    k = int(labels.max()) + 1
    topics = _topics(library, ids, vecs, xy, labels, k)
    m = LibraryMap(library=library.name, generation=gen, method=method, ids=ids, xy=xy, region=labels,
                   placed=np.zeros(len(ids), dtype=bool), topics=topics, fitted_papers=len(ids),
                   seconds=round(time.perf_counter() - t0, 2))
    return cache.Cached(map=m, hashes=[str(catalogue[p].get("hash", "")) for p in ids], vectors=vecs.astype(np.float16),
                        params=params)


def _topics(library, ids: list[str], vecs: np.ndarray, xy: np.ndarray, labels: np.ndarray, k: int) -> list[Topic]:
    picks, centroids = regions.typical(vecs, labels, k)
    papers = library.get_papers([ids[i] for g in picks for i in g], refresh=False)
    groups = [[papers[ids[i]] for i in g if ids[i] in papers] for g in picks]
    names = regions.name(groups, centroids, library.text_embedder) if k > 1 else [("", [])]
    at = regions.centres(xy, labels, k)
    sizes = np.bincount(labels, minlength=k)
    out = []
    for r, (title, terms) in enumerate(names):
        if k == 1:
            title, terms = _one_region_name(library, groups[0], centroids[0])
        out.append(Topic(id=r, name=title or f"Region {r + 1}", terms=terms, x=float(at[r, 0]), y=float(at[r, 1]),
                         size=int(sizes[r])))
    return out


def _one_region_name(library, group: list, centroid: np.ndarray) -> tuple[str, list[str]]:
    """A library too small to divide: name it from its terms against nothing else (its lead title if none)."""
    [(title, terms)] = regions.name([group], [centroid], library.text_embedder)
    return title, terms


def _update(library, cached: cache.Cached, gen: str, catalogue: dict, t0: float) -> cache.Cached | None:
    """Place what is new, drop what is gone; None when nothing of the old layout survives."""
    old = cached.map
    keep = np.array([pid in catalogue and str(catalogue[pid].get("hash", "")) == h
                     for pid, h in zip(old.ids, cached.hashes)], dtype=bool)
    if not keep.any():
        return None
    kept_ids = [pid for pid, k in zip(old.ids, keep) if k]
    have = set(kept_ids)
    new_ids, new_vecs = paper_vectors(library, [pid for pid in catalogue if pid not in have])
    base_vecs = cached.vectors[keep].astype(np.float32)
    base_xy = old.xy[keep]
    new_xy = layout.place(new_vecs, base_vecs, base_xy)
    at = np.array([[t.x, t.y] for t in old.topics], dtype=np.float32)
    new_region = regions.nearest_region(new_xy, at)
    region = np.concatenate([old.region[keep], new_region]).astype(np.int32)
    sizes = np.bincount(region, minlength=len(old.topics))
    topics = [t.model_copy(update={"size": int(sizes[t.id])}) for t in old.topics]
    m = LibraryMap(library=library.name, generation=gen, method=old.method, ids=kept_ids + new_ids,
                   xy=np.concatenate([base_xy, new_xy]).astype(np.float32), region=region,
                   placed=np.concatenate([old.placed[keep], np.ones(len(new_ids), dtype=bool)]), topics=topics,
                   fitted_papers=old.fitted_papers, removed_since_fit=old.removed_since_fit + int((~keep).sum()),
                   seconds=round(time.perf_counter() - t0, 2))
    hashes = [h for h, k in zip(cached.hashes, keep) if k] + [str(catalogue[p].get("hash", "")) for p in new_ids]
    vectors = np.concatenate([cached.vectors[keep], new_vecs.astype(np.float16)])
    return cache.Cached(map=m, hashes=hashes, vectors=vectors, params=cached.params)


# -- background refits (the UI) -------------------------------------------------------------------

_FITS: dict[Path, threading.Thread] = {}
_FITS_GUARD = threading.Lock()


def refit_in_background(library, settings=None) -> bool:
    """Fit the layout again in a daemon thread (one per library folder at a time). True while one runs."""
    key = Path(library.dir).resolve()
    with _FITS_GUARD:
        running = _FITS.get(key)
        if running is not None and running.is_alive():
            return True

        def work() -> None:
            try:
                library_map(library, settings, refit="now")
            except Exception:  # noqa: BLE001 - the map in use stays; the next request tries again
                log.exception("map of %r: background refit failed", library.name)

        t = threading.Thread(target=work, daemon=True, name=f"paperchat-map-{library.name}")
        _FITS[key] = t
        t.start()
        return True


def refitting(library) -> bool:
    t = _FITS.get(Path(library.dir).resolve())
    return t is not None and t.is_alive()
