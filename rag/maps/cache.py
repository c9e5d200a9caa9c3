"""The map kept beside the library's other caches (libraries/NAME/map/): positions, regions, names, and
the paper vectors and content hashes needed to bring it up to date without reading every vector again.

Two files, each replaced atomically; a token written into both tells a matched pair from a half-saved one.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from rag.maps.records import LibraryMap, Topic

FORMAT = 1


class Cached(BaseModel):
    """A saved map with what updating it needs."""

    model_config = {"arbitrary_types_allowed": True}

    map: LibraryMap
    hashes: list[str]  # content hash of each paper when laid out (an edited abstract is placed again)
    vectors: np.ndarray  # (n, d) float16 unit vectors, parallel to map.ids
    params: dict  # the settings the layout was fitted with: other settings mean a new fit


def folder(library_dir: Path) -> Path:
    return library_dir / "map"


def save(library_dir: Path, c: Cached) -> None:
    d = folder(library_dir)
    d.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex
    m = c.map
    tmp = d / f".layout-{token}.npz"
    with open(tmp, "wb") as f:
        np.savez(f, ids=np.array(m.ids, dtype=object).astype(str), hashes=np.array(c.hashes).astype(str),
                 xy=m.xy.astype(np.float32), region=m.region.astype(np.int32), placed=m.placed.astype(bool),
                 vectors=c.vectors.astype(np.float16), token=np.array(token))
    meta = {"format": FORMAT, "token": token, "library": m.library, "generation": m.generation, "method": m.method,
            "fitted_papers": m.fitted_papers, "removed_since_fit": m.removed_since_fit, "params": c.params,
            "topics": [t.model_dump() for t in m.topics]}
    tmp_json = d / f".layout-{token}.json"
    tmp_json.write_text(json.dumps(meta, ensure_ascii=False))
    os.replace(tmp, d / "layout.npz")
    os.replace(tmp_json, d / "layout.json")


def load(library_dir: Path) -> Cached | None:
    d = folder(library_dir)
    try:
        meta = json.loads((d / "layout.json").read_text())
        with np.load(d / "layout.npz", allow_pickle=False) as z:
            if meta.get("format") != FORMAT or str(z["token"]) != meta.get("token"):
                return None  # another process is between its two renames, or an older format
            ids = [str(x) for x in z["ids"]]
            m = LibraryMap(library=meta["library"], generation=meta["generation"], method=meta["method"], ids=ids,
                           xy=z["xy"], region=z["region"], placed=z["placed"],
                           topics=[Topic(**t) for t in meta["topics"]], fitted_papers=meta["fitted_papers"],
                           removed_since_fit=meta.get("removed_since_fit", 0))
            return Cached(map=m, hashes=[str(x) for x in z["hashes"]], vectors=z["vectors"], params=meta["params"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
