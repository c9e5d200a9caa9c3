"""Removing papers from the Library tab: one paper (from its card), the ticked papers, or a whole file; each
asked first ("Remove 3 papers? …"), then done through the tab's writer Library (Library.remove /
remove_source: vectors, BM25 and catalogue together, crash-safe like ingest)."""

from __future__ import annotations

from collections.abc import Callable

import gradio as gr

from rag.library.library import Library

from ui import markup
from ui.render import md
from ui.streaming import error_text


class LibraryEdit:
    def __init__(self, library: Library, writer: Callable[[], Library]):
        self.library = library
        self.writer = writer

    # -- what can be removed ----------------------------------------------------------

    def source_choices(self) -> list[tuple[str, str]]:
        """(label, source id) for every file of the library, with its paper count."""
        return [(f"{s.name} · {s.papers} paper{'s' if s.papers != 1 else ''}", s.source_id)
                for s in self.library.sources()]

    def _title(self, pid: str) -> str:
        return markup.plain(self.library.catalogue.get(pid, {}).get("title", "") or pid)

    def ask_papers(self, ids: list[str]):
        ids = [i for i in dict.fromkeys(ids or []) if i]
        if not ids:
            return None, gr.skip(), gr.Group(visible=False), "Tick the papers to remove first (the ✓ column)."
        titles = [self._title(i) for i in ids]
        shown = "; ".join(f"“{md(t[:80])}”" for t in titles[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        shown += "."  # the list ends its sentence
        n = len(ids)
        question = (f"**Remove {n} paper{'s' if n != 1 else ''} from the library?** {shown}  \n"
                    "Their vectors, search entries and records go; add the file again to bring them back.")
        return {"ids": ids}, question, gr.Group(visible=True), ""

    def ask_source(self, source_id: str | None):
        if not source_id:
            return None, gr.skip(), gr.Group(visible=False), "Choose a file to remove first."
        label = next((lab for lab, sid in self.source_choices() if sid == source_id), source_id)
        question = (f"**Remove the file {md(label)} from the library?**  \n"
                    "Its papers go, except those another file also holds (they stay, under that file).")
        return {"source": source_id}, question, gr.Group(visible=True), ""

    # -- doing it -------------------------------------------------------------------

    def confirm(self, pending: dict | None):
        """Do the removal asked; the card closes; the line says what happened."""
        hide = gr.Group(visible=False)
        if not pending:
            return None, hide, hide, None, ""
        try:
            lib = self.writer()
            report = lib.remove_source(pending["source"]) if "source" in pending else lib.remove(pending["ids"])
            summary = report.summary()
            self.library.refresh()
            said = f"{md(summary)} — {len(self.library)} papers in the library"
        except Exception as exc:  # noqa: BLE001 - shown to the user as one line
            said = f"**Could not remove:** {md(error_text(exc))}"
        return None, hide, hide, None, said

    # -- components and events -----------------------------------------------------

    @staticmethod
    def ticked_label(ticked: list[str] | None):
        """The button names how many papers it would remove ("Remove ticked (2)…"); greyed with none ticked."""
        n = len(ticked or [])
        return gr.Button(f"Remove ticked ({n})…" if n else "Remove ticked…", interactive=bool(n))

    def build_ticked_button(self) -> None:
        self.remove_ticked = gr.Button("Remove ticked…", size="sm", scale=0, min_width=150, elem_id="pc-remove-ticked",
                                       interactive=False)

    def build_source_picker(self) -> None:
        # a label of its own: beside "Remove file…" an unlabelled empty box said nothing of what it picks
        self.source = gr.Dropdown([], value=None, show_label=True, container=True, scale=3, min_width=180,
                                  elem_id="pc-source-pick", info=None, allow_custom_value=False,
                                  label="File to remove")
        self.remove_file = gr.Button("Remove file…", size="sm", scale=0, min_width=120, elem_id="pc-remove-file")

    def build_card_button(self) -> None:
        self.remove_paper = gr.Button("Remove this paper…", size="sm", variant="stop", elem_id="pc-remove-paper")

    def build_confirm(self) -> None:
        self.pending = gr.State(None)
        with gr.Group(visible=False, elem_id="pc-confirm") as self.confirm_group:
            self.question = gr.Markdown(elem_id="pc-confirm-text", padding=True)
            with gr.Row():
                self.yes = gr.Button("Remove", variant="stop", size="sm", elem_id="pc-confirm-yes")
                self.no = gr.Button("Cancel", size="sm", elem_id="pc-confirm-no")
        self.result = gr.Markdown(elem_id="pc-remove-result")

    def wire(self, ticked, current, card_group, refresh: list[dict]) -> None:
        asked = [self.pending, self.question, self.confirm_group, self.result]
        quiet = dict(api_visibility="private", show_progress="hidden")
        self.remove_paper.click(lambda pid: self.ask_papers([pid] if pid else []), [current], asked, **quiet)
        self.remove_ticked.click(self.ask_papers, [ticked], asked, **quiet)
        self.remove_file.click(self.ask_source, [self.source], asked, **quiet)
        self.no.click(lambda: (None, gr.Group(visible=False)), None, [self.pending, self.confirm_group],
                      queue=False, **quiet)
        event = self.yes.click(self.confirm, [self.pending],
                               [self.pending, self.confirm_group, card_group, current, self.result],
                               concurrency_limit=1, concurrency_id="ingest", **quiet)
        for step in refresh:
            event = event.then(**step)

