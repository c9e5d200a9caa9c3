"""The paperchat web UI: a Gradio Blocks app over rag/ (nothing here but presentation).

    serve(settings)            # what `paperchat serve` and `make run` call
    build_app(settings, lib)   # the Blocks, for tests or embedding

This module holds the shell (header, status line, tabs) and the server; each tab is its own module:
ui/chattab.py, ui/librarytab.py, ui/maptab.py. One Library is shared by every session for reading;
everything else a session sees lives in per-session gr.State or a per-session temp dir.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import gradio as gr  # noqa: E402

from rag.library.library import Library  # noqa: E402
from rag.tasks.llm import describe  # noqa: E402 - what `serve` prints
from rag.settings import Settings  # noqa: E402

from ui import answerer  # noqa: E402
from ui.chattab import ChatTab  # noqa: E402
from ui.librarytab import LibraryTab  # noqa: E402
from ui.maptab import MapTab  # noqa: E402
from ui.markup import katex_assets  # noqa: E402
from ui.render import h  # noqa: E402
from ui.streaming import error_text  # noqa: E402

HERE = Path(__file__).resolve().parent
SEEDS = HERE.parent / "seeds"


class PaperchatUI:
    def __init__(self, settings: Settings, library: Library | None = None):
        self.settings = settings
        self.library = library if library is not None else Library(settings)
        self.export_root = Path(tempfile.mkdtemp(prefix="paperchat-ui-"))
        upload_root = self.export_root / "uploads"
        upload_root.mkdir()
        # Exports are served from the session's own folder rather than copied into Gradio's cache, so
        # that removing the folder when the session ends removes every copy.
        (self.export_root / "sessions").mkdir()
        gr.set_static_paths([self.export_root / "sessions"])
        atexit.register(self.cleanup)
        self.chat = ChatTab(self.library, settings, self.export_root, self.header)
        self.librarytab = LibraryTab(self.library, settings, upload_root)
        self.maptab = MapTab(self.library, settings, self.export_root)

    def cleanup(self) -> None:
        """Remove every file this server wrote (staged uploads, exports): on shutdown and at exit."""
        shutil.rmtree(self.export_root, ignore_errors=True)

    def status(self) -> str:
        try:
            n = len(self.library)
            lib = f"library <b>{h(self.library.name)}</b>: {n} paper{'s' if n != 1 else ''}"
            lib += f' <span class="pc-muted">(embedder {h(self.library.embedder_runs_on)})</span>'
        except Exception as exc:  # noqa: BLE001 - the status line must render even if the store is down
            lib = f"library unavailable: {h(error_text(exc))}"
        # each item carries its own separator, clipped at the start of a line (app.css): no lone "·"
        return (f'<div class="pc-status-clip"><div class="pc-status"><span class="pc-stat"><span class="pc-dot">'
                f'</span><span>Answerer: <b>{h(answerer.status(self.settings))}</b></span></span>'
                f'<span class="pc-stat"><span>{lib}</span></span></div></div>')

    def header(self) -> str:
        return ('<div class="pc-header"><div class="pc-brand"><span class="pc-logo">paperchat</span>'
                '<span class="pc-tagline">cited answers from paper abstracts</span></div>' + self.status() + "</div>")

    def blocks(self) -> gr.Blocks:
        # delete_cache: Gradio removes what it cached for this app (uploads, outputs) older than 6 h every
        # 30 min, and all of it when the server stops.
        with gr.Blocks(title="paperchat", analytics_enabled=False, fill_width=True,
                       delete_cache=(1800, 6 * 3600)) as demo:
            state = gr.State(None)
            header = gr.HTML(self.header(), elem_id="pc-top", padding=False)
            with gr.Tabs() as tabs:
                with gr.Tab("Chat", id="chat") as chat_tab:
                    self.chat.build()
                with gr.Tab("Library", id="library"):
                    self.librarytab.build()
                with gr.Tab("Map", id="map") as map_tab:
                    self.maptab.build(map_tab)
            self.librarytab.wire(demo, after_change=[self.chat.refresh_step(header)])
            # "Ask about these": the ticked papers become the chat's scope, and the chat opens
            self.librarytab.ask_about.click(
                lambda ids: (*self.chat.show_scope(ids), gr.Tabs(selected="chat") if ids else gr.skip()),
                [self.librarytab.ticked], [self.chat.scope, self.chat.scope_row, self.chat.scope_note, tabs],
                api_visibility="private", show_progress="hidden")
            self.chat.wire(demo, state, header, chat_tab)
        demo.paperchat_ui = self  # type: ignore[attr-defined]
        return demo


def build_app(settings: Settings, library: Library | None = None) -> gr.Blocks:
    """The Blocks app (not launched). Launch it through serve() or with launch_options(...) to keep its look."""
    return PaperchatUI(settings, library).blocks()


def launch_options(settings: Settings, demo: gr.Blocks, host: str = "127.0.0.1", port: int = 7860) -> dict:
    ui: PaperchatUI = demo.paperchat_ui  # type: ignore[attr-defined]
    opts: dict[str, Any] = dict(
        server_name=host, server_port=port, max_file_size=f"{settings.max_upload_mb}mb",
        css_paths=[HERE / "app.css", HERE / "map.css"],
        js=("() => {\nwindow.__paperchatKatex = " + json.dumps(katex_assets()) + ";\n("
            + (HERE / "app.js").read_text(encoding="utf-8") + ")();\n" + ui.maptab.js() + "\n}"),
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
    if not prevent_thread_lock and threading.current_thread() is threading.main_thread():
        # SIGTERM (systemd, docker stop, kill) ends the process without running atexit, leaving the session
        # export folders behind: make it the same orderly exit as Ctrl-C (the cleanup runs at exit).
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    demo.launch(prevent_thread_lock=prevent_thread_lock, quiet=quiet, inbrowser=False,
                **launch_options(settings, demo, host, port))
    return demo
