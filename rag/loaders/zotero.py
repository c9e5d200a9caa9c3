"""A local Zotero library (zotero.sqlite), read from a snapshot: never written, never locked.

Zotero keeps its database open with an exclusive lock while it runs, so the file (and its -wal / -journal,
if any) is copied byte for byte to a private temporary folder, the copy is read, and the copy is deleted.
A copy taken while Zotero was writing is retaken (sizes and times compared before and after, 3 tries).

Read: regular items not in the trash (deletedItems) and not in a feed library: title, creators (authors
where the item names any, else all), date -> year, publicationTitle / proceedingsTitle / conferenceName
/ bookTitle / repository -> venue, DOI (or a "DOI:" line in Extra), url, tags -> keywords, and the
collections holding the item ("Parent / Child") -> collections. Attachments, notes and annotations are
not papers and are passed over; an item without an abstract is reported by its Zotero key and title.
Tables are Zotero's published schema (items, itemTypes, itemData, itemDataValues, fields, creators,
itemCreators, creatorTypes, collections, collectionItems, deletedItems, tags, itemTags, libraries).
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

from rag.records import Paper, Rejection
from rag.loaders.common import clean_text, make_paper_id, parse_year, refused_whole, split_keywords
from rag.loaders.titles import derive_title

MAGIC = b"SQLite format 3\x00"
DATABASE = "zotero.sqlite"
_NOT_PAPERS = ("attachment", "note", "annotation")
_VENUES = ("publicationTitle", "proceedingsTitle", "conferenceName", "bookTitle", "repository")
_FIELDS = ("title", "abstractNote", "date", "DOI", "url", "extra", *_VENUES)
_DOI_IN_EXTRA = re.compile(r"^\s*DOI:\s*(\S+)", re.IGNORECASE | re.MULTILINE)
_SIDE_FILES = ("-wal", "-journal")
_COPY_TRIES = 3


def is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def database_in(folder: Path) -> Path | None:
    """The database of a Zotero data folder (~/Zotero), or None if the folder is not one."""
    db = folder / DATABASE
    return db if db.is_file() else None


def _stamp(path: Path) -> tuple:
    out = []
    for p in (path, *(path.with_name(path.name + s) for s in _SIDE_FILES)):
        try:
            st = p.stat()
            out.append((st.st_size, st.st_mtime_ns))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


def _snapshot(path: Path, folder: Path) -> Path:
    """A consistent copy of the database and its side files in `folder` (ours to open as we like)."""
    copy = folder / DATABASE
    for _ in range(_COPY_TRIES):
        before = _stamp(path)
        shutil.copyfile(path, copy)
        for s in _SIDE_FILES:
            side, mine = path.with_name(path.name + s), copy.with_name(copy.name + s)
            if side.exists():
                shutil.copyfile(side, mine)
            elif mine.exists():
                mine.unlink()
        if _stamp(path) == before:
            break
    return copy


def _connect(copy: Path) -> sqlite3.Connection:
    """Read-only on the copy; a copy with a hot journal needs SQLite to roll it back first, which it may
    do on the copy (ours, in a temporary folder), never on Zotero's file."""
    try:
        con = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True)
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        con = sqlite3.connect(f"{copy.as_uri()}?mode=rw", uri=True)
    # an uploaded file's views and triggers may not call functions with side effects (SQLite's advice for
    # databases of unknown origin)
    con.execute("PRAGMA trusted_schema = OFF")
    return con


