"""`paperchat fetch` against recorded responses of the real services (tests/fixtures/fetch/README.md says
where each comes from), replayed by a local server on 127.0.0.1: nothing here touches the network."""

from __future__ import annotations

import json
from pathlib import Path
import os
import socket
import subprocess
import sys

import pytest

from conftest import ROOT, make_settings
from fetch_replay import Replay

DOI_CHEMCROW = "doi:10.1038/s42256-024-00832-8"  # OpenAlex's journal version of ChemCrow (and Crossref's)
ARXIV_CHEMCROW = "arXiv:2304.05376"  # OpenAlex's preprint of it, known by its arXiv DataCite DOI
DOC_CURSOR = "IlsxNjA5MzcyODAwMDAwLCAnaHR0cHM6Ly9vcGVuYWxleC5vcmcvVzI0ODg0OTk3NjQnXSI="


@pytest.fixture
def replay():
    r = Replay()
    yield r
    r.close()


def settings_for(tmp_path, replay, **fetch):
    from rag.settings import FetchSettings

    base = replay.url
    fs = FetchSettings(openalex_url=f"{base}/openalex", arxiv_url=f"{base}/arxiv/api/query",
                       s2_url=f"{base}/s2/graph/v1", pubmed_url=f"{base}/pubmed", crossref_url=f"{base}/crossref",
                       pace=0, backoff=0.01, retries=2, email="lab@example.org", **fetch)
    return make_settings(tmp_path / "home", embedder="fake", fetch=fs)


def run(q, settings, waits=None):
    from rag.fetch.run import fetch
    from rag.library.library import Library

    lib = {}

    def open_library():
        lib["lib"] = Library(settings)
        return lib["lib"]

    report = fetch(q, settings, open_library, progress=False, sleep=(waits.append if waits is not None else lambda s: None))
    return report, lib["lib"]


def query(service, text="", **kw):
    from rag.fetch.records import FetchQuery

    return FetchQuery(service=service, query=text, **kw)


def openalex_pages(replay):
    replay.add("/openalex/works", 200, "openalex_page1.json").add("/openalex/works", 200, "openalex_page2.json")


def test_openalex_pages_by_cursor_rebuilds_abstracts_and_names_what_it_skips(tmp_path, replay):
    openalex_pages(replay)
    settings = settings_for(tmp_path, replay)
    report, lib = run(query("openalex", "large language models chemistry", since=2015), settings)
    asked = replay.asked("/openalex/works")
    assert [a["cursor"] for a in asked] == ["*", DOC_CURSOR]  # the second page by the first one's next_cursor
    assert asked[0]["search"] == "large language models chemistry" and asked[0]["filter"] == "publication_year:2015-"
    assert asked[0]["mailto"] == "lab@example.org"
    assert report.fetched == 3 and report.no_abstract == 1
    assert "High-throughput screening of human genetic variants" in report.skipped[0]
    assert report.summary().startswith("fetched 3 from OpenAlex (of 2 matching), skipped 1 without abstract")
    papers = lib.get_papers([DOI_CHEMCROW, ARXIV_CHEMCROW])
    # The inverted index is read back into the abstract as written.
    assert papers[DOI_CHEMCROW].abstract.startswith("Large language models (LLMs) have shown strong performance")
    assert papers[DOI_CHEMCROW].venue == "Nature Machine Intelligence" and papers[DOI_CHEMCROW].year == 2024
    assert papers[DOI_CHEMCROW].authors[-1] == "Philippe Schwaller"
    assert papers[ARXIV_CHEMCROW].url == "https://arxiv.org/abs/2304.05376"
    assert "Computer science" in papers[DOI_CHEMCROW].keywords  # OpenAlex's keywords and high-scoring concepts
    # The snapshot is a source like any file, named by the query it came from.
    src = {s.source_id: s for s in lib.sources()}['openalex: "large language models chemistry" 2015-']
    assert src.papers == 3 and src.path == report.snapshot and report.snapshot.startswith(str(settings.library_dir))
    snap = [json.loads(line) for line in open(report.snapshot, encoding="utf-8")]
    assert len(snap) == 3 and all(item["abstract"] for item in snap)  # the work without one is not stored empty


