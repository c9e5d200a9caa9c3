"""The map in a real browser (headless Debian Chromium, Playwright): the standalone page of the seeds and
the UI's Map tab. What a researcher does: sees 76 points and the topic labels, hovers a point for its
title, clicks it for its card, filters by venue (the rest dims, lit papers too), finds a title as she
types (the count right: "1 title matches"), reads in the legend what the lit points are, and after a
question finds the cited papers lit on the map, the app holding still while it draws and the card's
math typeset as in the chat."""

from __future__ import annotations

import pytest

from test_browser import QUESTION, app_url, browser  # noqa: F401 - the same served app and Chromium fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*")]

DIM = "rgba(170,170,170,0.18)"
LIT, LIT_DIM = "#e11d48", "rgba(225,29,72,0.25)"


@pytest.fixture(scope="module")
def seeds_map(seeds_library):
    from rag.maps.build import library_map

    return library_map(seeds_library)


def point_on_screen(page, i: int, plot: str = ".pcm-plot") -> tuple[float, float]:
    """Where point i of the scatter is drawn, in page pixels."""
    return tuple(page.evaluate(
        """([sel, i]) => {
            const gd = document.querySelector(sel), fl = gd._fullLayout, box = gd.getBoundingClientRect();
            const x = fl.xaxis.l2p(gd.data[0].x[i]) + fl._size.l + box.left;
            const y = fl.yaxis.l2p(gd.data[0].y[i]) + fl._size.t + box.top;
            return [x, y];
        }""", [plot, i]))


def test_standalone_page_at_800_px_puts_the_card_under_a_full_width_map(browser, seeds_library, seeds_map, tmp_path):
    """On a narrow window the card goes under the map instead of taking half its width, and the map keeps a
    usable height: the hover label of a paper fits inside the plot."""
    from rag.maps.page import write_page

    path = write_page(tmp_path / "map.html", seeds_map, seeds_library)
    page = browser.new_page(viewport={"width": 800, "height": 900})
    page.goto(path.as_uri())
    page.wait_for_function("window.paperMapReady", timeout=60_000)
    plot = page.locator(".pcm-plot").bounding_box()
    card = page.locator("#card").bounding_box()
    assert plot["width"] >= 760 and plot["height"] >= 500
    assert card["y"] >= plot["y"] + plot["height"] - 1 and card["width"] >= 760
    page.close()


@pytest.mark.parametrize("width", [420, 800, 1400])
def test_the_papers_fill_the_plot_and_every_label_shown_is_whole_and_apart(browser, seeds_library, seeds_map,
                                                                           tmp_path, width):
    """At 420 px the axes fitted the labels' text, not the papers: the 76 papers were a knot a quarter of the plot
    wide, its labels piled on one another, and a label centred near an edge was cut by it."""
    from rag.maps.page import write_page

    path = write_page(tmp_path / "map.html", seeds_map, seeds_library)
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(path.as_uri())
    page.wait_for_function("window.paperMapReady", timeout=60_000)
    page.wait_for_timeout(300)
    got = page.evaluate("""() => {
        const gd = document.querySelector('.pcm-plot'), fl = gd._fullLayout, d = gd.data[0];
        const span = (v, ax) => (Math.max(...v) - Math.min(...v)) / Math.abs(ax.range[1] - ax.range[0]);
        const frame = gd.getBoundingClientRect();
        const labels = Array.from(gd.querySelectorAll('.annotation'), g => {
            const b = g.getBoundingClientRect();
            return {text: g.textContent, left: b.left, right: b.right, top: b.top, bottom: b.bottom}; });
        return {x: span(d.x, fl.xaxis), y: span(d.y, fl.yaxis), labels,
                frame: {left: frame.left, right: frame.right, top: frame.top, bottom: frame.bottom}}; }""")
    # the papers span most of the plot in its narrower direction (the axes keep one scale)
    assert max(got["x"], got["y"]) >= 0.8, got
    labels, frame = got["labels"], got["frame"]
    assert len(labels) >= 3, labels
    for b in labels:  # whole: inside the plot
        assert (b["left"] >= frame["left"] and b["right"] <= frame["right"] and b["top"] >= frame["top"]
                and b["bottom"] <= frame["bottom"]), (b, frame)
    for i, a in enumerate(labels):  # apart: none covers another
        for b in labels[i + 1:]:
            apart = (a["right"] <= b["left"] or b["right"] <= a["left"] or a["bottom"] <= b["top"]
                     or b["bottom"] <= a["top"])
            assert apart, (a["text"], b["text"])
    if width >= 800:  # room for every topic's name
        assert len(labels) == len([t for t in seeds_map.topics if t.size]), labels
    page.close()


