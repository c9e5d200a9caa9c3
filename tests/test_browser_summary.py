"""A summary's size in a real browser (issue 33 item 3; headless Debian Chromium through Playwright, as
tests/test_browser.py): the "Papers" control sets how many papers a summary covers, the chat says how many
more the area holds, and "Show all" summarises every one of them; the row holds at 800 and 1440 px
(screenshots left in the test's tmp dir)."""

from __future__ import annotations

import re

import pytest

from test_browser import app_url, browser, open_page  # noqa: F401 - the same served app and Chromium fixtures
from test_browser_layout import assert_holds
from test_browser_reading import ask

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*")]

# the newest summary's cited papers: numbered cards (earlier turns are folded away; related ones have no number)
CARDS = """() => Array.from(document.querySelectorAll('#pc-sources .pc-card[id]'))
  .filter(c => !c.closest('details.pc-earlier')).length"""


def test_the_papers_control_sets_a_summarys_size_and_show_all_covers_the_area(browser, app_url, tmp_path):  # noqa: F811
    page = open_page(browser, app_url, 1440, 900)
    assert not page.locator("#pc-k").is_visible()  # only a summary has a size
    page.get_by_role("radio", name="Summarise an area").check()
    page.wait_for_selector("#pc-k input")
    assert page.input_value("#pc-k input") == "15"
    page.fill("#pc-k input", "1")
    page.press("#pc-k input", "Tab")

    ask(page, "optimal transport", "Summarise an area")
    assert page.evaluate(CARDS) == 1, "the Papers control's 1 was not used"
    last = page.locator("#pc-chat .bot-row").last.inner_text()
    m = re.search(r"(\d+) more papers? on this area: “Show all (\d+) papers”", last)
    assert m, last
    more, n = int(m.group(1)), int(m.group(2))
    assert n == more + 1 and n >= 2
    button = page.locator("#pc-show-all")
    button.wait_for(state="visible")  # shown by the step after the answer (with the export buttons)
    assert button.inner_text().strip() == f"Show all {n} papers"
    assert_holds(page, "the Summarise mode with the Papers control and Show all", widths=[800, 1440])
    for w in (800, 1440):
        page.set_viewport_size({"width": w, "height": 900})
        page.wait_for_timeout(400)
        page.screenshot(path=str(tmp_path / f"summary-size-{w}.png"))
    page.set_viewport_size({"width": 1440, "height": 900})

    done = page.locator("#pc-chat .pc-done").count()
    button.click()
    page.wait_for_function("(n) => document.querySelectorAll('#pc-chat .pc-done').length > n", arg=done)
    assert page.evaluate(CARDS) == n, f"Show all cited {page.evaluate(CARDS)} papers, not the area's {n}"
    assert page.input_value("#pc-k input") == str(n)  # the control says what was used
    last = page.locator("#pc-chat .bot-row").last.inner_text()
    assert "more paper" not in last, last
    page.wait_for_function("() => !document.querySelector('#pc-show-all') "
                           "|| !document.querySelector('#pc-show-all').offsetParent")
    assert not page.errors, page.errors
    page.close()


def test_asks_list_of_an_areas_papers_offers_show_all_for_the_rest(browser, app_url, tmp_path):  # noqa: F811
    # "Which papers study X?" lists the papers a summary of X covers, as many as the Papers control says; the
    # papers left out were named by the CLI's "summarise … --k N", with no button in the chat to show them
    page = open_page(browser, app_url, 1440, 900)
    page.get_by_role("radio", name="Summarise an area").check()
    page.wait_for_selector("#pc-k input")
    page.fill("#pc-k input", "1")
    page.press("#pc-k input", "Tab")
    page.get_by_role("radio", name="Ask").check()
    page.wait_for_function("() => !document.querySelector('#pc-k') || !document.querySelector('#pc-k').offsetParent")

    ask(page, "Which papers study scaling laws?", "Ask")
    assert page.evaluate(CARDS) == 1
    last = page.locator("#pc-chat .bot-row").last.inner_text()
    m = re.search(r"(\d+) more papers? on this area: “Show all (\d+) papers” summarises them all\.", last)
    assert m and "--k" not in last, last
    n = int(m.group(2))
    button = page.locator("#pc-show-all")
    button.wait_for(state="visible")
    assert button.inner_text().strip() == f"Show all {n} papers"
    for w in (420, 800):
        page.set_viewport_size({"width": w, "height": 900})
        page.wait_for_timeout(400)
        page.screenshot(path=str(tmp_path / f"ask-list-{w}.png"))
    assert_holds(page, "Ask's list of an area's papers with Show all", widths=[420, 800, 1440])
    page.set_viewport_size({"width": 1440, "height": 900})

    done = page.locator("#pc-chat .pc-done").count()
    button.click()  # the area summarised with every paper: in the Summarise mode, Papers at n
    page.wait_for_function("(n) => document.querySelectorAll('#pc-chat .pc-done').length > n", arg=done)
    assert page.evaluate(CARDS) == n, f"Show all cited {page.evaluate(CARDS)} papers, not the area's {n}"
    assert page.input_value("#pc-k input") == str(n)
    assert page.get_by_role("radio", name="Summarise an area").is_checked()
    assert not page.errors, page.errors
    page.close()
