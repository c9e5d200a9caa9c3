"""The chat UI through its public surface: a served Gradio app driven with gradio_client.

One app over the session's seed library (real offline embedder) answers the seed questions; a second,
tiny app (fake embedder, login, 1 MB upload limit) takes uploads so the seed library stays untouched.
"""

from __future__ import annotations

import importlib.util
import json
import re
import time
import uuid
from pathlib import Path

from procs import free_port
import pytest

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*")]  # gradio's own pandas use

# Paraphrases of the mHC abstract (seeds/000_*.txt, record 2), not its wording.
QUESTION = "How can a widened residual stream keep the identity-mapping property so that large-scale training stays stable?"
CLAIM = "Projecting the residual connection space onto a manifold restores the identity mapping of hyper-connections."
MHC = "Manifold-Constrained Hyper-Connections"


def text_of(message: dict) -> str:
    """A chat message's text, whether content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


@pytest.fixture(scope="module")
def app_url(seeds_library, seeds_settings):
    from ui.app import serve

    port = free_port()
    demo = serve(seeds_settings, port=port, seed=True, library=seeds_library, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


@pytest.fixture(scope="module")
def client(app_url):
    from gradio_client import Client

    return Client(app_url, verbose=False)


def test_render_escapes_links_and_streams():
    from ui import render
    from ui.filters import make_filters
    from ui.streaming import stream_task as _stream

    hostile = "<img src=x onerror=alert(1)> **bold** [link](http://evil.example) ![i](http://x/y.png) $x$ {{v}} ${v}"
    out = render.md(hostile)
    assert "<img" not in out and "&lt;img" in out
    assert "\\[link\\](http" in out and "\\*\\*bold\\*\\*" in out and "\\$x\\$" in out  # shown, not rendered
    html_ = render.highlight("Intro <script>alert(1)</script>. The key finding holds.  Outro.", "The key finding holds.")
    assert "<script>" not in html_ and "&lt;script&gt;" in html_
    assert "<mark>The key finding holds.</mark>" in html_
    assert "${" not in render.h("${x} {{y}}") and "{{" not in render.h("${x} {{y}}")
    # evidence missing from the abstract is still shown, marked, on its own
    assert '<p class="pc-evidence-alone"><mark>elsewhere</mark></p>' in render.highlight("Abstract.", "elsewhere")

    linked = render.link_marks("Mamba is fast [1]. It scales [2, 3]. See [9].", 4, {1, 2, 3})
    assert linked.count('class="pc-cite"') == 3 and 'href="#pc-4-1"' in linked and 'href="#pc-4-3"' in linked
    assert "\\[9\\]" in linked  # a mark without a card stays plain text

    assert render.safe_filename("../../etc/passwd") == "passwd"
    assert render.safe_filename("..") == "upload"
    assert render.safe_filename("论文.txt") == "upload.txt"
    name = render.safe_filename("my list; $(rm -rf ~) <x>.jsonl.gz")
    assert name.endswith(".jsonl.gz") and re.fullmatch(r"[A-Za-z0-9._-]+", name) and not name.startswith(".")
    assert len(render.safe_filename("a" * 300 + ".csv")) <= 100

    f = make_filters("ICML", "2026", "2020")
    assert (f.venue, f.year_from, f.year_to) == ("ICML", 2020, 2026)
    assert not make_filters("", "any", "any")

    # answers stream: text grows as the task calls on_token from its worker thread
    def task(on_token):
        for piece in ("one ", "two ", "three"):
            on_token(piece)
            time.sleep(0.05)
        return "done"

    gen, seen = _stream(task, {}, tokens=True), []
    while True:
        try:
            seen.append(next(gen))
        except StopIteration as stop:
            assert stop.value == "done"
            break
    assert len(seen) >= 2 and seen[-1] == "one two three" and seen[0] != seen[-1]


def test_ask_through_the_chat(client):
    job = client.submit(QUESTION, [], "Ask", "", "any", "any", api_name="/respond")
    box, chat, sources, md_file, bib_file = job.result(timeout=120)
    updates = job.outputs()
    assert len(updates) >= 2, "the chat answers in several updates (placeholder, streamed text, final)"
    assert updates[0][0] == ""  # the input box is cleared at once
    assert [m["role"] for m in chat] == ["user", "assistant"]
    answer = text_of(chat[-1])
    assert re.search(r'<a class="pc-cite" href="#pc-1-\d+"', answer), answer
    # the sources panel: a card per cited paper, the mHC abstract with its evidence highlighted
    assert MHC in sources and "<mark>" in sources
    assert re.search(r"000_e59311403e2266af\.txt, record 2", sources)
    # each card's badge is the grade of its evidence for the question (not a bare "supported"), with its class.
    # The mHC sentence answers; the scorer gives it 0.86 (0.91-0.94 before the role GRUs and the scorer retrained
    # on them), under `answers_at` 0.95 (chosen out of fold on mlqa train so that `answers` is right >= 0.85 of
    # the time, issue 30), so the badge may read related: either way it shows the probability, and that is high.
    badge = re.search(r'class="pc-badge (pc-ok|pc-related)">(answers|related) (\d\.\d\d)<', sources)
    assert badge and {"answers": "pc-ok", "related": "pc-related"}[badge.group(2)] == badge.group(1), sources
    assert float(badge.group(3)) >= 0.8 and "title derived" in sources
    for n in set(re.findall(r'href="#(pc-1-\d+)"', answer)):
        assert f'id="{n}"' in sources, f"[{n}] has no source card"
    # exports
    md_text = Path(md_file).read_text(encoding="utf-8")
    assert md_text.startswith(f"# {QUESTION}") and "## References" in md_text and MHC in md_text
    assert Path(bib_file).read_text(encoding="utf-8").lstrip().startswith("@")

    # the plain API endpoint: the same answer as the CLI's JSON
    data = client.predict(QUESTION, "Ask", api_name="/query")
    assert not data["abstained"] and data["citations"]
    assert any(c["source"].startswith("000_") and c["position"] == 2 for c in data["citations"])
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", data["answer"])}
    assert cited and cited <= {c["n"] for c in data["citations"]}


@pytest.mark.skipif(importlib.util.find_spec("rag.tasks.cite") is None, reason="rag.tasks.cite not there yet")
def test_cite_and_summarise_modes(client):
    ev = client.predict(CLAIM, "Find support for a claim", api_name="/query")
    assert ev["evidence"], ev
    assert MHC in ev["evidence"][0]["title"] and ev["evidence"][0]["stance"] in {"supports", "contradicts", "related"}
    assert 'class="pc-badge' in ev["html"] and "<mark>" in ev["html"]
    if importlib.util.find_spec("rag.tasks.summarise") is not None:
        s = client.predict("Mamba and selective state space models", "summarise", api_name="/query")
        assert s["themes"] and s["citations"]
        assert 'class="pc-themes"' in s["html"] and s["chat"].count('class="pc-cite"') >= len(s["citations"])


def test_upload_auth_and_library(tmp_path):
    """Uploads: sanitised names, rejections listed, hostile HTML escaped; the login; the upload size limit;
    no upload or export left behind in Gradio's cache or the temp folder."""
    from gradio_client import Client, handle_file

    from rag.library.library import Library
    from rag.settings import Settings
    from ui.app import serve

    settings = Settings(home=tmp_path / "home", embedder="fake", llm="extractive", auth_user="alice",
                        auth_password="s3cret-pw", max_upload_mb=1)
    port = free_port()
    demo = serve(settings, port=port, library=Library(settings), prevent_thread_lock=True, quiet=True)
    try:
        url = f"http://127.0.0.1:{port}/"
        with pytest.raises(Exception):
            Client(url, verbose=False)  # no credentials, no app
        c = Client(url, auth=("alice", "s3cret-pw"), verbose=False, download_files=str(tmp_path / "downloads"))
        chat = c.predict("anything", [], "Ask", "", "any", "any", api_name="/respond")[1]
        assert "library is empty" in text_of(chat[-1])

        up = tmp_path / "my list; $(x) .jsonl"
        records = [
            {"title": "Gated graph colouring", "venue": "NeurIPS", "year": 2024,
             "abstract": "We colour graphs with gated heuristics <script>alert(1)</script> and prove a bound.",
             "x_run": uuid.uuid4().hex},  # this run's bytes: other runs' copies in the shared cache do not count
            "this line is not JSON",
            {"title": "Sparse kernels", "venue": "ICLR", "year": 2023,
             "abstract": "Sparse attention kernels cut memory traffic on long sequences."},
        ]
        up.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf-8")
        report = c.predict([handle_file(str(up))], api_name="/ingest")
        assert "added 2" in report and "rejected 1" in report
        assert re.search(r"my_list_x\.jsonl:line 2", report.replace("\\", "")), report
        # Gradio's cached copy of the upload is gone once it is ingested (a shared server keeps no bombs).
        assert not cached_copies(up.read_bytes()), "the upload is still in Gradio's cache"

        stats, table, note, *_ = c.predict("", api_name="/papers")  # (+ the file picker, "Ask about these")
        assert "NeurIPS" in stats and "2023" in stats and "2 papers" in note
        assert table["headers"][4] == "File" and {row[4] for row in table["data"]} == {"my_list_x.jsonl"}
        # a search lists what matches, and says how many
        _, table, note, *_ = c.predict("gated heuristics graph colouring", api_name="/papers")
        assert "Gated graph colouring" in table["data"][0][1] and re.match(r"\d+ (papers? match|best matches)", note)

        data = c.predict("gated heuristics for graph colouring", "Ask", "NeurIPS", api_name="/query")
        assert data["citations"] and data["citations"][0]["title"] == "Gated graph colouring"
        # scoped to chosen papers (as "Ask about these" does): only they can be cited
        pid = next(p for p, m in demo.paperchat_ui.library.catalogue.items() if m["title"] == "Sparse kernels")
        data = c.predict("gated heuristics for graph colouring", "Ask", papers=pid, api_name="/query")
        assert all(x["paper_id"] == pid for x in data["citations"]), data["citations"]
        assert "<script>" not in data["html"] and "&lt;script&gt;" in data["html"]
        assert "<script>" not in data["chat"]

        big = tmp_path / "big.jsonl"
        big.write_text(json.dumps({"abstract": "x " * 700_000}) + "\n", encoding="utf-8")
        with pytest.raises(Exception):
            c.predict([handle_file(str(big))], api_name="/ingest")

        # Exports live in the session's folder, not copied into Gradio's cache; closing the server removes them.
        run = uuid.uuid4().hex  # in the question, so the export's bytes are this run's alone
        _, _, _, md_file, _ = c.predict(f"gated heuristics for graph colouring {run}", [], "Ask", "", "any", "any",
                                        api_name="/respond")
        export = Path(md_file).read_bytes()
        assert b"Gated graph colouring" in export and run.encode() in export and not cached_copies(export)
        ui = demo.paperchat_ui
        assert any((ui.export_root / "sessions").rglob("paperchat-*.md"))
    finally:
        demo.close()
    assert not ui.export_root.exists(), "the server's temp folder outlived it"


