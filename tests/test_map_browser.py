"""The map in a real browser (headless Debian Chromium, Playwright): the standalone page of the seeds and
the UI's Map tab. What a researcher does: sees 76 points and the topic labels, hovers a point for its
title, clicks it for its card, filters by venue (the rest dims), and after a question finds the cited
papers lit on the map."""

from __future__ import annotations

import pytest

from test_browser import QUESTION, app_url, browser  # noqa: F401 - the same served app and Chromium fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*")]

DIM = "rgba(170,170,170,0.18)"


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
    assert page.evaluate("document.querySelector('.pcm-plot').data[0].type") == "scattergl"
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

    # finding by title lights the match
    page.fill(".pcm-find", title[:25])
    page.press(".pcm-find", "Enter")
    assert int(page.get_attribute("#map", "data-lit")) >= 1

    page.screenshot(path=str(tmp_path / "map.png"))
    assert not errors, errors
    assert not remote, remote  # opens offline: nothing fetched from any server
    page.close()


def test_map_tab_lights_the_answer_and_opens_cards(browser, app_url, seeds_library, tmp_path):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
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
    link.click()  # opens the Map tab, the cited papers lit
    page.wait_for_selector("#pc-map[data-ready='1']")
    page.wait_for_function("+document.getElementById('pc-map').dataset.lit > 0")
    n_lit = int(page.get_attribute("#pc-map", "data-lit"))
    assert n_lit == len(cited[len("#map:"):].split(","))
    assert page.evaluate("document.querySelector('#pc-map .pcm-plot').data[0].x.length") == 76
    assert page.locator("#pc-map .annotation-text").count() >= 3

    # a click on a point opens its card beside the map
    x, y = point_on_screen(page, 5, "#pc-map .pcm-plot")
    page.mouse.click(x, y)
    page.wait_for_selector("#pc-map-card .pc-card")
    pid = page.evaluate("document.querySelector('#pc-map .pcm-plot').data[0].x.length && "
                        "document.querySelector('#pc-map-pick textarea, #pc-map-pick input').value")
    assert seeds_library.catalogue[pid]["title"][:30] in page.inner_text("#pc-map-card")

    page.screenshot(path=str(tmp_path / "map-tab.png"))
    assert not errors, errors
    assert not outside, outside  # plotly.js and the data come from the app itself
    page.close()
