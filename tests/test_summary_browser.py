"""A long summary in a real browser (headless Debian Chromium through Playwright, as tests/test_browser.py):
once it is complete the chat shows it from its top -- the overview that says how the area divides --
not from its end, where the chat's autoscroll leaves a long answer."""

from __future__ import annotations

import re

import pytest

from test_browser import app_url, browser, open_page  # noqa: F401  (the same server and browser fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*")]

# The last bot message's top and the chat log's visible box, in CSS pixels.
_GEOMETRY = """() => {
  const log = document.querySelector('#pc-chat [role="log"]');
  const rows = log ? log.querySelectorAll('.message-row.bot-row') : [];
  if (!rows.length) return null;
  const last = rows[rows.length - 1], box = log.getBoundingClientRect(), r = last.getBoundingClientRect();
  return {rowTop: r.top - box.top, rowHeight: r.height, logHeight: log.clientHeight,
          scrolled: log.scrollTop, text: last.innerText.slice(0, 200)};
}"""


def test_a_long_summary_is_shown_from_its_top(browser, app_url, tmp_path):  # noqa: F811
    # a short window, so the summary (overview, several themes) is taller than the chat
    page = open_page(browser, app_url, 1280, 720, downloads=True)
    errors = page.errors
    page.get_by_role("radio", name="Summarise an area").check()
    page.wait_for_function("document.querySelector('#pc-send').innerText.toLowerCase().includes('summar')")
    page.fill("#pc-input textarea", "optimization")
    page.click("#pc-send")
    page.wait_for_selector("#pc-sources .pc-card mark")  # the summary is complete: its cards are in the panel
    # each source card's badge is the grade of what the summary quotes from it for the topic, not "supported"
    badges = [b.strip() for b in page.locator("#pc-sources .pc-turn").first.locator(".pc-card .pc-badge").all_inner_texts()]
    assert badges and all(re.fullmatch(r"(answers|related|weak) \d\.\d\d", b) for b in badges
                          if "not summarised" not in b), badges
    # once the chat has settled (the chatbot's own autoscroll runs after the last update, and the app sets the
    # top again for 1.5 s), the summary's top is at the top of the chat, not its end
    page.wait_for_function(f"(() => {{ const g = ({_GEOMETRY})(); return g && g.rowHeight > g.logHeight; }})()")
    page.wait_for_timeout(2500)
    g = page.evaluate(_GEOMETRY)
    assert g["rowHeight"] > g["logHeight"], g  # a long answer: it could not all be in view
    assert abs(g["rowTop"]) < 40, g  # its top at the top of the chat
    assert g["scrolled"] > 0, g  # the question above it scrolled away, the summary's first line in view
    first_line = page.locator("#pc-chat .message-row.bot-row").last.get_by_text("The library holds").first
    box, log = first_line.bounding_box(), page.locator('#pc-chat [role="log"]').bounding_box()
    assert box and log["y"] <= box["y"] < log["y"] + log["height"], (box, log)  # the overview is in view
    # the summary as LaTeX beside Markdown (issue 33): prose with \\cite marks, no numbered ones
    page.wait_for_selector("#pc-dl-tex", state="visible")
    with page.expect_download() as dl:
        page.click("#pc-dl-tex")
    dl.value.save_as(tmp_path / "summary.tex")
    tex = (tmp_path / "summary.tex").read_text(encoding="utf-8")
    assert "\\cite{" in tex and not re.search(r"\[\d+\]", tex), tex[:400]
    assert not errors, errors
    page.close()