def cached_copies(content: bytes) -> list[Path]:
    """Files in Gradio's upload cache holding exactly these bytes."""
    from gradio.utils import get_upload_folder

    root = Path(get_upload_folder())
    return [p for p in root.rglob("*") if p.is_file() and p.stat().st_size == len(content) and p.read_bytes() == content]


def test_readme_says_what_the_ui_login_is():
    """The UI's login is Gradio's sign-in form (an HTTP Basic header is not accepted): the README and docs/ say so."""
    root = Path(__file__).resolve().parents[1]
    readme = "\n".join(p.read_text(encoding="utf-8") for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    assert not re.search(r"\bbasic auth\b(?!entication)", readme, re.IGNORECASE)  # it is not HTTP Basic auth
    assert "login form" in readme and "HTTP Basic" in readme


def test_an_unload_for_someone_elses_session_deletes_nothing(tmp_path):
    """Issue 28 item 15: Gradio's heartbeat route (no login asked) runs the unload handler for any session
    hash it is given; only the signed-in user the session belongs to ends it."""
    from types import SimpleNamespace

    from ui.chattab import ChatTab

    chat = ChatTab(library=None, settings=None, export_root=tmp_path, header=lambda: "")
    alice = SimpleNamespace(session_hash="alice-session", username="alice")
    folder = chat.session_dir(alice)
    (folder / "paperchat-answer-x.md").write_text("alice's export")
    chat.drop_session(SimpleNamespace(session_hash="alice-session", username=None))  # the heartbeat, no cookie
    chat.drop_session(SimpleNamespace(session_hash="alice-session", username="mallory"))
    chat.drop_session(SimpleNamespace(session_hash="never-seen", username=None))
    assert (folder / "paperchat-answer-x.md").read_text() == "alice's export"
    assert not (tmp_path / "sessions").exists() or len(list((tmp_path / "sessions").iterdir())) == 1
    chat.drop_session(alice)  # her own page closing
    assert not folder.exists()


@pytest.mark.timeout(240)
def test_sigterm_to_serve_removes_the_session_export_folders(tmp_path):
    """Issue 28 item 15: SIGTERM (systemd, docker stop) left /tmp/paperchat-ui-* behind."""
    import os
    import signal
    import subprocess
    import sys
    import urllib.request

    port = free_port()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PAPERCHAT_HOME": str(tmp_path / "home"), "PAPERCHAT_EMBEDDER": "fake"}
    proc = subprocess.Popen([sys.executable, "-m", "rag.cli", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 180
        while time.time() < deadline and proc.poll() is None:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        assert [p.name for p in tmp.glob("paperchat-ui-*")], "the server made no export folder"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not list(tmp.glob("paperchat-ui-*")), "export folders left behind"
    assert "Traceback" not in err and proc.returncode == 0, err[-2000:]


def test_a_summary_of_an_area_past_the_papers_maximum_does_not_promise_all():
    """"Show all" asks for at most MAX_K papers: past that the chat says how many it will summarise, not "all"."""
    from ui.summarysize import MAX_K, every_paper, more_line

    assert more_line(1, 4) == "4 more papers on this area: “Show all 5 papers” summarises them all (or set Papers to 5)."
    past = more_line(15, 150)
    assert f"“Show all {MAX_K} papers” summarises the {MAX_K} nearest" in past and "them all" not in past
    assert every_paper("topic", {"citations": [{}] * 15, "more": 150})["n"] == MAX_K  # what the button asks for
