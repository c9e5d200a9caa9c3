"""Sources never take each other over (issue 28, items 1-7): no upload, copy or removal deletes or rewrites
another file's papers. Real Chroma, the hashing embedder (as the other source tests in test_library.py)."""

from __future__ import annotations

import json
import shutil

import pytest

from rag.errors import UserError
from rag.library import Library
from rag.library.retrieval import search

TOPICS = ["kernels", "priors", "graphs", "optimal transport", "diffusion", "bandits", "sparsity", "robustness"]


def _rows(prefix: str, n: int) -> list[dict]:
    return [{"abstract": f"{prefix} paper {i} studies {TOPICS[i % len(TOPICS)]} with method {prefix}{i}."}
            for i in range(n)]


def _jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _texts(lib: Library) -> dict[str, tuple[str, str]]:
    """paper id -> (shown file name, abstract)"""
    return {pid: (p.source, p.abstract) for pid, p in lib.get_papers(list(lib.catalogue)).items()}


A100 = _rows("alpha", 100)


def test_a_two_record_file_sharing_one_record_never_wipes_an_earlier_file(fake_settings, tmp_path):
    lib = Library(fake_settings)
    a = _jsonl(tmp_path / "a100.jsonl", A100)
    lib.ingest([a], progress=False)
    a.unlink()  # the file is gone from where it was read: rule 3 once let anything similar enough take it over
    notes = _jsonl(tmp_path / "notes.jsonl", [A100[0], {"abstract": "A note of my own on wombats."}])
    r = lib.ingest([notes], progress=False)
    assert (r.added, r.unchanged, r.removed, len(lib)) == (1, 1, 0, 101)
    assert sorted((s.name, s.papers) for s in lib.sources()) == [("a100.jsonl", 100), ("notes.jsonl", 2)]
    # In the UI (uploads record no path, so an earlier upload always counts as gone)
    ui = Library(fake_settings.model_copy(update={"library": "ui"}))
    ui.ingest([_jsonl(tmp_path / "u1" / "a100.jsonl", A100)], progress=False, remember_paths=False)
    tiny = _jsonl(tmp_path / "u2" / "tiny2.jsonl", [A100[5], {"abstract": "Someone else's one paper on okapis."}])
    r = ui.ingest([tiny], progress=False, remember_paths=False)
    assert (r.added, r.unchanged, r.removed, len(ui)) == (1, 1, 0, 101)
    # ... and a smaller re-upload under the same name cannot take the whole upload over either
    r = ui.ingest([_jsonl(tmp_path / "u3" / "a100.jsonl", A100[:10])], progress=False, remember_paths=False)
    assert (r.removed, len(ui)) == (0, 101)


def test_removing_a_source_keeps_a_live_files_path_and_identity(fake_settings, tmp_path):
    lib = Library(fake_settings)
    a = _jsonl(tmp_path / "a100.jsonl", A100)
    b = _jsonl(tmp_path / "b50.jsonl", A100[:50])
    lib.ingest([a], progress=False)
    assert lib.ingest([b], progress=False).unchanged == 50
    r = lib.remove_source("a100.jsonl")
    assert (len(r.removed), len(r.kept)) == (50, 50)
    (src,) = lib.sources()
    assert (src.name, src.path, src.papers) == ("b50.jsonl", str(b.resolve()), 50)
    assert {p.source for p in lib.papers()} == {"b50.jsonl"}
    # b50.jsonl is still on disk: a file holding half of it is another file, not b50.jsonl moved
    c = _jsonl(tmp_path / "c.jsonl", A100[:25] + _rows("gamma", 25))
    r = lib.ingest([c], progress=False)
    assert (r.added, r.unchanged, r.removed, len(lib)) == (25, 25, 0, 75)
    assert lib.ingest([b], progress=False).removed == 0 and len(lib) == 75


