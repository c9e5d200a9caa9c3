"""Writing a library: ingest in batches (add, replace, keep, remove), in an order a crash cannot harm.

Write order makes a crash harmless: a paper's chunks are written before its catalogue record, and a
paper only exists once its record does; chunks without a record are ignored by readers and swept by
the next ingest. The generation is set to a "dirty" stamp before the first write and to a fresh one
after the last, so every reader's caches notice any change, finished or not.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from rag.library.catalogue import Catalogue, paper_meta
from rag.library.chunking import Window, chunk_windows, chunks_of
from rag.library.collections import DIRTY, PAGE, Collections, chunk_metadata, in_pages, paged
from rag.library.embcache import CachedEmbedder, EmbeddingCache, embed_windows, embed_with_cache, pooled_kind
from rag.embedders.endpoint import EndpointFailed
from rag.errors import LibraryError
from rag.library.overlap import Cut, OneAhead, Plan, cut_batch, one_blas_thread
from rag.library.recut import rebuild_chunks
from rag.records import Chunk, Paper, Rejection
from rag.reading.roles import model_id, roles_current, roles_to_store
from rag.reading.vector_kind import vector_kind
from rag.settings import Settings
from rag.library.sources import (LINEAGE_PEEK, Repeats, SourceIndex, also_at, co_holders, entry, fields, joining,
                                 keep_versions, leaving, owner, peek, still_named, stored_id)

log = logging.getLogger(__name__)

BATCH = 256  # papers per write: small enough to lose little to a crash (~25 s of work), large enough that its
# windows, sorted by length, pad little: 1.014x the real tokens against 1.029x at 128 (bench/ingest_throughput.py)


class IngestReport(BaseModel):
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    rejected: int = 0
    duplicates: int = 0  # repeats of a record within one file: kept once, not an error
    held_apart: int = 0  # records of a paper another source holds with other text: that text stays shown
    rejections: list[Rejection] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # one line per repeated record
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"added {self.added}, updated {self.updated}, unchanged {self.unchanged}, "
                f"rejected {self.rejected}" + (f", removed {self.removed}" if self.removed else "")
                + (f", repeated {self.duplicates} (kept once)" if self.duplicates else "")
                + (f", held apart {self.held_apart} (another file's text is shown)" if self.held_apart else ""))


def retitled_only(old: dict, p: Paper) -> bool:
    """The stored record differs from `p` in its derived title only (the title rules changed since,
    rag.loaders.titles): a metadata rewrite, not a re-embedding (derived titles are not in the chunks)."""
    return bool(old.get("title_derived")) and p.title_derived and \
        p.model_copy(update={"title": old.get("title", "")}).content_hash == old.get("hash")


def chunking_of(settings: Settings) -> str:
    """How chunks are cut under these settings, as the library records it."""
    cs = settings.chunk
    return f"{cs.max_chars} chars/{cs.max_tokens} tokens"


def held_too(p: Paper, old: dict, source_id: str, source_path: str, report: IngestReport) -> bool:
    """Another source's paper that this one holds too: that source's text stays shown, this file's own version
    is kept beside it (rag.library.sources, holders). Counted into `report`; True if its entry is to be written."""
    mine = entry(p, source_path, str(old.get("hash", "")))
    if "paper" in mine:
        report.held_apart += 1
        report.notes.append(f"{p.source}: record {p.position} ({p.paper_id}) differs from the version "
                            f"{old.get('source') or owner(old)} holds, which stays shown; this file's is "
                            f"kept for when that file no longer holds it")
    else:
        report.unchanged += 1
    return also_at(old).get(source_id) != mine


class Ingestor:
    """The one writer of a library. `write_lock` is the library's (rag.library.library.Library.write_lock);
    `store` its store jobs, which may rebuild a store Chroma cannot load before an ingest writes."""

    def __init__(self, cols: Collections, catalogue: Catalogue, store, embedder, cache: EmbeddingCache | None,
                 settings: Settings, write_lock: Callable[[], AbstractContextManager]):
        self.cols, self.catalogue, self.store = cols, catalogue, store
        self.embedder, self.cache, self.settings, self.write_lock = embedder, cache, settings, write_lock
        self.overlap = True  # embed batch i+1 while batch i is written (rag.library.overlap)

    def _chunk(self, papers: Iterable[Paper]) -> list[Chunk]:
        return [c for p in papers for c in chunks_of(p, self.windows(p))]

    def windows(self, paper: Paper) -> list[Window]:
        """The paper's chunk texts with their sentences' places (rag.library.chunking), as _chunk cuts them."""
        cs = self.settings.chunk
        return chunk_windows(paper, cs.max_chars, cs.max_tokens, getattr(self.embedder, "count_tokens", None))

    def sentence_embedder(self) -> CachedEmbedder:
        """Sentences seen through the cache, as tasks see them (rag.library.embcache.CachedEmbedder)."""
        on = self.settings.chunk.one_pass
        return CachedEmbedder(self.embedder, self.cache, self.windows if on else None, pooled_kind(chunking_of(self.settings)))

    def ingest(self, paths: Iterable[Path], fields: dict[str, str] | None = None,
               progress: bool | None = None, on_progress: Callable[[int], None] | None = None, *,
               source: str | None = None, remember_paths: bool = True) -> IngestReport:
        """Add what is new, replace what changed, leave the rest; see IngestReport for the counts.

        Each file is a source (rag.library.sources): `source` names it outright (one file only);
        `remember_paths=False` is for uploads, whose temporary paths mean nothing (recognised by content)."""
        from tqdm import tqdm

        from rag.loaders import discover, estimate_records, load_file
        from rag.loaders.common import cap_titles

        t0 = time.perf_counter()
        report = IngestReport()
        files, skipped = discover([Path(p) for p in paths])
        report.rejections += skipped
        report.rejected += len(skipped)
        if source is not None and (len(files) > 1 or not source.strip()):
            raise LibraryError(f"--source names one file; {len(files)} were given" if source.strip()
                               else "--source needs a name")
        if not files:
            report.seconds = time.perf_counter() - t0
            return report
        cat = self.catalogue
        with self.write_lock(), one_blas_thread():
            wanted = chunking_of(self.settings)
            if not self.store.rebuild_if_unloadable() and self.cols.chunking != wanted and self.cols.papers.count():
                log.warning("library %r was chunked at %s; re-chunking it at %s (PAPERCHAT_CHUNK__MAX_CHARS) first",
                            self.cols.name, self.cols.chunking, wanted)
                self.recut()
            cat.refresh()
            was_dirty = cat.generation.startswith(DIRTY)
            gen_dirty = f"{DIRTY}-{uuid.uuid4().hex}"
            changed = False
            counts = [estimate_records(f) for f in files] if progress is not False else []
            total = sum(counts) if counts and None not in counts else None  # gives the bar a rate and an ETA
            bar = tqdm(total=total, unit=" abstracts", disable=(None if progress is None else not progress), smoothing=0.05,
                       dynamic_ncols=True, desc="ingest", leave=False)

            ahead = OneAhead(self.overlap)

            done = 0

            def progressed(n: int) -> None:
                nonlocal done
                done += n  # counted here: a disabled bar (progress=False) counts nothing
                bar.update(n)
                if on_progress:
                    on_progress(done)

            def commit(plan: Plan | None) -> None:
                nonlocal changed
                if plan is not None:
                    if self.commit(plan, gen_dirty, changed):
                        changed = True
                    progressed(plan.size)

            def write(batch: list[Paper], sid: str, where: str) -> None:
                sources.add(sid, where, batch)
                plan = self.plan(batch, report, ahead.planned(), sid, where)
                if plan is None:  # nothing new in it
                    progressed(len(batch))
                    return
                # Batch i+1 is cut here and embedded on a worker thread while batch i is written.
                commit(ahead.swap(plan))

            try:
                if was_dirty:
                    cat.set_generation(gen_dirty)
                    changed = True
                    self.sweep_orphans()
                sources = SourceIndex(cat.entries)
                for path in files:
                    seen: set[str] = set()  # stored ids the file holds, and those its refused records name
                    unread = good = 0
                    batch: list[Paper] = []
                    items, head = peek(cap_titles(load_file(path, fields), report.notes), LINEAGE_PEEK)
                    sid, where = sources.identify(path, [p for p in head if isinstance(p, Paper)], source, remember_paths,
                                                  lambda f=path: {p.content_hash for p in cap_titles(load_file(f, fields), [])
                                                                  if isinstance(p, Paper)})
                    repeats = Repeats(path.name)
                    for item in items:
                        if isinstance(item, Rejection):
                            report.rejections.append(item)
                            report.rejected += 1
                            unread += not item.read
                            seen.update(still_named(item, sid))
                            continue
                        item.paper_id = stored_id(item, sid, cat.entries, sources.same_record(item))
                        if repeats.seen(item.paper_id, item.position, item.content_hash):
                            if (clash := repeats.clash(item.paper_id, item)) is not None:
                                report.rejections.append(clash)  # another record under an id already used
                                report.rejected += 1
                            continue  # a copy of a record earlier in this file: the first is kept
                        good += 1
                        seen.add(item.paper_id)
                        batch.append(item)
                        if len(batch) >= BATCH:
                            write(batch, sid, where)
                            batch = []
                    if batch:
                        write(batch, sid, where)
                    commit(ahead.swap(None))  # the file's last batch is written before its removals are worked out
                    report.duplicates += repeats.count
                    report.notes += repeats.notes()
                    if good and not unread:  # a record it could not read might be any: then none leaves
                        kept, rewritten, gone = leaving(cat.entries, sid, seen)
                        if gone or kept or rewritten:
                            if not changed:
                                cat.set_generation(gen_dirty)
                                changed = True
                            self.update_metas(kept)
                            self.write_versions(rewritten, sid)
                            self.delete_papers(gone)
                            report.removed += len(gone)
            finally:
                ahead.close()
                bar.close()
                if changed:
                    cat.set_generation(uuid.uuid4().hex)
                    cat.refresh()
        report.seconds = time.perf_counter() - t0
        return report

    def write_versions(self, versions: list[tuple[Paper, str, str]], leaving: str) -> None:
        """Papers `leaving` (a source) let go of, written as the next holder has them: its own text, chunks
        and record (rag.library.sources). Call with the generation already dirty."""
        by_holder: dict[tuple[str, str], list[Paper]] = {}
        for p, sid, where in versions:
            by_holder.setdefault((sid, where), []).append(p)
        for (sid, where), papers in by_holder.items():
            for s in range(0, len(papers), BATCH):
                part = papers[s : s + BATCH]
                self.commit(Plan(len(part), part, [], [], sid, where, self._cut, self._embed, dropping=leaving), "", True)

    def update_metas(self, metas: dict[str, dict]) -> None:
        """Rewrite records' metadata only (no vectors, no chunks): co-owners joining or leaving."""
        for part in in_pages(list(metas)):
            self.cols.papers.update(ids=part, metadatas=[metas[i] for i in part])
        if metas:
            self.catalogue.entries = {**self.catalogue.entries, **metas}

    def plan(self, batch: list[Paper], report: IngestReport, pending: dict[str, dict], source_id: str = "",
             source_path: str = "") -> Plan | None:
        """What a batch of one source changes (counted into `report`; None if nothing; writes nothing), judged
        against the catalogue as it will be once the batch before it (`pending`: Plan.pending) is written."""
        cat = self.catalogue.entries
        todo: dict[str, Paper] = {}
        moved: list[Paper] = []
        joined: list[Paper] = []  # papers another source shows that this one holds too (its entry to write)
        kind = vector_kind(self.sentence_embedder())  # whose roles count as current (rag.reading.roles)
        for p in batch:
            old = pending.get(p.paper_id) or cat.get(p.paper_id)
            if old is None and p.paper_id not in todo:
                report.added += 1
                todo[p.paper_id] = p
            elif old is not None and source_id and owner(old) != source_id and p.paper_id not in todo:
                if held_too(p, old, source_id, source_path, report):
                    joined.append(p)
            elif old is not None and old.get("hash") != p.content_hash and not retitled_only(old, p):
                report.updated += 1
                todo[p.paper_id] = p
            elif old is not None and old.get("hash") != p.content_hash and owner(old) == source_id and p.paper_id not in todo:
                report.unchanged += 1  # only its derived title changed (the rules did): its metadata follows
                moved.append(p)
            elif p.paper_id in todo:
                todo[p.paper_id] = p  # a repeat inside one ingest: the last version wins
                report.unchanged += 1
            else:
                report.unchanged += 1
                # Its own record: follow a new position, name or path; a legacy one gets its source id, current roles.
                if owner(old) == source_id and (old.get("position") != p.position or old.get("source") != p.source
                                                or old.get("source_id") != source_id
                                                or old.get("source_path", "") != source_path or not roles_current(old, kind)):
                    moved.append(p)
        if not todo and not moved and not joined:
            return None
        return Plan(len(batch), list(todo.values()), moved, joined, source_id, source_path, self._cut, self._embed)

    def _cut(self, papers: list[Paper]) -> Cut:  # on the writer's thread (rag.library.overlap)
        return cut_batch(papers, self.windows, self.embedder, self.cache, self.settings.chunk.one_pass)

    def _embed(self, cut: Cut) -> np.ndarray:
        """The chunks' vectors (on rag.library.overlap's worker thread when overlapped)."""
        if cut.windows and self.cache is not None:
            return embed_windows(self.embedder, cut.windows, self.cache, pooled_kind(chunking_of(self.settings)))
        return embed_with_cache(self.embedder, cut.texts, self.cache)[: len(cut.chunks)]

    def commit(self, plan: Plan, gen_dirty: str, dirty: bool) -> bool:
        """Write a planned batch (co-owners, chunks, records), stamping `gen_dirty` first unless `dirty`."""
        source_id, source_path = plan.source_id, plan.source_path
        cat = self.catalogue.entries
        try:
            chunks, n_chunks, vecs = plan.result()
        except EndpointFailed as exc:  # nothing of this batch is written yet: say what is kept
            raise LibraryError(f"{exc}; ingest stopped before writing the batch under way: the library holds "
                               f"{len(cat)} papers, each whole, and running the same ingest again carries on") from None
        joined = {p.paper_id: joining(cat[p.paper_id], source_id, entry(p, source_path, str(cat[p.paper_id].get("hash"))))
                  for p in plan.joined if p.paper_id in cat and owner(cat[p.paper_id]) != source_id}
        if joined:
            if not dirty:
                self.catalogue.set_generation(gen_dirty)
                dirty = True
            self.update_metas(joined)
            cat = self.catalogue.entries
        papers, moved, todo = plan.papers, plan.moved, {p.paper_id: p for p in plan.papers}
        if not todo and not moved:
            return bool(joined)
        if not dirty:
            self.catalogue.set_generation(gen_dirty)
        # Co-holders that held the text being replaced keep it as their own version (rag.library.sources).
        keep = [pid for pid in todo if pid in cat and cat[pid].get("hash") != todo[pid].content_hash
                and any("paper" not in e for e in co_holders(cat[pid], source_id, plan.dropping).values())]
        old = self.catalogue.get_papers(keep, refresh=False) if keep else {}
        # Drop the chunks of the versions being replaced (an edit can leave fewer chunks than before).
        stale = [f"{pid}#{i}" for pid in todo if pid in cat for i in range(int(cat[pid].get("n_chunks", 0)))]
        # An edited paper's record goes first: new chunks overwrite the old ones in place, so a crash
        # before the new record is written must leave the paper absent (re-added by the next run, its
        # chunks swept), never an old record over the new version's chunks.
        for part in in_pages([pid for pid in todo if pid in cat]):
            self.cols.papers.delete(ids=part)
        for part in in_pages(stale):
            self.cols.chunks.delete(ids=part)
        for s in range(0, len(chunks), PAGE):
            part = chunks[s : s + PAGE]
            self.cols.chunks.upsert(
                ids=[c.chunk_id for c in part], embeddings=vecs[s : s + PAGE],
                metadatas=[chunk_metadata(c, todo[c.paper_id].venue, todo[c.paper_id].year) for c in part])
        recs = papers + moved
        def also(p: Paper) -> dict[str, str]:  # every other source that holds it stays a holder, with its version
            at = co_holders(cat[p.paper_id], source_id, plan.dropping) if p.paper_id in cat else {}
            if p.paper_id in old:
                at = keep_versions(at, old[p.paper_id], p.content_hash)
            return fields(at)
        roles = roles_to_store(recs, cat, todo, emb := self.sentence_embedder())  # (rag.reading.roles)
        metas = [paper_meta(p, n_chunks.get(p.paper_id, int(cat.get(p.paper_id, {}).get("n_chunks", 0))),
                            source_id, source_path, roles=roles[p.paper_id], roles_model=model_id(vector_kind(emb)), **also(p))
                 for p in recs]
        self.cols.papers.upsert(ids=[p.paper_id for p in recs], embeddings=[[1.0]] * len(recs),
                                documents=[p.abstract for p in recs], metadatas=metas)
        # Copy-on-write: readers in other threads may be iterating the current catalogue.
        self.catalogue.entries = {**cat, **{p.paper_id: m for p, m in zip(recs, metas)}}
        return True

    def delete_papers(self, ids: list[str]) -> None:
        cat = self.catalogue.entries
        # Record first: once it is gone the paper is gone for every reader, whatever happens next.
        for part in in_pages(ids):
            self.cols.papers.delete(ids=part)
        for part in in_pages([f"{pid}#{i}" for pid in ids for i in range(int(cat[pid].get("n_chunks", 0)))]):
            self.cols.chunks.delete(ids=part)
        gone = set(ids)
        self.catalogue.entries = {k: v for k, v in cat.items() if k not in gone}

    def sweep_orphans(self) -> None:
        """After a crash: drop chunks whose paper record was never written."""
        cat = self.catalogue.entries
        orphans = []
        for got in paged(self.cols.chunks, ["metadatas"]):
            for cid, m in zip(got["ids"], got["metadatas"]):
                pid = (m or {}).get("paper_id")
                if pid not in cat or int(cid.rsplit("#", 1)[1]) >= int(cat[pid].get("n_chunks", 0)):
                    orphans.append(cid)
        for part in in_pages(orphans):
            self.cols.chunks.delete(ids=part)

    def recut(self) -> int:
        """Rebuild the chunk collection from the paper records (rag.library.recut): after chunk settings changed,
        and after a store repair. Call with the write lock held. Returns the number of papers re-indexed."""
        return rebuild_chunks(self.cols, self.catalogue, self._chunk,
                              lambda texts: embed_with_cache(self.embedder, texts, self.cache), chunking_of(self.settings),
                              BATCH)
