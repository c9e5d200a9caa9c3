"""Loaders: every input format, the seeds, identifiers, and every kind of bad input a user can hand us."""

from __future__ import annotations

import gzip
import itertools
import json
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.loaders import FieldsError, LoadError, discover, load_file
from rag.records import Paper, Rejection, text_hash

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "seeds"
DATA = ROOT.parent / "shared" / "data"


def load(path: Path, **kw) -> tuple[list[Paper], list[Rejection]]:
    items = list(load_file(path, **kw))
    assert all(isinstance(i, (Paper, Rejection)) for i in items)
    return [i for i in items if isinstance(i, Paper)], [i for i in items if isinstance(i, Rejection)]


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    p = tmp_path / name
    if name.endswith(".gz"):
        data = content.encode() if isinstance(content, str) else content
        p.write_bytes(gzip.compress(data))
    elif isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def only_rejection(path: Path, **kw) -> Rejection:
    """A file that cannot be read at all: exactly one whole-file Rejection and no Paper."""
    items = list(load_file(path, **kw))
    assert len(items) == 1 and isinstance(items[0], Rejection), items
    assert items[0].where == "" and items[0].source == path.name
    return items[0]


def jsonl(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


# --- the bundled seeds ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def seed_papers() -> list[Paper]:
    files, rejected = discover([SEEDS])
    assert len(files) == 4 and rejected == []
    papers: list[Paper] = []
    for f in files:
        got, bad = load(f)
        assert bad == []
        papers += got
    return papers


def test_seeds_load_76_papers_with_venue_year_and_positions(seed_papers):
    assert len(seed_papers) == 76
    assert {p.venue for p in seed_papers} == {"ICML", "ICLR"}
    assert {p.year for p in seed_papers} == {2026}
    by_file: dict[str, list[int]] = {}
    for p in seed_papers:
        by_file.setdefault(p.source, []).append(p.position)
    assert len(by_file) == 4 and all(pos == list(range(1, 20)) for pos in by_file.values())
    assert sum(p.venue == "ICLR" for p in seed_papers) == 19  # 004_... is the ICLR list
    assert len({p.paper_id for p in seed_papers}) == 76
    assert all(p.paper_id == text_hash(p.abstract) for p in seed_papers)


def test_seed_titles_are_derived_short_and_clean(seed_papers):
    for p in seed_papers:
        assert p.title_derived and p.title, p
        assert len(p.title.split()) <= 14, p.title
        assert p.title[-1] not in ".,;:!?", p.title
        assert "**" not in p.title and "\\textbf" not in p.title and "\\texttt" not in p.title


def test_seed_titles_name_the_introduced_method(seed_papers):
    titles = {(p.source[:3], p.position): p.title for p in seed_papers}
    # The introduced method, not the prior work (Hyper-Connections (HC)) the abstract mentions first.
    assert titles["000", 2] == "Manifold-Constrained Hyper-Connections (mHC): Projecting the residual connection space"
    # with what the abstract says the method does ("we introduce PowerFlow, a principled framework that reformulates")
    assert titles["000", 4] == "PowerFlow: Reformulating unsupervised fine-tuning as a distribution matching problem"
    assert titles["000", 6] == "Qkmeans: Fast seeding method"  # "a fast seeding method called $\operatorname{Qkmeans}$"
    assert titles["000", 15] == "DAG"  # "$\textbf{DAG}$"; what follows is inside a formula: the name alone
    assert titles["000", 17] == "ctfIDu+: Identifying a counterfactual query from an arbitrary set"  # "algorithm for"
    assert titles["000", 18] == "MetaDistill: Lifting the strategy ceiling through pretraining and test-time fine-tuning"
    assert titles["003", 6] == "Block Adaptive Signum (BAS): Bridging Adam and SignSGD via block-wise scaling"
    assert titles["003", 11] == "Geometric Rate–Distortion Invariance (RDI)"  # "realizes this principle": not alone
    assert titles["003", 14].startswith("Probabilistic Multi-Variable Branching (PMVB): Accelerating mixed-integer")
    assert titles["004", 1] == "Markov pseudo-games"  # "that we call Markov pseudo-games"
    # No method named: a short form of the first sentence.
    assert titles["001", 2] == "Pretraining and fine-tuning are central stages in modern machine learning systems"
    assert titles["000", 1] == "The expressive power of Transformers"


def test_seed_header_in_english_and_chinese(tmp_path):
    en = write(tmp_path, "en.txt", "NeurIPS 2025 Papers\n\nWe propose FooNet, a network.\n\nSecond abstract here.\n")
    zh = write(tmp_path, "zh.txt", "ICLR 2026 论文列表\n\n\n\nOnly one abstract, spread\nover two lines.\n")
    papers, bad = load(en)
    assert bad == [] and [(p.venue, p.year, p.position) for p in papers] == [("NeurIPS", 2025, 1), ("NeurIPS", 2025, 2)]
    assert papers[0].title == "FooNet"
    papers, bad = load(zh)
    assert bad == [] and papers[0].abstract == "Only one abstract, spread over two lines." and papers[0].venue == "ICLR"


def test_txt_without_header_is_rejected_whole(tmp_path):
    r = only_rejection(write(tmp_path, "notes.txt", "Some notes\n\nWe propose a thing.\n"))
    assert str(r) == "notes.txt: not a paperchat abstract list: first line should name venue and year, e.g. 'ICML 2026 Papers'"


# --- JSON Lines, JSON arrays, gzip, field names --------------------------------------------------------------
def test_jsonl_fields_aliases_and_metadata(tmp_path):
    p = write(tmp_path, "x.jsonl", jsonl(
        {"ID": "p1", "Title": "A <i>title</i>", "Summary": "  An   abstract\nwith &amp; space. ", "Authors": "A. One and B. Two",
         "date": "2021-05-03", "Journal": "JMLR", "URL": "https://x.org/1"},
        {"paper_id": "p2", "abstract": "Two.", "authors": ["C. Three", {"name": "D. Four"}], "year": 2019, "booktitle": "ICML"},
        {"_id": 7, "text": "Three.", "author": "E. Five; F. Six", "conference": "NeurIPS", "year": "2020"},
    ))
    papers, bad = load(p)
    assert bad == []
    a, b, c = papers
    assert (a.paper_id, a.title, a.abstract, a.authors, a.year, a.venue, a.url) == (
        "p1", "A title", "An abstract with & space.", ["A. One", "B. Two"], 2021, "JMLR", "https://x.org/1")
    assert (b.paper_id, b.authors, b.year, b.venue) == ("p2", ["C. Three", "D. Four"], 2019, "ICML")
    assert (c.paper_id, c.authors, c.year, c.venue) == ("7", ["E. Five", "F. Six"], 2020, "NeurIPS")
    assert [x.position for x in papers] == [1, 2, 3] and {x.source for x in papers} == {"x.jsonl"}


def test_record_without_title_gets_a_derived_one(tmp_path):
    papers, _ = load(write(tmp_path, "x.jsonl", jsonl({"abstract": "We propose Zap (ZP), a method."})))
    assert papers[0].title == "Zap (ZP)" and papers[0].title_derived


def test_field_mapping_overrides_aliases(tmp_path):
    p = write(tmp_path, "m.jsonl", jsonl({"abstract": "not this", "summary": "This one.", "name": "Named", "title": "no"}))
    papers, _ = load(p, fields={"abstract": "summary", "title": "name"})
    assert papers[0].abstract == "This one." and papers[0].title == "Named"
    c = write(tmp_path, "m.csv", "Name,Summary,Body\nN1,s1,body one\n")
    papers, _ = load(c, fields={"abstract": "body", "title": "NAME"})
    assert papers[0].abstract == "body one" and papers[0].title == "N1"
    r = only_rejection(c, fields={"abstract": "nothere"})
    assert "nothere" in r.reason and "Name, Summary, Body" in r.reason
    with pytest.raises(FieldsError, match="unknown field 'abstrakt'"):
        load_file(c, fields={"abstrakt": "x"})


def test_json_array_and_gzip(tmp_path):
    arr = write(tmp_path, "a.json", json.dumps([{"abstract": "One, with [brackets] and {braces}."}, {"abstract": "Two \\\" q"}], indent=2))
    papers, bad = load(arr)
    assert bad == [] and [p.abstract for p in papers] == ["One, with [brackets] and {braces}.", 'Two \\" q']
    gz = write(tmp_path, "c.jsonl.gz", jsonl({"id": "g1", "abstract": "Zipped."}))
    papers, _ = load(gz)
    assert papers[0].paper_id == "g1" and papers[0].source == "c.jsonl.gz"
    arr_gz = write(tmp_path, "a.json.gz", json.dumps([{"abstract": "Zipped array."}]))
    assert load(arr_gz)[0][0].abstract == "Zipped array."


def test_json_array_bad_elements_are_per_record(tmp_path):
    p = write(tmp_path, "a.json", '[{"abstract": "ok"}, 3, {"abstract": ""}, {"abstract": "fine"}]')
    papers, bad = load(p)
    assert [x.position for x in papers] == [1, 4]
    assert [str(r) for r in bad] == ["a.json:record 2: not a JSON object (a number)", "a.json:record 3: empty abstract"]


def test_beir_scifact_corpus_loads():
    path = DATA / "scifact" / "corpus.jsonl"
    if not path.exists():
        pytest.skip("shared data not present")
    first = next(iter(load_file(path)))
    rec = json.loads(path.open(encoding="utf-8").readline())
    assert isinstance(first, Paper)
    assert first.paper_id == rec["_id"] and first.title == rec["title"] and first.abstract.startswith(rec["text"][:50])


def test_paperlists_loads_with_metadata_and_streams():
    path = DATA / "paperlists.jsonl.gz"
    if not path.exists():
        pytest.skip("shared data not present")
    tracemalloc.start()
    papers = list(itertools.islice(load_file(path), 2000))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # The 128 MB file is not read whole: memory shows it; a wall-clock bound failed on a loaded machine.
    assert peak < 30e6
    p = papers[0]
    assert isinstance(p, Paper) and p.position == 1
    assert p.paper_id == "3dv2025:05T81ScPFb"
    assert p.title.startswith("Flash3D") and p.year == 2025 and p.venue == "3DV"
    assert p.url == "https://openreview.net/forum?id=05T81ScPFb"
    assert p.authors[:2] == ["Stanislaw Szymanowicz", "Eldar Insafutdinov"]
    # paperlists' keywords are one string, ";"-separated; they were dropped before this version.
    assert p.keywords == ["Novel View Synthesis", "3D Gaussian Splatting", "Monocular 3D Reconstruction"]
    assert all(isinstance(x, Paper) for x in papers)


# --- arXiv snapshot --------------------------------------------------------------------------------------
ARXIV = {
    "id": "0704.0001", "submitter": "P. N.", "authors": "C. Bal\\'azs, E. L. Berger and C.-P. Yuan",
    "title": "Calculation of prompt diphoton production\n  cross sections", "comments": "37 pages",
    "journal-ref": "Phys.Rev.D76:013009,2007", "doi": "10.1103/PhysRevD.76.013009", "categories": "hep-ph",
    "license": None, "abstract": "  A fully differential calculation\nis presented.\n",
    "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}], "update_date": "2008-11-13",
    "authors_parsed": [["Bal\\'azs", "C.", ""], ["Berger", "E. L.", ""], ["Yuan", "C. -P.", ""]],
}


def test_arxiv_snapshot(tmp_path):
    for name in ("arxiv.json", "arxiv-metadata.jsonl.gz"):
        papers, bad = load(write(tmp_path, name, jsonl(ARXIV, dict(ARXIV, id="hep-th/9901001"))))
        a, b = papers
        assert bad == []
        assert (a.paper_id, a.url, a.year, a.venue) == ("arXiv:0704.0001", "https://arxiv.org/abs/0704.0001", 2008, "arXiv")
        assert a.title == "Calculation of prompt diphoton production cross sections"
        assert a.abstract == "A fully differential calculation is presented."
        assert a.authors == ["C. Balázs", "E. L. Berger", "C. -P. Yuan"]
        assert b.paper_id == "arXiv:hep-th/9901001"


# --- CSV / TSV -----------------------------------------------------------------------------------------
def test_csv_and_tsv(tmp_path):
    c = write(tmp_path, "p.csv", 'ID,Title,Abstract,Authors,Year,Journal,DOI\n'
                                 '1,"A, title","Multi\nline abstract","Smith, J. and Doe, K.",2020,JMLR,10.1234/ABC.5\n'
                                 '\n'
                                 '2,T2,,C,2021,J,\n'
                                 '3,T3,Third.,D,2023,J,\n')
    papers, bad = load(c)
    a, b = papers
    assert (a.paper_id, a.title, a.abstract, a.authors, a.year, a.venue) == (
        "doi:10.1234/abc.5", "A, title", "Multi line abstract", ["J. Smith", "K. Doe"], 2020, "JMLR")
    assert (b.paper_id, b.position) == ("3", 3)
    assert [str(r) for r in bad] == ["p.csv:line 5: empty abstract"]
    t = write(tmp_path, "p.tsv.gz", "title\tabstract\nX\tTab, separated.\n")
    papers, _ = load(t)
    assert papers[0].abstract == "Tab, separated." and papers[0].title == "X"
    semi = write(tmp_path, "semi.csv", "title;abstract\nX;Semicolon separated.\n")
    assert load(semi)[0][0].abstract == "Semicolon separated."


def test_keywords_of_json_and_csv_records_are_kept(tmp_path):
    # A Scopus / Web of Science CSV's "Author Keywords", a JSON record's list, a paperlists string.
    c = write(tmp_path, "scopus.csv", 'Title,Abstract,Author Keywords\n'
                                      'T,"An abstract long enough to be one.","Optimal transport; Sinkhorn; optimal transport"\n')
    assert load(c)[0][0].keywords == ["Optimal transport", "Sinkhorn"]
    j = write(tmp_path, "k.jsonl", jsonl({"title": "T", "abstract": "One.", "keywords": ["GNN", " ", "graphs"]},
                                         {"title": "U", "abstract": "Two.", "keywords": "a;b"},
                                         {"title": "V", "abstract": "Three.", "keywords": ""},
                                         {"title": "W", "abstract": "Four.", "labels": "x", "tags": "y"}))
    assert [p.keywords for p in load(j)[0]] == [["GNN", "graphs"], ["a", "b"], [], ["y"]]
    m = write(tmp_path, "m.jsonl", jsonl({"title": "T", "abstract": "One.", "labels": "x, z"}))
    assert load(m, fields={"keywords": "labels"})[0][0].keywords == ["x", "z"]


def test_csv_without_abstract_column_is_rejected_naming_its_columns(tmp_path):
    r = only_rejection(write(tmp_path, "data.csv", "id,title,year\n1,T,2020\n"))
    assert r.reason.startswith("no abstract column") and r.reason.endswith("columns: id, title, year")


# --- BibTeX ----------------------------------------------------------------------------------------------
BIB = r"""
% a comment line with an @ sign: me@example.org
@string{jmlr = "Journal of Machine Learning Research"}
@comment{ignored entirely}
@Article{smith2020,
  title     = {A {GPT}-Style Study of {Sandstr{\"o}m} Graphs},
  author    = {Sandstr{\"o}m, Erik and Doe, Jane and others},
  journal   = jmlr,
  year      = 2020,
  doi       = {https://doi.org/10.5555/ABC.123},
  abstract  = {We study $\mathcal{O}(n)$ graphs, {nested {braces}} and "quotes".},
}
@inproceedings{nokey2021,
  title = "Without Abstract",
  booktitle = {ICML},
}
@misc{arx,
  title = {Arxiv {E}print},
  eprint = {2101.00001}, archivePrefix = {arXiv},
  abstract = "A quoted " # "and concatenated abstract.",
  year = {2021}
}
"""


def test_bibtex(tmp_path):
    papers, bad = load(write(tmp_path, "refs.bib", BIB))
    a, b = papers
    assert a.title == "A GPT-Style Study of Sandström Graphs" and not a.title_derived
    assert a.authors == ["Erik Sandström", "Jane Doe"]
    assert (a.paper_id, a.year, a.venue, a.position) == ("doi:10.5555/abc.123", 2020, "Journal of Machine Learning Research", 1)
    assert a.abstract == 'We study $\\mathcal{O}(n)$ graphs, nested braces and "quotes".'
    assert (b.paper_id, b.abstract, b.title, b.position) == ("arXiv:2101.00001", "A quoted and concatenated abstract.", "Arxiv Eprint", 3)
    assert [str(r) for r in bad] == ["refs.bib:line 13: entry nokey2021 has no abstract"]


def test_bibtex_unclosed_entry_and_no_entries(tmp_path):
    papers, bad = load(write(tmp_path, "u.bib", "@article{a, abstract={Fine.}}\n@article{b, abstract={never closed\n"))
    assert [p.abstract for p in papers] == ["Fine."]
    assert str(bad[0]).startswith("u.bib:line 2: @article entry is not closed")
    r = only_rejection(write(tmp_path, "none.bib", "just some text\n"))
    assert r.reason.startswith("no BibTeX entries found")


# --- identifiers -------------------------------------------------------------------------------------------
def test_ids_prefer_doi_then_own_id_then_hash_and_are_stable(tmp_path):
    p = write(tmp_path, "ids.jsonl", jsonl(
        {"id": "own-1", "doi": "10.1000/XYZ.9", "abstract": "With both."},
        {"id": "own-2", "abstract": "With an id."},
        {"abstract": "With nothing."},
        {"url": "https://arxiv.org/abs/2301.01234v2", "abstract": "With an arXiv url."},
        {"id": "https://doi.org/10.1000/QQ", "abstract": "Id that is a DOI."},
    ))
    first = [x.paper_id for x in load(p)[0]]
    assert first == ["doi:10.1000/xyz.9", "own-2", text_hash("With nothing."), "arXiv:2301.01234", "doi:10.1000/qq"]
    assert [x.paper_id for x in load(p)[0]] == first  # the same file, the same ids
    q = write(tmp_path, "ws.jsonl", jsonl({"abstract": "  With\n nothing.  "}))
    assert load(q)[0][0].paper_id == text_hash("With nothing.")  # whitespace does not change the id


# --- discovery ---------------------------------------------------------------------------------------------
def test_discover_folders_files_and_missing_paths(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / ".git").mkdir()
    a = write(tmp_path, "b.jsonl", jsonl({"abstract": "x"}))
    b = write(tmp_path / "sub", "a.csv.gz", "abstract\nx\n")
    write(tmp_path, "image.png", b"\x89PNG")
    write(tmp_path / ".git", "config", "x")
    odd = write(tmp_path, "explicit.dat", jsonl({"abstract": "sniffed"}))
    files, rejected = discover([tmp_path, odd, tmp_path / "missing.jsonl"])
    assert files == [a, b, odd]
    assert [(Path(r.source).name, r.reason) for r in rejected] == [
        ("image.png", "skipped: not a recognised abstract list"),
        ("missing.jsonl", "no such file or folder"),
    ]
    assert load(odd)[0][0].abstract == "sniffed"  # an explicitly named file is sniffed by content


def test_missing_path_and_folder(tmp_path):
    [r] = list(load_file(tmp_path / "nope.jsonl"))
    assert isinstance(r, Rejection) and r.reason == "no such file or folder" and r.where == ""
    assert only_rejection(tmp_path).reason == "is a folder, not a file"
    err = LoadError(r)
    assert err.rejection is r and "no such file or folder" in str(err)


# --- bad input ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["e.jsonl", "e.csv", "e.txt", "e.bib", "e.json", "e.jsonl.gz"])
def test_empty_file(tmp_path, name):
    assert str(only_rejection(write(tmp_path, name, ""))) == f"{name}: empty file"


def test_blank_file_and_unknown_content(tmp_path):
    assert only_rejection(write(tmp_path, "b.jsonl", "\n \n\t\n")).reason == "empty file"
    r = only_rejection(write(tmp_path, "x.dat", "hello there\n"))
    assert r.reason.startswith("not a recognised abstract list")


def test_random_bytes(tmp_path):
    import random

    rnd = random.Random(7)
    data = bytes(rnd.randrange(256) for _ in range(5000))
    for name in ("r.jsonl", "r.csv", "r.bin", "r.txt"):
        r = only_rejection(write(tmp_path, name, data))
        assert r.reason.startswith(("binary data, not text", "not UTF-8 text")), r


def test_not_utf8_names_line_and_byte_offset(tmp_path):
    p = write(tmp_path, "latin1.csv", "title,abstract\nCaf\xe9,An abstract.\n".encode("latin-1"))
    r = only_rejection(p)
    assert str(r) == "latin1.csv: not UTF-8 text: invalid byte 0xe9 at line 2, byte offset 18 (save the file as UTF-8)"
    assert "UTF-16" in only_rejection(write(tmp_path, "u16.jsonl", '{"abstract": "x"}\n'.encode("utf-16"))).reason


def test_utf8_bom_is_tolerated(tmp_path):
    for name, text in [("b.txt", "ICML 2026 Papers\n\nAbstract.\n"), ("b.csv", "abstract\nAbstract.\n"),
                       ("b.jsonl", '{"abstract": "Abstract."}\n'), ("b.bib", "@misc{k, abstract={Abstract.}}\n"),
                       ("b.json", '[{"abstract": "Abstract."}]')]:
        papers, bad = load(write(tmp_path, name, "\ufeff" + text))
        assert bad == [] and papers[0].abstract == "Abstract.", name


def test_malformed_jsonl_line_is_rejected_and_the_rest_loads(tmp_path):
    p = write(tmp_path, "m.jsonl", '{"abstract": "one"}\n{"abstract": broken\n\n{"abstract": "two"}\n[1, 2]\n')
    papers, bad = load(p)
    assert [(x.abstract, x.position) for x in papers] == [("one", 1), ("two", 3)]
    assert str(bad[0]).startswith("m.jsonl:line 2: not valid JSON: ")
    assert str(bad[1]) == "m.jsonl:line 5: not a JSON object (a list)"


def test_bad_first_line_then_good_lines_is_per_line(tmp_path):
    papers, bad = load(write(tmp_path, "f.jsonl", 'oops\n{"abstract": "good"}\n'))
    assert [x.abstract for x in papers] == ["good"] and bad[0].where == "line 1"


def test_file_that_is_not_jsonl_at_all_is_one_rejection(tmp_path):
    r = only_rejection(write(tmp_path, "notes.jsonl", "line one\nline two\n"))
    assert r.reason.startswith("not JSON Lines (line 1 is not valid JSON: ")
    r = only_rejection(write(tmp_path, "q.jsonl", jsonl({"query": "x"}, {"query": "y"})))
    assert r.reason.startswith("no abstract field") and r.reason.endswith("fields: query")
    r = only_rejection(write(tmp_path, "broken.json", '[{"abstract": "x"'))
    assert r.reason.startswith("not valid JSON")


def test_empty_abstract(tmp_path):
    papers, bad = load(write(tmp_path, "e.jsonl", jsonl({"abstract": "ok"}, {"abstract": "  \n "}, {"abstract": None})))
    assert len(papers) == 1
    assert [str(r) for r in bad] == ["e.jsonl:line 2: empty abstract", "e.jsonl:line 3: empty abstract"]
    _, bad = load(write(tmp_path, "e.txt", "ICML 2026 Papers\n\n<p> </p>\n\nReal one.\n"))
    assert [str(r) for r in bad] == ["e.txt:line 3: empty abstract"]


def test_huge_record_is_rejected_without_reading_it_whole(tmp_path, monkeypatch):
    monkeypatch.setattr("rag.loaders._io.MAX_RECORD_BYTES", 100_000)
    for mod in ("jsonl", "csv_", "seeds", "bibtex"):
        monkeypatch.setattr(f"rag.loaders.{mod}.MAX_RECORD_BYTES", 100_000)
    big = "x" * 300_000
    cases = {
        "h.jsonl": jsonl({"abstract": big}, {"abstract": "small"}),
        "h.json": json.dumps([{"abstract": big}, {"abstract": "small"}]),
        "h.csv": f"abstract\n{big}\nsmall\n",
        "h.txt": f"ICML 2026 Papers\n\n{big}\n\nsmall\n",
        "h.bib": "@misc{a, abstract={" + big + "}}\n@misc{b, abstract={small}}\n",
    }
    for name, text in cases.items():
        papers, bad = load(write(tmp_path, name, text))
        assert [p.abstract for p in papers] == ["small"] and papers[0].position == 2, name
        assert len(bad) == 1 and "too large" in bad[0].reason, (name, bad)


def test_nul_bytes_and_millions_of_blank_lines_are_cheap(tmp_path):
    r = only_rejection(write(tmp_path, "nul.jsonl", b'{"abstract": "a\x00b"}\n'))
    assert r.reason.startswith("binary data, not text (NUL byte at line 1")
    # A NUL past the first 64 KB is cleaned out of the record rather than failing the file.
    p = write(tmp_path, "late.jsonl", jsonl(*[{"abstract": f"record {i}"} for i in range(5000)]).encode() + b'{"abstract": "x\x00y"}\n')
    papers, bad = load(p)
    assert bad == [] and papers[-1].abstract == "x y"
    blank = write(tmp_path, "blank.jsonl", "\n" * 2_000_000 + '{"abstract": "late"}\n')
    t = time.perf_counter()
    papers, _ = load(blank)
    assert papers[0].abstract == "late" and time.perf_counter() - t < 10


def test_corrupt_gzip(tmp_path):
    data = gzip.compress(jsonl(*[{"abstract": f"abstract number {i} " + "z" * (i % 97)} for i in range(3000)]).encode())
    p = tmp_path / "t.jsonl.gz"
    p.write_bytes(data[: len(data) // 2])
    papers, bad = load(p)
    assert papers and str(bad[-1]).endswith("compressed data is corrupt (truncated); stopped reading")
    q = tmp_path / "fake.jsonl.gz"
    q.write_bytes(b"\x1f\x8bnot really gzip")
    assert only_rejection(q).reason.startswith("not a readable gzip file")


# --- never raises ------------------------------------------------------------------------------------------
SUFFIXES = st.sampled_from([".jsonl", ".json", ".csv", ".tsv", ".txt", ".bib", ".ris", ".dat", ".jsonl.gz"])
_counter = itertools.count()


def _check_never_raises(tmp_path: Path, suffix: str, data: bytes) -> None:
    p = tmp_path / f"f{next(_counter)}{suffix}"
    p.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    items = list(load_file(p))
    assert all(isinstance(i, (Paper, Rejection)) for i in items)
    assert items, "every file yields something"
    for i in items:
        assert "\n" not in str(i) if isinstance(i, Rejection) else i.abstract.strip()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(suffix=SUFFIXES, data=st.binary(max_size=2000))
def test_random_bytes_never_raise(tmp_path, suffix, data):
    _check_never_raises(tmp_path, suffix, data)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)
_records = st.fixed_dictionaries(
    {}, optional={k: _json_values for k in ("id", "_id", "doi", "title", "abstract", "text", "authors", "year", "venue",
                                            "url", "categories", "update_date")})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(suffix=st.sampled_from([".jsonl", ".json", ".jsonl.gz"]),
       lines=st.lists(_records.map(json.dumps) | st.text(max_size=40)
                      | st.dictionaries(st.text(max_size=8), _json_values, max_size=4).map(json.dumps), max_size=8))
def test_random_json_lines_never_raise(tmp_path, suffix, lines):
    _check_never_raises(tmp_path, suffix, "\n".join(lines).encode("utf-8", "surrogatepass"))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=600))
def test_random_text_in_every_format_never_raises(tmp_path, text):
    for suffix in (".txt", ".csv", ".bib", ".json", ".ris"):
        _check_never_raises(tmp_path, suffix, text.encode("utf-8", "surrogatepass"))
