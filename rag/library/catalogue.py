"""The paper catalogue: paper reads, and the caches built from the records per generation (catalogue, BM25, facets).

Chroma is the one source of truth (so replicas sharing a Chroma server agree); the catalogue (paper
id -> record metadata) and the lexical index are local caches, rebuilt whenever the library's
generation stamp changes (rag.library.collections) and saved in the library folder per generation.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rag.library.collections import DIRTY, REBUILD, Collections, paged
from rag.library.lexical import LexicalIndex
from rag.library.people import PeopleIndex, authors_of, name_words
from rag.records import Paper
from rag.settings import Settings

# bump when the cached catalogue or lexical index changes shape (v2: BM25 over papers; v3: British -ise read as -ize)
_CACHE_FORMAT = "v3"


class Facets:
    """Venue and year of every paper, in lexical-index order, as arrays: a filter is then a few vector
    comparisons, for BM25's mask and for the dense side alike (at 87k papers a Python loop over the
    catalogue cost 27 ms per query)."""

    def __init__(self, catalogue: dict[str, dict], ids: list[str], people_file: Path | None = None):
        metas = [catalogue.get(pid, {}) for pid in ids]
        venues = [m.get("venue") or "" for m in metas]
        self.spelled = {v.lower(): v for v in venues}  # any spelling -> the stored one
        self._codes = {v: i for i, v in enumerate(sorted(self.spelled))}
        self._venue = np.array([self._codes[v.lower()] for v in venues], dtype=np.int32)
        self._year = np.array([int(m.get("year") or 0) for m in metas], dtype=np.int32)
        self._row = {pid: i for i, pid in enumerate(ids)}
        self._ids, self._metas = ids, metas
        self._people: PeopleIndex | None = None  # built on the first author filter
        self._people_file = people_file
        self._shelves: dict[str, list[int]] | None = None
        self._person_memo: dict[str, np.ndarray] = {}

    def mask(self, venue: str | None, year_from: int | None, year_to: int | None, *, author: str | None = None,
             collection: str | None = None, papers: list[str] | None = None) -> np.ndarray:
        """1.0 for each paper (in lexical-index order) that passes, else 0.0; the venue in any case; an
        author as a person names one (`person_rows`); a Zotero collection with its subcollections; ids."""
        keep = np.ones(len(self._year), dtype=bool)
        if author:
            keep &= self._rows(self.person_rows(author))
        if collection:
            keep &= self._rows(self.collection_rows(collection))
        if papers is not None:
            keep &= self._rows(i for pid in papers if (i := self._row.get(pid)) is not None)
        if venue:
            code = self._codes.get(venue.lower())
            keep &= (self._venue == code) if code is not None else False
        if year_from is not None:
            keep &= self._year >= year_from
        if year_to is not None:
            keep &= self._year <= year_to
        return keep.astype(np.float32)

    def _rows(self, rows) -> np.ndarray:
        out = np.zeros(len(self._year), dtype=bool)
        out[rows if isinstance(rows, np.ndarray) else np.fromiter(rows, dtype=np.int64)] = True
        return out

    def ids_of(self, mask: np.ndarray) -> list[str]:
        return [self._ids[i] for i in np.flatnonzero(mask)]

    def person_rows(self, query: str) -> np.ndarray:
        """Papers (rows, ascending) with an author the query names as a person would (rag.library.people): "Hinton",
        "geoffrey hinton", "G. E. Hinton", "Hintön" for "Geoffrey E. Hinton"; "Li" not for "Lin".

        The name index is read from `people_file` (saved with the generation's cached catalogue), or built
        on the first author filter when there is none (a library mid-ingest, a cache from before the index),
        and kept with the facets (one per catalogue generation)."""
        words = name_words(query)
        if not words:
            return np.zeros(0, dtype=np.int32)
        key = " ".join(words)
        if key in self._person_memo:  # the same scope asked again (a conversation about one author)
            return self._person_memo[key]
        rows = self.people().rows(words, lambda row: authors_of(self._metas[row]))
        if len(self._person_memo) >= 64:
            self._person_memo.clear()
        self._person_memo[key] = rows
        return rows

    def people(self) -> PeopleIndex:
        if self._people is None:
            self._people = _load_people(self._people_file, len(self._metas))
        if self._people is None:
            self._people = PeopleIndex([m.get("authors") or "[]" for m in self._metas])
            _save_people(self._people, self._people_file)
        return self._people

    def collection_rows(self, query: str) -> set[int]:
        """Papers in a collection named by its whole path ("Thesis / Related work") or its own name
        ("Related work"), subcollections included (their paths continue the collection's)."""
        q = " / ".join(p.strip() for p in query.casefold().split("/") if p.strip())
        if not q:
            return set()
        if self._shelves is None:
            shelves: dict[str, list[int]] = {}
            for row, m in enumerate(self._metas):
                for path in json.loads(m.get("collections") or "[]"):
                    shelves.setdefault(str(path).casefold(), []).append(row)
            self._shelves = shelves
        rows: set[int] = set()
        for path, path_rows in self._shelves.items():
            parts = path.split(" / ")
            for start in range(len(parts)):
                tail = " / ".join(parts[start:])
                if tail == q or tail.startswith(q + " / "):
                    rows.update(path_rows)
                    break
        return rows

    def admitted(self, mask: np.ndarray) -> Callable[[str], bool]:
        """The mask as a test of one paper id."""
        row = self._row
        return lambda pid: (i := row.get(pid)) is not None and mask[i] > 0


def _load_people(path: Path | None, n: int) -> PeopleIndex | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            got = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None
    return got if isinstance(got, PeopleIndex) and len(got.first) == n else None


def _save_people(index: PeopleIndex, path: Path | None) -> None:
    """Saved beside the generation's catalogue, so a restarted process does not build it again; a cache
    that is gone (a newer generation replaced it) or read-only is simply not written."""
    if path is None or not path.parent.is_dir():
        return
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        with open(tmp, "wb") as f:
            pickle.dump(index, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def paper_meta(p: Paper, n_chunks: int, source_id: str = "", source_path: str = "", also_in: str = "[]",
               roles: str = "", roles_model: str = "", also_at: str = "{}") -> dict:
    """A paper's record metadata as stored in Chroma (and kept in the catalogue). "source" is the file name
    shown to users; source_id / source_path / also_in / also_at say which sources hold it (rag.library.sources); `roles` is
    rag.reading.roles.encode of its sentences' roles (a record written before roles were has no "roles" key) and
    `roles_model` the classifier that gave them (rag.reading.roles.model_id)."""
    meta = {
        "title": p.title, "title_derived": p.title_derived, "authors": json.dumps(p.authors),
        "year": p.year or 0, "venue": p.venue, "url": p.url, "source": p.source, "position": p.position,
        "hash": p.content_hash, "n_chunks": n_chunks, "roles": roles, "roles_model": roles_model,
        "source_id": source_id or p.source, "source_path": source_path, "also_in": also_in,
        "also_at": also_at,
    }
    # Only when present: records from the other formats keep exactly the metadata they had.
    if p.keywords:
        meta["keywords"] = json.dumps(p.keywords)
    if p.collections:
        meta["collections"] = json.dumps(p.collections)
    return meta


def paper_from_meta(pid: str, m: dict, abstract: str = "") -> Paper:
    return Paper(
        paper_id=pid, abstract=abstract, title=m.get("title", ""), title_derived=bool(m.get("title_derived")),
        authors=json.loads(m.get("authors") or "[]"), year=m.get("year") or None, venue=m.get("venue", ""),
        url=m.get("url", ""), source=m.get("source", ""), position=int(m.get("position") or 0),
        keywords=json.loads(m.get("keywords") or "[]"), collections=json.loads(m.get("collections") or "[]"),
        roles=m.get("roles") or "", roles_model=m.get("roles_model") or "",
    )


def lexical_text(title: str, abstract: str) -> str:
    return f"{title}. {abstract}" if title else abstract


class Catalogue:
    """The catalogue and lexical index of one library, current for `generation`. Both are replaced,
    never changed in place, so a reader holding one keeps a consistent view while an ingest goes on.
    `store` is the library's store jobs (rag.library.chroma.store_for); reads that fail go to its repair."""

    def __init__(self, cols: Collections, settings: Settings, folder: Path, store):
        self.cols, self.settings, self.dir, self.store = cols, settings, folder, store
        self.generation: str | None = None
        self.entries: dict[str, dict] = {}  # paper id -> record metadata
        self.lexical = LexicalIndex()

    # -- generation and caches -------------------------------------------------------------

    def current_generation(self) -> str:
        return self.cols.generation()

    def set_generation(self, gen: str) -> None:
        self.store.saw(gen)
        self.cols.stamp(gen)

    def refresh(self, _repaired: bool = False) -> None:
        """Bring the catalogue and lexical index up to the store's current generation."""
        gen = self.current_generation()
        if gen == self.generation:
            return
        self.store.catch_up(gen)
        if gen.startswith(REBUILD) and not _repaired and self.store.finish_rebuild():
            return
        cache = self.dir / f"cache-{_CACHE_FORMAT}-{gen}"
        if not gen.startswith(DIRTY) and (cache / "done").exists():
            with open(cache / "catalogue.pkl", "rb") as f:
                self.entries = pickle.load(f)
            self.lexical = LexicalIndex.load(cache / "lexical")
        else:
            try:
                self.rebuild_caches(gen)
            except Exception as exc:  # noqa: BLE001
                if _repaired:
                    raise
                self.store.repair_after(exc)
                return self.refresh(_repaired=True)
        self.generation = gen

    def rebuild_caches(self, gen: str) -> None:
        """The catalogue and BM25 index read anew from the paper records; saved unless `gen` is dirty."""
        catalogue: dict[str, dict] = {}
        for got in paged(self.cols.papers, ["metadatas"]):
            for pid, m in zip(got["ids"], got["metadatas"]):
                catalogue[pid] = dict(m or {})
        # BM25 indexes whole papers (title + abstract): on SciFact train that beats BM25 over chunks
        # (0.700 vs 0.672-0.689 nDCG@10, bench/tune). Papers come from their records, so a paper is in
        # the lexical index exactly when it is in the catalogue.
        ids, texts = [], []
        for got in paged(self.cols.papers, ["documents"]):
            for pid, doc in zip(got["ids"], got["documents"]):
                if pid in catalogue:
                    ids.append(pid)
                    texts.append(lexical_text(catalogue[pid].get("title", ""), doc or ""))
        self.entries = catalogue
        rs = self.settings.retrieval
        self.lexical = LexicalIndex.build(ids, texts, rs.bm25_k1, rs.bm25_b)
        if gen.startswith(DIRTY):
            return  # an ingest is under way or crashed: do not persist a cache it will invalidate
        tmp = self.dir / f".tmp-{uuid.uuid4().hex}"
        tmp.mkdir()
        with open(tmp / "catalogue.pkl", "wb") as f:
            pickle.dump(catalogue, f, protocol=pickle.HIGHEST_PROTOCOL)
        self.lexical.save(tmp / "lexical")
        # The author index too, so the first --author after an ingest reads it (70 ms at 87k papers) rather
        # than building it (seconds); in lexical-index order, as the facets read it.
        _save_people(PeopleIndex([catalogue[pid].get("authors") or "[]" for pid in ids]), tmp / "people.pkl")
        (tmp / "done").write_text(gen)
        target = self.dir / f"cache-{_CACHE_FORMAT}-{gen}"
        with contextlib.suppress(OSError):
            os.replace(tmp, target)
        for old in self.dir.glob("cache-*"):
            if old.name != target.name:
                shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)

    # -- reading ---------------------------------------------------------------------------

    def papers(self) -> list[Paper]:
        """The catalogue (without abstract texts), in source and position order."""
        self.refresh()
        ps = [paper_from_meta(pid, m) for pid, m in self.entries.items()]
        return sorted(ps, key=lambda p: (p.source, p.position, p.paper_id))

    def get_papers(self, ids: list[str], refresh: bool = True) -> dict[str, Paper]:
        """Full papers, abstracts included, for the given ids (those in the catalogue). `refresh=False`
        keeps the view a caller has just refreshed (a search checks the generation once, not per call)."""
        if refresh:
            self.refresh()
        want = [i for i in dict.fromkeys(ids) if i in self.entries]
        if not want:
            return {}
        try:
            got = self.cols.papers.get(ids=want, include=["documents", "metadatas"])
        except Exception as exc:  # noqa: BLE001
            self.store.repair_after(exc)
            got = self.cols.papers.get(ids=want, include=["documents", "metadatas"])
        return {pid: paper_from_meta(pid, m or {}, doc or "")
                for pid, doc, m in zip(got["ids"], got["documents"], got["metadatas"])}

    @property
    def n_chunks(self) -> int:
        # Memoised per catalogue object: the catalogue is replaced, never changed in place.
        cat = self.entries
        if getattr(self, "_n_chunks_of", None) is not cat:
            self._n_chunks = sum(int(m.get("n_chunks", 0)) for m in cat.values())
            self._n_chunks_of = cat
        return self._n_chunks

    def facets(self) -> Facets:
        """Built once per catalogue and lexical index (both are replaced, never changed, on refresh)."""
        cat, lex = self.entries, self.lexical
        memo = getattr(self, "_facets_of", None)
        if memo is None or memo[0] is not cat or memo[1] is not lex:
            gen = self.generation or ""
            saved = None if not gen or gen.startswith(DIRTY) else \
                self.dir / f"cache-{_CACHE_FORMAT}-{gen}" / "people.pkl"  # beside the generation's catalogue
            memo = self._facets_of = (cat, lex, Facets(cat, lex.ids, saved))
        return memo[2]

    def stats(self) -> dict:
        self.refresh()
        venues: dict[str, int] = {}
        years: dict[str, int] = {}
        for m in self.entries.values():
            venues[m.get("venue") or "?"] = venues.get(m.get("venue") or "?", 0) + 1
            y = str(m.get("year") or "?")
            years[y] = years.get(y, 0) + 1
        return {
            "library": self.cols.name, "papers": len(self.entries), "chunks": self.n_chunks,
            "store": self.settings.chroma_url or str(self.settings.home / "chroma"), "embedder": self.cols.model,
            "chunking": self.cols.chunking,
            "venues": dict(sorted(venues.items())), "years": dict(sorted(years.items())),
        }