def test_fetching_the_same_query_again_updates_its_source_and_remove_source_takes_it_out(tmp_path, replay):
    openalex_pages(replay)
    settings = settings_for(tmp_path, replay)
    q = query("openalex", "large language models chemistry")
    run(q, settings)
    # A week later OpenAlex no longer lists the two ChemCrow works (withdrawn from the results).
    replay.routes["/openalex/works"] = [(200, "application/json", (replay_fixture("openalex_page2.json")))]
    report, lib = run(q, settings)
    assert report.ingest["removed"] == 2 and report.ingest["unchanged"] == 1 and report.ingest["added"] == 0
    assert len(lib) == 1 and DOI_CHEMCROW not in lib.catalogue
    gone = lib.remove_source(q.source_id())
    assert gone.removed == ["doi:10.1063/1.4938384"] and len(lib) == 0


def replay_fixture(name):
    from fetch_replay import fixture

    return fixture(name)


def test_a_429_is_waited_out_and_a_null_item_is_named_malformed(tmp_path, replay):
    replay.add("/s2/graph/v1/paper/search/bulk", 429, "s2_429.json")
    replay.add("/s2/graph/v1/paper/search/bulk", 200, "s2_bulk_page1.json")
    replay.add("/s2/graph/v1/paper/search/bulk", 200, "s2_bulk_page2.json")
    waits: list[float] = []
    report, lib = run(query("s2", '"differences-in-differences" | microfinance'), settings_for(tmp_path, replay), waits)
    asked = replay.asked("/s2/graph/v1/paper/search/bulk")
    assert len(asked) == 3 and asked[0] == {k: v for k, v in asked[1].items()}  # the same request, retried
    assert asked[2]["token"].startswith("PCOKWVSKJJGM4TWNJNI3EUSQ")  # page 2 by page 1's continuation token
    assert report.retried == [429] and waits == [0.01]
    assert report.fetched == 3 and report.no_abstract == 2 and report.malformed == 1
    assert any("malformed (a NoneType where a paper was expected)" in s for s in report.skipped)
    assert "waited out 1 x HTTP 429" in report.summary()
    assert set(lib.catalogue) == {"doi:10.2139/ssrn.288970", "doi:10.2139/ssrn.2250500", "doi:10.1257/rct.1355"}


def test_pubmed_keeps_structured_abstract_labels_and_skips_a_record_without_abstract(tmp_path, replay):
    replay.add("/pubmed/esearch.fcgi", 429, "ncbi_429.json").add("/pubmed/esearch.fcgi", 200, "pubmed_esearch.xml")
    replay.add("/pubmed/efetch.fcgi", 200, "pubmed_efetch.xml")
    report, lib = run(query("pubmed", "asthma[MeSH]", since=2010, until=2020), settings_for(tmp_path, replay))
    term = replay.asked("/pubmed/esearch.fcgi")[-1]["term"]
    assert term == "(asthma[MeSH]) AND 2010:2020[dp]"  # PubMed's own syntax, passed through
    assert replay.asked("/pubmed/efetch.fcgi")[0]["id"].startswith("41282813,41148224")
    assert report.fetched == 1 and report.no_abstract == 1 and report.retried == [429]
    assert "PubMed 11618220" in report.skipped[0]
    (paper,) = lib.papers()
    text = lib.get_papers([paper.paper_id])[paper.paper_id].abstract
    assert text.startswith("BACKGROUND: ") and " OBJECTIVE: " in text and " CONCLUSION: " in text


def test_arxiv_pages_by_start_keeps_latex_and_stops_at_the_limit(tmp_path, replay):
    replay.add("/arxiv/api/query", 200, "arxiv_page1.xml").add("/arxiv/api/query", 200, "arxiv_page2.xml")
    report, lib = run(query("arxiv", "cat:cs.LG AND ti:testing", limit=5), settings_for(tmp_path, replay))
    asked = replay.asked("/arxiv/api/query")
    assert [a["start"] for a in asked] == ["0", "100"]
    assert asked[0]["search_query"] == "cat:cs.LG AND ti:testing"
    assert report.fetched == 5 and len(lib) == 5
    paper = lib.get_papers(["arXiv:2403.16981"])["arXiv:2403.16981"]
    assert r"i.i.d.\ samples" in paper.abstract  # LaTeX as written
    assert paper.keywords[:2] == ["math.ST", "cs.IT"]  # arXiv's categories
    # arXiv knows the journal DOI of the first entry: it is stored by that DOI, arXiv's id kept beside it.
    snap = [json.loads(line) for line in open(report.snapshot, encoding="utf-8")]
    assert snap[0]["paperchat"]["arxiv"] == "2202.12139" and snap[0]["DOI"]


