"""The Map tab: the library's map (rag.maps) in the page, a click opens the paper's card, the last
answer's papers lit, and the "show on map" link under answers.

The map's data goes to the browser as a JSON file and plotly.js from the installed plotly package, both
through Gradio's file route (no CDN); the drawing is rag/maps/viewer.js. The map is computed in a
background thread (the first fit of 87k papers takes minutes), and the tab polls until it is there.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from pathlib import Path
from urllib.parse import quote

import gradio as gr

# Imported with the UI, not on the map's thread: that thread starts while the UI goes on importing, and two
# threads importing paperchat's modules at once can meet importlib's deadlock guard (tests/test_map.py)
from rag.maps.build import TooFewPapers, library_map, needs_refit, refit_in_background, refitting
from rag.maps.page import plotly_js_path, viewer_data, viewer_js
from ui.render import card, empty_panel, h

log = logging.getLogger("paperchat.ui")

HERE = Path(__file__).resolve().parent
MAP_LINK = "#map:"  # href prefix of "show on map" links (not "#pc-": those are card links, see app.js)


def show_on_map_link(paper_ids: list[str]) -> str:
    """HTML link under an answer: opens the Map tab with these papers lit."""
    ids = [quote(p, safe="") for p in dict.fromkeys(paper_ids) if p]
    if not ids:
        return ""
    n = len(ids)
    return (f'<a class="pc-show-map" href="{MAP_LINK}{",".join(ids)}" '
            f'title="light the cited papers on the map of the library">show on map ({n} paper{"s" if n != 1 else ""})</a>')


def cited_ids(rendered) -> list[str]:
    return [c.paper.paper_id for c in (getattr(rendered, "citations", None) or []) if getattr(c, "paper", None)]


def _lower_priority() -> None:
    """This thread at nice 10 (Linux sets it per thread): a map computed unasked yields to the answers."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError):
        pass


