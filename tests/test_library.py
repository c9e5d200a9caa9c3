"""Ingest and search behaviour a user notices: idempotency, edits, filters, ids, bad input."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from conftest import SEEDS
from rag.library import Library
from rag.retrieval import Filters, search


def chunk_count(lib: Library) -> int:
    return lib.collections.chunks.count()


def test_ingesting_seeds_twice_leaves_76_papers_and_same_chunks(fake_library):
    r1 = fake_library.ingest([SEEDS], progress=False)
    assert (r1.added, r1.updated, r1.rejected) == (76, 0, 0)
    chunks = chunk_count(fake_library)
    r2 = fake_library.ingest([SEEDS], progress=False)
    assert (r2.added, r2.updated, r2.unchanged, r2.rejected) == (0, 0, 76, 0)
    assert len(fake_library) == 76 and chunk_count(fake_library) == chunks
    papers = fake_library.papers()
    assert {p.venue for p in papers} == {"ICML", "ICLR"} and {p.year for p in papers} == {2026}
    assert all(p.title and p.source.endswith(".txt") and 1 <= p.position <= 19 for p in papers)


def test_edited_abstract_replaces_old_version_without_stale_chunks(fake_settings, tmp_path):
    folder = tmp_path / "lists"
    shutil.copytree(SEEDS, folder)
    lib = Library(fake_settings)
    lib.ingest([folder], progress=False)
    f = sorted(folder.glob("*.txt"))[0]
    text = f.read_text(encoding="utf-8")
    old = text.split("\n\n")[3]  # the third abstract
    new = "We study zebra crossings and quokka populations with a marsupial census. " + old[:200]
    f.write_text(text.replace(old, new), encoding="utf-8")
    r = lib.ingest([folder], progress=False)
    assert len(lib) == 76
    assert r.added + r.updated == 1 and r.removed + r.updated == 1 and r.unchanged == 75
    # The old version is gone from every index; the new one is found.
    unique_old = old.split(". ")[-1][:60]
    hits = search(lib, unique_old, k=76)
    assert all(unique_old not in h.paper.abstract for h in hits)
    assert search(lib, "quokka marsupial census", k=1)[0].paper.abstract.startswith("We study zebra")
    assert chunk_count(lib) == sum(int(m["n_chunks"]) for m in lib.catalogue.values())


def test_ids_prefer_record_identifiers_and_fall_back_to_text_hash(fake_library, tmp_path):
    f = tmp_path / "mine.jsonl"
    rows = [
        {"doi": "10.1000/ABC", "title": "A", "abstract": "Alpha beta gamma delta."},
        {"title": "B", "abstract": "Epsilon zeta eta theta."},
    ]
    f.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    fake_library.ingest([f], progress=False)
    ids = [p.paper_id for p in fake_library.papers()]
    assert ids[0].lower() == "doi:10.1000/abc"
    assert len(ids[1]) >= 8 and ids[1] != ids[0]
    fake_library.ingest([f], progress=False)
    assert [p.paper_id for p in fake_library.papers()] == ids


def test_filters_on_venue_and_year(fake_library, tmp_path):
    f = tmp_path / "mixed.jsonl.gz"
    rows = [
        {"id": f"p{i}", "title": f"Paper {i}", "abstract": f"Graph neural networks for molecules, study {i}.",
         "venue": v, "year": y}
        for i, (v, y) in enumerate([("NeurIPS", 2019), ("ICML", 2021), ("ICML", 2023), ("ICLR", 2024)])
    ]
    with gzip.open(f, "wt", encoding="utf-8") as g:
        g.write("\n".join(json.dumps(r) for r in rows))
    fake_library.ingest([f], progress=False)
    q = "graph neural networks molecules"
    assert {h.paper.paper_id for h in search(fake_library, q, 10)} == {"p0", "p1", "p2", "p3"}
    assert {h.paper.paper_id for h in search(fake_library, q, 10, Filters(venue="icml"))} == {"p1", "p2"}
    assert {h.paper.paper_id for h in search(fake_library, q, 10, Filters(year_from=2021, year_to=2023))} == {"p1", "p2"}
    assert search(fake_library, q, 10, Filters(venue="ICLR", year_to=2020)) == []
    assert search(fake_library, q, 10, Filters(venue="AAAI")) == []


def test_filtered_dense_side_matches_the_stores_own_filter(fake_library, tmp_path, monkeypatch):
    """A filtered search filters the nearest chunks itself (Chroma's `where` is slow at scale) and falls
    back to Chroma when too few pass: both ways it must find what Chroma's own filter finds."""
    f = tmp_path / "two.jsonl"
    rows = [{"id": f"a{i}", "title": f"Graph networks {i}", "abstract": f"Graph neural networks for molecules, variant {i}.",
             "venue": "AAA", "year": 2020} for i in range(40)]
    rows += [{"id": f"b{i}", "title": f"Robots {i}", "abstract": f"Robot grasping with tactile sensors, setting {i}.",
              "venue": "BBB", "year": 2022} for i in range(5)]
    f.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    fake_library.ingest([f], progress=False)
    v = fake_library.embed_query("graph neural networks for molecules")
    where = Filters(venue="BBB").chroma_where()
    facets = fake_library.facets()
    mask = facets.mask("BBB", None, None)
    admitted, share = facets.admitted(mask), float(mask.mean())
    assert abs(share - 5 / 45) < 1e-6
    chroma_own = [r[0] for r in fake_library.chunks.dense_rows(v, 40, where, None)]
    assert {c.split("#")[0] for c in chroma_own} == {f"b{i}" for i in range(5)}
    assert [r[0] for r in fake_library.dense(v, 40, where, admitted=admitted, share=share)] == chroma_own  # scans all
    monkeypatch.setattr(fake_library.chunks, "scan", 10)  # the nearest 10 chunks are all AAA: falls back to Chroma
    assert [r[0] for r in fake_library.dense(v, 40, where, admitted=admitted, share=share)] == chroma_own
    assert fake_library.dense(v, 40, where, admitted=admitted, share=0.0) == []
    hits = search(fake_library, "graph neural networks for molecules", 10, Filters(venue="bbb"))
    assert {h.paper.paper_id for h in hits} == {f"b{i}" for i in range(5)}


def test_changed_chunk_settings_recut_the_library_on_the_next_ingest(fake_settings, caplog):
    """A user who changes PAPERCHAT_CHUNK__MAX_CHARS gets every paper cut the new way, not a mix."""
    lib = Library(fake_settings)
    lib.ingest([SEEDS], progress=False)
    before = chunk_count(lib)
    assert lib.stats()["chunking"] == "500 chars/256 tokens"
    finer = fake_settings.model_copy(update={"chunk": fake_settings.chunk.model_copy(update={"max_chars": 250})})
    lib2 = Library(finer)
    assert lib2.stats()["chunking"] == "500 chars/256 tokens"  # reading keeps what is stored
    with caplog.at_level("WARNING"):
        r = lib2.ingest([SEEDS], progress=False)
    assert r.unchanged == 76 and "re-chunking it at 250 chars" in caplog.text
    assert chunk_count(lib2) > 1.3 * before
    assert chunk_count(lib2) == sum(int(m["n_chunks"]) for m in lib2.catalogue.values())
    assert Library(finer).stats()["chunking"] == "250 chars/256 tokens"
    caplog.clear()
    lib2.ingest([SEEDS], progress=False)
    assert "re-chunking" not in caplog.text


def test_search_returns_one_hit_per_paper(fake_library):
    fake_library.ingest([SEEDS], progress=False)
    hits = search(fake_library, "transformer approximation bounds attention", k=20)
    ids = [h.paper.paper_id for h in hits]
    assert len(ids) == len(set(ids)) == 20
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_chunks_fit_the_embedders_window_and_carry_metadata():
    from rag.chunking import chunk_paper
    from rag.embeddings import get_embedder
    from rag.loaders import load_file

    emb = get_embedder("minilm")
    long_ones = 0
    for f in sorted(SEEDS.glob("*.txt")):
        for p in load_file(f):
            chunks = chunk_paper(p, count_tokens=emb.count_tokens)
            long_ones += len(chunks) > 1
            assert max(emb.count_tokens([c.text for c in chunks])) <= 256
            assert all(c.paper_id == p.paper_id for c in chunks)
            # Nothing of the abstract is lost between windows.
            joined = " ".join(c.text for c in chunks)
            assert all(s[:40] in joined for s in p.abstract.split(". ") if len(s) > 40)
    assert long_ones > 20


# -- bad input, through the command line as a user meets it ---------------------------------

@pytest.fixture
def cli(tmp_path, monkeypatch):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")

    def run(*args):
        return main(list(map(str, args)))

    return run


def papers_json(cli, capsys) -> list[dict]:
    capsys.readouterr()
    assert cli("papers", "--json") == 0
    return json.loads(capsys.readouterr().out)


BAD_FILES = {
    "empty.jsonl": b"",
    "noise.jsonl": bytes(range(256)) * 4,
    "latin1.csv": "id,title,abstract\n1,Caf\xe9,Un r\xe9sum\xe9 en fran\xe7ais.\n".encode("latin-1"),
    "noabstract.csv": b"id,title,summary_text\n1,A,Some text here.\n",
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_file_with_nothing_valid_is_rejected_whole_and_changes_nothing(cli, capsys, tmp_path, name):
    assert cli("ingest", SEEDS) == 0
    before = papers_json(cli, capsys)
    bad = tmp_path / name
    bad.write_bytes(BAD_FILES[name])
    assert cli("ingest", bad) != 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert any(name in ln for ln in lines) and "Traceback" not in err
    assert papers_json(cli, capsys) == before


def test_bad_records_are_named_skipped_and_good_ones_go_in(cli, capsys, tmp_path):
    f = tmp_path / "some_bad.jsonl"
    f.write_text(
        json.dumps({"id": "a", "title": "Good one", "abstract": "A fine abstract about kernels."}) + "\n"
        + "{not json at all\n"
        + json.dumps({"id": "b", "title": "Empty", "abstract": "  "}) + "\n"
        + json.dumps({"id": "c", "title": "Good two", "abstract": "Another abstract about priors."}) + "\n",
        encoding="utf-8",
    )
    code = cli("ingest", f)
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert "some_bad.jsonl:line 2" in err and "some_bad.jsonl:line 3" in err
    assert {p["paper_id"] for p in papers_json(cli, capsys)} == {"a", "c"}


def test_missing_path_is_one_clear_line(cli, capsys, tmp_path):
    code = cli("ingest", tmp_path / "nope.jsonl")
    err = capsys.readouterr().err
    assert code != 0 and "nope.jsonl" in err and "Traceback" not in err
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1


def test_papers_json_lists_the_contract_fields(cli, capsys):
    cli("ingest", SEEDS)
    ps = papers_json(cli, capsys)
    assert len(ps) == 76
    keys = {"paper_id", "title", "title_derived", "authors", "year", "venue", "url", "source", "position"}
    assert all(keys <= set(p) for p in ps)
    assert any("Manifold-Constrained Hyper-Connections" in p["title"] and p["title_derived"] for p in ps)


def test_search_json_contract(cli, capsys):
    cli("ingest", SEEDS)
    capsys.readouterr()
    assert cli("search", "residual stream hyper-connections", "--k", "3", "--venue", "ICML", "--json") == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 3
    for h in hits:
        assert {"paper_id", "title", "venue", "year", "source", "position", "score", "text"} <= set(h)
        assert h["venue"] == "ICML"
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
