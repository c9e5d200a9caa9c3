"""The Library tab: add abstract lists (uploads), see what the library holds, search its papers."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from pathlib import Path

import gradio as gr

from rag.library import Library
from rag.loaders import estimate_records  # capped like loading: a bomb costs no more here
from rag.retrieval import search
from rag.settings import Settings

from . import render
from .filters import make_filters
from .render import h, md
from .streaming import error_text

UPLOAD_TYPES = [".txt", ".jsonl", ".json", ".gz", ".csv", ".bib", ".ris"]
_MAX_ROWS = 1000  # papers shown in the Library table


class LibraryTab:
    """Uploads go through a second Library object (same store, same embedder) so that a reader never
    sees a catalogue half-mutated by a writer; they run one at a time in their own concurrency group."""

    def __init__(self, library: Library, settings: Settings, upload_root: Path):
        self.library = library
        self.settings = settings
        self.upload_root = upload_root
        self._writer: Library | None = None
        self._writer_lock = threading.Lock()

    def writer(self) -> Library:
        with self._writer_lock:
            if self._writer is None:
                self._writer = Library(self.settings, embedder=self.library.embedder, client=self.library.client)
            return self._writer

    # -- what the library holds ---------------------------------------------------

    def stats_html(self) -> str:
        st = self.library.stats()

        def bars(counts: dict) -> str:
            if not counts:
                return '<p class="pc-muted">none yet</p>'
            top = max(counts.values()) or 1
            rows = "".join(
                f'<div class="pc-bar-row"><span class="pc-bar-label">{h(k)}</span>'
                f'<span class="pc-bar"><span style="width:{max(2, round(100 * v / top))}%"></span></span>'
                f'<span class="pc-bar-n">{v}</span></div>' for k, v in counts.items())
            return f'<div class="pc-bars">{rows}</div>'

        return (f'<div class="pc-stats"><div class="pc-stats-head"><b>{st["papers"]}</b> papers · {st["chunks"]} chunks'
                f' · embedder {h(st["embedder"])}</div>'
                f'<div class="pc-stats-cols"><div><div class="pc-label">Per venue</div>{bars(st["venues"])}</div>'
                f'<div><div class="pc-label">Per year</div>{bars(st["years"])}</div></div></div>')

    def paper_rows(self, query: str = "", venue: str = "") -> tuple[list[list], str]:
        query = (query or "").strip()
        if query:
            hits = search(self.library, query, 50, make_filters(venue, None, None))
            rows = [[h_.paper.title + (" *" if h_.paper.title_derived else ""), h_.paper.venue, h_.paper.year or "",
                     h_.paper.source, h_.paper.position, round(h_.score, 3)] for h_ in hits]
            note = f"{len(rows)} best matches for “{md(query)}”" if rows else f"No paper matches “{md(query)}”."
        else:
            papers = [p for p in self.library.papers() if not venue or p.venue.lower() == venue.lower()]
            rows = [[p.title + (" *" if p.title_derived else ""), p.venue, p.year or "", p.source, p.position, ""]
                    for p in papers[:_MAX_ROWS]]
            note = f"{len(papers)} papers" + (f" (first {_MAX_ROWS} shown; search to narrow)" if len(papers) > _MAX_ROWS else "")
        if any(str(r[0]).endswith(" *") for r in rows):
            note += " · * title derived from the abstract"
        return rows, note

    def library_view(self, query: str = "", venue: str = ""):
        rows, note = self.paper_rows(query, venue)
        return self.stats_html(), rows, note

    # -- uploads --------------------------------------------------------------------

    def stage_uploads(self, files: list) -> Path:
        """Copy uploads into a fresh temp dir under sanitised basenames (the name becomes the papers' source)."""
        dest = Path(tempfile.mkdtemp(dir=self.upload_root))
        used: set[str] = set()
        for f in files:
            src = Path(getattr(f, "name", None) or str(f))
            orig = getattr(f, "orig_name", None) or src.name
            name = render.safe_filename(orig)
            stem, dot, ext = name.partition(".")
            i = 2
            while name.lower() in used:
                name = f"{stem}-{i}{dot}{ext}"
                i += 1
            used.add(name.lower())
            shutil.copyfile(src, dest / name)
        return dest

    def ingest(self, files, progress=gr.Progress()):
        files = [f for f in (files or []) if f]
        if not files:
            return "Choose one or more files first (.txt, .jsonl, .json, .jsonl.gz, .csv, .bib or .ris)."
        staged = None
        try:
            staged = self.stage_uploads(files)
            names = sorted(p.name for p in staged.iterdir())
            total = sum(estimate_records(p) or 0 for p in staged.iterdir()) or None
            progress((0, total), desc="Indexing abstracts", unit="abstracts")

            def on_progress(n: int) -> None:
                progress((n, total if total and n <= total else None), desc="Indexing abstracts", unit="abstracts")

            # Upload paths are temporary: a re-upload is recognised by its records (rag/sources.py).
            report = self.writer().ingest(sorted(staged.iterdir()), on_progress=on_progress, remember_paths=False)
        except Exception as exc:  # noqa: BLE001 - shown to the user as one line
            return f"**Could not ingest:** {md(error_text(exc))}"
        finally:
            if staged is not None:
                shutil.rmtree(staged, ignore_errors=True)
            _forget_uploads(files)
        lines = [f"**{md(', '.join(names))}** — {md(report.summary())} "
                 f"({report.seconds:.1f} s; {len(self.library)} papers in the library)"]
        if report.rejections:
            lines.append("")
            lines.append(f"Rejected ({len(report.rejections)}):")
            shown = report.rejections[:50]
            lines += [f"- {md(str(r))}" for r in shown]
            if len(report.rejections) > len(shown):
                lines.append(f"- … and {len(report.rejections) - len(shown)} more")
        if report.notes:
            lines += ["", "Repeated records (each kept once):"] + [f"- {md(n)}" for n in report.notes[:20]]
        return "\n".join(lines)

    # -- layout and events ----------------------------------------------------------

    def build(self) -> None:
        """The tab's components (inside an open gr.Tab); events are wired by wire()."""
        with gr.Row(equal_height=False):
            with gr.Column(scale=4, min_width=320):
                gr.Markdown("#### Add abstract lists")
                self.files = gr.File(file_count="multiple", file_types=UPLOAD_TYPES,
                                     label="Files: .txt, .jsonl, .json, .jsonl.gz, .csv, .bib, .ris", elem_id="pc-upload",
                                     height=140)
                self.add = gr.Button("Add to library", variant="primary", elem_id="pc-add")
                self.ingest_out = gr.Markdown("", elem_id="pc-ingest-result", min_height=96)
                gr.Markdown("#### In the library")
                self.stats = gr.HTML(elem_id="pc-stats")
            with gr.Column(scale=7, min_width=420):
                with gr.Row():
                    self.query = gr.Textbox(placeholder="Search titles and abstracts…", show_label=False,
                                            scale=6, container=False, elem_id="pc-lib-search")
                    self.go = gr.Button("Search", scale=1, min_width=90)
                self.note = gr.Markdown(elem_id="pc-lib-note")
                self.table = gr.Dataframe(
                    headers=["Title", "Venue", "Year", "File", "#", "Score"],
                    datatype=["str", "str", "str", "str", "number", "str"],
                    interactive=False, wrap=True, elem_id="pc-papers", max_height=640,
                    column_widths=["46%", "8%", "7%", "26%", "5%", "8%"],
                )

    def wire(self, demo: gr.Blocks, after_ingest: list[dict]) -> None:
        """Events of the tab; `after_ingest` are further steps (as .then() kwargs) once papers were added,
        e.g. refreshing the chat's filters and the header."""
        outputs = [self.stats, self.table, self.note]
        demo.load(self.library_view, None, outputs, api_visibility="private", show_progress="hidden")
        self.go.click(self.library_view, [self.query], outputs, api_name="papers", show_progress="minimal")
        self.query.submit(self.library_view, [self.query], outputs, api_visibility="private", show_progress="minimal")
        event = self.add.click(lambda: gr.Button("Indexing…", interactive=False), None, self.add,
                               api_visibility="private", show_progress="hidden", queue=False).then(
            self.ingest, [self.files], [self.ingest_out], api_name="ingest", concurrency_limit=1,
            concurrency_id="ingest", show_progress="full").then(
            lambda: (None, gr.Button("Add to library", interactive=True)), None, [self.files, self.add],
            api_visibility="private", show_progress="hidden").then(
            self.library_view, [self.query], outputs, api_visibility="private", show_progress="hidden")
        for step in after_ingest:
            event = event.then(**step)


def _forget_uploads(files: list) -> None:
    """Delete Gradio's cached copies of uploads once they are ingested (or refused): a shared server
    otherwise keeps every upload, bombs included, until it restarts. Only files inside Gradio's upload
    folder are touched."""
    from gradio.utils import get_upload_folder, is_in_or_equal

    root = get_upload_folder()
    for f in files:
        path = Path(getattr(f, "name", None) or str(f))
        if is_in_or_equal(path, root) and path.is_file():
            with contextlib.suppress(OSError):
                path.unlink()
                path.parent.rmdir()  # Gradio keeps each upload in a folder of its own; gone when empty
