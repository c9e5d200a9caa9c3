"""The Chat tab: a question, a summary request or a claim in; a streamed, cited answer, its sources panel
and its exports out. Everything a session sees lives in its gr.State or its own export folder."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import gradio as gr

from rag.exports.documents import write_export_files
from rag.library.filter_check import why_nothing_passes
from rag.library.library import Library
from rag.library.retrieval import Filters
from rag.settings import Settings
from rag.reading.snippets import snippet
from rag.tasks.ask import ask
from rag.tasks.cite import cite
from rag.tasks.summarise import summarise

from ui import answerer, markup, render, summarysize, tables
from ui.filters import ALL_COLLECTIONS, ALL_VENUES, ANY_YEAR, collection_choices, filter_choices, make_filters, scope_html
from ui.maptab import cited_ids, show_on_map_link
from ui.render import h, md
from ui.streaming import Unavailable, error_text, stream_task

ASK, CITE, COMPARE = "Ask", "Find support for a claim", "Compare papers"
SUMMARISE = summarysize.SUMMARISE  # "Summarise an area"
MODES = [ASK, SUMMARISE, CITE, COMPARE]
_MODE_ALIASES = {"ask": ASK, "summarise": SUMMARISE, "summarize": SUMMARISE, "cite": CITE,
                 "claim": CITE, "support": CITE, "compare": COMPARE, "table": COMPARE}
PLACEHOLDER = {
    ASK: "Ask a question about the papers…",
    SUMMARISE: "Name a research area, e.g. optimisation under heavy-tailed gradient noise",
    CITE: "Paste a claim from your draft; the abstracts that bear on it are listed…",
    COMPARE: "A topic for a table of its papers (problem, approach, finding, setting), or papers: ID, ID…",
}
BUTTON = {ASK: "Ask", SUMMARISE: "Summarise", CITE: "Find support", COMPARE: "Compare"}
WORKING = {ASK: "Searching the library…", SUMMARISE: "Reading the area’s abstracts…", CITE: "Looking for evidence…",
           COMPARE: "Reading each paper’s problem, approach and finding…"}
_MAX_EARLIER = 8  # earlier turns kept (folded) in the sources panel
# Math in the chat, the table and the cards is typeset by app.js (KaTeX from Gradio's own bundle) in every
# element of class pc-math: ui.render keeps the text escaped, so `$…$` reaches the page as text. Gradio's own
# latex_delimiters stay off: its Markdown tokenizer garbles escaped text around a `$` (Gradio 6.31).
MATH = ["pc-math"]
EXAMPLES = [  # (text, mode, label) shown in the empty chat
    ("How can hyper-connections keep the identity mapping of residual connections and train stably at scale?",
     ASK, "How can hyper-connections train stably at scale?"),
    ("Mamba and selective state space models", SUMMARISE, "Mamba and selective state space models"),
    ("Projecting the residual connection space onto a manifold restores the identity mapping.", CITE,
     "Projecting residual connections onto a manifold restores the identity mapping."),
    ("optimal transport", COMPARE, "a table of the optimal transport papers"),
]


def mode_of(value: str | None) -> str:
    if value in MODES:
        return value
    return _MODE_ALIASES.get((value or "").strip().lower(), ASK)


class ChatTab:
    def __init__(self, library: Library, settings: Settings, export_root: Path, header: Callable[[], str]):
        self.library = library
        self.settings = settings
        self.export_root = export_root
        self.header = header
        self.owners: dict[str, str | None] = {}  # session hash -> the signed-in user whose exports it holds

    # -- sessions -------------------------------------------------------------------

    def _dir_of(self, sid: str) -> Path:
        return self.export_root / "sessions" / hashlib.sha256(sid.encode()).hexdigest()[:20]

    def session_dir(self, request: gr.Request | None) -> Path:
        sid = getattr(request, "session_hash", None) or "anonymous"
        self.owners.setdefault(sid, getattr(request, "username", None))
        d = self._dir_of(sid)
        d.mkdir(parents=True, exist_ok=True)
        return d

    def drop_session(self, request: gr.Request) -> None:
        """The session's exports removed when its page goes. Gradio calls this from its heartbeat route, which
        asks for no login: only the user the session belongs to (as the request says who is signed in) ends
        it, so a session hash alone cannot delete someone's exports (they go when the server stops)."""
        sid = getattr(request, "session_hash", None) if request is not None else None
        if not sid or sid not in self.owners or self.owners[sid] != getattr(request, "username", None):
            return
        del self.owners[sid]
        shutil.rmtree(self._dir_of(sid), ignore_errors=True)

    # -- asking ---------------------------------------------------------------------

    def run(self, message: str, mode: str, filters: Filters, history, turn: int,
            choice: str | None = None, k: int | None = None) -> Iterator[str]:
        """Yield streamed text; return a render.Rendered (via StopIteration.value). `choice` is the session's
        answerer (ui.answerer); None: the server's default. `k`: the most papers a summary covers (the
        "Papers" control, as `summarise --k`); None: MAX_PAPERS."""
        mode = mode_of(mode)
        settings = answerer.settings_for(self.settings, choice)
        if mode == ASK:
            # k sizes a list of an area's papers ("Which papers study X?") as it sizes a summary
            ans = yield from stream_task(ask, dict(question=message, library=self.library, settings=settings,
                                                   filters=filters, history=list(history),
                                                   k=summarysize.papers_k(k)), tokens=True)
            return render.render_answer(ans, turn, filters)
        if mode == SUMMARISE:
            res = yield from stream_task(summarise, dict(topic=message, library=self.library, settings=settings,
                                                         filters=filters, k=summarysize.papers_k(k)), tokens=True)
            return render.render_summary(res, message, turn, filters)
        if mode == COMPARE:
            return (yield from tables.run_compare(self.library, settings, message, filters, turn))
        res = yield from stream_task(cite, dict(claim=message, library=self.library, settings=settings,
                                                filters=filters), tokens=False)
        return render.render_evidence(res, message, turn, filters)

    def respond(self, message, chat, mode, venue, year_from, year_to, author="", collection="", choice=None,
                state=None, scope=None, k=None, request: gr.Request = None):
        """The chat: stream the answer into the last bubble, then fill the sources panel and the exports.
        `scope`: the papers ticked in the Library tab ("Ask about these"), or None; `k`: a summary's size
        (the "Papers" control)."""
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
        filters = make_filters(venue, year_from, year_to, author, collection, scope or None)
        chat.append({"role": "user", "content": md(message)})
        who = answerer.label(self.settings, choice or answerer.default(self.settings))
        by = f'<small class="pc-by">answerer: {h(who)}</small>'
        chat.append({"role": "assistant", "content": f"*{WORKING[mode]}*\n\n{by}"})
        earlier = [(t["label"], t["panel"]) for t in reversed(turns)][:_MAX_EARLIER]
        yield "", chat, render.stack_panels(render.empty_panel(WORKING[mode]), earlier), state, skip, skip

        rendered = None
        try:
            if len(self.library) == 0:
                raise Unavailable("The library is empty: add abstract lists in the Library tab first.")
            if why := why_nothing_passes(self.library, filters):  # a filter no paper can pass says so
                raise Unavailable(why)
            gen = self.run(message, mode, filters, history, turn, choice, k)
            while True:
                try:
                    text = next(gen)
                except StopIteration as stop:
                    rendered = stop.value
                    break
                chat[-1] = {"role": "assistant", "content": markup.markdown(text) + " ▍"}
                yield skip, chat, skip, state, skip, skip
        except Exception as exc:  # noqa: BLE001 - a failed turn must not break the session
            # the turn is over (the marker tests and app.js wait on), with the line saying why there is no answer
            done = by.replace('class="pc-by"', 'class="pc-by pc-done"')
            chat[-1] = {"role": "assistant", "content": f"⚠️ {md(error_text(exc))}\n\n{done}"}
            panel = turns[-1]["panel"] if turns else render.empty_panel("No sources yet.")
            yield skip, chat, render.stack_panels(panel, earlier[1:] if turns else []), state, skip, skip
            return

        link = show_on_map_link(cited_ids(rendered))
        done = by.replace('class="pc-by"', 'class="pc-by pc-done"')  # the answer is complete (tests wait on it)
        chat[-1] = {"role": "assistant", "content": rendered.chat + (f"\n\n{link}" if link else "") + f"\n\n{done}"}
        label = f"{h(mode)}: {h(snippet(message, 80))}"
        turns.append({"label": label, "panel": rendered.panel, "mode": mode})
        # The cited papers go with the turn, in their numbers' order: a follow-up ("what do they prove?", "what does
        # [3] find?") is answered from them first, after a summary, a table or an evidence list as after an answer.
        history.append((message, rendered.data.get("answer") or rendered.data.get("summary") or "", cited_ids(rendered)))
        state = {"n": turn, "turns": turns[-(_MAX_EARLIER + 1):], "history": history[-6:], "last": rendered.data,
                 "last_mode": mode}
        # paperchat-answer-<question>.md / .bib / .ris: named for what they hold
        files = write_export_files(self.session_dir(request), rendered.kind, rendered.subject or f"{turn:02d}",
                                   rendered.export_md, rendered.citations, rendered.export_tex)
        state["ris"] = files.ris
        state["tex"] = files.latex  # a summary's LaTeX (its button shows only then)  # (in the state, not an output: /respond's outputs stay as they were)
        state["csv"] = tables.write_csv(self.session_dir(request), turn, rendered)  # a comparison table's
        # "Show all" after a summary, or after Ask's list of an area's papers (summarised then, as the area)
        area = message if mode == SUMMARISE else rendered.data.get("area", "")  # (only an answer's JSON has one)
        state["all"] = summarysize.every_paper(area, rendered.data) if area else None
        yield skip, chat, render.stack_panels(rendered.panel, earlier), state, files.markdown, files.bibtex

    def query(self, message: str, mode: str = ASK, venue: str = "", year_from: str = "", year_to: str = "",
              author: str = "", collection: str = "", papers: str = "", answerer: str = "", k: int = 0) -> dict:
        """One question, no chat history: the task's JSON (as `paperchat ask|summarise|cite --json` prints it)
        plus `ui_mode` (the UI mode used), `chat` (the answer as the chat shows it) and `html` (the sources panel).
        `papers`: comma-separated paper ids to restrict to; `answerer`: "extractive" or "model" (the server's
        configured model; the default); `k`: the most papers a summary covers (0: the default)."""
        mode = mode_of(mode)
        gen = self.run(message, mode, make_filters(venue, year_from, year_to, author, collection, papers), [], 1,
                       answerer or None, k or None)
        try:
            while True:
                next(gen)
        except StopIteration as stop:
            rendered = stop.value
        return {"ui_mode": mode, **rendered.data, "chat": rendered.chat, "html": rendered.panel}

    def refresh_filters(self, venue, yf, yt, coll=ALL_COLLECTIONS):
        venues, years = filter_choices(self.library)
        colls = collection_choices(self.library.catalogue)
        keep = lambda v, ch: v if v in ch else ch[0]  # noqa: E731
        vvals = [v for _, v in venues]
        return (gr.Dropdown(choices=venues, value=keep(venue or ALL_VENUES, vvals)),
                gr.Dropdown(choices=years, value=keep(str(yf) if yf else ANY_YEAR, years)),
                gr.Dropdown(choices=years, value=keep(str(yt) if yt else ANY_YEAR, years)),
                gr.Dropdown(choices=colls, value=keep(coll or ALL_COLLECTIONS, [c for _, c in colls]),
                            visible=len(colls) > 1),
                self.header())

    # -- layout and events ----------------------------------------------------------

    def build(self) -> None:
        """The tab's components (inside an open gr.Tab); events are wired by wire()."""
        with gr.Row(equal_height=False):
            with gr.Column(scale=6, min_width=420):
                self.mode = gr.Radio(MODES, value=ASK, show_label=False, elem_id="pc-mode", container=False)
                self.scope = gr.State(None)  # paper ids ticked in the Library tab ("Ask about these")
                with gr.Row(elem_id="pc-scope-row", visible=False) as self.scope_row:
                    self.scope_note = gr.HTML("", padding=False, elem_id="pc-scope", elem_classes=["pc-math"])
                    self.scope_clear = gr.Button("✕ Clear", size="sm", scale=0, min_width=80, elem_id="pc-scope-clear")
                self.chatbot = gr.Chatbot(
                    elem_id="pc-chat", show_label=False, height="calc(100vh - 390px)", min_height=300,
                    latex_delimiters=[], elem_classes=MATH, feedback_options=None, buttons=["copy"],
                    placeholder="<div class='pc-hello'><b>Ask the library.</b><br>Every sentence of the "
                                "answer cites the abstracts it rests on; the sources appear "
                                "<span class='pc-side-right'>on the right</span><span class='pc-side-below'>below"
                                "</span> with the supporting sentence highlighted.</div>",
                    examples=[{"text": t, "display_text": f"{m} · {d}"} for t, m, d in EXAMPLES],
                )
                with gr.Row(elem_id="pc-inputrow"):
                    self.box = gr.Textbox(placeholder=PLACEHOLDER[ASK], show_label=False, lines=1, max_lines=6,
                                          scale=8, container=False, autofocus=True, elem_id="pc-input",
                                          submit_btn=False)
                    self.send = gr.Button(BUTTON[ASK], variant="primary", scale=0, min_width=150, elem_id="pc-send")
                    self.show_all = summarysize.show_all_control()
                with gr.Row(elem_id="pc-filters"):
                    venues, years = filter_choices(self.library)
                    self.venue = gr.Dropdown(venues, value=ALL_VENUES, label="Venue", scale=2, min_width=150,
                                             elem_id="pc-venue")
                    # "Year from" / "to": short labels that stay on one line ("From year" wrapped at 90 px)
                    self.year_from = gr.Dropdown(years, value=ANY_YEAR, label="Year from", scale=1,
                                                 min_width=104, elem_id="pc-year-from")
                    # wide enough for "any" or a year beside the arrow (at 96 px the arrow covered the "y" of "any")
                    self.year_to = gr.Dropdown(years, value=ANY_YEAR, label="to", scale=1, min_width=104,
                                               elem_id="pc-year-to")
                    self.author = gr.Textbox("", label="Author", placeholder="e.g. Hinton", scale=2, min_width=110,
                                             elem_id="pc-author")
                    colls = collection_choices(self.library.catalogue)
                    self.collection = gr.Dropdown(colls, value=ALL_COLLECTIONS, label="Collection", scale=2,
                                                  min_width=140, elem_id="pc-collection", visible=len(colls) > 1)
                    only_one = len(answerer.choices(self.settings)) == 1
                    self.answerer = gr.Dropdown(answerer.choices(self.settings), value=answerer.default(self.settings),
                                                label="Answerer", scale=4, min_width=230, elem_id="pc-answerer",
                                                interactive=not only_one, info=answerer.why_fixed(self.settings))
                    self.k = summarysize.papers_control()  # a summary's size (summarise --k)
            with gr.Column(scale=5, min_width=360, elem_id="pc-sources-col"):
                with gr.Row(elem_id="pc-actions"):
                    gr.HTML('<span class="pc-label">Export the last answer</span>', padding=False,
                            elem_id="pc-export-label")
                    self.dl_md = gr.DownloadButton("⬇ Markdown", value=None, interactive=False, size="sm",
                                                   variant="secondary", elem_id="pc-dl-md", min_width=100)
                    self.dl_tex = gr.DownloadButton("⬇ LaTeX", value=None, visible=False, size="sm",
                                                    variant="secondary", elem_id="pc-dl-tex", min_width=90)
                    self.dl_bib = gr.DownloadButton("⬇ BibTeX", value=None, interactive=False, size="sm",
                                                    variant="secondary", elem_id="pc-dl-bib", min_width=100)
                    self.dl_ris = gr.DownloadButton("⬇ RIS", value=None, interactive=False, size="sm",
                                                    variant="secondary", elem_id="pc-dl-ris", min_width=80)
                    self.dl_csv = gr.DownloadButton("⬇ CSV", value=None, visible=False, size="sm",
                                                    variant="secondary", elem_id="pc-dl-csv", min_width=80)
                self.sources = gr.HTML(
                    render.stack_panels(render.empty_panel(
                        "Sources appear here: one card per cited paper, with the sentence that supports "
                        "the answer highlighted."), []),
                    elem_id="pc-sources", padding=False, elem_classes=["pc-math"])

    @property
    def filters(self) -> list:
        return [self.venue, self.year_from, self.year_to]

    def show_scope(self, ids: list[str] | None):
        """The scope row for these ticked papers (hidden when there are none)."""
        ids = list(ids or [])
        return ids or None, gr.Row(visible=bool(ids)), scope_html(ids, self.library.catalogue)

    def refresh_step(self, header: gr.HTML) -> dict:
        """A .then() step that refreshes the filter choices and the header (after an ingest, on tab select)."""
        return dict(fn=self.refresh_filters, inputs=self.filters + [self.collection],
                    outputs=self.filters + [self.collection, header],
                    api_visibility="private", show_progress="hidden")

    def wire(self, demo: gr.Blocks, state: gr.State, header: gr.HTML, tab: gr.Tab) -> None:
        chat_io = dict(inputs=[self.box, self.chatbot, self.mode, *self.filters, self.author, self.collection,
                               self.answerer, state, self.scope, self.k],
                       outputs=[self.box, self.chatbot, self.sources, state, self.dl_md, self.dl_bib])

        def enable_exports(md_file, bib_file):
            return gr.DownloadButton(interactive=bool(md_file)), gr.DownloadButton(interactive=bool(bib_file))

        exports = dict(fn=enable_exports, inputs=[self.dl_md, self.dl_bib], outputs=[self.dl_md, self.dl_bib],
                       api_visibility="private", show_progress="hidden", queue=False)
        # the references as RIS too (Zotero, EndNote); a comparison table also as CSV (the button shows only then)
        def more_files(st):
            st = st or {}
            return (gr.DownloadButton(value=st.get("ris"), interactive=bool(st.get("ris"))),
                    gr.DownloadButton(value=st.get("csv"), visible=bool(st.get("csv"))),
                    gr.DownloadButton(value=st.get("tex") or None, visible=bool(st.get("tex"))),
                    summarysize.show_all_button(st))

        csv_step = dict(fn=more_files, inputs=[state], outputs=[self.dl_ris, self.dl_csv, self.dl_tex, self.show_all],
                        api_visibility="private",
                        show_progress="hidden", queue=False)
        # a long answer (a summary) is shown from its top once it is complete, not scrolled to its end
        to_top = dict(fn=None, js="() => window.__paperchatTop && window.__paperchatTop()", queue=False,
                      api_visibility="private", show_progress="hidden")
        self.send.click(self.respond, api_name="respond", show_progress="hidden", **chat_io).then(
            **exports).then(**csv_step).then(**to_top)
        self.box.submit(self.respond, api_visibility="private", show_progress="hidden", **chat_io).then(
            **exports).then(**csv_step).then(**to_top)

        def on_mode(m):
            m = mode_of(m)
            return gr.Textbox(placeholder=PLACEHOLDER[m]), gr.Button(BUTTON[m]), gr.Number(visible=m == SUMMARISE)

        self.mode.change(on_mode, self.mode, [self.box, self.send, self.k], api_visibility="private",
                         show_progress="hidden", queue=False)

        self.show_all.click(summarysize.on_show_all, [state], [self.box, self.mode, self.k], api_visibility="private",
                            show_progress="hidden", queue=False).then(
            self.respond, show_progress="hidden", api_visibility="private", **chat_io).then(**exports).then(
            **csv_step).then(**to_top)

        def on_example(evt: gr.SelectData):
            text = (evt.value or {}).get("text", "") if isinstance(evt.value, dict) else str(evt.value or "")
            return text, next((m for t, m, _ in EXAMPLES if t == text), ASK)

        self.chatbot.example_select(on_example, None, [self.box, self.mode], api_visibility="private",
                                    show_progress="hidden", queue=False).then(
            self.respond, show_progress="hidden", api_visibility="private", **chat_io).then(**exports).then(
            **csv_step).then(**to_top)

        def on_clear(request: gr.Request):
            self.drop_session(request)  # the export files go with the chat: no button may still offer one
            off = [gr.DownloadButton(value=None, interactive=False) for _ in range(3)]
            return (None, render.stack_panels(render.empty_panel("No sources yet."), []), *off,
                    gr.DownloadButton(value=None, visible=False), gr.DownloadButton(value=None, visible=False),
                    gr.Button(visible=False))

        self.chatbot.clear(on_clear, None, [state, self.sources, self.dl_md, self.dl_bib, self.dl_ris, self.dl_csv,
                                            self.dl_tex, self.show_all],
                           api_visibility="private", show_progress="hidden")
        self.scope_clear.click(lambda: self.show_scope(None), None, [self.scope, self.scope_row, self.scope_note],
                               api_visibility="private", show_progress="hidden", queue=False)
        tab.select(**self.refresh_step(header))
        demo.load(**self.refresh_step(header))
        gr.api(self.query, api_name="query")
        demo.unload(self.drop_session)
