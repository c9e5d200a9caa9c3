"""An evaluation's own folder under PAPERCHAT_HOME/evals: its library, built once from the set's file and
reused while that file's content is the same, and the answers already asked (so a stopped run carries on).

The folder is a paperchat home of its own (its own store and libraries), so an eval never writes into the
user's libraries nor into their store's guard; it is keyed by the content hash of the file it is built
from, so a moved copy of the same set reuses it and an edited one gets a fresh one.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from functools import lru_cache
from pathlib import Path

from rag.settings import Settings

_READY = "ingested.json"  # written once the whole file is in: a run after an interrupted ingest ingests again


def content_hash(path: Path, n: int = 12) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:n]


def eval_folder(settings: Settings, kind: str, source: Path) -> Path:
    """PAPERCHAT_HOME/evals/<kind>-<content hash of source>."""
    return settings.home / "evals" / f"{kind}-{content_hash(source)}"


def eval_settings(settings: Settings, folder: Path, kind: str) -> Settings:
    """The user's settings (answerer, model, embedder, ask settings) with the eval folder as home and a
    library named for the set and the embedder (a library keeps the embedder it was built with)."""
    emb = settings.embedder if settings.embedder != "endpoint" else "endpoint-" + (settings.embeddings.model or "x")
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", f"{kind}-{emb}")[:63]
    return settings.model_copy(update={"home": folder, "library": name, "chroma_url": None})


def open_eval_library(settings: Settings, kind: str, source: Path, records: Path | None = None,
                      progress: bool | None = None):
    """The eval's library (rag.library.Library) over `records` (default: `source` itself), ingested on the
    first run; with the settings it was opened with."""
    from rag.library import Library

    folder = eval_folder(settings, kind, source)
    s = eval_settings(settings, folder, kind)
    lib = Library(s)
    ready = s.library_dir / _READY
    if not ready.exists():
        records = records or source
        report = lib.ingest([records], progress=progress)
        ready.write_text(json.dumps({"source": str(source), "sha256": content_hash(source),
                                     "papers": len(lib), "added": report.added}) + "\n", encoding="utf-8")
    return lib


@lru_cache(maxsize=1)
def code_version() -> dict:
    """The commit of the code that answers (with "-dirty" when rag/ or prompts/ differ from it) and a hash
    of that code, which keys the answers kept: answers of other code are never reused."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for p in sorted([*root.joinpath("rag").rglob("*.py"), *root.joinpath("rag").rglob("*.npz"),
                     *root.joinpath("prompts").glob("*.txt")]):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    commit = ""
    try:
        git = ["git", "-C", str(root)]
        commit = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                                timeout=10).stdout.strip()
        dirty = subprocess.run([*git, "status", "--porcelain", "--", "rag", "prompts"], capture_output=True,
                               text=True, timeout=10).stdout.strip()
        if commit and dirty:
            commit += "-dirty"
    except (OSError, subprocess.SubprocessError):
        pass
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("paperchat")
    except PackageNotFoundError:
        release = ""
    return {"commit": commit or None, "version": release, "code": h.hexdigest()[:12]}
