"""Salvage from a store Chroma cannot load: whether it can, and the paper records read from its SQLite file.

Embedded Chroma writes its HNSW files in place: `kill -9` at the wrong moment (about one kill in 40
in the kill loop on 2 cores) can leave a collection it cannot load again, for every read ("Error
deserializing pickle file", "Failed to apply logs to the hnsw segment writer"). Both collections are
then rebuilt from what survives (rag.library.store.guard.EmbeddedStore.rebuild): the paper records from
Chroma's SQLite file (transactional), the chunks from the records.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from pathlib import Path

from rag.library.collections import DIRTY, Collections, in_pages

log = logging.getLogger(__name__)


def loads(col) -> bool:
    """Whether Chroma can load the collection (a count loads it); other errors are not ours to judge."""
    try:
        col.count()
        return True
    except Exception as exc:  # noqa: BLE001
        if type(exc).__name__ in ("InternalError", "StoreTorn"):
            return False
        raise


def salvage_records(db: Path, papers_id: str) -> list[tuple[str, str, dict]]:
    """(paper_id, abstract, metadata) of every record, read from Chroma's SQLite metadata segment."""
    # Not read-only: after a kill, SQLite may have to recover the write-ahead log first.
    con = sqlite3.connect(db, timeout=30)
    try:
        seg = con.execute("SELECT id FROM segments WHERE collection = ? AND scope = 'METADATA'",
                          (papers_id,)).fetchone()
        rows = con.execute(
            "SELECT e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, m.bool_value "
            "FROM embeddings e JOIN embedding_metadata m ON m.id = e.id WHERE e.segment_id = ?",
            (seg[0] if seg else "",)).fetchall()
    finally:
        con.close()
    docs: dict[str, str] = {}
    metas: dict[str, dict] = {}
    for pid, key, sv, iv, fv, bv in rows:
        if key == "chroma:document":
            docs[pid] = sv or ""
        else:
            metas.setdefault(pid, {})[key] = (sv if sv is not None else iv if iv is not None else
                                              fv if fv is not None else bool(bv) if bv is not None else None)
    return [(pid, docs.get(pid, ""), m) for pid, m in metas.items() if "hash" in m]


def restore_records(cols: Collections, db: Path) -> None:
    """A new paper collection holding every record Chroma's SQLite file still has, stamped dirty (the
    chunks must be rebuilt after it)."""
    recs = salvage_records(db, str(cols.papers.id))
    log.warning("library %r: Chroma cannot load the paper records; restoring %d of them from its SQLite file",
                cols.name, len(recs))
    cols.new_papers(f"{DIRTY}-{uuid.uuid4().hex}")
    for part in in_pages(recs):
        cols.papers.upsert(ids=[r[0] for r in part], embeddings=[[1.0]] * len(part),
                           documents=[r[1] for r in part], metadatas=[r[2] for r in part])
