"""Derived titles kept current: a library whose titles were derived under older rules re-derives them on open.

Titles are derived at ingest (rag.loaders.titles) and stored in each record's metadata, so better rules
would otherwise reach a library only as its files are ingested again. The papers collection records the
rules' version (rag.library.collections: `titles`); when it is older, the first process to open the library with
the write lock free rewrites the derived titles (and the content hashes that include them) in the
records' metadata: no chunk, vector or abstract changes, nothing is re-embedded. A kill part-way leaves
each record whole (old or new title with its own hash) and the version unchanged, so the next open
finishes it; a busy library is left for the next open.
"""

from __future__ import annotations

import contextlib
import logging
import uuid

from rag.library.catalogue import paper_from_meta
from rag.library.collections import DIRTY, in_pages
from rag.errors import LibraryBusy
from rag.loaders.titles import TITLES_VERSION, derive_title

log = logging.getLogger(__name__)


def retitle_if_stale(lib) -> int:
    """Bring the library's derived titles up to TITLES_VERSION if they are older and no one is writing.
    Returns how many titles changed."""
    cols = lib.collections
    if cols.titles >= TITLES_VERSION:
        return 0
    if not cols.papers.count():
        cols.titles = TITLES_VERSION  # nothing derived yet: the first write stamps the version
        return 0
    with contextlib.suppress(LibraryBusy), lib.write_lock(timeout=0):
        return retitle(lib.ingestor)
    return 0


def retitle(ingestor) -> int:
    """With the write lock held: re-derive every derived title, rewriting the records whose title changed."""
    cat, cols = ingestor.catalogue, ingestor.cols
    cat.refresh()
    if (cat.generation or "").startswith(DIRTY):
        return 0  # a write was killed part-way: the next ingest finishes it first (orphans, rebuilds)
    derived = [pid for pid, m in cat.entries.items() if m.get("title_derived")]
    changed: dict[str, dict] = {}
    for part in in_pages(derived):
        got = cols.papers.get(ids=list(part), include=["documents", "metadatas"])
        for pid, doc, m in zip(got["ids"], got["documents"], got["metadatas"]):
            m = dict(m or {})
            title = derive_title(doc or "")
            old = paper_from_meta(pid, m, doc or "")
            # Only where the stored hash is what the record says (else the next ingest replaces it anyway).
            if title and title != m.get("title") and old.content_hash == m.get("hash"):
                changed[pid] = {**m, "title": title, "hash": old.model_copy(update={"title": title}).content_hash}
    if changed:
        log.warning("library %r: re-deriving %d paper titles under the current rules (metadata only)",
                    cols.name, len(changed))
        cat.set_generation(f"{DIRTY}-{uuid.uuid4().hex}")
        ingestor.update_metas(changed)
    cols.titles = TITLES_VERSION
    cat.set_generation(uuid.uuid4().hex if changed else cat.generation)
    if changed:
        cat.refresh()
    return len(changed)
