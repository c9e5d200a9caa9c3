"""Exports worth keeping (issue 17, item 5; issue 21, item 4): keys a person would type, every identifier the
record has, files named for what they hold, the question and filters named, and BibTeX / RIS that a reference
manager reads back whole (parsed here with bibtexparser and rispy, checked for what Zotero's importers map)."""

from __future__ import annotations

import json
import re

import pytest

from rag.exports.bibliography import bibtex_key, doi_of, ris_author, to_bibtex, to_ris
from rag.exports.documents import answer_markdown, export_stem, summary_markdown, write_export_files
from rag.records import Answer, Citation, Paper, text_hash
from rag.library.retrieval import Filters

OPTUNA = Paper(paper_id="doi:10.1145/3292500.3330701", title="Optuna: A Next-generation Hyperparameter Optimization "
               "Framework", authors=["Takuya Akiba", "Shotaro Sano", "Toshihiko Yanase"], year=2019, venue="KDD",
               url="https://dl.acm.org/doi/10.1145/3292500.3330701", keywords=["hyperparameters", "black-box"],
               abstract="We study $O(n^{2})$ trials & 50% of {cases} with define_by_run #1 ~ ^ search.")
DERIVED = Paper(paper_id=text_hash("While machine learning has advanced, curation lags. We propose Curate."), title="While machine learning has advanced, curation lags",
                title_derived=True, year=2026, venue="ICLR", source="iclr_2026.txt", position=3,
                abstract="While machine learning has advanced, curation lags. We propose Curate.")
ATTENTION = Paper(paper_id="arXiv:1706.03762", title="Attention Is All You Need",
                  authors=["Vaswani, Ashish", "Noam Shazeer"], year=2017, abstract="The dominant sequence models.")
PAPERS = [OPTUNA, DERIVED, ATTENTION]


def cites(*papers: Paper) -> list[Citation]:
    return [Citation(n=i, paper=p, evidence=p.abstract.split(". ")[0], supported=True) for i, p in enumerate(papers, 1)]


def test_keys_are_surname_year_and_first_significant_title_word():
    assert bibtex_key(OPTUNA) == "akiba2019optuna"
    assert bibtex_key(ATTENTION) == "vaswani2017attention"  # "Last, First" and "First Last" alike
    # No authors: two significant words around the year; never "while" (issue 17's `while20262d3b`)
    assert bibtex_key(DERIVED) == "machine2026learning"
    assert bibtex_key(DERIVED.model_copy(update={"title": "The Manifold Hypothesis"})) == "manifold2026hypothesis"
    # Two papers one export shares a key for: both kept, told apart
    twin = OPTUNA.model_copy(update={"paper_id": "doi:10.1/other"})
    keys = re.findall(r"@\w+\{([^,]+),", to_bibtex(cites(OPTUNA, twin)))
    assert keys[0] == "akiba2019optuna" and keys[1].startswith("akiba2019optuna-") and len(set(keys)) == 2


def test_bibtex_carries_authors_doi_url_and_escapes_latex():
    bib = to_bibtex(cites(*PAPERS))
    assert bib.count("{") == bib.count("}")
    assert "doi = {10.1145/3292500.3330701}" in bib and "url = {https://dl.acm.org/doi/10.1145/3292500.3330701}" in bib
    assert "author = {Takuya Akiba and Shotaro Sano and Toshihiko Yanase}" in bib
    assert "eprint = {1706.03762}" in bib and "url = {https://arxiv.org/abs/1706.03762}" in bib
    assert r"$O(n^{2})$ trials \& 50\% of {cases} with define\_by\_run \#1 \textasciitilde{} \textasciicircum{}" in bib
    assert "keywords = {hyperparameters, black-box}" in bib
    assert doi_of(Paper(paper_id="x", abstract="a", url="https://doi.org/10.1000/xyz123")) == "10.1000/xyz123"


def _unlatex(s: str) -> str:
    return re.sub(r"\\([&%#_$])", r"\1", s).replace("{", "").replace("}", "")


def _bibtex_entries(text: str) -> list[dict]:
    """Entries as {type, key, fields} with bibtexparser 2 or 1, whichever is installed; fails on any block
    the parser could not read."""
    bibtexparser = pytest.importorskip("bibtexparser")
    if hasattr(bibtexparser, "parse_string"):  # 2.x
        lib = bibtexparser.parse_string(text)
        assert not lib.failed_blocks, lib.failed_blocks
        return [{"type": e.entry_type, "key": e.key, **{k.lower(): f.value for k, f in e.fields_dict.items()}}
                for e in lib.entries]
    db = bibtexparser.loads(text)
    return [{"type": e["ENTRYTYPE"], "key": e["ID"], **{k: v for k, v in e.items() if k.islower()}} for e in db.entries]


