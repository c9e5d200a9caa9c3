"""Reading with paperchat in a real browser (headless Debian Chromium, Playwright), as issue #17 and #21 ask:
math rendered (KaTeX from Gradio's own bundle), a paper's card on a row click, papers removed, a layout
that holds still while an answer streams, the answerer chosen in the page, and "Ask about these"."""

from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest

from test_browser import QUESTION, app_url, browser, open_page  # noqa: F401 - the same served app and Chromium fixtures
from test_llm_server import llama_server  # noqa: F401 - llama.cpp serving SmolLM2 on loopback

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*")]

RECORD_WIDTHS = """() => { window.__pcW = []; const c = document.querySelector('.gradio-container');
  const col = () => document.querySelector('#pc-chat').getBoundingClientRect().width | 0;
  const rec = () => window.__pcW.push([Math.round(c.getBoundingClientRect().width), col()]);
  new ResizeObserver(rec).observe(c); window.__pcT = setInterval(rec, 25); rec(); }"""


def library_search(page, text: str) -> None:
    page.click("button[role=tab]:has-text('Library')")
    page.fill("#pc-lib-search textarea", text)
    page.press("#pc-lib-search textarea", "Enter")
    page.wait_for_function("(t) => document.querySelector('#pc-lib-note').innerText.includes(t)", arg=text)


def cell(page, row: int, col: int):
    return page.locator(f"#pc-papers [data-testid='cell-{row}-{col}']")


def ask(page, text: str, mode: str = "Ask") -> None:
    page.get_by_role("radio", name=mode).check()
    page.fill("#pc-input textarea", text)
    n = page.locator("#pc-chat .pc-done").count()
    page.click("#pc-send")
    page.wait_for_function("(n) => document.querySelectorAll('#pc-chat .pc-done').length > n", arg=n)


def test_math_and_markup_render_in_chat_cards_and_library(browser, app_url, tmp_path):  # noqa: F811
    page = open_page(browser, app_url)
    ask(page, "What approximation error bounds hold for Transformers on Hölder class functions?")
    page.wait_for_selector("#pc-sources .pc-card .katex")
    sources = page.inner_text("#pc-sources")
    assert "$\\Omega" not in sources and "\\varepsilon" not in sources and "\\textit" not in sources
    assert page.locator("#pc-sources .katex").count() >= 2
    assert page.locator("#pc-chat .katex").count() >= 2, "the chat shows its math rendered too"
    answer = page.locator("#pc-chat .bot-row").last.inner_text()
    assert "$" not in answer and "\\" not in answer and "varepsilon" not in answer, answer
    page.screenshot(path=str(tmp_path / "math-chat.png"))

    # the Library tab: a row click opens the paper's card: whole abstract, roles, math and \textit rendered
    library_search(page, "anisotropy across eigenmodes inhomogeneity")
    title = cell(page, 0, 1).inner_text().rstrip(" *")
    cell(page, 0, 1).click()
    page.wait_for_selector("#pc-paper-card .pc-paper")
    # KaTeX typesets on the page's next mutation pass (ui/app.js), a moment after the card shows
    page.wait_for_selector("#pc-paper-card .pc-paper .katex", timeout=15000)
    card = page.locator("#pc-paper-card .pc-paper")
    assert title[:40] in card.locator(".pc-title").inner_text()
    assert "anisotropy" in card.locator("em").all_inner_texts()
    assert card.locator(".katex").count() >= 1 and "\\kappa" not in card.inner_text()
    roles = set(card.locator(".pc-sent").evaluate_all("els => els.map(e => e.dataset.role)"))
    assert roles & {"background", "objective", "method", "result"}, roles
    assert card.locator(".pc-role").first.is_visible()
    page.screenshot(path=str(tmp_path / "card.png"))
    assert not page.errors, page.errors
    page.close()