def test_standalone_page_of_the_seeds(browser, seeds_library, seeds_map, tmp_path):
    from rag.maps.page import write_page

    path = write_page(tmp_path / "map.html", seeds_map, seeds_library)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    remote: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: remote.append(r.url) if not r.url.startswith(("file:", "data:", "blob:")) else None)
    page.goto(path.as_uri())
    page.wait_for_function("window.paperMapReady", timeout=60_000)

    assert page.evaluate("document.querySelector('.pcm-plot').data[0].x.length") == 76
    # up to rag.maps.page.SVG_UP_TO papers the map is SVG (the small bundle, no WebGL context); past it, scattergl
    assert page.evaluate("document.querySelector('.pcm-plot').data[0].type") == "scatter"
    labels = page.evaluate("Array.from(document.querySelectorAll('.pcm-plot .annotation-text'), e => e.textContent)")
    named = [t.name for t in seeds_map.topics if t.size]
    assert sorted(labels) == sorted(named) and len(labels) >= 3

    # hover a paper: its title, venue and year; click it: its card
    i = 0
    title = seeds_library.catalogue[seeds_map.ids[i]]["title"]
    x, y = point_on_screen(page, i)
    page.mouse.move(x, y)
    page.wait_for_selector(".hoverlayer .hovertext")
    hover = page.text_content(".hoverlayer")  # SVG text: the title, then venue and year
    assert title[:30] in hover
    meta = seeds_library.catalogue[seeds_map.ids[i]]
    assert f"{meta['venue']} {meta['year']}" in hover
    page.mouse.click(x, y)
    page.wait_for_function("document.getElementById('card').dataset.paper")
    picked = page.evaluate("document.getElementById('card').dataset.paper")
    assert picked in seeds_map.ids
    assert seeds_library.catalogue[picked]["title"][:30] in page.inner_text("#card")

    # a venue filter dims the other papers, and says how many pass
    venue = page.locator(".pcm-venue option").nth(1).get_attribute("value")
    n_venue = sum(1 for p in seeds_map.ids if seeds_library.catalogue[p]["venue"] == venue)
    page.select_option(".pcm-venue", venue)
    colors = page.evaluate("document.querySelector('.pcm-plot').data[0].marker.color")
    assert sum(c == DIM for c in colors) == 76 - n_venue
    assert f"{n_venue} of 76" in page.inner_text(".pcm-count")

    # finding by title lights the match as one types (no Enter), counted in the singular, named in the legend
    page.type(".pcm-find", title[:25], delay=20)
    page.wait_for_function("document.getElementById('map').dataset.found !== undefined")
    page.wait_for_function(f"document.querySelector('.pcm-count').textContent.includes({title[:25]!r})")
    n_match = sum(1 for p in seeds_map.ids if title[:25].lower() in seeds_library.catalogue[p]["title"].lower())
    count = page.inner_text(".pcm-count")
    if n_match == 1:
        assert f"1 title matches “{title[:25]}”" in count, count
    else:
        assert f"{n_match} titles match" in count, count
    assert int(page.get_attribute("#map", "data-lit")) == n_match
    assert "matching" in page.text_content(".pcm-plot .legend")
    # the lit match follows the venue filter: dimmed when its venue is filtered out
    lit_color = page.evaluate("document.querySelector('.pcm-plot').data[1].marker.color")
    assert set(lit_color) <= {LIT, LIT_DIM}
    assert (LIT_DIM in lit_color) == (meta["venue"] != venue), (lit_color, meta["venue"], venue)
    page.select_option(".pcm-venue", "")
    assert set(page.evaluate("document.querySelector('.pcm-plot').data[1].marker.color")) == {LIT}
    # cleared: nothing lit, no legend, the plain count again
    page.fill(".pcm-find", "")
    page.wait_for_function("document.getElementById('map').dataset.lit === '0'")
    assert page.locator(".pcm-plot .legend .traces").count() == 0
    assert page.inner_text(".pcm-count").startswith("76 papers")

    page.screenshot(path=str(tmp_path / "map.png"))
    assert not errors, errors
    assert not remote, remote  # opens offline: nothing fetched from any server
    page.close()


