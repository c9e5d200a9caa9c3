"""Which id each fetched work is stored under, so the same paper from two services is one paper.

A work names itself by DOI, arXiv id and PMID (records.Fetched.names). It is stored under the first of
those the library already holds a paper under (directly, or through a snapshot record that was stored
under it: an arXiv fetch meeting a paper an OpenAlex fetch stored by its DOI, a PubMed record meeting
one stored by the DOI Semantic Scholar gave with its PMID); otherwise under its DOI, else its arXiv id,
else (neither known) the hash of its abstract, as the loaders do for any record without an id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rag.fetch.records import Fetched

_NAMED = ("doi:", "arXiv:")


class Aliases:
    def __init__(self, stored: Iterable[str], earlier: Iterable[Mapping] = ()):
        self.stored = set(stored)
        self.to: dict[str, str] = {}
        for rec in earlier:  # snapshot lines: {"paperchat": {"names": [...], "stored_as": "doi:…"}}
            ext = rec.get("paperchat") if isinstance(rec, Mapping) else None
            if isinstance(ext, Mapping) and ext.get("stored_as") in self.stored:
                for n in ext.get("names") or []:
                    self.to.setdefault(str(n), str(ext["stored_as"]))

    def choose(self, f: Fetched) -> str:
        """The stored id for `f` ("" for "by the hash of its abstract"), remembered for later works."""
        names = f.names()
        found = next((self.to[n] for n in names if n in self.to), "") or next(
            (n for n in names if n in self.stored and n.startswith(_NAMED)), "")
        chosen = found or next((n for n in names if n.startswith(_NAMED)), "")
        if chosen:
            for n in names:
                self.to.setdefault(n, chosen)
            self.stored.add(chosen)
        return chosen