def test_ask_about_ticked_papers_cites_only_them(browser, app_url, tmp_path):  # noqa: F811
    page = open_page(browser, app_url)
    titles = []
    # the search lists only the papers above its relevance cut-off: the best match of each of two searches,
    # ticked one after the other (ticks are kept across searches)
    for query in ("hyper-connections residual stream", "optimal transport"):
        library_search(page, query)
        titles.append(cell(page, 0, 1).inner_text().rstrip(" *"))
        cell(page, 0, 0).click()
        page.wait_for_function("() => document.querySelector(`#pc-papers [data-testid='cell-0-0']`)"
                               ".innerText.includes('☑')")
    assert "(2)" in page.inner_text("#pc-ask-about")
    page.click("#pc-ask-about")
    page.wait_for_selector("#pc-scope-row:visible")
    assert "2 ticked papers" in page.inner_text("#pc-scope")
    ask(page, QUESTION)
    cited = page.locator("#pc-sources .pc-turn").first.locator(".pc-card .pc-title").all_inner_texts()
    assert cited and all(any(c[:40] in t or t[:40] in c for t in titles) for c in cited), (cited, titles)
    page.screenshot(path=str(tmp_path / "scoped.png"))
    page.click("#pc-scope-clear")
    page.wait_for_selector("#pc-scope-row", state="hidden")
    # Known, left open: switching to the chat from "Ask about these" raises one error inside Gradio's own
    # Svelte bundle (a node it clears is already gone); the chat, the scope and the answer are unaffected.
    assert not [e for e in page.errors if "Cannot set properties of null (setting 'textContent')" not in e], \
        page.errors
    page.close()


@pytest.mark.parametrize("size", [(1440, 1000), (800, 900), (420, 900)])
def test_layout_holds_still_while_an_answer_streams(browser, app_url, tmp_path, size):  # noqa: F811
    page = open_page(browser, app_url, *size)
    # app.js names the side once the page has laid itself out (it checks after each change, 60 ms later)
    side = "on the right" if size[0] >= 1200 else "below"
    page.wait_for_function("(s) => document.querySelector('#pc-chat .pc-hello').innerText.includes(s)", arg=side)
    hello = page.inner_text("#pc-chat .pc-hello")
    if size[0] >= 1200:
        assert "on the right" in hello and "below" not in hello
    else:  # the sources column is stacked under the chat: the text says so
        assert "below" in hello and "on the right" not in hello
        box = page.evaluate("() => [document.querySelector('#pc-sources-col').getBoundingClientRect().top, "
                            "document.querySelector('#pc-chat').getBoundingClientRect().bottom]")
        assert box[0] >= box[1]
    # the status line: no separator "·" is left visible at the start of a line
    lone = page.evaluate("""() => { const clip = document.querySelector('.pc-status-clip').getBoundingClientRect();
        const stats = Array.from(document.querySelectorAll('.pc-status > .pc-stat'));
        return stats.filter((s, i) => { const r = s.getBoundingClientRect();
          const dotVisible = r.left >= clip.left - 1;
          const startsLine = i === 0 || stats[i - 1].getBoundingClientRect().top < r.top - 4;
          return dotVisible && startsLine; }).length; }""")
    assert lone == 0
    # and none of its words is cut at the clipped left edge (at 420 px the answerer's item wrapped inside itself
    # and its next lines began in the clipped 16 px: "swerer: extractive (no language model", "nfigured …")
    cut = page.evaluate("""() => { const clip = document.querySelector('.pc-status-clip').getBoundingClientRect();
        const w = document.createTreeWalker(document.querySelector('.pc-status'), NodeFilter.SHOW_TEXT), out = [];
        for (let n = w.nextNode(); n; n = w.nextNode()) { if (!n.data.trim()) continue;
          const r = document.createRange(); r.selectNodeContents(n);
          if (Array.from(r.getClientRects()).some(x => x.width > 0 && x.left < clip.left - 1)) out.push(n.data); }
        return out; }""")
    assert not cut, f"the status line's text is cut at its left edge: {cut}"
    # the filters' labels stay on one line, and the chosen answerer's name is shown whole
    labels = page.locator("#pc-filters [data-testid='block-info']").evaluate_all(
        "els => els.filter(e => e.offsetParent).map(e => [e.innerText, Math.round(e.getBoundingClientRect().height)])")
    assert all(h <= 24 for _, h in labels), labels
    shown = page.evaluate("() => { const i = document.querySelector('#pc-answerer input');"
                          " return [i.value, i.scrollWidth, i.clientWidth]; }")
    assert shown[1] <= shown[2], f"the answerer's name is cut: {shown}"
    page.evaluate(RECORD_WIDTHS)
    ask(page, "Mamba and selective state space models", "Summarise an area")
    page.wait_for_timeout(400)
    widths = {tuple(w) for w in page.evaluate("window.__pcW")}
    assert len(widths) == 1, f"the layout changed width while the answer streamed: {sorted(widths)}"
    # a long answer is shown from its top (app.js places it 150 to 1500 ms after it is complete: on a loaded
    # machine, at 420 px, the first look came before the last placing)
    where = """() => { const log = document.querySelector('#pc-chat [role="log"]');
        const rows = log.querySelectorAll('.message-row.bot-row'); const last = rows[rows.length - 1];
        return [last.getBoundingClientRect().top - log.getBoundingClientRect().top, last.offsetHeight,
                log.clientHeight]; }"""
    try:
        page.wait_for_function(f"() => {{ const t = ({where})(); return -12 <= t[0] && t[0] < t[2]; }}", timeout=5000)
    except Exception:  # noqa: BLE001 - the assertion below says where it stands
        pass
    top = page.evaluate(where)
    assert -12 <= top[0] < top[2], top  # its first line in view (a row has some padding above the text)
    page.screenshot(path=str(tmp_path / f"layout-{size[0]}.png"), full_page=True)
    # the Library's search: each paper's score shown, a seed file's name on one line
    library_search(page, "optimal transport")
    assert re.fullmatch(r"\d+\.\d\d", cell(page, 0, 6).inner_text().strip()), cell(page, 0, 6).inner_text()
    lines = cell(page, 0, 4).locator("span").first.evaluate(
        "s => { const r = document.createRange(); r.selectNodeContents(s); return r.getClientRects().length; }")
    assert cell(page, 0, 4).inner_text().endswith(".txt") and lines == 1, lines
    page.screenshot(path=str(tmp_path / f"library-{size[0]}.png"))
    assert not page.errors, page.errors
    page.close()


