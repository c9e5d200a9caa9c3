"""The Library tab: add abstract lists (uploads), see what the library holds, search its papers, open a
paper's card (a row click), tick papers to ask about, remove papers or whole files (ui/libraryedit.py)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from pathlib import Path

import gradio as gr

from rag.library.library import Library
from rag.loaders import estimate_records  # capped like loading: a bomb costs no more here
from rag.library.retrieval import library_search
from rag.reading.roles import roles_of
from rag.reading.sentences import split_sentences
from rag.settings import Settings

from ui import markup, render
from ui.addpapers import AddPapers
from ui.chattab import MATH
from ui.filters import make_filters
from ui.libraryedit import LibraryEdit
from ui.papercard import empty_card, paper_card
from ui.render import h, md
from ui.streaming import error_text


UPLOAD_TYPES = [".txt", ".jsonl", ".json", ".gz", ".csv", ".bib", ".ris"]
_MAX_ROWS = 1000  # papers shown in the Library table
HEADERS = ["✓", "Title", "Venue", "Year", "File", "#", "Score"]
BOX, TICKED = "☐", "☑"  # the ✓ column: a click on it ticks or unticks the row's paper (kept per session)
TICK, TITLE, FILE, POS = 0, 1, 4, 5  # column positions
# Short columns sized for their content (no "NeurIP S" / "Venu e" wraps); the title takes the rest. They add up
# to 736 px at 800 px wide (the page's width less its margins): the whole table fits, # and Score in view.
WIDTHS = ["36px", "34%", "72px", "56px", "216px", "36px", "64px"]  # a 24-character file name on one line
# The table's column is at least this wide: narrower (1024 px, the card beside it) the title column fell to 187 px
# and the table ran past its box; below it the card goes under the table instead.
TABLE_MIN = 680


def row_key(source: str, position) -> str:
    """A table row's paper: (file, record number) is unique in a library, and survives the table's sorting."""
    try:
        position = int(float(position))
    except (TypeError, ValueError):
        pass
    return f"{source}\x1f{position}"


class LibraryTab:
    """Uploads go through a second Library object (same store, same embedder) so that a reader never
    sees a catalogue half-mutated by a writer; they run one at a time in their own concurrency group."""

    def __init__(self, library: Library, settings: Settings, upload_root: Path):
        self.library = library
        self.settings = settings
        self.upload_root = upload_root
        self._writer: Library | None = None
        self._writer_lock = threading.Lock()
        self.edit = LibraryEdit(library, self.writer)
        self.fetcher = AddPapers(settings, self.writer)  # "Add papers" from a service (rag.fetch)

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

    def paper_rows(self, query: str = "", venue: str = "", ticked: list[str] | None = None
                   ) -> tuple[list[list], str, dict[str, str]]:
        """The table's rows (tick, title as Markdown, venue, year, file, record, score), the line above it,
        and each row's paper id by row_key."""
        query = (query or "").strip()
        if query:
            filters = make_filters(venue, None, None)
            found = library_search(self.library, query, filters)  # the papers above the relevance cut-off
            hits, note = found.hits, md(found.note)
            scored = [(x.paper, f"{x.score:.2f}") for x in hits]  # text: the column is of strings (a number showed blank)
        else:
            papers = [p for p in self.library.papers() if not venue or p.venue.lower() == venue.lower()]
            scored = [(p, "") for p in papers[:_MAX_ROWS]]
            note = f"{len(papers)} paper{'s' if len(papers) != 1 else ''}" + (f" (first {_MAX_ROWS} shown; search to narrow)" if len(papers) > _MAX_ROWS else "")
        ticked = set(ticked or [])
        rows = [[TICKED if p.paper_id in ticked else BOX, markup.markdown(p.title) + (" \\*" if p.title_derived else ""), p.venue, p.year or "",
                 p.source, p.position, score] for p, score in scored]
        if any(p.title_derived for p, _ in scored):
            note += " · \\* title derived from the abstract"
        note += " · click a row for the paper's card; tick papers to ask about them or remove them"
        return rows, note, {row_key(p.source, p.position): p.paper_id for p, _ in scored}

    def library_view(self, query: str = "", ticked: list[str] | None = None):
        ticked = [i for i in (ticked or []) if i in self.library.catalogue]  # removed papers drop out
        rows, note, keys = self.paper_rows(query, "", ticked)
        return (self.stats_html(), rows, note, keys, gr.Dropdown(choices=self.edit.source_choices(), value=None),
                ticked, self.ask_label(ticked), self.edit.ticked_label(ticked))

    @staticmethod
    def ask_label(ticked: list[str] | None):
        n = len(ticked or [])
        return gr.Button(f"Ask about these ({n})" if n else "Ask about these", interactive=bool(n))

    # -- one paper, ticked papers ---------------------------------------------------

    def card_of(self, pid: str) -> str:
        paper = self.library.get_papers([pid]).get(pid)
        if paper is None:
            return empty_card("This paper is no longer in the library.")
        sentences = split_sentences(paper.abstract)
        roles = roles_of([paper], self.library.text_embedder)[0]
        if set(roles) <= {"other"}:  # no roles known (an embedder the classifier was not trained on)
            roles = []
        return paper_card(paper, sentences, roles)

    def on_row(self, keys: dict | None, ticked: list[str] | None, table, evt: gr.SelectData):
        """A row click: that paper's card; a click in the ✓ column ticks or unticks it instead."""
        skip = gr.skip()
        row = list(evt.row_value or [])
        col = evt.index[1] if isinstance(evt.index, (list, tuple)) and len(evt.index) > 1 else None
        key = row_key(row[FILE], row[POS]) if len(row) > POS else None
        pid = (keys or {}).get(key)
        if not pid:
            return skip, skip, skip, skip, skip, skip, skip
        if col != TICK:
            return self.card_of(pid), gr.Group(visible=True), pid, skip, skip, skip, skip
        ticked = list(ticked or [])
        ticked = [i for i in ticked if i != pid] if pid in ticked else ticked + [pid]
        rows = table.values.tolist() if hasattr(table, "values") else [list(r) for r in table]
        for r in rows:  # the clicked paper's row, wherever sorting put it
            if len(r) > POS and row_key(r[FILE], r[POS]) == key:
                r[TICK] = TICKED if pid in ticked else BOX
        return (skip, skip, skip, ticked, gr.Dataframe(value=rows, headers=HEADERS), self.ask_label(ticked),
                self.edit.ticked_label(ticked))

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

            # Upload paths are temporary: a re-upload is recognised by its records (rag/library/sources.py).
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
            # repeats, titles cut, and records whose paper another file shows with its own text (rag.library.sources)
            lines += ["", "Notes:"] + [f"- {md(n)}" for n in report.notes[:20]]
        return "\n".join(lines)

    # -- layout and events ----------------------------------------------------------

    def build(self) -> None:
        """The tab's components (inside an open gr.Tab); events are wired by wire()."""
        self.keys = gr.State({})  # row_key -> paper id, for the rows this session's table shows
        self.ticked = gr.State([])  # paper ids ticked in the ✓ column (kept across searches)
        self.current = gr.State(None)  # the paper whose card is open
        with gr.Row(equal_height=False):
            with gr.Column(scale=7, min_width=TABLE_MIN, elem_id="pc-lib-main"):
                with gr.Row():
                    self.query = gr.Textbox(placeholder="Search titles and abstracts…", show_label=False,
                                            scale=6, container=False, elem_id="pc-lib-search")
                    self.go = gr.Button("Search", scale=1, min_width=90)
                self.note = gr.Markdown(elem_id="pc-lib-note")
                self.table = gr.Dataframe(
                    headers=HEADERS, datatype=["str", "markdown", "str", "str", "str", "number", "str"],
                    interactive=False, wrap=True, elem_id="pc-papers", max_height=640, column_widths=WIDTHS,
                    latex_delimiters=[], elem_classes=MATH, buttons=["fullscreen"],
                )
                with gr.Row(elem_id="pc-lib-actions"):
                    self.ask_about = gr.Button("Ask about these", variant="primary", size="sm", scale=0,
                                               min_width=160, elem_id="pc-ask-about", interactive=False)
                    self.edit.build_ticked_button()
                    self.edit.build_source_picker()
            with gr.Column(scale=5, min_width=340, elem_id="pc-lib-side"):
                with gr.Group(visible=False, elem_id="pc-card-group") as self.card_group:
                    self.card = gr.HTML(empty_card(""), elem_id="pc-paper-card", elem_classes=["pc-math"],
                                        padding=False)
                    with gr.Row():
                        self.edit.build_card_button()
                        self.close = gr.Button("Close", size="sm", elem_id="pc-card-close")
                self.edit.build_confirm()
                # the accepted types above the drop zone, not as its label: Gradio floats a File's label over the zone
                gr.Markdown("#### Add abstract lists\n<span class='pc-muted'>.txt, .jsonl, .json, .jsonl.gz, .csv, "
                            ".bib or .ris files</span>", elem_id="pc-upload-head")
                self.files = gr.File(file_count="multiple", file_types=UPLOAD_TYPES, show_label=False,
                                     label="Abstract lists to add", elem_id="pc-upload", height=140)
                self.add = gr.Button("Add to library", variant="primary", elem_id="pc-add")
                self.ingest_out = gr.Markdown("", elem_id="pc-ingest-result", min_height=96)
                self.fetcher.build()
                gr.Markdown("#### In the library")
                self.stats = gr.HTML(elem_id="pc-stats")

    def wire(self, demo: gr.Blocks, after_change: list[dict]) -> None:
        """Events of the tab; `after_change` are further steps (as .then() kwargs) once papers were added or
        removed, e.g. refreshing the chat's filters and the header."""
        outputs = [self.stats, self.table, self.note, self.keys, self.edit.source, self.ticked, self.ask_about,
                   self.edit.remove_ticked]
        inputs = [self.query, self.ticked]
        demo.load(self.library_view, None, outputs, api_visibility="private", show_progress="hidden")
        self.go.click(self.library_view, inputs, outputs, api_name="papers", show_progress="minimal")
        self.query.submit(self.library_view, inputs, outputs, api_visibility="private", show_progress="minimal")
        self.table.select(self.on_row, [self.keys, self.ticked, self.table],
                          [self.card, self.card_group, self.current, self.ticked, self.table, self.ask_about,
                           self.edit.remove_ticked],
                          api_visibility="private", show_progress="hidden").then(
            fn=None, js="() => window.__paperchatShowCard && window.__paperchatShowCard()", queue=False,
            api_visibility="private", show_progress="hidden")  # a card opened under the table comes into view
        self.close.click(lambda: (gr.Group(visible=False), None), None, [self.card_group, self.current],
                         api_visibility="private", show_progress="hidden", queue=False)
        event = self.add.click(lambda: gr.Button("Indexing…", interactive=False), None, self.add,
                               api_visibility="private", show_progress="hidden", queue=False).then(
            self.ingest, [self.files], [self.ingest_out], api_name="ingest", concurrency_limit=1,
            concurrency_id="ingest", show_progress="full").then(
            lambda: (None, gr.Button("Add to library", interactive=True)), None, [self.files, self.add],
            api_visibility="private", show_progress="hidden").then(
            self.library_view, inputs, outputs, api_visibility="private", show_progress="hidden")
        for step in after_change:
            event = event.then(**step)
        refresh = [dict(fn=self.library_view, inputs=inputs, outputs=outputs, api_visibility="private",
                        show_progress="hidden"), *after_change]
        self.edit.wire(self.ticked, self.current, self.card_group, refresh)
        self.fetcher.wire(refresh)


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