def test_remove_source_by_a_path_never_removes_another_file_of_that_name(fake_settings, tmp_path):
    lib = Library(fake_settings)
    a = _jsonl(tmp_path / "a" / "list.jsonl", A100)
    lib.ingest([a], progress=False)
    with pytest.raises(UserError) as err:
        lib.remove_source(str(tmp_path / "b" / "list.jsonl"))  # never ingested
    msg = str(err.value)
    assert f"no source of this library was read from {tmp_path / 'b' / 'list.jsonl'}" in msg
    assert lib.sources()[0].source_id in msg and str(a.resolve()) in msg  # the candidate, named
    assert len(lib) == 100
    assert len(lib.remove_source(str(a)).removed) == 100  # its own path still works


def test_cli_remove_source_by_an_unknown_path_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    _jsonl(tmp_path / "a" / "list.jsonl", A100[:3])
    assert main(["ingest", str(tmp_path / "a" / "list.jsonl")]) == 0
    capsys.readouterr()
    assert main(["remove", "--source", str(tmp_path / "b" / "list.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "no source of this library was read from" in err and "Traceback" not in err
    assert main(["stats"]) == 0 and "3 papers" in capsys.readouterr().out


TRUSTED = {"doi": "10.1234/real.2020.1", "title": "Real result",
           "abstract": "Pruning half the weights brings no loss in accuracy on ImageNet."}
FORGED = {"doi": "https://doi.org/10.1234/REAL.2020.1", "title": "Real result",
          "abstract": "Pruning half the weights destroys accuracy on ImageNet, contrary to prior claims."}


def test_a_paper_always_shows_the_text_of_the_file_it_is_shown_under(fake_settings, tmp_path):
    lib = Library(fake_settings)
    trusted = _jsonl(tmp_path / "trusted.jsonl", [TRUSTED, {"abstract": "Trusted's other paper on kernels."}])
    upload = _jsonl(tmp_path / "upload.jsonl", [FORGED, {"abstract": "The upload's other paper on priors."}])
    lib.ingest([trusted], progress=False)
    r = lib.ingest([upload], progress=False)
    pid = "doi:10.1234/real.2020.1"
    assert _texts(lib)[pid] == ("trusted.jsonl", TRUSTED["abstract"])  # the upload did not rewrite it
    assert (r.added, r.updated, r.held_apart) == (1, 0, 1)
    assert any("upload.jsonl: record 1" in n and "trusted.jsonl" in n for n in r.notes)
    assert lib.remove_source("upload.jsonl").kept == [pid]
    assert _texts(lib)[pid] == ("trusted.jsonl", TRUSTED["abstract"])
    hit = search(lib, "pruning weights accuracy ImageNet", k=1)[0]
    assert (hit.paper.source, hit.paper.abstract) == ("trusted.jsonl", TRUSTED["abstract"])
    # The other way round: the trusted file removed, the paper shows the upload's own text, chunks included.
    lib.ingest([upload], progress=False)
    r = lib.remove_source("trusted.jsonl")
    assert r.kept == [pid] and len(r.removed) == 1
    assert _texts(lib)[pid] == ("upload.jsonl", FORGED["abstract"])
    hit = search(lib, "pruning weights destroys accuracy", k=1)[0]
    assert (hit.paper.paper_id, hit.paper.source) == (pid, "upload.jsonl") and "destroys" in hit.text
    assert lib.collections.chunks.count() == sum(int(m["n_chunks"]) for m in lib.catalogue.values())
    # Two files with the same text; the one shown edits its copy: the other keeps its own (the old text).
    x = _jsonl(tmp_path / "x.jsonl", [TRUSTED])
    y = _jsonl(tmp_path / "y.jsonl", [TRUSTED])
    lib2 = Library(fake_settings.model_copy(update={"library": "two"}))
    lib2.ingest([x, y], progress=False)
    edited = {**TRUSTED, "abstract": "Pruning a third of the weights keeps accuracy on CIFAR-10."}
    assert lib2.ingest([_jsonl(x, [edited])], progress=False).updated == 1
    assert _texts(lib2)[pid] == ("x.jsonl", edited["abstract"])
    lib2.remove_source(str(x))
    assert _texts(lib2)[pid] == ("y.jsonl", TRUSTED["abstract"])
    assert "CIFAR" not in search(lib2, "pruning weights accuracy", k=1)[0].text


def test_the_same_file_in_two_folders_is_one_set_of_papers(fake_settings, tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("id,abstract\n" + "".join(f"{i},Another list's paper {i} on tapirs.\n" for i in range(1, 6)))
    rows = "id,abstract\n" + "".join(f"{i},Shared list paper {i} on {TOPICS[i % 8]}.\n" for i in range(1, 11))
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (tmp_path / "one" / "b.csv").write_text(rows)
    (tmp_path / "two" / "b-copy.csv").write_text(rows)
    lib = Library(fake_settings)
    lib.ingest([other], progress=False)
    r = lib.ingest([tmp_path / "one", tmp_path / "two"], progress=False)
    assert (r.added, r.unchanged, len(lib)) == (10, 10, 15)
    hits = search(lib, "Shared list paper 3 on", k=10)
    assert [h.paper.abstract for h in hits].count("Shared list paper 3 on optimal transport.") == 1


def test_re_uploading_a_copy_of_a_live_file_is_one_source(fake_settings, tmp_path):
    lib = Library(fake_settings)
    lib.ingest([_jsonl(tmp_path / "a100.jsonl", A100)], progress=False)
    for i in range(3):
        up = _jsonl(tmp_path / f"up{i}" / "upload-copy.jsonl", A100)
        r = lib.ingest([up], progress=False, remember_paths=False)
        assert (r.added, r.unchanged, r.removed) == (0, 100, 0)
    assert sorted((s.name, s.papers) for s in lib.sources()) == [("a100.jsonl", 100), ("upload-copy.jsonl", 100)]
    trimmed = _jsonl(tmp_path / "up9" / "upload-copy.jsonl", A100[:60])
    r = lib.ingest([trimmed], progress=False, remember_paths=False)
    assert (r.removed, len(lib)) == (0, 100)  # a100.jsonl still holds the 40 the upload dropped
    assert sorted((s.name, s.papers) for s in lib.sources()) == [("a100.jsonl", 100), ("upload-copy.jsonl", 60)]
    r = lib.remove_source("upload-copy.jsonl")  # the bare name names one source
    assert (r.removed, len(r.kept), len(lib)) == ([], 60, 100)


def test_different_records_sharing_an_id_are_errors_named_by_record(fake_settings, tmp_path):
    a20 = _jsonl(tmp_path / "a20.jsonl", [{**r, "year": 2020} for r in _rows("delta", 20)])
    lib = Library(fake_settings)
    r = lib.ingest([a20], fields={"id": "year"}, progress=False)
    assert (r.added, r.duplicates, r.rejected, len(lib)) == (1, 0, 19, 1)
    shown = [str(x) for x in r.rejections]
    assert shown[0].startswith("a20.jsonl:record 2: id '2020' is already record 1's, a different record")
    assert len(shown) == 19 and shown[-1].startswith("a20.jsonl:record 20:")
    # The same record twice is still a repeat, kept once, not an error.
    same = _jsonl(tmp_path / "same.jsonl", [A100[0], A100[1], A100[0]])
    r = lib.ingest([same], progress=False)
    assert (r.added, r.duplicates, r.rejected) == (2, 1, 0)


def test_cli_different_records_sharing_an_id_exit_non_zero(tmp_path, monkeypatch, capsys):
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    a = _jsonl(tmp_path / "a20.jsonl", [{**r, "year": 2020} for r in _rows("delta", 20)])
    assert main(["ingest", str(a), "--map", "id=year"]) != 0
    err = capsys.readouterr().err
    assert "a20.jsonl:record 7: id '2020' is already record 1's" in err and "Traceback" not in err


def test_a_moved_file_is_still_itself(fake_settings, tmp_path):
    """What must keep working: a file moved or renamed (its old path gone) is its source, not a new one."""
    lib = Library(fake_settings)
    a = _jsonl(tmp_path / "a100.jsonl", A100)
    lib.ingest([a], progress=False)
    moved = tmp_path / "archive" / "a100-2023.jsonl"
    moved.parent.mkdir()
    shutil.move(a, moved)
    _jsonl(moved, A100[:90])
    r = lib.ingest([moved], progress=False)
    assert (r.added, r.removed, len(lib)) == (0, 10, 90)
    (src,) = lib.sources()
    assert src.path == str(moved.resolve())
