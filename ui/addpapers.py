"""The Library tab's "Add papers": a service, a query, years and a limit -> "about N papers" -> a fetch with a
progress bar (rag.fetch) -> the papers join the table, the map and the filters under the query's source."""

from __future__ import annotations

from collections.abc import Callable

import gradio as gr

from rag.fetch.records import NAMES, SERVICES, FetchQuery
from rag.fetch.run import dry_run, fetch
from rag.settings import Settings

from ui.render import md
from ui.streaming import error_text

CHOICES = [(NAMES[s], s) for s in SERVICES]
HINTS = {"openalex": "words, AND / OR / NOT", "arxiv": "cat:cs.LG AND ti:diffusion", "s2": '"graph neural" + molecules',
         "pubmed": "asthma[MeSH] AND children[tiab]"}


class AddPapers:
    def __init__(self, settings: Settings, writer: Callable):
        self.settings, self.writer = settings, writer

    def query(self, service, text, since, until, limit) -> FetchQuery:
        year = lambda v: int(v) if v not in (None, "") and int(v) > 0 else None  # noqa: E731
        return FetchQuery(service=service or "openalex", query=(text or "").strip(), since=year(since),
                          until=year(until), limit=int(limit or self.settings.fetch.limit))

    def estimate(self, service, text, since, until, limit) -> str:
        try:
            q = self.query(service, text, since, until, limit)
            n = dry_run(q, self.settings)
        except Exception as exc:  # noqa: BLE001 - one line for the user
            return f"**Could not ask:** {md(error_text(exc))}"
        return f"About **{n:,}** papers match on {NAMES[q.service]}; a fetch brings **{min(n, q.limit):,}** (limit {q.limit:,})."

    def run(self, service, text, since, until, limit, progress=gr.Progress()) -> str:
        try:
            q = self.query(service, text, since, until, limit)
            progress((0, q.limit), desc=f"Fetching from {NAMES[q.service]}", unit="papers")

            def on_progress(n: int, total: int | None) -> None:
                progress((n, total), desc=f"Fetching from {NAMES[q.service]}", unit="papers")

            report = fetch(q, self.settings, self.writer, progress=False, on_progress=on_progress)
        except Exception as exc:  # noqa: BLE001 - one line for the user
            return f"**Could not fetch:** {md(error_text(exc))}"
        ing = report.ingest
        lines = [f"**{md(report.source_id)}** — {md(report.summary())}; added {ing.get('added', 0)}, "
                 f"updated {ing.get('updated', 0)}, unchanged {ing.get('unchanged', 0)}, removed {ing.get('removed', 0)} "
                 f"({report.papers} papers in the library)"]
        lines += [f"- skipped {md(s)}" for s in report.skipped[:10]]
        return "\n".join(lines)

    def build(self) -> None:
        with gr.Accordion("Add papers from OpenAlex, arXiv, Semantic Scholar or PubMed", open=False,
                          elem_id="pc-addpapers"):
            with gr.Row():
                self.service = gr.Dropdown(CHOICES, value="openalex", label="Service", scale=1, min_width=140)
                self.text = gr.Textbox(label="Query", placeholder=HINTS["openalex"], scale=3)
            with gr.Row():
                self.since = gr.Number(None, label="From year (0: any)", precision=0, minimum=0, min_width=90)
                self.until = gr.Number(None, label="To year (0: any)", precision=0, minimum=0, min_width=90)
                self.limit = gr.Number(label="At most", value=self.settings.fetch.limit, precision=0, minimum=1,
                                       min_width=90)
            with gr.Row():
                self.count = gr.Button("How many?", size="sm", elem_id="pc-fetch-count")
                self.go = gr.Button("Fetch", variant="primary", size="sm", elem_id="pc-fetch")
            self.out = gr.Markdown("", elem_id="pc-fetch-result")

    def wire(self, refresh: list[dict]) -> None:
        inputs = [self.service, self.text, self.since, self.until, self.limit]
        self.service.change(lambda s: gr.Textbox(placeholder=HINTS.get(s, "")), self.service, self.text,
                            api_visibility="private", show_progress="hidden", queue=False)
        self.count.click(self.estimate, inputs, self.out, api_visibility="private", show_progress="minimal")
        event = self.go.click(self.run, inputs, self.out, api_name="fetch", concurrency_limit=1,
                              concurrency_id="ingest", show_progress="full")
        for step in refresh:
            event = event.then(**step)