def test_removing_a_paper_and_a_file(browser, tmp_path):  # noqa: F811
    from procs import free_port

    from rag.library.library import Library
    from rag.settings import Settings
    from ui.app import serve

    settings = Settings(home=tmp_path / "home", embedder="fake", llm="extractive")
    lib = Library(settings)
    a, b = tmp_path / "alpha.jsonl", tmp_path / "beta.jsonl"
    a.write_text("\n".join(json.dumps(r) for r in [
        {"title": "Gated graph colouring", "abstract": "We colour graphs with gated heuristics and prove a bound."},
        {"title": "Sparse attention kernels", "abstract": "Sparse attention kernels cut memory traffic."}]) + "\n")
    b.write_text("\n".join(json.dumps(r) for r in [
        {"title": "Optimal transport barycentres", "abstract": "Barycentres of measures under optimal transport."},
        {"title": "Tropical geometry of networks", "abstract": "ReLU networks seen through tropical geometry."}]) + "\n")
    lib.ingest([a, b], progress=False)
    port = free_port()
    demo = serve(settings, port=port, library=lib, prevent_thread_lock=True, quiet=True)
    try:
        page = open_page(browser, f"http://127.0.0.1:{port}/")
        page.click("button[role=tab]:has-text('Library')")
        page.wait_for_function("document.querySelector('#pc-lib-note').innerText.includes('4 papers')")
        row = next(r for r in range(4) if "Sparse attention" in cell(page, r, 1).inner_text())
        cell(page, row, 1).click()
        page.wait_for_selector("#pc-paper-card .pc-paper")
        page.click("#pc-remove-paper")
        page.wait_for_selector("#pc-confirm:visible")
        assert "Sparse attention kernels" in page.inner_text("#pc-confirm-text")
        page.click("#pc-confirm-yes")
        page.wait_for_function("document.querySelector('#pc-lib-note').innerText.includes('3 papers')")
        assert "Sparse attention" not in page.inner_text("#pc-papers")
        assert "removed 1" in page.inner_text("#pc-remove-result")

        # a whole file: picked, confirmed, gone
        page.click("#pc-source-pick input")
        page.click("ul[role=listbox] li:has-text('beta')")
        page.click("#pc-remove-file")
        page.wait_for_selector("#pc-confirm:visible")
        assert "beta" in page.inner_text("#pc-confirm-text")
        page.click("#pc-confirm-yes")
        page.wait_for_function("document.querySelector('#pc-lib-note').innerText.startsWith('1 paper ')")
        shown = page.inner_text("#pc-papers")
        assert "Gated graph colouring" in shown and "Optimal transport" not in shown and "Tropical" not in shown
        page.screenshot(path=str(tmp_path / "removed.png"))
        assert not page.errors, page.errors
        page.close()
    finally:
        demo.close()
    assert len(Library(settings)) == 1


