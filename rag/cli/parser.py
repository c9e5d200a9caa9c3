"""The `paperchat` command line: every command, its arguments and options, and their help."""

from __future__ import annotations

import argparse
from pathlib import Path

from rag.settings import MAX_K
from rag.tasks.comparison import MAX_ROWS


def positive(text: str) -> int:
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if k < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (how many results to show), got {k}")
    return k


def at_most(most: int, what: str):
    """A --k type: a whole number from 1 to `most` (a search for ten million results cost 55 s and 2 GB)."""
    def k_type(text: str) -> int:
        k = positive(text)
        if k > most:
            raise argparse.ArgumentTypeError(f"must be at most {most} ({what}), got {k}")
        return k
    return k_type


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="paperchat", description="Ask questions of paper abstracts; every answer cited.")
    ap.add_argument("--library", help="library name (default: PAPERCHAT_LIBRARY or 'default')")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("ingest", help="add abstract lists (files or folders) to the library")
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--map", action="append", default=[], metavar="OURS=THEIRS",
                   help="field mapping for JSON/CSV, e.g. --map abstract=summary (repeatable)")
    p.add_argument("--source", metavar="NAME",
                   help="name the file's source outright (one file): a file ingested under the same name later "
                        "replaces its records, wherever it lives")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("papers", help="list the catalogue")
    p.add_argument("--json", action="store_true")

    sub.add_parser("stats", help="counts per venue and year").add_argument("--json", action="store_true")

    p = sub.add_parser("remove", help="take papers, or a whole source (file), out of the library")
    p.add_argument("ids", nargs="*", metavar="PAPER_ID", help="paper ids as `papers --json` lists them")
    p.add_argument("--source", metavar="FILE",
                   help="every paper of this source (a file name, its path, or a source id from `sources`); papers "
                        "another source also holds stay")
    p.add_argument("--json", action="store_true")

    sub.add_parser("sources", help="the library's sources (files) with their paper counts").add_argument(
        "--json", action="store_true")

    p = sub.add_parser("fetch", help="bring abstracts from OpenAlex, arXiv, Semantic Scholar or PubMed into the library",
                       description="SERVICE QUERY, or --dois FILE. The query is the service's own syntax, passed "
                                   "through (arXiv: 'cat:cs.LG AND ti:diffusion'; PubMed: 'asthma[MeSH]'; Semantic "
                                   "Scholar: '\"graph neural\" + molecules'). The papers are kept as a snapshot "
                                   "under the library's home and ingested as one source named by the query; fetching "
                                   "the same query again updates it. Needs the network; files ingest offline.")
    p.add_argument("service", nargs="?", choices=["openalex", "arxiv", "s2", "pubmed"])
    p.add_argument("query", nargs="?", default="")
    p.add_argument("--dois", type=Path, metavar="FILE",
                   help="one DOI or arXiv id a line, resolved through OpenAlex (Crossref or arXiv when it does not know one)")
    p.add_argument("--since", type=int, metavar="YEAR")
    p.add_argument("--until", type=int, metavar="YEAR")
    p.add_argument("--author", default="", metavar="NAME")
    p.add_argument("--limit", type=positive, metavar="N",
                   help="papers at most (default PAPERCHAT_FETCH__LIMIT, 300; at most PAPERCHAT_FETCH__MAX_LIMIT)")
    p.add_argument("--dry-run", action="store_true", help="say how many papers would come; fetch nothing")
    p.add_argument("--json", action="store_true")

    def add_filters(p):
        p.add_argument("--venue")
        p.add_argument("--year-from", type=int)
        p.add_argument("--year-to", type=int)
        p.add_argument("--author", help='papers by this person ("Hinton" finds "Geoffrey E. Hinton")')
        p.add_argument("--collection", help="papers in this Zotero collection (its subcollections too)")
        p.add_argument("--papers", metavar="ID,...", help="only these papers (ids as `papers --json` lists them)")

    def add_exports(p):
        p.add_argument("--bibtex", type=Path, metavar="FILE", help="write the references as BibTeX")
        p.add_argument("--ris", type=Path, metavar="FILE", help="write the references as RIS (Zotero, EndNote, ...)")

    p = sub.add_parser("search", help="find papers")
    p.add_argument("query")
    p.add_argument("--k", type=at_most(MAX_K, "results in one search"), default=10)
    add_filters(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("ask", help="a cited answer to a question")
    p.add_argument("question")
    add_filters(p)
    p.add_argument("--k", type=positive, default=15, help="a question asking for papers ('Which papers study X?') "
                                                            "lists at most this many (default 15), as summarise --k")
    p.add_argument("--json", action="store_true")
    add_exports(p)

    p = sub.add_parser("summarise", aliases=["summarize"], help="themes of a research area, cited")
    p.add_argument("topic")
    add_filters(p)
    p.add_argument("--k", type=positive, default=15, help="papers at most (default 15); the summary says how "
                                                            "many more the area holds")
    p.add_argument("--json", action="store_true")
    p.add_argument("--latex", type=Path, metavar="FILE.tex",
                   help="also write the summary as LaTeX prose with \\cite{key} marks, and FILE.bib beside it")
    add_exports(p)

    p = sub.add_parser("compare", help="a literature table: each paper's problem, approach, finding and setting, cited")
    p.add_argument("topic", nargs="?", default="", help="the topic (optional with --papers)")
    add_filters(p)
    p.add_argument("--k", type=at_most(MAX_ROWS, "rows in one table"), default=15,
                   help=f"papers at most (default 15, at most {MAX_ROWS})")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="rows and cells in full (sentence, role, score, paper id)")
    fmt.add_argument("--csv", action="store_true", help="the table as CSV")
    fmt.add_argument("--markdown", action="store_true", help="the table as Markdown")
    add_exports(p)  # the rows' references
    p.add_argument("--width", type=positive, help="terminal table width (default: the terminal's, at most 100 "
                                                    "when not a terminal)")

    p = sub.add_parser("cite", help="abstracts that support or contradict a claim")
    p.add_argument("claim")
    add_filters(p)
    p.add_argument("--k", type=at_most(MAX_ROWS, "abstracts weighed against one claim"), default=5)
    p.add_argument("--json", action="store_true")
    add_exports(p)

    p = sub.add_parser("serve", help="open the chat UI")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--seed", action="store_true", help="index the bundled seeds/ first if the library is empty")

    p = sub.add_parser("map", help="a map of the library: every paper placed by its vector, topics labelled")
    p.add_argument("--out", type=Path, metavar="FILE", help="write a self-contained HTML page (opens offline)")
    p.add_argument("--json", action="store_true", help="each paper's coordinates and topic")
    p.add_argument("--refit", action="store_true", help="compute the layout afresh instead of updating it")

    p = sub.add_parser("eval", help="measure retrieval, answer and summary quality on a labelled set")
    esub = p.add_subparsers(dest="what", required=True)
    e = esub.add_parser("retrieval", help="nDCG@10, Recall@100, MRR@10 on a BEIR-format folder")
    e.add_argument("--beir", type=Path, required=True)
    e.add_argument("--split", default="test")
    e.add_argument("--json", action="store_true")

    def add_run(e, what: str):
        e.add_argument("--split", default="test", help="the split to report (default test; 'all' for every one)")
        e.add_argument("--limit", type=positive, metavar="N", help=f"only the first N {what} (a quick look)")
        e.add_argument("--fresh", action="store_true", help=f"ask every {what[:-1]} again instead of carrying on")
        e.add_argument("--json", action="store_true", help="the report with every figure and each "
                                                           f"{what[:-1]}'s score")

    e = esub.add_parser("answers", help="ask a set's questions of the current answerer (extractive, or the "
                                        "configured model); hit rate, citation shares, abstentions, latency")
    src = e.add_mutually_exclusive_group(required=True)
    src.add_argument("--mlqa", type=Path, metavar="DIR", help="an mlqa folder (library.jsonl, questions.jsonl)")
    src.add_argument("--pubmedqa", type=Path, metavar="FILE", help="PubMedQA PQA-L's ori_pqal.json")
    add_run(e, "questions")
    e = esub.add_parser("summaries", help="summarise a set's research areas; precision, core recall, empty ones")
    e.add_argument("--mlqa", type=Path, metavar="DIR", required=True, help="an mlqa folder (library.jsonl, topics.jsonl)")
    e.add_argument("--areas", type=Path, metavar="FILE", help="research areas judged over DIR's library, in "
                                                               "topics.jsonl's shape (default DIR/topics.jsonl)")
    add_run(e, "areas")
    return ap
