"""The paperchat web UI: a Gradio Blocks app over rag/ (nothing here but presentation).

    serve(settings)            # what `paperchat serve` and `make run` call
    build_app(settings, lib)   # the Blocks, for tests or embedding

One Library is shared by every session for reading; everything else a session sees (its chat, the last
answer, its export files) lives in per-session gr.State or a per-session temp dir. Ingests go through a
second Library object (same store, same embedder) so that a reader never sees a catalogue half-mutated
by a writer, and run one at a time in their own concurrency group so they never block questions.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import os
import queue
import shutil
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import gradio as gr  # noqa: E402

from rag.errors import redact, user_message  # noqa: E402
from rag.exports import write_exports  # noqa: E402
from rag.library import Library  # noqa: E402
from rag.loaders import estimate_records  # noqa: E402 - capped like loading: a bomb costs no more here
from rag.llm import describe  # noqa: E402
from rag.retrieval import Filters, search  # noqa: E402
from rag.settings import Settings  # noqa: E402
from rag.tasks.ask import ask  # noqa: E402
from rag.tasks.cite import cite  # noqa: E402
from rag.tasks.summarise import summarise  # noqa: E402

from . import render  # noqa: E402
from .maptab import MapTab, cited_ids, show_on_map_link  # noqa: E402
from .render import h, md  # noqa: E402

log = logging.getLogger("paperchat.ui")

HERE = Path(__file__).resolve().parent
SEEDS = HERE.parent / "seeds"

ASK, SUMMARISE, CITE = "Ask", "Summarise an area", "Find support for a claim"
MODES = [ASK, SUMMARISE, CITE]
_MODE_ALIASES = {"ask": ASK, "summarise": SUMMARISE, "summarize": SUMMARISE, "cite": CITE,
                 "claim": CITE, "support": CITE}
PLACEHOLDER = {
    ASK: "Ask a question about the papers…",
    SUMMARISE: "Name a research area, e.g. optimisation under heavy-tailed gradient noise",
    CITE: "Paste a claim from your draft; the abstracts that bear on it are listed…",
}
BUTTON = {ASK: "Ask", SUMMARISE: "Summarise", CITE: "Find support"}
UPLOAD_TYPES = [".txt", ".jsonl", ".json", ".gz", ".csv", ".bib", ".ris"]
ANY_YEAR = "any"
ALL_VENUES = ""
_DONE = object()
_MAX_EARLIER = 8  # earlier turns kept (folded) in the sources panel
_MAX_ROWS = 1000  # papers shown in the Library table
EXAMPLES = [  # (text, mode, label) shown in the empty chat
    ("How can hyper-connections keep the identity mapping of residual connections and train stably at scale?",
     ASK, "How can hyper-connections train stably at scale?"),
    ("Mamba and selective state space models", SUMMARISE, "Mamba and selective state space models"),
    ("Projecting the residual connection space onto a manifold restores the identity mapping.", CITE,
     "Projecting residual connections onto a manifold restores the identity mapping."),
]


# -- small helpers -------------------------------------------------------------------------------

def mode_of(value: str | None) -> str:
    if value in MODES:
        return value
    return _MODE_ALIASES.get((value or "").strip().lower(), ASK)


def make_filters(venue: str | None, year_from: Any, year_to: Any) -> Filters:
    def year(v):
        if v in (None, "", ANY_YEAR):
            return None
        try:
            return int(float(v))
        except (TypeError, ValueError):
            return None

    return Filters(venue=(venue or None), year_from=year(year_from), year_to=year(year_to))  # orders the range


def _error_text(exc: BaseException) -> str:
    msg = user_message(exc)
    if msg is None:
        log.error("paperchat UI: unexpected error\n%s", "".join(traceback.format_exception(exc)))
        msg = redact(f"unexpected error ({type(exc).__name__}): {exc}")
    return msg


def _stream(fn: Callable, kwargs: dict, tokens: bool) -> Iterator[str]:
    """Run fn(**kwargs) in a worker thread; yield the text streamed through on_token as it grows.
    The generator's return value is fn's result (errors are re-raised here)."""
    q: queue.Queue = queue.Queue()
    box: dict[str, Any] = {}
    if tokens:
        kwargs = {**kwargs, "on_token": q.put}

    def work():
        try:
            box["result"] = fn(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc
        finally:
            q.put(_DONE)

    threading.Thread(target=work, daemon=True, name="paperchat-task").start()
    text, done = "", False
    while not done:
        item = q.get()
        parts = [item]
        while True:  # coalesce what has queued up since the last update
            try:
                parts.append(q.get_nowait())
            except queue.Empty:
                break
        for p in parts:
            if p is _DONE:
                done = True
            elif isinstance(p, str):
                text += p
        if not done and text:
            yield text
    if "error" in box:
        raise box["error"]
    return box.get("result")


# -- the app -------------------------------------------------------------------------------------

class PaperchatUI:
    def __init__(self, settings: Settings, library: Library | None = None):
        self.settings = settings
        self.library = library if library is not None else Library(settings)
        self._writer: Library | None = None
        self._writer_lock = threading.Lock()
        self.export_root = Path(tempfile.mkdtemp(prefix="paperchat-ui-"))
        self.upload_root = self.export_root / "uploads"
        self.upload_root.mkdir()
        # Exports are served from the session's own folder rather than copied into Gradio's cache, so
        # that removing the folder when the session ends removes every copy.
        (self.export_root / "sessions").mkdir()
        gr.set_static_paths([self.export_root / "sessions"])
        atexit.register(self.cleanup)
        self.maptab = MapTab(self.library, settings, self.export_root)

    def cleanup(self) -> None:
        """Remove every file this server wrote (staged uploads, exports): on shutdown and at exit."""
        shutil.rmtree(self.export_root, ignore_errors=True)

    # -- library ------------------------------------------------------------------

    def writer(self) -> Library:
        with self._writer_lock:
            if self._writer is None:
                self._writer = Library(self.settings, embedder=self.library.embedder, client=self.library.client)
            return self._writer

    def status(self) -> str:
        try:
            n = len(self.library)
            lib = f"library <b>{h(self.library.name)}</b>: {n} paper{'s' if n != 1 else ''}"
            lib += f' <span class="pc-muted">(embedder {h(self.library.embedder_runs_on)})</span>'
        except Exception as exc:  # noqa: BLE001 - the status line must render even if the store is down
            lib = f"library unavailable: {h(_error_text(exc))}"
        return (f'<div class="pc-status"><span class="pc-dot"></span><span>Answerer: '
                f"<b>{h(describe(self.settings))}</b></span><span class=\"pc-sep\">·</span><span>{lib}</span></div>")

    def filter_choices(self):
        st = self.library.stats()
        venues = [("All venues", ALL_VENUES)] + [(f"{v} ({n})", v) for v, n in st["venues"].items() if v != "?"]
        years = [ANY_YEAR] + [y for y in sorted(st["years"]) if y != "?"]
        return venues, years

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
            return f"**Could not ingest:** {md(_error_text(exc))}"
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

    # -- asking ---------------------------------------------------------------------

    def session_dir(self, request: gr.Request | None) -> Path:
        sid = getattr(request, "session_hash", None) or "anonymous"
        d = self.export_root / "sessions" / hashlib.sha256(sid.encode()).hexdigest()[:20]
        d.mkdir(parents=True, exist_ok=True)
        return d

    def drop_session(self, request: gr.Request) -> None:
        if request is not None and getattr(request, "session_hash", None):
            shutil.rmtree(self.session_dir(request), ignore_errors=True)

    def run(self, message: str, mode: str, filters: Filters, history, turn: int) -> Iterator[str]:
        """Yield streamed text; return a render.Rendered (via StopIteration.value)."""
        mode = mode_of(mode)
        if mode == ASK:
            ans = yield from _stream(ask, dict(question=message, library=self.library, settings=self.settings,
                                               filters=filters, history=list(history)), tokens=True)
            return render.render_answer(ans, turn, filters)
        if mode == SUMMARISE:
            res = yield from _stream(summarise, dict(topic=message, library=self.library, settings=self.settings,
                                                     filters=filters), tokens=True)
            return render.render_summary(res, message, turn, filters)
        res = yield from _stream(cite, dict(claim=message, library=self.library, settings=self.settings,
                                            filters=filters), tokens=False)
        return render.render_evidence(res, message, turn, filters)

    def respond(self, message, chat, mode, venue, year_from, year_to, state, request: gr.Request):
        """The chat: stream the answer into the last bubble, then fill the sources panel and the exports."""
        chat = list(chat or [])
        state = dict(state or {})
        turns = list(state.get("turns", []))
        history = list(state.get("history", []))
        message = (message or "").strip()
        skip = gr.skip()
        if not message:
            yield skip, chat, skip, state, skip, skip
            return
        mode = mode_of(mode)
        turn = int(state.get("n", 0)) + 1  # card ids stay unique for the whole session
        filters = make_filters(venue, year_from, year_to)
        chat.append({"role": "user", "content": md(message)})
        working = {ASK: "Searching the library…", SUMMARISE: "Reading the area’s abstracts…",
                   CITE: "Looking for evidence…"}[mode]
        chat.append({"role": "assistant", "content": f"*{working}*"})
        earlier = [(t["label"], t["panel"]) for t in reversed(turns)][:_MAX_EARLIER]
        yield "", chat, render.stack_panels(render.empty_panel(working), earlier), state, skip, skip

        rendered = None
        try:
            if len(self.library) == 0:
                raise _Unavailable("The library is empty: add abstract lists in the Library tab first.")
            gen = self.run(message, mode, filters, history, turn)
            while True:
                try:
                    text = next(gen)
                except StopIteration as stop:
                    rendered = stop.value
                    break
                chat[-1] = {"role": "assistant", "content": md(text) + " ▍"}
                yield skip, chat, skip, state, skip, skip
        except Exception as exc:  # noqa: BLE001 - a failed turn must not break the session
            text = str(exc) if isinstance(exc, _Unavailable) else _error_text(exc)
            chat[-1] = {"role": "assistant", "content": f"⚠️ {md(text)}"}
            panel = turns[-1]["panel"] if turns else render.empty_panel("No sources yet.")
            yield skip, chat, render.stack_panels(panel, earlier[1:] if turns else []), state, skip, skip
            return

        link = show_on_map_link(cited_ids(rendered))
        chat[-1] = {"role": "assistant", "content": rendered.chat + (f"\n\n{link}" if link else "")}
        label = f"{h(mode)}: {h(message if len(message) <= 80 else message[:77] + '…')}"
        turns.append({"label": label, "panel": rendered.panel, "mode": mode})
        if mode == ASK:
            # The cited papers go with the turn: a follow-up ("what do they prove?") is answered from them first.
            history.append((message, rendered.data.get("answer", ""),
                            [c["paper_id"] for c in rendered.data.get("citations", [])]))
        state = {"n": turn, "turns": turns[-(_MAX_EARLIER + 1):], "history": history[-6:], "last": rendered.data,
                 "last_mode": mode}
        md_path, bib_path = write_exports(self.session_dir(request), turn, rendered.export_md, rendered.citations)
        yield skip, chat, render.stack_panels(rendered.panel, earlier), state, md_path, bib_path

    def query(self, message: str, mode: str = ASK, venue: str = "", year_from: str = "", year_to: str = "") -> dict:
        """One question, no chat history: the task's JSON (as `paperchat ask|summarise|cite --json` prints it)
        plus `ui_mode` (the UI mode used), `chat` (the answer as the chat shows it) and `html` (the sources panel)."""
        mode = mode_of(mode)
        gen = self.run(message, mode, make_filters(venue, year_from, year_to), [], 1)
        try:
            while True:
                next(gen)
        except StopIteration as stop:
            rendered = stop.value
        return {"ui_mode": mode, **rendered.data, "chat": rendered.chat, "html": rendered.panel}

    # -- layout ---------------------------------------------------------------------

    def header(self) -> str:
        return ('<div class="pc-header"><div class="pc-brand"><span class="pc-logo">paperchat</span>'
                '<span class="pc-tagline">cited answers from paper abstracts</span></div>' + self.status() + "</div>")

    def refresh_filters(self, venue, yf, yt):
        venues, years = self.filter_choices()
        keep = lambda v, ch: v if v in ch else ch[0]  # noqa: E731
        vvals = [v for _, v in venues]
        return (gr.Dropdown(choices=venues, value=keep(venue or ALL_VENUES, vvals)),
                gr.Dropdown(choices=years, value=keep(str(yf) if yf else ANY_YEAR, years)),
                gr.Dropdown(choices=years, value=keep(str(yt) if yt else ANY_YEAR, years)),
                self.header())

    def blocks(self) -> gr.Blocks:
        # delete_cache: Gradio removes what it cached for this app (uploads, outputs) older than 6 h every
        # 30 min, and all of it when the server stops.
        with gr.Blocks(title="paperchat", analytics_enabled=False, fill_width=True,
                       delete_cache=(1800, 6 * 3600)) as demo:
            state = gr.State(None)
            header = gr.HTML(self.header(), elem_id="pc-top", padding=False)
            with gr.Tabs():
                with gr.Tab("Chat", id="chat") as chat_tab:
                    with gr.Row(equal_height=False):
                        with gr.Column(scale=6, min_width=420):
                            mode = gr.Radio(MODES, value=ASK, show_label=False, elem_id="pc-mode",
                                            container=False)
                            chatbot = gr.Chatbot(
                                elem_id="pc-chat", show_label=False, height="calc(100vh - 390px)", min_height=300,
                                latex_delimiters=[], feedback_options=None, buttons=["copy"],
                                placeholder="<div class='pc-hello'><b>Ask the library.</b><br>Every sentence of the "
                                            "answer cites the abstracts it rests on; the sources appear on the right "
                                            "with the supporting sentence highlighted.</div>",
                                examples=[{"text": t, "display_text": f"{m} · {d}"} for t, m, d in EXAMPLES],
                            )
                            with gr.Row(elem_id="pc-inputrow"):
                                box = gr.Textbox(placeholder=PLACEHOLDER[ASK], show_label=False, lines=1, max_lines=6,
                                                 scale=8, container=False, autofocus=True, elem_id="pc-input",
                                                 submit_btn=False)
                                send = gr.Button(BUTTON[ASK], variant="primary", scale=0, min_width=150,
                                                 elem_id="pc-send")
                            with gr.Row(elem_id="pc-filters"):
                                venues, years = self.filter_choices()
                                venue = gr.Dropdown(venues, value=ALL_VENUES, label="Venue", scale=2, min_width=140,
                                                    elem_id="pc-venue")
                                year_from = gr.Dropdown(years, value=ANY_YEAR, label="From year", scale=1,
                                                        min_width=100, elem_id="pc-year-from")
                                year_to = gr.Dropdown(years, value=ANY_YEAR, label="To year", scale=1, min_width=100,
                                                      elem_id="pc-year-to")
                        with gr.Column(scale=5, min_width=360, elem_id="pc-sources-col"):
                            with gr.Row(elem_id="pc-actions"):
                                gr.HTML('<span class="pc-label">Export the last answer</span>', padding=False,
                                        elem_id="pc-export-label")
                                dl_md = gr.DownloadButton("⬇ Markdown", value=None, interactive=False, size="sm",
                                                          variant="secondary", elem_id="pc-dl-md", min_width=100)
                                dl_bib = gr.DownloadButton("⬇ BibTeX", value=None, interactive=False, size="sm",
                                                           variant="secondary", elem_id="pc-dl-bib", min_width=100)
                            sources = gr.HTML(
                                render.stack_panels(render.empty_panel(
                                    "Sources appear here: one card per cited paper, with the sentence that supports "
                                    "the answer highlighted."), []),
                                elem_id="pc-sources", padding=False)
                with gr.Tab("Library", id="library"):
                    with gr.Row(equal_height=False):
                        with gr.Column(scale=4, min_width=320):
                            gr.Markdown("#### Add abstract lists")
                            files = gr.File(file_count="multiple", file_types=UPLOAD_TYPES,
                                            label="Files: .txt, .jsonl, .json, .jsonl.gz, .csv, .bib, .ris", elem_id="pc-upload",
                                            height=140)
                            add = gr.Button("Add to library", variant="primary", elem_id="pc-add")
                            ingest_out = gr.Markdown("", elem_id="pc-ingest-result", min_height=96)
                            gr.Markdown("#### In the library")
                            stats = gr.HTML(elem_id="pc-stats")
                        with gr.Column(scale=7, min_width=420):
                            with gr.Row():
                                lib_q = gr.Textbox(placeholder="Search titles and abstracts…", show_label=False,
                                                   scale=6, container=False, elem_id="pc-lib-search")
                                lib_go = gr.Button("Search", scale=1, min_width=90)
                            lib_note = gr.Markdown(elem_id="pc-lib-note")
                            table = gr.Dataframe(
                                headers=["Title", "Venue", "Year", "File", "#", "Score"],
                                datatype=["str", "str", "str", "str", "number", "str"],
                                interactive=False, wrap=True, elem_id="pc-papers", max_height=640,
                                column_widths=["46%", "8%", "7%", "26%", "5%", "8%"],
                            )

                with gr.Tab("Map", id="map") as map_tab:
                    self.maptab.build(map_tab)

            # -- events -------------------------------------------------------------
            chat_io = dict(inputs=[box, chatbot, mode, venue, year_from, year_to, state],
                           outputs=[box, chatbot, sources, state, dl_md, dl_bib])
            def enable_exports(md_file, bib_file):
                return gr.DownloadButton(interactive=bool(md_file)), gr.DownloadButton(interactive=bool(bib_file))

            exports = dict(fn=enable_exports, inputs=[dl_md, dl_bib], outputs=[dl_md, dl_bib], api_visibility="private",
                           show_progress="hidden", queue=False)
            # a long answer (a summary) is shown from its top once it is complete, not scrolled to its end
            to_top = dict(fn=None, js="() => window.__paperchatTop && window.__paperchatTop()", queue=False,
                          api_visibility="private", show_progress="hidden")
            send.click(self.respond, api_name="respond", show_progress="hidden", **chat_io).then(**exports).then(**to_top)
            box.submit(self.respond, api_visibility="private", show_progress="hidden", **chat_io).then(
                **exports).then(**to_top)

            def on_mode(m):
                m = mode_of(m)
                return gr.Textbox(placeholder=PLACEHOLDER[m]), gr.Button(BUTTON[m])

            mode.change(on_mode, mode, [box, send], api_visibility="private", show_progress="hidden", queue=False)

            def on_example(evt: gr.SelectData):
                text = (evt.value or {}).get("text", "") if isinstance(evt.value, dict) else str(evt.value or "")
                return text, next((m for t, m, _ in EXAMPLES if t == text), ASK)

            chatbot.example_select(on_example, None, [box, mode], api_visibility="private", show_progress="hidden",
                                   queue=False).then(self.respond, show_progress="hidden", api_visibility="private",
                                                     **chat_io).then(**exports).then(**to_top)

            def on_clear(request: gr.Request):
                self.drop_session(request)
                return (None, render.stack_panels(render.empty_panel("No sources yet."), []),
                        gr.DownloadButton(value=None, interactive=False), gr.DownloadButton(value=None, interactive=False))

            chatbot.clear(on_clear, None, [state, sources, dl_md, dl_bib], api_visibility="private",
                          show_progress="hidden")

            filt = [venue, year_from, year_to]
            lib_outputs = [stats, table, lib_note]
            demo.load(self.library_view, None, lib_outputs, api_visibility="private", show_progress="hidden")
            chat_tab.select(self.refresh_filters, filt, filt + [header], api_visibility="private",
                            show_progress="hidden")
            demo.load(self.refresh_filters, filt, filt + [header], api_visibility="private", show_progress="hidden")
            lib_go.click(self.library_view, [lib_q], lib_outputs, api_name="papers", show_progress="minimal")
            lib_q.submit(self.library_view, [lib_q], lib_outputs, api_visibility="private", show_progress="minimal")
            add.click(lambda: gr.Button("Indexing…", interactive=False), None, add, api_visibility="private",
                      show_progress="hidden", queue=False).then(
                self.ingest, [files], [ingest_out], api_name="ingest", concurrency_limit=1, concurrency_id="ingest",
                show_progress="full").then(
                lambda: (None, gr.Button("Add to library", interactive=True)), None, [files, add],
                api_visibility="private", show_progress="hidden").then(
                self.library_view, [lib_q], lib_outputs, api_visibility="private", show_progress="hidden").then(
                self.refresh_filters, filt, filt + [header], api_visibility="private", show_progress="hidden")
            gr.api(self.query, api_name="query")
            demo.unload(self.drop_session)
        demo.paperchat_ui = self  # type: ignore[attr-defined]
        return demo


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


class _Unavailable(Exception):
    """Shown to the user as-is."""


def build_app(settings: Settings, library: Library | None = None) -> gr.Blocks:
    """The Blocks app (not launched). Launch it through serve() or with launch_options(...) to keep its look."""
    return PaperchatUI(settings, library).blocks()


def launch_options(settings: Settings, demo: gr.Blocks, host: str = "127.0.0.1", port: int = 7860) -> dict:
    ui: PaperchatUI = demo.paperchat_ui  # type: ignore[attr-defined]
    opts: dict[str, Any] = dict(
        server_name=host, server_port=port, max_file_size=f"{settings.max_upload_mb}mb",
        css_paths=[HERE / "app.css", HERE / "map.css"],
        js="() => {\n(" + (HERE / "app.js").read_text(encoding="utf-8") + ")();\n" + MapTab.js() + "\n}",
        theme=gr.themes.Default(primary_hue="indigo", neutral_hue="slate",
                                font=["ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "Roboto",
                                      "Helvetica Neue", "Arial", "sans-serif"],
                                font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "monospace"]),
        allowed_paths=[str(ui.export_root / "sessions"), *ui.maptab.allowed_paths()], show_error=True, ssr_mode=False,
        footer_links=["api"], app_kwargs={"lifespan": _cleanup_on_shutdown(ui)},
    )
    if settings.auth_user and settings.auth_password:
        opts["auth"] = (settings.auth_user, settings.auth_password.get_secret_value())
        opts["auth_message"] = "paperchat: sign in with the user and password set in PAPERCHAT_AUTH_USER / _PASSWORD"
    return opts


def _cleanup_on_shutdown(ui: PaperchatUI):
    """A lifespan for Gradio's app: when the server stops (close(), Ctrl-C), remove the session folders."""

    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            ui.cleanup()

    return lifespan


