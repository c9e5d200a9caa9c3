"""What reference managers hand us: RIS and CSL-JSON exports and a local Zotero database (zotero.sqlite)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
import rispy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rag.loaders import discover, load_file
from rag.loaders.common import clean_text
from rag.records import Paper, Rejection


def load(path: Path) -> tuple[list[Paper], list[Rejection]]:
    items = list(load_file(path))
    assert all(isinstance(i, (Paper, Rejection)) for i in items)
    return [i for i in items if isinstance(i, Paper)], [i for i in items if isinstance(i, Rejection)]


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# --- RIS ---------------------------------------------------------------------------------------------------
RIS = """TY  - JOUR
TI  - Deep learning
AU  - LeCun, Yann
AU  - Bengio, Yoshua
AU  - Hinton, Geoffrey E.
PY  - 2015///
T2  - Nature
AB  - Deep learning allows computational models that are composed of multiple
  processing layers to learn representations of data.
DO  - https://doi.org/10.1038/NATURE14539
UR  - https://www.nature.com/articles/nature14539
KW  - deep learning
KW  - neural networks
KW  - Deep Learning
ER  - 

TY  - CONF
TI  - A record without an abstract
AU  - Doe, Jane
ER  - 

TY  - CPAPER
T1  - Attention is all you need
A1  - Vaswani, Ashish
Y1  - 2017/12/04/
JO  - Advances in Neural Information Processing Systems
N2  - The dominant sequence transduction models are based on recurrent networks.
UR  - https://arxiv.org/abs/1706.03762
ER  - 
"""


def test_ris_fields_and_records_without_abstract(tmp_path):
    papers, bad = load(write(tmp_path, "export.ris", RIS))
    a, b = papers
    assert a.title == "Deep learning" and not a.title_derived
    assert a.authors == ["Yann LeCun", "Yoshua Bengio", "Geoffrey E. Hinton"]
    assert (a.paper_id, a.year, a.venue, a.position) == ("doi:10.1038/nature14539", 2015, "Nature", 1)
    assert a.abstract == ("Deep learning allows computational models that are composed of multiple processing "
                          "layers to learn representations of data.")
    assert a.url == "https://www.nature.com/articles/nature14539"
    assert a.keywords == ["deep learning", "neural networks"]  # "Deep Learning" again is the same keyword
    # T1 / A1 / Y1 / JO / N2: the older tags EndNote and Mendeley write
    assert (b.title, b.authors, b.year, b.position) == ("Attention is all you need", ["Ashish Vaswani"], 2017, 3)
    assert b.venue == "Advances in Neural Information Processing Systems"
    assert b.paper_id == "arXiv:1706.03762" and b.abstract.startswith("The dominant sequence")
    assert [str(r) for r in bad] == [
        "export.ris:line 17: record 'A record without an abstract' has no abstract (AB or N2)"]


def test_ris_is_recognised_by_content_and_counted_for_progress(tmp_path):
    from rag.loaders import estimate_records

    papers, bad = load(write(tmp_path, "export.txt.unknown", RIS))
    assert len(papers) == 2 and len(bad) == 1
    assert estimate_records(write(tmp_path, "export.ris", RIS)) == 3


def test_ris_bad_lines_are_named_and_the_rest_loads(tmp_path):
    text = ("TY  - JOUR\nTI  - Good one\nAB  - Fine abstract.\nER  - \n"
            "TI  - Orphan title\nAB  - Its TY line is missing.\nER  - \n"
            "TY  - JOUR\nTI  - No ER\nAB  - This record ends where the next begins.\n"
            "TY  - JOUR\nTI  - Last\nAB  - Last abstract.\nER  - \n")
    papers, bad = load(write(tmp_path, "bad.ris", text))
    assert [(x.title, x.position) for x in papers] == [("Good one", 1), ("No ER", 2), ("Last", 3)]
    assert [str(r) for r in bad] == [
        "bad.ris:line 5: text outside a record (a missing 'TY  -' line?); skipped up to the next record"]


def test_ris_undecodable_line_past_the_head_is_named(tmp_path):
    good = "".join(f"TY  - JOUR\nTI  - Paper {i}\nAB  - Abstract number {i}.\nER  - \n" for i in range(2000))
    p = tmp_path / "long.ris"
    p.write_bytes(good.encode() + b"TY  - JOUR\nAB  - bad byte \xff here\nER  - \nTY  - JOUR\nAB  - After.\nER  - \n")
    papers, bad = load(p)
    assert len(papers) == 2001 and papers[-1].abstract == "After."
    assert len(bad) == 1 and bad[0].where == "line 8001" and "line 8002: not UTF-8: invalid byte 0xff" in bad[0].reason


def test_ris_unclosed_last_record_and_no_records(tmp_path):
    papers, bad = load(write(tmp_path, "cut.ris", "TY  - JOUR\nAB  - Done.\nER  - \nTY  - JOUR\nAB  - Half of an abs"))
    assert [x.abstract for x in papers] == ["Done."]
    assert [str(r) for r in bad] == ["cut.ris:line 4: record is not closed (no 'ER  -' line: is the file cut short?)"]
    items = list(load_file(write(tmp_path, "none.ris", "just some text\n")))
    assert len(items) == 1 and items[0].where == "" and items[0].reason.startswith("no RIS records found")


def test_ris_wrapped_over_many_lines_loads_in_linear_time(tmp_path):
    """A value wrapped over thousands of short lines is joined once, not once per line."""
    from test_hostile_inputs import LINEAR, growth  # the same ratio measure as the other formats

    def make(n):
        f = tmp_path / f"wrap{n}.ris"
        f.write_text("TY  - JOUR\nAB  - Start\n" + "  ab\n" * n + "ER  - \n", encoding="utf-8")
        return f

    (paper,), _ = load(make(3))
    assert paper.abstract == "Start ab ab ab"
    assert growth(make, lambda f: list(load_file(f)), 2000) < LINEAR


_field = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\n\r\x85"),
                 min_size=1, max_size=60)
_word = st.text(st.characters(whitelist_categories=("Lu", "Ll")), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(st.fixed_dictionaries({
    "type_of_reference": st.sampled_from(["JOUR", "CONF", "CPAPER", "BOOK", "CHAP", "GEN"]),
    "title": _field, "abstract": _field, "secondary_title": _field,
    "authors": st.lists(st.tuples(_word, _word), min_size=1, max_size=4),
    "year": st.integers(1900, 2100),
    "doi": st.from_regex(r"10\.[0-9]{4,6}/[a-z0-9.]{0,11}[a-z0-9]", fullmatch=True),
    "keywords": st.lists(_field, max_size=3),
}), min_size=1, max_size=4))
def test_ris_round_trip_keeps_every_field(tmp_path, records):
    """What a reference manager writes (rispy's writer, the same shape Zotero exports) reads back intact."""
    for r in records:
        assume(all(clean_text(r[k]) for k in ("title", "abstract", "secondary_title")))
        assume(all(clean_text(k) for k in r["keywords"]))
    out = [{**r, "authors": [f"{last}, {first}" for last, first in r["authors"]], "year": str(r["year"])}
           for r in records]
    p = tmp_path / "round.ris"
    p.write_text(rispy.dumps(out), encoding="utf-8")
    papers, bad = load(p)
    assert bad == [] and len(papers) == len(records)
    for paper, r, n in zip(papers, records, range(1, 99)):
        assert paper.title == clean_text(r["title"]) and paper.abstract == clean_text(r["abstract"])
        assert paper.venue == clean_text(r["secondary_title"]) and paper.year == r["year"]
        assert paper.authors == [f"{first} {last}" for last, first in r["authors"]]
        assert paper.paper_id == f"doi:{r['doi']}" and paper.position == n
        assert paper.keywords == list(dict.fromkeys(clean_text(k) for k in r["keywords"]))


# --- CSL-JSON ---------------------------------------------------------------------------------------------
CSL = [
    {"id": "http://zotero.org/users/1/items/ABCD1234", "type": "article-journal", "title": "Deep learning",
     "container-title": "Nature", "abstract": "Deep learning allows computational models to learn.",
     "author": [{"family": "LeCun", "given": "Yann"}, {"family": "Hinton", "given": "Geoffrey E."},
                {"literal": "The Deep Learning Consortium"}],
     "issued": {"date-parts": [[2015, 5, 28]]}, "DOI": "10.1038/nature14539",
     "URL": "https://www.nature.com/articles/nature14539", "keyword": "deep learning, representation"},
    {"id": "vaswani2017", "type": "paper-conference", "title": "Attention is all you need",
     "author": [{"family": "Vaswani", "given": "Ashish"}], "issued": {"date-parts": [["2017"]]},
     "event-title": "NeurIPS"},
    {"id": "crossref", "type": "journal-article", "title": ["A Crossref item"], "container-title": ["Cell"],
     "abstract": "<jats:p>Crossref gives abstracts as JATS.</jats:p>", "issued": {"raw": "2020-01"},
     "author": [{"family": "Doe", "given": "Jane"}]},
]


def test_csl_json_fields_and_items_without_abstract(tmp_path):
    papers, bad = load(write(tmp_path, "My Library.json", json.dumps(CSL, indent=2)))
    a, c = papers
    assert (a.title, a.venue, a.year, a.paper_id) == ("Deep learning", "Nature", 2015, "doi:10.1038/nature14539")
    assert a.authors == ["Yann LeCun", "Geoffrey E. Hinton", "The Deep Learning Consortium"]
    assert a.keywords == ["deep learning", "representation"] and a.url.endswith("nature14539")
    assert (c.title, c.venue, c.year, c.abstract, c.position) == (
        "A Crossref item", "Cell", 2020, "Crossref gives abstracts as JATS.", 3)
    assert [str(r) for r in bad] == ["My Library.json:record 2: item 'Attention is all you need' has no abstract"]


def test_csl_told_apart_from_plain_records_by_content(tmp_path):
    """A JSON array of plain records with a `type` column is still read by field names, not as CSL."""
    plain = [{"type": "poster", "title": "Plain", "abstract": "A plain record.", "year": 2021, "venue": "ICML",
              "authors": "A. One and B. Two"}]
    (p,), bad = load(write(tmp_path, "plain.json", json.dumps(plain)))
    assert bad == [] and (p.venue, p.year, p.authors) == ("ICML", 2021, ["A. One", "B. Two"])
    (q,), _ = load(write(tmp_path, "one.jsonl", json.dumps(CSL[0]) + "\n"))  # CSL as JSON Lines too
    assert (q.venue, q.year, q.keywords) == ("Nature", 2015, ["deep learning", "representation"])


# --- Zotero -----------------------------------------------------------------------------------------------
# The tables and columns of Zotero's schema (zotero/zotero, resource/schema/userdata.sql) that we read.
ZOTERO_SCHEMA = """
CREATE TABLE libraries (libraryID INTEGER PRIMARY KEY, type TEXT NOT NULL, editable INT, filesEditable INT);
CREATE TABLE itemTypes (itemTypeID INTEGER PRIMARY KEY, typeName TEXT, templateItemTypeID INT, display INT);
CREATE TABLE fields (fieldID INTEGER PRIMARY KEY, fieldName TEXT, fieldFormatID INT);
CREATE TABLE items (itemID INTEGER PRIMARY KEY, itemTypeID INT NOT NULL, dateAdded TIMESTAMP, dateModified TIMESTAMP,
  clientDateModified TIMESTAMP, libraryID INT NOT NULL, key TEXT NOT NULL, version INT NOT NULL DEFAULT 0,
  synced INT NOT NULL DEFAULT 0, UNIQUE (libraryID, key));
CREATE TABLE itemDataValues (valueID INTEGER PRIMARY KEY, value UNIQUE);
CREATE TABLE itemData (itemID INT, fieldID INT, valueID, PRIMARY KEY (itemID, fieldID));
CREATE TABLE creatorTypes (creatorTypeID INTEGER PRIMARY KEY, creatorType TEXT);
CREATE TABLE creators (creatorID INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, fieldMode INT,
  UNIQUE (lastName, firstName, fieldMode));
CREATE TABLE itemCreators (itemID INT NOT NULL, creatorID INT NOT NULL, creatorTypeID INT NOT NULL DEFAULT 1,
  orderIndex INT NOT NULL DEFAULT 0, PRIMARY KEY (itemID, creatorID, creatorTypeID, orderIndex));
CREATE TABLE collections (collectionID INTEGER PRIMARY KEY, collectionName TEXT NOT NULL, parentCollectionID INT DEFAULT NULL,
  clientDateModified TIMESTAMP, libraryID INT NOT NULL, key TEXT NOT NULL, version INT NOT NULL DEFAULT 0,
  synced INT NOT NULL DEFAULT 0);
CREATE TABLE collectionItems (collectionID INT NOT NULL, itemID INT NOT NULL, orderIndex INT NOT NULL DEFAULT 0,
  PRIMARY KEY (collectionID, itemID));
CREATE TABLE deletedItems (itemID INTEGER PRIMARY KEY, dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL);
CREATE TABLE tags (tagID INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE itemTags (itemID INT NOT NULL, tagID INT NOT NULL, type INT NOT NULL, PRIMARY KEY (itemID, tagID));
"""
_TYPES = {1: "journalArticle", 2: "conferencePaper", 3: "attachment", 4: "note", 5: "preprint"}
_FIELDS = {1: "title", 2: "abstractNote", 3: "date", 4: "publicationTitle", 5: "proceedingsTitle", 6: "DOI",
           7: "url", 8: "extra", 9: "repository"}


def make_zotero(path: Path) -> Path:
    """A small Zotero database: 2 papers with abstracts in collections, one without, one in the trash,
    an attachment and a note, and a feed item."""
    con = sqlite3.connect(path)
    con.executescript(ZOTERO_SCHEMA)
    con.executemany("INSERT INTO libraries VALUES (?, ?, 1, 1)", [(1, "user"), (2, "feed")])
    con.executemany("INSERT INTO itemTypes VALUES (?, ?, NULL, 1)", _TYPES.items())
    con.executemany("INSERT INTO fields VALUES (?, ?, NULL)", _FIELDS.items())
    con.executemany("INSERT INTO creatorTypes VALUES (?, ?)", [(1, "author"), (2, "editor")])
    items = [  # itemID, type, library, key, fields by name
        (1, 1, 1, "AAAA1111", {"title": "Deep learning", "abstractNote": "Deep learning lets models learn.",
                               "date": "2015-05-28 2015-05-28", "publicationTitle": "Nature",
                               "DOI": "10.1038/nature14539", "url": "https://www.nature.com/articles/nature14539"}),
        (2, 2, 1, "BBBB2222", {"title": "Attention is all you need", "abstractNote": "Transformers replace recurrence.",
                               "date": "2017-00-00 2017", "proceedingsTitle": "NeurIPS",
                               "extra": "arXiv: 1706.03762\nDOI: 10.5555/attention"}),
        (3, 1, 1, "CCCC3333", {"title": "Only a title"}),
        (4, 1, 1, "DDDD4444", {"title": "In the trash", "abstractNote": "A deleted paper's abstract."}),
        (5, 3, 1, "EEEE5555", {"title": "Full Text PDF", "url": "https://example.org/a.pdf"}),
        (6, 4, 1, "FFFF6666", {}),
        (7, 5, 2, "GGGG7777", {"title": "A feed item", "abstractNote": "From an RSS feed, not the library."}),
        (8, 5, 1, "HHHH8888", {"title": "A preprint", "abstractNote": "Posted before review.", "repository": "arXiv",
                               "date": "2023-02-01"}),
    ]
    values: dict[str, int] = {}
    by_name = {v: k for k, v in _FIELDS.items()}
    for iid, tid, lib, key, fields in items:
        con.execute("INSERT INTO items (itemID, itemTypeID, libraryID, key) VALUES (?, ?, ?, ?)", (iid, tid, lib, key))
        for name, value in fields.items():
            vid = values.setdefault(value, len(values) + 1)
            con.execute("INSERT OR IGNORE INTO itemDataValues VALUES (?, ?)", (vid, value))
            con.execute("INSERT INTO itemData VALUES (?, ?, ?)", (iid, by_name[name], vid))
    con.executemany("INSERT INTO creators VALUES (?, ?, ?, ?)", [
        (1, "Yann", "LeCun", 0), (2, "Geoffrey E.", "Hinton", 0), (3, "", "OpenAI", 1), (4, "Ed", "Itor", 0)])
    con.executemany("INSERT INTO itemCreators VALUES (?, ?, ?, ?)", [
        (1, 2, 1, 1), (1, 1, 1, 0), (1, 4, 2, 2), (2, 3, 1, 0), (8, 4, 2, 0)])
    con.executemany("INSERT INTO collections (collectionID, collectionName, parentCollectionID, libraryID, key) "
                    "VALUES (?, ?, ?, 1, ?)", [(1, "Thesis", None, "COL1"), (2, "Related work", 1, "COL2"),
                                                (3, "Reading", None, "COL3")])
    con.executemany("INSERT INTO collectionItems VALUES (?, ?, 0)", [(2, 1), (3, 1), (3, 2), (3, 4)])
    con.execute("INSERT INTO deletedItems (itemID) VALUES (4)")
    con.executemany("INSERT INTO tags VALUES (?, ?)", [(1, "vision"), (2, "survey"), (3, "Vision")])
    con.executemany("INSERT INTO itemTags VALUES (?, ?, 0)", [(1, 2), (1, 1), (1, 3)])
    con.commit()
    con.close()
    return path


def test_zotero_database_reads_items_with_abstracts_and_their_collections(tmp_path):
    db = make_zotero(tmp_path / "zotero.sqlite")
    papers, bad = load(db)
    by_title = {p.title: p for p in papers}
    assert set(by_title) == {"Deep learning", "Attention is all you need", "A preprint"}  # no trash, feed, PDF, note
    a = by_title["Deep learning"]
    assert (a.paper_id, a.year, a.venue, a.source) == ("doi:10.1038/nature14539", 2015, "Nature", "zotero.sqlite")
    assert a.authors == ["Yann LeCun", "Geoffrey E. Hinton"]  # authors in Zotero's order; the editor is not one
    assert a.collections == ["Thesis / Related work", "Reading"] and sorted(a.keywords) in (["survey", "vision"], ["Vision", "survey"])  # one "vision"
    assert a.url == "https://www.nature.com/articles/nature14539"
    b = by_title["Attention is all you need"]
    assert (b.paper_id, b.year, b.venue, b.authors, b.collections) == (
        "doi:10.5555/attention", 2017, "NeurIPS", ["OpenAI"], ["Reading"])
    c = by_title["A preprint"]
    assert (c.venue, c.year, c.authors, c.collections) == ("arXiv", 2023, ["Ed Itor"], [])  # only an editor: kept
    assert [str(r) for r in bad] == ["zotero.sqlite:item CCCC3333: item ('Only a title') has no abstract"]


def test_zotero_is_read_from_a_snapshot_while_zotero_holds_its_lock(tmp_path):
    """Zotero keeps an exclusive lock while it runs: we still read, and never write or lock its files."""
    db = make_zotero(tmp_path / "zotero.sqlite")
    running = sqlite3.connect(db)
    running.execute("PRAGMA locking_mode = EXCLUSIVE")
    running.execute("BEGIN EXCLUSIVE")
    running.execute("UPDATE itemDataValues SET value = value")  # Zotero mid-write
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    try:
        papers, bad = load(db)
        assert len(papers) == 3 and len(bad) == 1
        assert hashlib.sha256(db.read_bytes()).hexdigest() == before
        assert sorted(x.name for x in tmp_path.iterdir()) == sorted(["zotero.sqlite", "zotero.sqlite-journal"]) or \
            sorted(x.name for x in tmp_path.iterdir()) == ["zotero.sqlite"]
    finally:
        running.rollback()
        running.close()


def test_zotero_data_folder_stands_for_its_database(tmp_path):
    home = tmp_path / "Zotero"
    (home / "storage" / "ABCD").mkdir(parents=True)
    (home / "storage" / "ABCD" / "paper.pdf").write_bytes(b"%PDF-1.4")
    (home / "zotero.sqlite.bak").write_bytes(b"old")
    make_zotero(home / "zotero.sqlite")
    files, rejected = discover([home])
    assert files == [home / "zotero.sqlite"] and rejected == []


def test_a_database_that_is_not_zotero_is_named(tmp_path):
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    (r,) = list(load_file(other))
    assert isinstance(r, Rejection) and r.where == "" and "not a Zotero library" in r.reason


def test_zotero_ingest_keeps_collections_and_keywords_in_the_catalogue(fake_library, tmp_path):
    db = make_zotero(tmp_path / "zotero.sqlite")
    report = fake_library.ingest([db], progress=False)
    assert report.added == 3 and report.rejected == 1
    got = {p.title: p for p in fake_library.papers()}
    assert got["Deep learning"].collections == ["Thesis / Related work", "Reading"]
    assert sorted(got["Deep learning"].keywords) == ["survey", "vision"]
    assert got["Attention is all you need"].collections == ["Reading"]
    again = fake_library.ingest([db], progress=False)  # nothing changed: nothing rewritten
    assert (again.added, again.updated) == (0, 0)


def test_zotero_items_trashed_or_deleted_leave_on_reingest_though_some_items_lack_abstracts(fake_library, tmp_path):
    """The library holds an item without an abstract (a rejection every time): trashing or deleting an item in
    Zotero must still take its paper out on the next ingest, while an item whose abstract is cleared keeps its
    paper (the item is still there, under its DOI; only what it holds changed)."""
    from rag.library.retrieval import search

    db = make_zotero(tmp_path / "zotero.sqlite")
    assert fake_library.ingest([db], progress=False).added == 3
    con = sqlite3.connect(db)
    con.execute("INSERT INTO deletedItems (itemID) VALUES (1)")  # "Deep learning" moved to the trash
    con.execute("DELETE FROM itemData WHERE itemID = 2 AND fieldID = 2")  # "Attention": abstract cleared, DOI kept
    con.commit()
    r = fake_library.ingest([db], progress=False)
    assert (r.removed, r.rejected) == (1, 2) and "item BBBB2222" in " ".join(map(str, r.rejections))
    assert {p.title for p in fake_library.papers()} == {"Attention is all you need", "A preprint"}
    assert "Deep learning" not in {h.paper.title for h in search(fake_library, "deep learning", 10)}
    con.execute("DELETE FROM deletedItems WHERE itemID = 1")  # restored from the trash
    con.execute("DELETE FROM items WHERE itemID = 8")  # "A preprint" deleted for good
    con.commit()
    con.close()
    r = fake_library.ingest([db], progress=False)
    assert (r.added, r.removed, r.rejected) == (1, 1, 2)
    assert {p.title for p in fake_library.papers()} == {"Deep learning", "Attention is all you need"}


def test_a_record_that_cannot_be_read_is_not_taken_for_a_deletion(fake_library, tmp_path):
    """A record refused for a parse problem might be any paper of the file: none leaves until it reads again;
    a record read whole without an abstract (and without an id) does not hold the file's deletions back."""
    f = write(tmp_path, "export.ris", RIS)
    assert fake_library.ingest([f], progress=False).added == 2
    broken = RIS.replace("TY  - CPAPER\nT1  - Attention is all you need", "TI  - Attention is all you need")
    r = fake_library.ingest([write(tmp_path, "export.ris", broken)], progress=False)
    assert r.removed == 0 and any("text outside a record" in str(x) for x in r.rejections)
    assert {p.title for p in fake_library.papers()} == {"Deep learning", "Attention is all you need"}
    without = RIS[RIS.index("TY  - CONF"):]  # "Deep learning" cut; the record without an abstract stays
    r = fake_library.ingest([write(tmp_path, "export.ris", without)], progress=False)
    assert (r.removed, r.rejected) == (1, 1)
    assert {p.title for p in fake_library.papers()} == {"Attention is all you need"}


def test_csl_export_items_deleted_in_zotero_leave_though_some_lack_abstracts(fake_library, tmp_path):
    """The weekly "Export… CSL JSON" of a library with an item that has no abstract: an item deleted since leaves."""
    f = write(tmp_path, "My Library.json", json.dumps(CSL))
    assert fake_library.ingest([f], progress=False).added == 2
    r = fake_library.ingest([write(tmp_path, "My Library.json", json.dumps(CSL[1:]))], progress=False)
    assert (r.removed, r.rejected) == (1, 1) and "has no abstract" in str(r.rejections[0])
    assert [p.title for p in fake_library.papers()] == ["A Crossref item"]


@pytest.mark.parametrize("name", ["export.ris", "items.json"])
def test_reference_manager_exports_ingest_end_to_end(fake_library, tmp_path, name):
    text = RIS if name.endswith(".ris") else json.dumps(CSL)
    report = fake_library.ingest([write(tmp_path, name, text)], progress=False)
    assert report.added == 2 and report.rejected == 1
    assert {p.venue for p in fake_library.papers()} >= {"Nature"}


# --- scoping: an author, a collection, chosen papers ---------------------------------------------------------
@pytest.fixture
def zotero_library(fake_library, tmp_path):
    fake_library.ingest([make_zotero(tmp_path / "zotero.sqlite")], progress=False)
    more = [{"title": f"Other {i}", "abstract": f"Deep learning models and representations, paper {i}.",
             "authors": ["Geoffrey Hintonson", "Ann Other"], "venue": "ICML", "year": 2020} for i in range(3)]
    fake_library.ingest([write(tmp_path, "more.jsonl", "".join(json.dumps(r) + "\n" for r in more))], progress=False)
    return fake_library


def titles(hits) -> set[str]:
    return {h.paper.title for h in hits}


@pytest.mark.parametrize("who", ["Hinton", "hinton", "Geoffrey Hinton", "G. E. Hinton", "G Hinton", "Hintön"])
def test_author_scope_matches_as_a_person_would(zotero_library, who):
    from rag.library.retrieval import Filters, search

    assert titles(search(zotero_library, "deep learning", 10, Filters(author=who))) == {"Deep learning"}


def test_author_scope_does_not_match_part_of_a_word_or_a_wrong_initial(zotero_library):
    from rag.library.retrieval import Filters, search

    assert titles(search(zotero_library, "deep learning", 10, Filters(author="Hint"))) == set()
    assert titles(search(zotero_library, "deep learning", 10, Filters(author="Y. Hinton"))) == set()
    assert titles(search(zotero_library, "deep learning", 10, Filters(author="Lecun Yann"))) == {"Deep learning"}
    assert titles(search(zotero_library, "deep learning", 10, Filters(author="Yann"))) == {"Deep learning"}
    assert titles(search(zotero_library, "deep learning", 10, Filters(author="Geoffrey"))) == {
        "Deep learning", "Other 0", "Other 1", "Other 2"}  # Geoffrey E. Hinton and Geoffrey Hintonson
    assert titles(search(zotero_library, "deep learning", 10, Filters(author="Ed Itor"))) == {"A preprint"}
    assert titles(search(zotero_library, "deep learning", 10, Filters(author="Other"))) == {"Other 0", "Other 1", "Other 2"}
    # an initial stands for a word, but a name is not found by an initial alone
    assert titles(search(zotero_library, "deep learning", 10, Filters(author="G."))) == set()
    assert len(search(zotero_library, "deep learning", 10, Filters(author="Hintonson"))) == 3


def test_collection_scope_by_path_or_name_with_subcollections(zotero_library):
    from rag.library.retrieval import Filters, search

    q = "deep learning transformers recurrence"
    assert titles(search(zotero_library, q, 10, Filters(collection="reading"))) == {
        "Deep learning", "Attention is all you need"}
    assert titles(search(zotero_library, q, 10, Filters(collection="Related work"))) == {"Deep learning"}
    assert titles(search(zotero_library, q, 10, Filters(collection="Thesis"))) == {"Deep learning"}  # a subcollection
    assert titles(search(zotero_library, q, 10, Filters(collection="thesis/related work"))) == {"Deep learning"}
    assert titles(search(zotero_library, q, 10, Filters(collection="Related"))) == set()


def test_chosen_papers_scope_and_an_unknown_id_is_named(zotero_library):
    from rag.errors import UserError
    from rag.library.retrieval import Filters, search

    chosen = ["doi:10.5555/attention"]
    assert titles(search(zotero_library, "deep learning", 10, Filters(papers=chosen))) == {"Attention is all you need"}
    with pytest.raises(UserError, match="no paper with id 'doi:10.1/nope'"):
        search(zotero_library, "deep learning", 10, Filters(papers=["doi:10.1/nope"]))


def test_cli_scopes_search_ask_summarise_and_cite(zotero_library, capsys, monkeypatch):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(zotero_library.settings.home))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    assert main(["search", "deep learning", "--author", "Hinton", "--json"]) == 0
    assert [h["title"] for h in json.loads(capsys.readouterr().out)] == ["Deep learning"]
    assert main(["search", "models", "--collection", "Reading", "--papers", "doi:10.5555/attention", "--json"]) == 0
    assert [h["title"] for h in json.loads(capsys.readouterr().out)] == ["Attention is all you need"]
    for cmd in (["ask", "What does deep learning let models do?"], ["summarise", "deep learning"],
                ["cite", "Deep learning lets models learn."]):
        assert main([*cmd, "--collection", "Thesis", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        found = [c["title"] for key in ("citations", "evidence", "nearest") for c in out.get(key, [])]
        assert found and set(found) == {"Deep learning"}, (cmd, out)


def _deep_zotero(path: Path, depth: int, first_name=b"Yann") -> Path:
    """One paper in the deepest of `depth` nested collections, its author's first name stored as a BLOB."""
    make_zotero(path)
    con = sqlite3.connect(path)
    con.execute("UPDATE creators SET firstName = ? WHERE creatorID = 1", (first_name,))
    con.executemany("INSERT INTO collections (collectionID, collectionName, parentCollectionID, libraryID, key) "
                    "VALUES (?, ?, ?, 1, ?)", [(100 + i, f"Level {i}", 100 + i - 1 if i else None, f"DEEP{i}")
                                               for i in range(depth)])
    con.execute("INSERT INTO collectionItems VALUES (?, 1, 1)", (100 + depth - 1,))
    con.commit()
    con.close()
    return path


def test_zotero_deep_collections_cost_their_depth_once_and_blobs_read_as_text(tmp_path):
    """Issue 28 item 9: 12,000 nested collections cost 1.49 GB (every path rebuilt from the root); a BLOB
    firstName gave `TypeError ... bytes found` from zotero.py _read."""
    import tracemalloc

    db = _deep_zotero(tmp_path / "zotero.sqlite", 3000)
    tracemalloc.start()
    papers, bad = load(db)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    a = next(p for p in papers if p.title == "Deep learning")
    assert a.authors == ["Yann LeCun", "Geoffrey E. Hinton"]  # the BLOB read as the text it holds
    deep = next(c for c in a.collections if c.endswith("Level 2999"))
    parts = deep.split(" / ")
    assert parts[0] == "…" and parts[1:] == [f"Level {i}" for i in range(3000 - 31, 3000)]  # the 31 nearest
    assert "Thesis / Related work" in a.collections  # shallow paths are whole
    assert peak < 40 << 20, f"{peak / 2**20:.0f} MB"  # 3,000 full paths would be ~150 MB of strings