def model_tasks(endpoint: str) -> list:
    """What llama.cpp's slots have worked on (their task ids): changes when the model is asked."""
    with urllib.request.urlopen(endpoint.rsplit("/v1", 1)[0] + "/slots", timeout=10) as r:
        return [(x.get("id_task"), x.get("is_processing")) for x in json.load(r)]


def test_the_answerer_is_chosen_in_the_page(browser, seeds_library, llama_server, tmp_path):  # noqa: F811
    """A server configured with a language model (llama.cpp serving SmolLM2) offers it and the extractive
    answerer; each session picks one in the page, and its answers say which answered."""
    from procs import free_port

    from ui.app import serve

    endpoint = llama_server
    settings = seeds_library.settings.model_copy(update={
        "llm": "openai", "openai_base_url": endpoint, "model": "smollm2", "openai_api_key": None})
    port = free_port()
    demo = serve(settings, port=port, library=seeds_library, prevent_thread_lock=True, quiet=True)
    try:
        page = open_page(browser, f"http://127.0.0.1:{port}/")
        assert "smollm2" in page.input_value("#pc-answerer input")
        assert "OPENAI_API_KEY" not in page.inner_text("#pc-top")  # nothing to type, nothing to set
        page.click("#pc-answerer input")
        options = page.locator("ul[role=listbox] li").all_inner_texts()
        assert any("smollm2" in o for o in options) and any("extractive" in o for o in options)
        page.click("ul[role=listbox] li:has-text('extractive')")
        before = model_tasks(endpoint)
        ask(page, QUESTION)
        assert "answerer: extractive" in page.locator("#pc-chat .pc-by").last.inner_text()
        assert model_tasks(endpoint) == before, "the extractive answerer called the model"
        page.click("#pc-answerer input")
        page.click("ul[role=listbox] li:has-text('smollm2')")
        page.fill("#pc-input textarea", "What do manifold-constrained hyper-connections restore?")
        page.click("#pc-send")
        # the model answers: its name under the pending answer, then its tokens stream in (on a loaded
        # machine SmolLM2 writes ~1 token/s, so the test does not wait for the whole answer)
        last = page.locator("#pc-chat .bot-row").last
        page.wait_for_function("() => { const b = document.querySelectorAll('#pc-chat .bot-row');"
                               " return b.length >= 2 && b[b.length - 1].innerText.includes('answerer: smollm2'); }")
        # and llama.cpp is working on it (its /slots); the whole answer is not awaited: on a loaded machine
        # SmolLM2 writes about one token a second
        deadline = time.monotonic() + 180
        while model_tasks(endpoint) == before and time.monotonic() < deadline:
            time.sleep(1)
        assert model_tasks(endpoint) != before, "the chosen model was not asked"
        assert "answerer: extractive" in page.locator("#pc-chat .pc-done").first.inner_text()
        assert last.is_visible()
        # another session still starts from the server's default
        other = open_page(browser, f"http://127.0.0.1:{port}/")
        assert "smollm2" in other.input_value("#pc-answerer input")
        page.screenshot(path=str(tmp_path / "answerer.png"))
        assert not page.errors, page.errors
        other.close()
        page.close()
    finally:
        demo.close()
