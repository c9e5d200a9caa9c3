"""Hostile and careless inputs (issue 13): files that try to exhaust the server, text built to stall the
parsers, marks inside abstracts posing as citations, invisible characters, and settings or arguments a
user gets wrong. Each test names what a user would see go wrong without the fix."""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.loaders import estimate_records, load_file
from rag.records import Paper, Rejection


def load(path: Path) -> tuple[list[Paper], list[Rejection]]:
    items = list(load_file(path))
    return [i for i in items if isinstance(i, Paper)], [i for i in items if isinstance(i, Rejection)]


def jsonl(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


# --- 4: a .jsonl whose first line starts with "[" ----------------------------------------------------

def test_jsonl_whose_first_line_is_an_array_keeps_the_records_after_it(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text(jsonl('["header", "row"]', {"abstract": "First real abstract."}, {"abstract": "Second real abstract."}),
                 encoding="utf-8")
    papers, bad = load(f)
    assert [p.abstract for p in papers] == ["First real abstract.", "Second real abstract."]
    assert [str(r) for r in bad] == ["a.jsonl:line 1: not a JSON object (a list)"]
    # A line holding an array of records is read as those records, wherever it is.
    g = tmp_path / "b.jsonl"
    g.write_text(jsonl([{"abstract": "One."}, {"abstract": "Two."}], {"abstract": "Three."}), encoding="utf-8")
    papers, bad = load(g)
    assert [p.abstract for p in papers] == ["One.", "Two.", "Three."] and bad == []
    assert [p.position for p in papers] == [1, 2, 3]
    # A real JSON array spread over lines is still an array.
    h = tmp_path / "c.jsonl"
    h.write_text('[\n  {"abstract": "Alpha."},\n  {"abstract": "Beta."}\n]\n', encoding="utf-8")
    assert [p.abstract for p in load(h)[0]] == ["Alpha.", "Beta."]


# --- 5: gzip bombs and unbounded reads ----------------------------------------------------------------

BOMBS = {
    ".jsonl.gz": (jsonl({"abstract": "Before the bomb."}), b"x"),
    ".txt.gz": ("ICML 2026 Papers\n\nBefore the bomb.\n\n", b"x"),
    ".csv.gz": ("abstract\nBefore the bomb.\n", b"x"),
    ".bib.gz": ("@misc{a, abstract={Before the bomb.}}\n@misc{b, abstract={", b"x"),
}


@pytest.mark.parametrize("suffix", sorted(BOMBS))
def test_gzip_bomb_stops_at_the_decompression_cap_with_a_clear_error(tmp_path, monkeypatch, suffix):
    monkeypatch.setattr("rag.loaders._io.MIN_DECOMPRESSED_LIMIT", 1 << 20)  # a small cap keeps the test fast
    head, filler = BOMBS[suffix]
    f = tmp_path / f"bomb{suffix}"
    f.write_bytes(gzip.compress(head.encode() + filler * (40 << 20), compresslevel=9))  # 40 MB in ~40 KB
    assert f.stat().st_size < 100_000
    tracemalloc.start()
    try:
        papers, bad = load(f)
        n = estimate_records(f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if suffix != ".bib.gz":  # the .bib's first entry is complete; its second never closes within the cap
        assert [p.abstract for p in papers] == ["Before the bomb."]
    assert len(bad) == 1 and "decompresses to over" in bad[0].reason and "stopped reading" in bad[0].reason, bad
    assert bad[0].source == f.name
    assert n is None or n < 10
    assert peak < 12 << 20, f"reading a bomb held {peak / 1e6:.0f} MB"


def test_honest_gzip_file_is_not_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("rag.loaders._io.MIN_DECOMPRESSED_LIMIT", 1 << 20)
    f = tmp_path / "many.jsonl.gz"
    # 3 MB of ordinary records (well past the 1 MB floor), compressing about as well as real abstracts.
    import random

    rnd = random.Random(1)
    words = [f"w{rnd.randrange(5000)}" for _ in range(200_000)]
    recs = [{"abstract": " ".join(words[i : i + 50])} for i in range(0, len(words), 50)]
    f.write_bytes(gzip.compress(jsonl(*recs).encode()))
    papers, bad = load(f)
    assert bad == [] and len(papers) == len(recs)
    assert estimate_records(f) == len(recs)


def test_ui_record_estimate_is_the_capped_one_and_reads_in_blocks(tmp_path):
    import ui.librarytab

    assert ui.librarytab.estimate_records is estimate_records
    f = tmp_path / "oneline.txt.gz"  # a seed list whose one "paragraph" is 30 MB without a line break
    f.write_bytes(gzip.compress(b"ICML 2026 Papers\n\n" + b"y" * (30 << 20)))
    tracemalloc.start()
    try:
        estimate_records(f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"the estimate held {peak / 1e6:.0f} MB"


# --- 6, 7, 8: linear time -------------------------------------------------------------------------------

def _best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def growth(make, run, n: int, factor: int = 8) -> float:
    """How many times longer `run` takes on an input `factor` times larger: ~factor when linear,
    ~factor**2 when quadratic. The small input is measured right beside the large one (a ratio, not a
    time, so a slow or busy machine does not matter) and given a floor of 5 ms against timer noise."""
    small, big = make(n), make(n * factor)
    run(small)  # warm-up: imports, regex compilation
    return _best_of(lambda: run(big)) / max(_best_of(lambda: run(small)), 0.005)


LINEAR = 8 * 3  # factor 8: linear is ~8, quadratic ~64; 3x head-room for noise


def test_nested_bibtex_braces_are_stripped_in_linear_time(tmp_path):
    def make(n):
        f = tmp_path / f"nest{n}.bib"
        f.write_text("@misc{k, abstract={Deep " + "{" * n + "nesting" + "}" * n + " here.}}\n", encoding="utf-8")
        return f

    papers, bad = load(make(2000))
    assert bad == [] and papers[0].abstract == "Deep nesting here."
    assert growth(make, lambda f: list(load_file(f)), 2000) < LINEAR


def test_sentence_splitting_is_linear_and_overlong_abstracts_are_refused(tmp_path):
    from rag.reading.sentences import split_sentences

    assert split_sentences("We use e.g. Adam. It works. J. Smith agrees.") == ["We use e.g. Adam.", "It works.",
                                                                                "J. Smith agrees."]
    assert growth(lambda n: ". A" * n, split_sentences, 2000) < LINEAR
    f = tmp_path / "long.jsonl"
    f.write_text(jsonl({"abstract": "Fine abstract."}, {"abstract": ". A" * 16_000}), encoding="utf-8")
    papers, bad = load(f)
    assert [p.abstract for p in papers] == ["Fine abstract."]
    assert [str(r) for r in bad] == ["long.jsonl:line 2: abstract too long (48,000 characters; the limit is 20,000: "
                                     "is this a whole paper?)"]


# Pieces of text that stress sentence splitting, brace stripping, citation marks and math, repeated.
HOSTILE_UNITS = st.lists(st.sampled_from(list("{}[]$.!? Aa1\\\"',;\n@") + ["et al. ", ". A", "{\\emph ", "$x$", "e.g.",
                                                                           "[2]", "\\'e"]),
                         min_size=1, max_size=4).map("".join)


def _record_file(tmp_path: Path, fmt: str, unit: str, k: int) -> Path:
    abstract = unit * k
    flat = abstract.replace("\n", " ")
    if fmt == "jsonl":
        text = jsonl({"abstract": abstract})
    elif fmt == "csv":
        text = 'abstract\n"' + abstract.replace('"', '""') + '"\n'
    elif fmt == "txt":
        text = "ICML 2026 Papers\n\n" + flat.replace("\n", " ") + "\n"
    else:
        # BibTeX braces must balance: the unit's own are made parentheses, and k levels of nesting added.
        text = "@misc{k, abstract={" + "{" * k + flat.replace("{", "(").replace("}", ")") + "}" * k + "}}\n"
    f = tmp_path / f"r{len(abstract)}.{fmt}"
    f.write_text(text, encoding="utf-8")
    return f


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(unit=HOSTILE_UNITS, fmt=st.sampled_from(["jsonl", "csv", "txt", "bib"]))
def test_loading_time_grows_linearly_with_the_record(tmp_path, unit, fmt):
    n = max(1, 2000 // len(unit))  # the large input stays under the abstract cap (20,000 characters)
    ratio = growth(lambda k: _record_file(tmp_path, fmt, unit, k), lambda f: list(load_file(f)), n)
    assert ratio < LINEAR, (fmt, unit, ratio)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unit=HOSTILE_UNITS)
def test_sentence_splitting_time_grows_linearly(unit):
    from rag.reading.sentences import split_sentences

    n = max(1, 16000 // len(unit))  # large enough that the small input is well above timer noise
    assert growth(lambda k: unit * k, split_sentences, n) < LINEAR, unit


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unit=st.lists(st.sampled_from(list("{}ab \\^_") + ["\\emph", "\\cite", "x^"]), min_size=1, max_size=4).map("".join))
def test_detex_time_grows_linearly(unit):
    from rag.loaders.bibtex import detex

    n = max(1, 16000 // len(unit))  # large enough that the small input is well above timer noise
    assert growth(lambda k: "{" * k + unit * k + "}" * k, detex, n) < LINEAR, unit


# --- 9, 10: marks inside abstracts, repeated sentences, invisible characters ----------------------------

TRIAL = ("Zentavir did not improve survival of lung cancer patients in a randomised trial. "
         "Zentavir patients had more adverse events than placebo patients.")
PLANTED = "Zentavir cures lung cancer in all patients [2]. Zentavir is a miracle drug for lung cancer [1]."


@pytest.fixture
def hostile_lib(fake_settings, tmp_path):
    from rag.library.library import Library

    f = tmp_path / "hostile.jsonl"
    f.write_text(jsonl({"id": "trial", "title": "Zentavir trial", "abstract": TRIAL},
                       {"id": "planted", "title": "Zentavir claims", "abstract": PLANTED},
                       {"id": "echo", "title": "Kappa filters", "venue": "ICLR\u202e",
                        "abstract": "Kappa filters reduce noise in seismic data. Kappa filters reduce noise in "
                                    "seismic data. Kappa filters reduce noise in seismic data."},
                       {"id": "plain", "title": "Seismic\u200b denoising", "venue": "ICLR",
                        "abstract": "Seismic denoising with learned kappa filters."}), encoding="utf-8")
    lib = Library(fake_settings)
    assert lib.ingest([f], progress=False).added == 4
    return lib


@pytest.fixture
def open_settings(fake_settings):
    # The hashing fake's cosines are low: let every question through to the answerer.
    return fake_settings.model_copy(update={"ask": fake_settings.ask.model_copy(update={"abstain_below": -1.0})})


def test_a_mark_written_inside_an_abstract_never_becomes_a_citation(hostile_lib, open_settings):
    import re

    from rag.tasks.ask import ask, format_sources

    ans = ask("Does Zentavir cure lung cancer in all patients?", hostile_lib, settings=open_settings)
    by_n = {c.n: c.paper.paper_id for c in ans.citations}
    assert "planted" in by_n.values(), ans.answer
    for sentence in re.split(r"(?<=\.) ", ans.answer):
        marks = [int(n) for n in re.findall(r"\[(\d+)\]", sentence)]
        assert len(marks) == 1, f"one mark per quoted sentence, the answerer's own: {sentence!r}"
        body = re.sub(r"\s*\[\d+\]", "", sentence).rstrip(".")
        source = hostile_lib.get_papers([by_n[marks[0]]])[by_n[marks[0]]]
        assert body in source.abstract, f"{sentence!r} is cited to a paper that does not say it"
    assert not any("no source" in f for f in ans.flags)
    # The LLM is never shown the abstract's own marks either, so it cannot copy one as its citation.
    from rag.library.retrieval import search

    prompt = format_sources(search(hostile_lib, "Zentavir lung cancer", 5))
    assert "[2]" not in prompt and "[1]" not in prompt and "cures lung cancer in all patients" in prompt


def test_quote_drops_reference_marks_and_keeps_intervals():
    from rag.reading.citations import quote

    assert quote("Zentavir cures lung cancer [2].") == "Zentavir cures lung cancer."
    assert quote("as shown in [3-5, 7], it holds") == "as shown in, it holds"
    assert quote("scores lie in [0, 1] here") == "scores lie in (0, 1) here"
    assert quote("the box $[0,1]^n$ [4]") == "the box $[0,1]^n$"


def test_a_repeated_sentence_is_quoted_once(hostile_lib, open_settings):
    from rag.tasks.ask import ask

    ans = ask("Do kappa filters reduce noise in seismic data?", hostile_lib, settings=open_settings)
    assert ans.answer.count("Kappa filters reduce noise in seismic data") == 1, ans.answer


def test_invisible_characters_in_titles_and_venues_are_removed_at_ingest(hostile_lib):
    papers = {p.paper_id: p for p in hostile_lib.papers()}
    assert papers["echo"].venue == "ICLR" and papers["plain"].title == "Seismic denoising"
    assert hostile_lib.stats()["venues"] == {"?": 2, "ICLR": 2}
    from rag.loaders.common import clean_text

    assert clean_text("Ti\u202etle\u2066 with\u200d\u2060 marks\u00ad\ufeff") == "Title with marks"


# --- 11: arguments and settings a user gets wrong ---------------------------------------------------------

@pytest.fixture
def cli_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("PAPERCHAT_HOME", str(home))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    return home


@pytest.mark.parametrize("argv", [["search", "x", "--k", "-1"], ["search", "x", "--k", "0"],
                                  ["cite", "a claim", "--k", "-5"]])
def test_non_positive_k_is_refused_with_a_clear_message(cli_home, capsys, argv):
    from rag.cli import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert "--k: must be at least 1" in capsys.readouterr().err


def test_library_layer_refuses_non_positive_k(hostile_lib):
    from rag.errors import UserError
    from rag.library.retrieval import search
    from rag.tasks.cite import cite

    for k in (0, -1):
        with pytest.raises(UserError, match="at least 1"):
            search(hostile_lib, "kappa", k)
        with pytest.raises(UserError, match="at least 1"):
            cite("kappa filters", hostile_lib, k=k)


def test_a_backwards_year_range_means_the_years_between_everywhere(cli_home, tmp_path, capsys):
    from rag.cli import main
    from rag.library.retrieval import Filters
    from ui.filters import make_filters

    f = tmp_path / "years.jsonl"
    f.write_text(jsonl(*[{"title": f"Paper {y}", "year": y, "abstract": f"Graph colouring results of {y}."}
                         for y in (2019, 2022, 2031)]), encoding="utf-8")
    assert main(["ingest", str(f)]) == 0
    capsys.readouterr()
    assert Filters(year_from=2030, year_to=2020) == Filters(year_from=2020, year_to=2030)
    assert make_filters("", "2030", "2020") == Filters(year_from=2020, year_to=2030)
    main(["search", "graph colouring", "--year-from", "2030", "--year-to", "2020", "--json"])
    assert [h["year"] for h in json.loads(capsys.readouterr().out)] == [2022]


def test_bad_settings_are_one_clear_line(cli_home, tmp_path, monkeypatch, capsys):
    from rag.cli import main

    a_file = tmp_path / "passwd"
    a_file.write_text("root:x:0:0\n")
    monkeypatch.setenv("PAPERCHAT_HOME", str(a_file))
    assert main(["stats"]) == 2
    assert f"bad setting PAPERCHAT_HOME: {a_file} is a file, not a folder" in capsys.readouterr().err

    monkeypatch.setenv("PAPERCHAT_HOME", str(cli_home))
    monkeypatch.setenv("PAPERCHAT_ASK__MAX_SENTENCES", "0")
    assert main(["ask", "anything"]) == 2
    err = capsys.readouterr().err
    assert "bad setting PAPERCHAT_ASK__MAX_SENTENCES" in err and "greater than or equal to 1" in err
    monkeypatch.delenv("PAPERCHAT_ASK__MAX_SENTENCES")

    assert main(["--library", "a" * 100, "stats"]) == 2
    assert "library name is 100 characters long; the limit is 63" in capsys.readouterr().err
    monkeypatch.setenv("PAPERCHAT_LIBRARY", "b" * 64)
    assert main(["stats"]) == 2
    assert "PAPERCHAT_LIBRARY: library name is 64 characters long; the limit is 63" in capsys.readouterr().err
    monkeypatch.setenv("PAPERCHAT_LIBRARY", "my library!")
    assert main(["stats"]) == 2
    assert "must start with a letter or digit and hold only letters, digits" in capsys.readouterr().err


@pytest.mark.parametrize("var, value, said", [
    ("PAPERCHAT_HOME", "", "bad setting PAPERCHAT_HOME: is empty: unset it for ~/.paperchat, or name a folder"),
    ("PAPERCHAT_RETRIEVAL__RRF_K", "-1", "bad setting PAPERCHAT_RETRIEVAL__RRF_K: Input should be greater than or equal to 1"),
    ("PAPERCHAT_RETRIEVAL__DENSE_WEIGHT", "nan", "bad setting PAPERCHAT_RETRIEVAL__DENSE_WEIGHT: Input should be a finite number"),
    ("PAPERCHAT_RETRIEVAL__DENSE_WEIGHT", "1.5", "PAPERCHAT_RETRIEVAL__DENSE_WEIGHT: Input should be less than or equal to 1"),
    ("PAPERCHAT_ASK__ABSTAIN_BELOW", "inf", "bad setting PAPERCHAT_ASK__ABSTAIN_BELOW: Input should be a finite number"),
    ("PAPERCHAT_ASK__DENSE_WEIGHT", "-0.1", "bad setting PAPERCHAT_ASK__DENSE_WEIGHT: Input should be greater than or equal to 0"),
])
def test_settings_that_would_misbehave_are_refused_in_one_line(cli_home, tmp_path, monkeypatch, capsys, var, value, said):
    """Issue 28 item 14: an empty home wrote chroma/ into the current folder; rrf_k=-1 divided by zero; nan
    weights printed [nan] scores."""
    from rag.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAPERCHAT_HOME", str(cli_home))
    monkeypatch.setenv(var, value)
    assert main(["search", "graph colouring"]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "chroma").exists() and not (tmp_path / "libraries").exists()


@pytest.mark.parametrize("argv, said", [
    (["compare", "attention", "--k", "10000000"], "argument --k: must be at most 100 (rows in one table), got 10000000"),
    (["search", "attention", "--k", "10000000"], "argument --k: must be at most 1000 (results in one search)"),
    (["cite", "attention helps", "--k", "5000"], "argument --k: must be at most 100"),
])
def test_k_has_an_upper_bound_said_in_one_line(cli_home, capsys, argv, said):
    """Issue 28 item 11: `compare attention --k 10000000` ran 55 s and took 1.96 GB."""
    from rag.cli import main

    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and said in capsys.readouterr().err


def test_library_calls_refuse_a_k_past_the_cap(fake_library):
    from rag.errors import UserError
    from rag.library.retrieval import search
    from rag.tasks.compare import compare

    with pytest.raises(UserError, match="must be at most 1000"):
        search(fake_library, "attention", k=10**7)
    with pytest.raises(UserError, match="from 1 to 100"):
        compare("attention", fake_library, settings=fake_library.settings, k=10**7)


def test_a_huge_title_is_cut_and_said_and_chunks_stay_small(fake_library, tmp_path):
    """Issue 28 item 10: a 200,000-character title was copied into each of a record's chunks (5 GB, 126 s)."""
    sentences = " ".join(f"Sentence {i} reports a measured gain of {i} points." for i in range(60))
    title = "Deep " + "very " * 4000 + "networks"  # 20,013 characters (the probe's was 200,000)
    f = tmp_path / "huge-title.jsonl"
    f.write_text(json.dumps({"id": "t1", "title": title, "abstract": sentences}) + "\n"
                 + json.dumps({"id": "t2", "title": "A normal title", "abstract": "A normal abstract."}) + "\n")
    r = fake_library.ingest([f], progress=False)
    assert (r.added, r.rejected) == (2, 0)
    assert r.notes == ["huge-title.jsonl: record 1: title cut to 299 characters (it had 20,013; the limit is 300)"]
    stored = fake_library.catalogue["t1"]["title"]
    assert stored.startswith("Deep very very") and stored.endswith("very…") and len(stored) <= 301
    assert fake_library.catalogue["t2"]["title"] == "A normal title"
    texts = list(fake_library.chunk_texts(fake_library.collections.chunks.get(include=[])["ids"]).values())
    assert max(len(t) for t in texts) <= 2 * fake_library.settings.chunk.max_chars
    assert fake_library.ingest([f], progress=False).unchanged == 2  # the same cut each time: nothing changes