def test_bibtex_round_trip_keeps_type_title_authors_year_doi_url():
    entries = _bibtex_entries(to_bibtex(cites(*PAPERS)))
    assert [e["key"] for e in entries] == ["akiba2019optuna", "machine2026learning", "vaswani2017attention"]
    assert [e["type"].lower() for e in entries] == ["inproceedings", "inproceedings", "misc"]
    for e, p in zip(entries, PAPERS):
        assert _unlatex(e["title"]) == p.title
        assert (e.get("year") or "") == str(p.year)
        assert [a.strip() for a in e.get("author", "").split(" and ") if a.strip()] == p.authors
        assert _unlatex(e.get("doi", "")) == doi_of(p)
    assert entries[0]["url"] == OPTUNA.url and entries[0]["booktitle"] == "KDD"
    assert _unlatex(entries[0]["abstract"]).startswith("We study O(n^2)") or "$O(n^{2})$" in entries[0]["abstract"]


def test_ris_round_trip_keeps_type_title_authors_year_doi_url():
    rispy = pytest.importorskip("rispy")
    text = to_ris(cites(*PAPERS))
    # What Zotero's RIS importer needs: every record opens with TY and closes with ER; authors as "Last, First".
    records = re.split(r"\nER  - *\n?", text.strip())
    assert all(r.strip().startswith("TY  - ") for r in records if r.strip())
    got = rispy.loads(text)
    assert [r["type_of_reference"] for r in got] == ["CONF", "CONF", "GEN"]
    assert [r["title"] for r in got] == [p.title for p in PAPERS]
    assert got[0]["authors"] == ["Akiba, Takuya", "Sano, Shotaro", "Yanase, Toshihiko"]
    assert got[2]["authors"] == ["Vaswani, Ashish", "Shazeer, Noam"]
    assert [r.get("year") for r in got] == ["2019", "2026", "2017"]
    assert got[0]["doi"] == "10.1145/3292500.3330701" and got[0]["urls"] == [OPTUNA.url]
    assert got[2]["urls"] == ["https://arxiv.org/abs/1706.03762"] and "doi" not in got[1]
    assert got[0]["secondary_title"] == "KDD" and got[0]["keywords"] == ["hyperparameters", "black-box"]
    assert got[0]["abstract"] == OPTUNA.abstract  # RIS keeps the text as it is, math included
    assert ris_author("Geoffrey E. Hinton") == "Hinton, Geoffrey E." and ris_author("Plato") == "Plato"


def test_files_say_what_they_hold(tmp_path):
    assert export_stem("summary", "Optimal transport") == "paperchat-summary-optimal-transport"
    assert export_stem("answer", "How can résidual streams be widened?") == \
        "paperchat-answer-how-can-residual-streams-be-widened"
    assert len(export_stem("answer", "word " * 100)) <= len("paperchat-answer-") + 60
    # a long subject is cut where a phrase ends, never mid-phrase ("...-without-losing-the")
    assert export_stem("answer", "How can a widened residual stream keep the identity-mapping property without "
                                 "losing the stability of training at scale?") == \
        "paperchat-answer-how-can-a-widened-residual-stream-keep-the-identity-mapping"
    files = write_export_files(tmp_path, "summary", "optimal transport", "# optimal transport\n", cites(OPTUNA))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "paperchat-summary-optimal-transport.bib", "paperchat-summary-optimal-transport.md",
        "paperchat-summary-optimal-transport.ris"]
    assert "akiba2019optuna" in open(files.bibtex).read() and "TY  - CONF" in open(files.ris).read()
    write_export_files(tmp_path, "answer", "why", "# why\n", [])  # the next result replaces the last
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paperchat-answer-why.bib", "paperchat-answer-why.md",
                                                          "paperchat-answer-why.ris"]


