"""`paperchat fetch`: abstracts brought from OpenAlex, arXiv, Semantic Scholar and PubMed (and a DOI list
resolved through OpenAlex, Crossref or arXiv), kept as a JSONL snapshot under the library's home and
ingested like any file (rag.library's sources rules hold for it).

One module per service (`openalex`, `arxiv`, `s2`, `pubmed`, `crossref`), each turning the service's own
shape into `records.Fetched`; what they share: the polite HTTP client (`http`: contact e-mail, pacing,
backoff on 429/503), the query and its record (`records`), the resumable snapshot (`snapshot`), the ids a
paper is stored under (`ids`), and the run (`run`). Imported only by the `fetch` command and the UI's
"Add papers", so `search` and `ask` never load it.
"""