def test_the_same_paper_from_two_services_is_stored_once(tmp_path, replay):
    openalex_pages(replay)
    settings = settings_for(tmp_path, replay)
    run(query("openalex", "chemistry tools"), settings)
    # A DOI list: OpenAlex does not know the DOI (its recorded 404), Crossref does (its recorded work).
    replay.add("/openalex/works/https:", 404, "openalex_not_found.txt", "text/html")
    replay.add("/openalex/works/https:", 200, "openalex_work_pnas.json")
    replay.add("/crossref/works/", 200, "crossref_chemcrow.json")
    dois = tmp_path / "reading-list.txt"
    dois.write_text("https://doi.org/10.1038/s42256-024-00832-8\nnot a doi at all\n# a comment\n"
                    "10.1073/pnas.1414271111\n", encoding="utf-8")
    report, lib = run(query("dois", str(dois)), settings)
    assert [r["path"] for r in replay.log[-3:]] == [
        "/openalex/works/https://doi.org/10.1038/s42256-024-00832-8", "/crossref/works/10.1038/s42256-024-00832-8",
        "/openalex/works/https://doi.org/10.1073/pnas.1414271111"]  # Crossref only for what OpenAlex lacks
    assert replay.asked("/crossref/works/")[0] == {"mailto": "lab@example.org"}
    assert report.fetched == 2 and report.malformed == 1 and "line 2" in report.skipped[0]
    # Crossref's ChemCrow is OpenAlex's, by its DOI: stored once; the PNAS paper is new. Crossref's text differs:
    # it is kept apart, the paper keeps the text of the fetch it is shown under (issue 28, item 4).
    assert report.ingest["added"] == 1 and report.ingest["updated"] == 0 and report.ingest["held_apart"] == 1
    assert len(lib) == 4
    assert "doi:10.1073/pnas.1414271111" in lib.catalogue
    shared = {s.source_id: s for s in lib.sources()}
    assert shared[f"dois: {dois}"].shared == 1 and shared['openalex: "chemistry tools"'].shared == 1


def test_an_interrupted_fetch_carries_on_where_it_stopped(tmp_path, replay):
    from rag.errors import UserError

    replay.add("/openalex/works", 200, "openalex_page1.json").add("/openalex/works", 503, b"Service Unavailable", "text/plain")
    settings = settings_for(tmp_path, replay)
    q = query("openalex", "chemistry tools")
    with pytest.raises(UserError, match="2 papers fetched so far are kept; run the same command again"):
        run(q, settings)
    assert not (settings.library_dir / "chroma").exists() and not list((settings.library_dir / "fetched").glob("*[!t].jsonl"))
    replay.log.clear()
    replay.routes["/openalex/works"] = [(200, "application/json", replay_fixture("openalex_page2.json"))]
    report, lib = run(q, settings)
    assert [a["cursor"] for a in replay.asked("/openalex/works")] == [DOC_CURSOR]  # page 1 not asked again
    assert report.resumed and report.fetched == 3 and len(lib) == 3


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_without_the_network_fetch_says_so_in_one_line_and_leaves_the_library_alone(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "PAPERCHAT_HOME": str(home), "PAPERCHAT_EMBEDDER": "fake",
           "PAPERCHAT_FETCH__OPENALEX_URL": f"http://127.0.0.1:{closed_port()}", "PAPERCHAT_FETCH__BACKOFF": "0"}
    r = subprocess.run([sys.executable, "-m", "rag.cli", "fetch", "openalex", "sparse attention"], env=env,
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "paperchat: fetch needs the network: OpenAlex could not be reached; files ingest offline "
        "(`paperchat ingest FILE`)"]
    assert not (home / "chroma").exists() and not (home / "libraries" / "default" / "fetched" / "x").exists()


