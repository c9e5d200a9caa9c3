"""Ingest and search behaviour a user notices: idempotency, edits, filters, ids, bad input."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from conftest import SEEDS
from rag.library.library import Library
from rag.library.retrieval import Filters, search


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


def test_a_hit_shows_its_chunk_text_from_a_new_library_and_from_one_written_before(fake_library):
    """Chunk texts live in the chunk's metadata (no Chroma document: its full-text index cost ingest time);
    a library written before holds them as documents and shows the same text."""
    fake_library.ingest([SEEDS], progress=False)
    query = "transformer approximation bounds attention heads"

    def shown(hits) -> None:  # each hit shows a text of its own abstract
        pairs = [(h.paper.paper_id, h.text) for h in hits]
        papers = fake_library.get_papers([pid for pid, _ in pairs])
        assert pairs and all(text and text in papers[pid].abstract for pid, text in pairs), pairs

    shown(search(fake_library, query, k=5))
    col = fake_library.collections.chunks
    got = col.get(include=["documents", "metadatas", "embeddings"])
    assert not any(got["documents"]) and all(m["text"] for m in got["metadatas"])
    texts = fake_library.chunk_texts(got["ids"])
    # the same chunks as an older library wrote them: the text as the document, none in the metadata
    col.delete(ids=got["ids"])  # (an upsert would keep the metadata's old keys)
    col.add(ids=got["ids"], embeddings=got["embeddings"], documents=[m["text"] for m in got["metadatas"]],
            metadatas=[{k: v for k, v in m.items() if k != "text"} for m in got["metadatas"]])
    assert "text" not in col.get(ids=got["ids"][:1], include=["metadatas"])["metadatas"][0]
    # Every chunk shows the same text. (Not the same hits: the vector index rebuilt by delete and add is
    # approximate, and with the fake embedder's near ties it may order neighbours differently.)
    assert fake_library.chunk_texts(got["ids"]) == texts
    shown(search(fake_library, query, k=5))


def test_chunks_fit_the_embedders_window_and_carry_metadata():
    from rag.library.chunking import chunk_paper
    from rag.embedders import get_embedder
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


# -- sources: files never collide, a moved or re-uploaded file is itself (issue 13, items 1-3) ----------

def _jsonl(path, *abstracts, **extra):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"abstract": a, **extra}) + "\n" for a in abstracts), encoding="utf-8")
    return path


Y23 = ["Graph colouring with gated heuristics.", "Sparse kernels for long sequences.", "Conformal sets under shift."]
Y24 = ["Diffusion models share noise statistics.", "Low-rank adapters converge when asymmetric."]


def test_two_files_with_the_same_name_keep_each_others_papers(fake_settings, tmp_path):
    a = _jsonl(tmp_path / "bn" / "2023" / "abstracts.jsonl", *Y23)
    b = _jsonl(tmp_path / "bn" / "2024" / "abstracts.jsonl", *Y24)
    lib = Library(fake_settings)
    lib.ingest([a], progress=False)
    r = lib.ingest([b], progress=False)
    assert (r.added, r.removed) == (2, 0) and len(lib) == 5
    fresh = Library(fake_settings.model_copy(update={"library": "fresh"}))
    assert fresh.ingest([tmp_path / "bn"], progress=False).added == 5 and len(fresh) == 5
    again = fresh.ingest([tmp_path / "bn"], progress=False)
    assert (again.added, again.unchanged, again.removed) == (0, 5, 0)
    # Edited in place: a record dropped from one file leaves the library, the other file's papers stay.
    _jsonl(b, Y24[0])
    r = fresh.ingest([b], progress=False)
    assert (r.removed, len(fresh)) == (1, 4)
    # Moved: recognised by its records, not added twice, nothing removed.
    moved = tmp_path / "archive" / "abstracts-2023.jsonl"
    moved.parent.mkdir()
    a.rename(moved)
    r = fresh.ingest([moved], progress=False)
    assert (r.added, r.unchanged, r.removed, len(fresh)) == (0, 3, 0, 4)
    # ... and it is still the same source: dropping one of its records removes exactly that paper.
    _jsonl(moved, *Y23[:2])
    r = fresh.ingest([moved], progress=False)
    assert (r.removed, len(fresh)) == (1, 3)
    assert not any(Y23[2] in p.abstract for p in fresh.get_papers([p.paper_id for p in fresh.papers()]).values())


def test_uploads_with_the_same_name_are_different_sources_and_a_re_upload_is_itself(fake_settings, tmp_path):
    """What the UI does: each upload is staged in a fresh temp folder under its (sanitised) name."""
    lib = Library(fake_settings)
    up1 = _jsonl(tmp_path / "u1" / "abstracts.jsonl", *Y23)
    up2 = _jsonl(tmp_path / "u2" / "abstracts.jsonl", *Y24)
    lib.ingest([up1], progress=False, remember_paths=False)
    r = lib.ingest([up2], progress=False, remember_paths=False)
    assert (r.added, r.removed, len(lib)) == (2, 0, 5)
    again = _jsonl(tmp_path / "u3" / "abstracts.jsonl", *Y23[:2])  # the first, uploaded again minus a record
    r = lib.ingest([again], progress=False, remember_paths=False)
    assert (r.added, r.unchanged, r.removed, len(lib)) == (0, 2, 1, 4)
    assert {p.source for p in lib.papers()} == {"abstracts.jsonl"}


def test_the_same_record_id_in_two_files_does_not_overwrite(fake_settings, tmp_path):
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("id,abstract\n1,Alpha abstract one.\n2,Alpha abstract two.\n3,Alpha abstract three.\n")
    second.write_text("id,abstract,doi\n1,Beta abstract one.,\n2,Beta abstract two.,10.1000/shared\n")
    lib = Library(fake_settings)
    lib.ingest([first], progress=False)
    r = lib.ingest([second], progress=False)
    assert (r.added, r.updated, len(lib)) == (2, 0, 5)
    texts = {p.abstract for p in lib.get_papers([p.paper_id for p in lib.papers()]).values()}
    assert {"Alpha abstract one.", "Alpha abstract two.", "Beta abstract one.", "Beta abstract two."} <= texts
    r = lib.ingest([first], progress=False)
    assert (r.added, r.updated, r.unchanged, r.removed) == (0, 0, 3, 0)
    ids = {p.paper_id for p in lib.papers()}
    assert {"1", "2", "3", "doi:10.1000/shared"} <= ids  # the first file keeps its ids; a DOI is the same everywhere
    assert any(i.startswith("1@second.csv~") for i in ids)
    hit = search(lib, "Beta abstract one", k=1)[0]
    assert hit.paper.abstract == "Beta abstract one." and hit.paper.source == "second.csv"


def test_a_library_built_before_source_ids_re_ingests_as_unchanged(fake_settings, tmp_path):
    f = _jsonl(tmp_path / "old" / "abstracts.jsonl", *Y23)
    csv_ = tmp_path / "old" / "ids.csv"
    csv_.write_text("id,abstract\n1,Gamma one.\n2,Gamma two.\n")
    lib = Library(fake_settings)
    lib.ingest([f, csv_], progress=False)
    # What an older paperchat stored: no source_id / source_path in the records.
    papers = lib.collections.papers
    got = papers.get(include=["metadatas", "documents"])
    legacy = [{k: v for k, v in m.items() if k not in ("source_id", "source_path", "also_in")} for m in got["metadatas"]]
    papers.delete(ids=got["ids"])
    papers.add(ids=got["ids"], embeddings=[[1.0]] * len(legacy), documents=got["documents"], metadatas=legacy)
    lib.records.set_generation("legacy-built")
    lib.refresh()
    assert len(lib) == 5 and all("source_id" not in m for m in lib.catalogue.values())
    r = lib.ingest([f, csv_], progress=False)
    assert (r.added, r.updated, r.removed, r.unchanged) == (0, 0, 0, 5)
    assert {p.paper_id for p in lib.papers()} >= {"1", "2"}


def test_a_record_repeated_in_a_file_is_reported_once_not_fatal(fake_settings, tmp_path):
    same = "Repeated abstract about kernel methods."
    f = _jsonl(tmp_path / "rep.jsonl", same, "A different abstract.", same, same)
    lib = Library(fake_settings)
    r1 = lib.ingest([f], progress=False)
    assert (r1.added, r1.duplicates, r1.rejected) == (2, 2, 0)
    assert r1.notes == ["rep.jsonl: record 1 repeated as records 3, 4; kept once"]
    r2 = lib.ingest([f], progress=False)  # was: chromadb DuplicateIDError
    assert (r2.added, r2.unchanged, r2.duplicates) == (0, 2, 2)
    with open(f, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"abstract": "Appended later."}) + "\n")
    assert lib.ingest([f], progress=False).added == 1 and len(lib) == 3
    # Copies spread over later batches, on a first ingest.
    many = [f"Abstract number {i} on topic {i % 7}." for i in range(300)]
    many[150] = many[290] = many[3]
    g = _jsonl(tmp_path / "many.jsonl", *many)
    r = lib.ingest([g], progress=False)
    assert (r.added, r.duplicates, r.rejected) == (298, 2, 0)
    assert [p.position for p in lib.papers() if p.source == "many.jsonl"][:5] == [1, 2, 3, 4, 5]


def test_cli_ingest_reports_repeats_and_takes_an_explicit_source(cli, capsys, tmp_path):
    f = _jsonl(tmp_path / "a" / "list.jsonl", "Same one.", "Same one.", "Other one.")
    assert cli("ingest", f, "--json") == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["duplicates"] == 1 and out["added"] == 2 and "record 1 repeated as record 2" in captured.err
    # Files ingested under one explicit source name are one source, wherever they live: the later one
    # is the truth for that source's records.
    p1 = _jsonl(tmp_path / "b" / "export-monday.jsonl", "Kept across exports.", "Dropped by Tuesday.")
    assert cli("ingest", p1, "--source", "lab-export") == 0
    p2 = _jsonl(tmp_path / "c" / "export-tuesday.jsonl", "Kept across exports.")
    capsys.readouterr()
    assert cli("ingest", p2, "--source", "lab-export", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["added"], out["unchanged"], out["removed"]) == (0, 1, 1)
    g = _jsonl(tmp_path / "d" / "other.jsonl", "Another.")
    assert cli("ingest", f, g, "--source", "mine") == 2
    assert "--source names one file" in capsys.readouterr().err


def test_a_paper_two_files_hold_leaves_only_when_neither_holds_it(fake_settings, tmp_path):
    shared = {"doi": "10.1000/shared", "title": "Shared", "abstract": "A paper on both reading lists."}
    a = _jsonl(tmp_path / "alice" / "list.jsonl", "Only Alice's paper.")
    b = _jsonl(tmp_path / "bob" / "list.jsonl", "Only Bob's paper.")
    for f in (a, b):
        with open(f, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(shared) + "\n")
    lib = Library(fake_settings)
    lib.ingest([a, b], progress=False)
    assert len(lib) == 3
    _jsonl(a, "Only Alice's paper.")  # Alice drops the shared paper; Bob still has it
    r = lib.ingest([a], progress=False)
    assert (r.removed, len(lib)) == (0, 3)
    assert "doi:10.1000/shared" in lib.catalogue
    r = lib.ingest([b], progress=False)  # Bob's list now owns it: shown as his file, at his position
    assert (r.added, r.removed) == (0, 0)
    p = next(p for p in lib.papers() if p.paper_id == "doi:10.1000/shared")
    assert (p.source, p.position) == ("list.jsonl", 2)
    _jsonl(b, "Only Bob's paper.")
    r = lib.ingest([b], progress=False)
    assert (r.removed, len(lib)) == (1, 2) and "doi:10.1000/shared" not in lib.catalogue


def test_ingest_reports_its_progress_without_a_terminal(fake_library):
    """The UI's upload shows how many abstracts are in (on_progress) when the server has no terminal, where
    the terminal's progress bar is off: it used to read 0 throughout."""
    seen: list[int] = []
    fake_library.ingest([SEEDS], progress=False, on_progress=seen.append)
    assert seen and seen[-1] == 76 and seen == sorted(seen) and seen[0] > 0