def test_markdown_names_the_question_and_filters_and_quotes_under_references():
    f = Filters(venue="ICLR", year_from=2024, year_to=2026, author="Hinton")
    ans = Answer(question="What limits $k$-means?", answer="Seeding does [1].", citations=cites(OPTUNA))
    md = answer_markdown(ans, f)
    assert md.startswith("# What limits $k$-means?\n\n*Filtered to venue ICLR, 2024–2026, author Hinton.*")
    assert "doi:10.1145/3292500.3330701" in md and "Takuya Akiba, Shotaro Sano" in md
    c = cites(DERIVED)[0].model_copy(update={"more_evidence": ["We propose Curate."]})
    sm = summary_markdown("curation", "Overview [1].", [], [c], filters=Filters(collection="Thesis"))
    refs = sm.split("## References")[1].splitlines()
    assert refs[2].startswith("[1] While machine learning") and refs[3] == "    > While machine learning has advanced, curation lags"
    assert refs[4] == "    > We propose Curate." and "*Filtered to collection Thesis.*" in sm
    assert "Filtered" not in answer_markdown(ans, Filters())


def test_a_reference_line_has_one_full_stop_after_et_al():
    from rag.tasks.summary import _ref_line

    # a summary's reference printed "Yujia Xie et al.. On Scalable and Efficient Computation ..." (mlqa)
    xie = Paper(paper_id="icml2019:1488", title="On Scalable and Efficient Computation of Large Scale Optimal Transport",
                authors=["Yujia Xie", "Minshuo Chen", "Haoming Jiang"], year=2019, venue="ICML",
                abstract="We approximate the optimal transport plan.")
    assert _ref_line(xie) == "Yujia Xie et al. On Scalable and Efficient Computation of Large Scale Optimal Transport — ICML 2019"
    assert _ref_line(ATTENTION).startswith("Vaswani, Ashish et al. Attention Is All You Need — 2017")
    many = xie.model_copy(update={"authors": [f"Author {i}" for i in range(12)], "title": "Is transport enough?"})
    md = summary_markdown("optimal transport", "Overview [1].", [], cites(many))
    assert "Author 9 et al. ICML, 2019" in md and "et al.." not in md and "enough?. " not in md


def test_our_own_loaders_read_both_exports_back_as_the_same_papers(tmp_path):
    from rag.loaders import load_file
    from rag.records import Rejection

    for name, text in (("refs.bib", to_bibtex(cites(*PAPERS))), ("refs.ris", to_ris(cites(*PAPERS)))):
        (tmp_path / name).write_text(text, encoding="utf-8")
        got = list(load_file(tmp_path / name))
        assert not [r for r in got if isinstance(r, Rejection)], (name, got)
        assert [p.paper_id for p in got] == [p.paper_id for p in PAPERS], name
        assert [p.year for p in got] == [p.year for p in PAPERS]
        assert got[0].title == OPTUNA.title and got[0].authors == OPTUNA.authors, name


def test_cli_writes_an_answers_references_as_bibtex_and_ris(tmp_path, monkeypatch, capsys):
    from conftest import SEEDS
    from rag.cli import main

    rispy = pytest.importorskip("rispy")
    monkeypatch.setenv("PAPERCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    assert main(["ingest", str(SEEDS)]) == 0
    capsys.readouterr()
    bib, ris = tmp_path / "refs.bib", tmp_path / "refs.ris"
    assert main(["ask", "How does PowerFlow reformulate unsupervised fine-tuning?", "--json",
                 "--bibtex", str(bib), "--ris", str(ris)]) == 0
    cited = json.loads(capsys.readouterr().out)["citations"]
    entries, records = _bibtex_entries(bib.read_text()), rispy.loads(ris.read_text())
    assert entries and len(entries) == len(records) == len(cited)
    assert [_unlatex(e["title"]) for e in entries] == [r["title"] for r in records]
    assert all(r["type_of_reference"] == "CONF" and r["year"] == "2026" for r in records)  # the seeds: venue, year


def test_an_author_with_and_in_the_name_stays_one_author(tmp_path):
    """A lab or company named "X and Y" must not come back from a reference manager as two people."""
    from rag.loaders import load_file

    lab = Paper(paper_id="doi:10.1000/lab", title="Scaling Reports", authors=["Research and Engineering Lab",
                "Ada Lovelace"], year=2024, abstract="We report scaling.")
    text = to_bibtex(cites(lab))
    (tmp_path / "lab.bib").write_text(text, encoding="utf-8")
    assert list(load_file(tmp_path / "lab.bib"))[0].authors == lab.authors
    entry = _bibtex_entries(text)[0]
    assert entry["author"].startswith("{Research and Engineering Lab} and ")