def test_dry_run_says_how_many_would_come(tmp_path, replay):
    from rag.fetch.run import dry_run

    replay.add("/openalex/works", 200, "openalex_page1.json")
    assert dry_run(query("openalex", "chemistry tools"), settings_for(tmp_path, replay)) == 2
    assert replay.asked("/openalex/works")[0]["per-page"] == "1"


def test_the_limit_has_a_cap_the_user_can_raise(tmp_path, replay):
    from rag.errors import UserError
    from rag.fetch.run import check

    with pytest.raises(UserError, match=r"--limit 20000 is over the cap of 10,000 papers .*PAPERCHAT_FETCH__MAX_LIMIT"):
        check(query("openalex", "x", limit=20000), settings_for(tmp_path, replay))
    check(query("openalex", "x", limit=20000), settings_for(tmp_path, replay, max_limit=50000))


def test_the_s2_key_is_sent_and_never_printed(tmp_path, replay, monkeypatch):
    from pydantic import SecretStr

    from rag.errors import UserError, user_message

    key = "s2-sentinel-key-8d1c"
    replay.add("/s2/graph/v1/paper/search/bulk", 403, b'{"message": "Forbidden"}', "application/json")
    with pytest.raises(UserError) as err:
        run(query("s2", "x"), settings_for(tmp_path, replay, s2_api_key=SecretStr(key)))
    assert replay.log[0]["headers"].get("x-api-key") == key
    assert key not in user_message(err.value) and "HTTP 403" in user_message(err.value)


def test_search_and_ask_never_import_the_fetch_wing(tmp_path):
    code = ("import sys; from rag.cli import main; main(['search', 'attention']); "
            "print(sorted(m for m in sys.modules if m.startswith('rag.fetch')))")
    env = {**os.environ, "PAPERCHAT_HOME": str(tmp_path / "home"), "PAPERCHAT_EMBEDDER": "fake"}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stderr[-2000:]


def test_the_library_tab_adds_papers_from_a_service(tmp_path, replay):
    """The UI's "Add papers" (ui/addpapers.py) runs the same fetch: the estimate, then the papers in the library."""
    from rag.library.library import Library
    from ui.addpapers import AddPapers

    replay.add("/openalex/works", 200, "openalex_page1.json").add("/openalex/works", 200, "openalex_page1.json")
    replay.add("/openalex/works", 200, "openalex_page2.json")
    settings = settings_for(tmp_path, replay)
    lib = Library(settings)
    ui = AddPapers(settings, lambda: lib)
    assert ui.estimate("openalex", "chemistry tools", 2015, None, 300).startswith(
        "About **2** papers match on OpenAlex; a fetch brings **2** (limit 300).")
    out = ui.run("openalex", "chemistry tools", 2015, None, 300, progress=lambda *a, **k: None)
    assert out.startswith('**openalex: "chemistry tools" 2015-** — fetched 3 from OpenAlex') and "added 3" in out
    assert len(lib) == 3 and {p.source for p in lib.papers()} == {Path(lib.sources()[0].path).name}


def test_a_page_half_written_when_killed_is_fetched_again_not_kept_twice(tmp_path, replay):
    from rag.errors import UserError

    replay.add("/openalex/works", 200, "openalex_page1.json").add("/openalex/works", 503, b"", "text/plain")
    settings = settings_for(tmp_path, replay)
    q = query("openalex", "chemistry tools")
    with pytest.raises(UserError):
        run(q, settings)
    (part,) = (settings.library_dir / "fetched").glob("*.part.jsonl")
    with open(part, "a", encoding="utf-8") as f:  # a kill while the next page was being written
        f.write(part.read_text(encoding="utf-8").splitlines()[0] + "\n" + '{"service": "openal')
    replay.routes["/openalex/works"] = [(200, "application/json", replay_fixture("openalex_page2.json"))]
    report, lib = run(q, settings)
    assert report.fetched == 3 and report.repeated == 0 and len(lib) == 3
