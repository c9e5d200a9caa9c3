"""A fetch on disk, under the library's home (`libraries/NAME/fetched/`):

- `SLUG.jsonl`: the snapshot, CSL-JSON items one a line, read back by the ordinary CSL-JSON loader
  (rag.loaders.csl) when it is ingested; each item keeps what the service said in a `paperchat` object
  (service, its id, DOI, arXiv id, PMID, the query) that the loader passes over;
- while a fetch runs: `SLUG.part.jsonl` (the works fetched so far, as records.Fetched) and
  `SLUG.state.json` (the query, where the service's paging stands, the part's size after the last whole
  page, the counts): an interrupted fetch carries on from there when run again; the snapshot itself is
  only replaced once the fetch is whole, so the library never sees half a query.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from rag.fetch.records import FetchQuery, Fetched, Skipped


class Progress(BaseModel):
    query: FetchQuery
    paging: dict | None = Field(default_factory=dict)  # the service's cursor / offset / token; None: done
    part_bytes: int = 0
    fetched: int = 0
    no_abstract: int = 0
    malformed: int = 0
    skipped: list[str] = Field(default_factory=list)  # one line each, the first few
    total: int | None = None
    pages: int = 0


class Snapshot:
    def __init__(self, folder: Path, q: FetchQuery):
        self.folder, self.query = folder, q
        slug = q.slug()
        self.path = folder / f"{slug}.jsonl"
        self.part = folder / f"{slug}.part.jsonl"
        self.state_path = folder / f"{slug}.state.json"

    def resume(self) -> Progress | None:
        """The progress of an interrupted fetch of this same query, if there is one to carry on."""
        try:
            p = Progress.model_validate_json(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        same = p.query.model_dump(exclude={"limit"}) == self.query.model_dump(exclude={"limit"})
        if not same or not self.part.exists():
            return None
        with open(self.part, "r+b") as f:  # a page written after the last saved state is fetched again
            f.truncate(p.part_bytes)
        return p

    def start(self) -> Progress:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.part.write_bytes(b"")
        return Progress(query=self.query)

    def add_page(self, p: Progress, works: list[Fetched], skipped: list[Skipped], paging: dict | None,
                 total: int | None) -> None:
        """Append a page's works, then record where paging stands (in that order: a kill between the two
        fetches the page again, and the part is cut back to its last whole page)."""
        with open(self.part, "a", encoding="utf-8") as f:
            for w in works:
                f.write(w.model_dump_json() + "\n")
            f.flush()
            os.fsync(f.fileno())
        p.part_bytes = self.part.stat().st_size
        p.fetched += len(works)
        for s in skipped:
            p.no_abstract += s.reason == "no abstract"
            p.malformed += s.reason == "malformed"
            if len(p.skipped) < 20:
                p.skipped.append(str(s))
        # The first page's count stands for the query (a later page may count differently mid-paging).
        p.paging, p.total, p.pages = paging, p.total if p.total is not None else total, p.pages + 1
        self.save(p)

    def save(self, p: Progress) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(p.model_dump_json(), encoding="utf-8")
        os.replace(tmp, self.state_path)

    def works(self) -> Iterator[Fetched]:
        with open(self.part, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield Fetched.model_validate_json(line)

    def earlier(self) -> Iterator[dict]:
        """Every record of every finished snapshot of the library (their ids and what they were stored as)."""
        for path in sorted(self.folder.glob("*.jsonl")):
            if path.name.endswith(".part.jsonl"):
                continue
            with open(path, encoding="utf-8") as f:
                for line in f:
                    try:
                        yield json.loads(line)
                    except ValueError:
                        continue

    def write(self, items: list[dict]) -> None:
        """Replace the snapshot with `items` (atomically), and drop the part and the state."""
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for it in items:
                f.write(json.dumps(it, ensure_ascii=False) + "\n")
        os.replace(tmp, self.path)
        for done in (self.part, self.state_path):
            done.unlink(missing_ok=True)


def csl_item(w: Fetched, stored_as: str, q: FetchQuery) -> dict:
    """A work as the CSL-JSON item the loader reads, its id decided by `stored_as` (rag.fetch.ids): the
    DOI when it is stored by DOI, the arXiv page as its URL when by arXiv id, neither when by hash."""
    url = w.url
    if stored_as.startswith("arXiv:"):
        url = f"https://arxiv.org/abs/{stored_as[len('arXiv:'):]}"
    elif not stored_as and ("arxiv.org/" in url or "openreview.net/" in url):
        url = ""
    item: dict = {"type": "article" if w.venue == "arXiv" else "article-journal", "title": w.title,
                  "abstract": w.abstract, "author": [{"literal": a} for a in w.authors],
                  "container-title": w.venue, "URL": url, "keyword": w.keywords}
    if w.year:
        item["issued"] = {"date-parts": [[w.year]]}
    if stored_as.startswith("doi:"):
        item["DOI"] = stored_as[len("doi:"):]
    item["paperchat"] = {"service": w.service, "id": w.service_id, "doi": w.doi, "arxiv": w.arxiv_id,
                         "pmid": w.pmid, "names": w.names(), "stored_as": stored_as, "query": q.source_id()}
    return item
