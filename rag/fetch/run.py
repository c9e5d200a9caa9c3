"""A fetch from start to ingest: page through the service into the resumable part (rag.fetch.snapshot),
then decide each work's id (rag.fetch.ids), write the snapshot, and ingest it as the query's source.
The library is opened only once the fetch is whole: a fetch that fails leaves it as it was."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from rag.errors import UserError
from rag.fetch import arxiv, openalex, pubmed, s2
from rag.fetch.http import Polite
from rag.fetch.ids import Aliases
from rag.fetch.records import NAMES, FetchQuery, Fetched, Skipped
from rag.fetch.snapshot import Progress, Snapshot, csl_item
from rag.records import text_hash
from rag.settings import Settings

SERVICE_MODULES = {"openalex": openalex, "arxiv": arxiv, "s2": s2, "pubmed": pubmed}


class FetchReport(BaseModel):
    source_id: str
    snapshot: str  # the snapshot's path
    service: str
    fetched: int = 0  # works with an abstract brought
    stored: int = 0  # of them, distinct papers written to the snapshot
    repeated: int = 0  # works the service gave twice (the same DOI / arXiv id): kept once
    no_abstract: int = 0
    malformed: int = 0
    skipped: list[str] = Field(default_factory=list)
    retried: list[int] = Field(default_factory=list)  # HTTP statuses waited out (429, 503)
    resumed: bool = False
    total: int | None = None  # what the service said matches
    ingest: dict = Field(default_factory=dict)  # rag.library.ingest.IngestReport, dumped
    papers: int = 0  # in the library afterwards
    seconds: float = 0.0

    def summary(self) -> str:
        skipped = []
        if self.no_abstract:
            skipped.append(f"{self.no_abstract} without abstract")
        if self.malformed:
            skipped.append(f"{self.malformed} malformed")
        out = f"fetched {self.fetched} from {NAMES.get(self.service, self.service)}"
        if self.total is not None and self.service != "dois":
            out += f" (of {self.total:,} matching)"
        if skipped:
            out += f", skipped {', '.join(skipped)}"
        if self.repeated:
            out += f", {self.repeated} given twice (kept once)"
        if self.retried:
            out += f", waited out {len(self.retried)} x HTTP {'/'.join(map(str, sorted(set(self.retried))))}"
        return out


def check(q: FetchQuery, settings: Settings) -> None:
    cap = settings.fetch.max_limit
    if q.limit > cap:
        raise UserError(f"--limit {q.limit} is over the cap of {cap:,} papers a fetch (raise it with "
                        f"PAPERCHAT_FETCH__MAX_LIMIT)")
    if q.service != "dois" and not q.query.strip() and (not q.author or q.service == "s2"):
        raise UserError(f"fetch {q.service} needs a query (the service's own syntax)"
                        + ("" if q.service == "s2" else " or --author"))
    if q.since and q.until and q.since > q.until:
        raise UserError(f"--since {q.since} is after --until {q.until}")


def clients(service: str, settings: Settings, sleep, transport) -> dict[str, Polite]:
    names = ["openalex", "crossref", "arxiv"] if service == "dois" else [service]
    return {n: Polite(n, settings.fetch, s2.headers(settings.fetch) if n == "s2" else None, sleep, transport)
            for n in names}


def dry_run(q: FetchQuery, settings: Settings, sleep=time.sleep, transport=None) -> int:
    """How many papers the query matches (one small request); nothing written."""
    check(q, settings)
    if q.service == "dois":
        from rag.fetch.dois import read_list

        return len(read_list(Path(q.query)))
    cs = clients(q.service, settings, sleep, transport)
    try:
        return SERVICE_MODULES[q.service].count(cs[q.service], q)
    finally:
        for c in cs.values():
            c.close()


def fetch(q: FetchQuery, settings: Settings, open_library: Callable, *, progress: bool | None = None,
          on_progress: Callable[[int, int | None], None] | None = None, sleep=time.sleep,
          transport=None) -> FetchReport:
    """Fetch, snapshot and ingest `q`; see the module doc. Raises UserError (one line) on what stops it,
    keeping what was fetched so that running it again carries on."""
    check(q, settings)
    t0 = time.perf_counter()
    snap = Snapshot(settings.library_dir / "fetched", q)
    p = snap.resume()
    resumed = p is not None
    p = p or snap.start()
    p.query = q  # a raised --limit carries on further
    cs = clients(q.service, settings, sleep, transport)
    try:
        _page_through(q, cs, snap, p, progress, on_progress)
    except UserError as exc:
        if p.pages:
            raise UserError(f"{exc} — {p.fetched} papers fetched so far are kept; run the same command again "
                            f"to carry on") from None
        raise
    finally:
        retried = [code for c in cs.values() for code in c.retried]
        for c in cs.values():
            c.close()
    lib = open_library()
    report = FetchReport(source_id=q.source_id(), snapshot=str(snap.path), service=q.service, fetched=p.fetched,
                         no_abstract=p.no_abstract, malformed=p.malformed, skipped=p.skipped, retried=retried,
                         resumed=resumed, total=p.total)
    aliases = Aliases(lib.catalogue.keys(), snap.earlier())
    items, seen = [], set()
    for w in snap.works():
        stored_as = aliases.choose(w)
        key = stored_as or text_hash(w.abstract)
        if key in seen:
            report.repeated += 1
            continue
        seen.add(key)
        items.append(csl_item(w, stored_as, q))
    snap.write(items)
    report.stored = len(items)
    ing = lib.ingest([snap.path], progress=progress, source=q.source_id())
    report.ingest = {**ing.model_dump(exclude={"rejections"}), "rejections": [str(r) for r in ing.rejections]}
    report.papers, report.seconds = len(lib), time.perf_counter() - t0
    return report


def _page_through(q: FetchQuery, cs: dict, snap: Snapshot, p: Progress, progress, on_progress) -> None:
    from tqdm import tqdm

    if p.paging is None:  # paged through already (killed before its snapshot was written)
        return
    if q.service == "dois":
        from rag.fetch import dois

        lines = dois.read_list(Path(q.query))
        pages = dois.pages(cs, lines, p.paging or None)
    else:
        pages = SERVICE_MODULES[q.service].pages(cs[q.service], q, p.paging or None)
    bar = tqdm(total=None, initial=p.fetched, unit=" papers", desc=f"fetch {q.service}", leave=False,
               disable=(None if progress is None else not progress), dynamic_ncols=True)
    try:
        for items, paging, total in pages:
            works = [i for i in items if isinstance(i, Fetched)]
            skipped = [i for i in items if isinstance(i, Skipped)]
            room = q.limit - p.fetched
            if len(works) >= room:  # the limit reached: this page is the last
                works, paging = works[:room], None
            snap.add_page(p, works, skipped, paging, total)
            bar.total = min(q.limit, total) if total is not None else None
            bar.update(len(works))
            if on_progress:
                on_progress(p.fetched, bar.total)
            if paging is None:
                break
        p.paging = None
        snap.save(p)
    finally:
        bar.close()