class MapTab:
    def __init__(self, library, settings, root: Path):
        self.library = library
        self.settings = settings
        self.root = root / "map"
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._ready: tuple[str, str, str] | None = None  # (generation, data file, note)
        self._error = ""
        self._message = ""  # nothing to map (empty or one-paper library)

    # -- computing ------------------------------------------------------------------------------

    def _compute(self, background: bool = False) -> None:
        if background:
            _lower_priority()
        try:
            m = library_map(self.library, self.settings, refit="never")
            note = ""
            if needs_refit(m, self.settings) or refitting(self.library):
                refit_in_background(self.library, self.settings)
                note = (f"{100 * m.drift:.0f} % of the papers were added or removed since this layout was computed; "
                        "it is being recomputed in the background (reopen the tab in a while).")
            path = self.root / f"map-{len(m.ids)}-{uuid.uuid4().hex[:12]}.json"
            data = viewer_data(m, self.library.catalogue)
            path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
            old = self._ready
            self._ready, self._error, self._message = (m.generation, str(path), note), "", ""
            if old and old[1] != str(path):
                Path(old[1]).unlink(missing_ok=True)
        except TooFewPapers as exc:
            self._ready, self._message = None, str(exc)
        except Exception as exc:  # noqa: BLE001 - shown in the tab; the rest of the UI is unaffected
            log.exception("the map could not be computed")
            self._error = f"The map could not be computed: {type(exc).__name__}: {exc}"

    def warm(self) -> None:
        """Start computing the map as the app starts, so that the first open of the tab finds it ready (a
        fresh install's seeds are mapped while the reader is still in the chat): on its own thread, at a
        lower CPU priority than the answers."""
        if len(self.library.catalogue) >= 2:
            self._current(background=True)

    def _current(self, background: bool = False) -> bool:
        """True when the map shown is that of the library's current generation and no refit has finished
        since; else starts bringing it up to date."""
        self.library.refresh()
        gen = self.library.records.generation  # the generation the map is keyed on
        with self._lock:
            if self._ready and self._ready[0] == gen and (not self._ready[2] or refitting(self.library)):
                return True
            if self._worker is None or not self._worker.is_alive():
                self._error = ""
                self._worker = threading.Thread(target=self._compute, args=(background,), daemon=True,
                                                name="paperchat-map-view")
                self._worker.start()
            return False

    def view(self):
        """The tab's HTML, and whether to keep polling."""
        if not self._current() and self._worker is not None:
            self._worker.join(timeout=3.0)  # small libraries are done by now: no flash of "computing"
        running = self._worker is not None and self._worker.is_alive()
        if self._message and self._ready is None and not running:
            return empty_panel(self._message), gr.Timer(active=False)
        if self._error and not running:
            return empty_panel(self._error), gr.Timer(active=False)
        if self._ready is None:
            n = len(self.library.catalogue)
            return (f'<div class="pc-empty" id="pc-map-wait">Computing the map of {n:,} papers… (the first map of a library '
                    f"takes seconds for a few thousand papers, a few minutes for 90,000)</div>"), gr.Timer(active=True)
        gen, path, note = self._ready
        polling = (self._worker is not None and self._worker.is_alive()) or (bool(note) and refitting(self.library))

        note_html = f'<p class="pc-note">{h(note)}</p>' if note else ""
        n = int(Path(path).stem.split("-")[1])  # the map's papers (named in its file): which plotly.js it needs
        return (f'{note_html}<div id="pc-map" data-src="/gradio_api/file={h(path)}" '
                f'data-plotly="/gradio_api/file={h(str(plotly_js_path(n)))}" data-key="{h(Path(path).stem)}"></div>',
                gr.Timer(active=polling))

    def card(self, paper_id: str) -> str:
        paper_id = (paper_id or "").strip()
        if not paper_id:
            return empty_panel("Click a paper on the map to see its card here.")
        got = self.library.get_papers([paper_id])
        if paper_id not in got:
            return empty_panel("That paper is no longer in the library.")
        return card(0, None, got[paper_id])

    def allowed_paths(self) -> list[str]:
        return [str(self.root), str(plotly_js_path().parent), str(plotly_js_path(0).parent)]

    # -- layout ---------------------------------------------------------------------------------

    def build(self, tab) -> None:
        """The tab's components and events (call inside `with gr.Tab(...) as tab`)."""
        with gr.Row(equal_height=False):
            with gr.Column(scale=8, min_width=480):
                view = gr.HTML(empty_panel("Open this tab to draw the map of the library."), elem_id="pc-map-box",
                               padding=False)
            with gr.Column(scale=3, min_width=300):
                # pc-math: app.js typesets $…$ in it with KaTeX, as in the chat's and the Library's cards
                cardbox = gr.HTML(self.card(""), elem_id="pc-map-card", padding=False, elem_classes=["pc-math"])
        pick = gr.Textbox(visible="hidden", elem_id="pc-map-pick", show_label=False, container=False)
        timer = gr.Timer(0.5, active=False)  # a map done between polls is drawn within half a second
        draw = dict(fn=None, js="() => { window.pcMapOpen && window.pcMapOpen(); }", api_visibility="private",
                    show_progress="hidden", queue=False)
        tab.select(self.view, None, [view, timer], api_visibility="private", show_progress="hidden").then(**draw)
        timer.tick(self.view, None, [view, timer], api_visibility="private", show_progress="hidden").then(**draw)
        pick.change(self.card, pick, cardbox, api_visibility="private", show_progress="hidden")
        self.warm()

    def js(self) -> str:
        """The client side: the viewer plus the glue to Gradio (one arrow function body for launch's js)."""
        # where plotly.js is served: map.js loads it while the browser is idle, before the tab is opened (the
        # bundle for the library's size now; a map that outgrew it loads the other on open)
        bundle = plotly_js_path(len(self.library.catalogue))
        plotly = "window.__paperchatPlotly = " + json.dumps(f"/gradio_api/file={bundle}") + ";\n"
        return plotly + viewer_js() + "\n" + (HERE / "map.js").read_text(encoding="utf-8")