def load(path: Path, source: str) -> Iterator[Paper | Rejection]:
    try:
        with tempfile.TemporaryDirectory(prefix="paperchat-zotero-") as tmp:
            con = _connect(_snapshot(path, Path(tmp)))
            try:
                items = _read(con)
            finally:
                con.close()
    except OSError as e:
        yield Rejection(source=source, reason=f"cannot read: {e.strerror or e}")
        return
    except sqlite3.DatabaseError as e:
        yield Rejection(source=source, reason=f"not a readable Zotero database ({e})")
        return
    if items is None:
        yield Rejection(source=source, reason="an SQLite database, but not a Zotero library (no items table)")
        return
    if not items:
        yield Rejection(source=source, reason="no items found in this Zotero library (the trash does not count)")
        return
    for position, item in enumerate(items, 1):
        yield _to_paper(item, source, position)


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def _read(con: sqlite3.Connection) -> list[dict] | None:
    """Every regular item (trash and feeds left out), in the order Zotero added them."""
    tables = _tables(con)
    if not {"items", "itemTypes", "itemData", "itemDataValues", "fields"} <= tables:
        return None
    where = [f"t.typeName NOT IN ({', '.join('?' * len(_NOT_PAPERS))})"]
    if "deletedItems" in tables:
        where.append("i.itemID NOT IN (SELECT itemID FROM deletedItems)")
    if "libraries" in tables:
        where.append("i.libraryID NOT IN (SELECT libraryID FROM libraries WHERE type = 'feed')")
    rows = con.execute(
        f"SELECT i.itemID, i.key FROM items i JOIN itemTypes t ON t.itemTypeID = i.itemTypeID "
        f"WHERE {' AND '.join(where)} ORDER BY i.itemID", _NOT_PAPERS).fetchall()
    items = {iid: {"key": key, "fields": {}, "creators": [], "collections": [], "tags": []} for iid, key in rows}
    for iid, name, value in con.execute(
            f"SELECT d.itemID, f.fieldName, v.value FROM itemData d JOIN fields f ON f.fieldID = d.fieldID "
            f"JOIN itemDataValues v ON v.valueID = d.valueID WHERE f.fieldName IN ({', '.join('?' * len(_FIELDS))})",
            _FIELDS):
        if iid in items:  # a BLOB or number where Zotero keeps text is read as text, never a traceback
            items[iid]["fields"][name] = clean_text(value) if name != "extra" else _plain(value)
    if {"creators", "itemCreators"} <= tables:
        kind = ("ct.creatorType", "LEFT JOIN creatorTypes ct ON ct.creatorTypeID = ic.creatorTypeID") \
            if "creatorTypes" in tables else ("''", "")
        for iid, first, last, mode, role in con.execute(
                f"SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode, {kind[0]} FROM itemCreators ic "
                f"JOIN creators c ON c.creatorID = ic.creatorID {kind[1]} ORDER BY ic.itemID, ic.orderIndex"):
            if iid in items:
                # fieldMode 1: one-field name (an institution), kept whole in lastName.
                first, last = clean_text(first), clean_text(last)
                name = last if mode == 1 else " ".join(x for x in (first, last) if x)
                items[iid]["creators"].append((name, clean_text(role)))
    if {"collections", "collectionItems"} <= tables:
        paths = _collection_paths(con, tables)
        for cid, iid in con.execute("SELECT collectionID, itemID FROM collectionItems ORDER BY orderIndex"):
            if iid in items and cid in paths:
                items[iid]["collections"].append(paths[cid])
    if {"tags", "itemTags"} <= tables:
        for iid, name in con.execute("SELECT it.itemID, t.name FROM itemTags it JOIN tags t ON t.tagID = it.tagID"):
            if iid in items:
                items[iid]["tags"].append(clean_text(name))
    return list(items.values())


def _plain(value) -> str:
    """A field kept with its line breaks (Extra: one `Key: value` a line), as text whatever SQLite holds."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return "" if value is None else str(value)


MAX_COLLECTION_DEPTH = 32  # names of a collection's path at most (its nearest parents): 12,000 levels cost 1.5 GB


def _collection_paths(con: sqlite3.Connection, tables: set[str]) -> dict[int, str]:
    """Collection id -> "Parent / Child" (collections in the trash, or under one, left out). A path deeper
    than MAX_COLLECTION_DEPTH keeps its nearest names, after "…": every collection's path is built from
    its parent's, so the cost is the collections times that depth, not the depth squared."""
    rows = {cid: (clean_text(name), parent) for cid, name, parent in
            con.execute("SELECT collectionID, collectionName, parentCollectionID FROM collections")}
    deleted = set()
    if "deletedCollections" in tables:
        deleted = {r[0] for r in con.execute("SELECT collectionID FROM deletedCollections")}
    names: dict[int, tuple[str, ...] | None] = {}  # None: in the trash, or in a parent loop
    for cid in rows:
        chain, on_chain, at = [], set(), cid
        while at in rows and at not in names and at not in on_chain:  # the ancestors not yet known, nearest first
            chain.append(at)
            on_chain.add(at)
            at = rows[at][1]
        above = names.get(at, ()) if at not in on_chain else None  # a loop in a damaged database: left out
        for c in reversed(chain):
            if above is not None and c not in deleted:
                above = (above if len(above) < MAX_COLLECTION_DEPTH else ("…",) + above[-MAX_COLLECTION_DEPTH + 2:]) \
                    + (rows[c][0],)
            else:
                above = None
            names[c] = above
    return {cid: " / ".join(n) for cid, n in names.items() if n is not None}


def _to_paper(item: dict, source: str, position: int) -> Paper | Rejection:
    f = item["fields"]
    where = f"item {item['key']}"
    title = clean_text(f.get("title"))
    abstract = clean_text(f.get("abstractNote"))
    url = clean_text(f.get("url"))
    doi = clean_text(f.get("DOI"))
    if not doi and (m := _DOI_IN_EXTRA.search(f.get("extra") or "")):
        doi = m.group(1)
    named = f" ({title[:80]!r})" if title else ""
    if refused := refused_whole(abstract, source, where, f"item{named} has no abstract", doi=doi, url=url):
        return refused
    creators = item["creators"]
    authors = [n for n, role in creators if role == "author" and n] or [n for n, _ in creators if n]
    return Paper(
        paper_id=make_paper_id(abstract, doi=doi, url=url),
        abstract=abstract,
        title=title or derive_title(abstract),
        title_derived=not title,
        authors=authors,
        year=parse_year(f.get("date")),
        venue=next((v for k in _VENUES if (v := clean_text(f.get(k)))), ""),
        url=url,
        source=source,
        position=position,
        keywords=split_keywords(item["tags"]),  # "Deep learning" and "deep learning" tags are one keyword
        collections=list(dict.fromkeys(item["collections"])),
    )