WATCH = """() => { window.__pcFrames = []; const f = () => {
    const c = document.querySelector('.gradio-container'), tabs = document.querySelector('[role="tablist"]');
    const m = document.getElementById('pc-map');
    window.__pcFrames.push([Math.round(c.getBoundingClientRect().width), Math.round(tabs.getBoundingClientRect().top),
                            document.documentElement.scrollWidth, m ? m.dataset.ready || '0' : 'none']);
    if (!(m && m.dataset.ready === '1')) requestAnimationFrame(f); }; f(); }"""


@pytest.mark.parametrize("width", [1440, 800])
def test_map_tab_lights_the_answer_opens_cards_and_holds_still(browser, app_url, seeds_library, seeds_map, width,
                                                              tmp_path):
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    outside: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith((app_url, "data:", "blob:")) else None)
    page.set_default_timeout(90_000)
    page.goto(app_url, wait_until="domcontentloaded")
    page.wait_for_selector("#pc-input textarea")

    page.fill("#pc-input textarea", QUESTION)
    page.click("#pc-send")
    link = page.locator("#pc-chat a.pc-show-map").last
    link.wait_for()
    cited = link.get_attribute("href")
    assert cited.startswith("#map:")
    page.evaluate(WATCH)  # every frame from the click until the map is drawn
    link.click()  # opens the Map tab, the cited papers lit
    page.wait_for_selector("#pc-map[data-ready='1']")
    page.wait_for_function("+document.getElementById('pc-map').dataset.lit > 0")
    n_lit = int(page.get_attribute("#pc-map", "data-lit"))
    assert n_lit == len(cited[len("#map:"):].split(","))
    assert page.evaluate("document.querySelector('#pc-map .pcm-plot').data[0].x.length") == 76
    assert page.locator("#pc-map .annotation-text").count() >= 3
    # the legend says what the lit points are
    assert f"{n_lit} paper{'s' if n_lit != 1 else ''} of the last answer" in page.text_content("#pc-map .legend")

    # while it drew, the app kept its width and the tabs their place; nothing wider than the window
    frames = page.evaluate("window.__pcFrames")
    assert len({f[0] for f in frames}) == 1, sorted({f[0] for f in frames})
    assert len({f[1] for f in frames}) == 1, sorted({f[1] for f in frames})
    assert max(f[2] for f in frames) <= width, max(f[2] for f in frames)

    # a click on a paper with math in its abstract opens its card beside the map, the math typeset (KaTeX)
    papers = seeds_library.get_papers(seeds_map.ids)
    i = next(k for k, p in enumerate(seeds_map.ids) if "$" in papers[p].abstract)
    x, y = point_on_screen(page, i, "#pc-map .pcm-plot")
    page.mouse.click(x, y)
    page.wait_for_selector("#pc-map-card .pc-card")
    pid = page.evaluate("document.querySelector('#pc-map-pick textarea, #pc-map-pick input').value")
    assert seeds_library.catalogue[pid]["title"][:30] in page.inner_text("#pc-map-card")
    if "$" in papers[pid].abstract:
        page.wait_for_selector("#pc-map-card .katex")

    page.screenshot(path=str(tmp_path / f"map-tab-{width}.png"))
    assert not errors, errors
    assert not outside, outside  # plotly.js and the data come from the app itself
    page.close()