def seed_library(library: Library, seeds: Path = SEEDS, echo: Callable[[str], None] = print) -> None:
    """Index the bundled seeds when the library is empty."""
    if len(library) > 0:
        return
    if not seeds.is_dir():
        echo(f"paperchat: no seeds folder at {seeds}; starting with an empty library")
        return
    echo(f"paperchat: indexing the bundled seeds in {seeds} (first start only)…")
    report = library.ingest([seeds], progress=True)
    for r in report.rejections:
        echo(f"rejected {r}")
    echo(f"paperchat: {report.summary()} — {len(library)} papers ({report.seconds:.1f} s)")


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 7860, seed: bool = False, *,
          library: Library | None = None, prevent_thread_lock: bool = False, quiet: bool = False) -> gr.Blocks:
    """Open the chat UI (blocking unless prevent_thread_lock); returns the launched Blocks."""
    library = library if library is not None else Library(settings)
    if seed:
        seed_library(library, echo=(lambda s: None) if quiet else print)
    demo = build_app(settings, library)
    demo.queue(default_concurrency_limit=8)
    if not quiet:
        print(f"paperchat: answerer: {describe(settings)}")
    demo.launch(prevent_thread_lock=prevent_thread_lock, quiet=quiet, inbrowser=False,
                **launch_options(settings, demo, host, port))
    return demo
