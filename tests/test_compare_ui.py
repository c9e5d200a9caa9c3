"""The comparison table in the UI: every cell links to its sentence in its paper's card, text is escaped,
and (in a real browser) clicking a cell opens the card with that sentence highlighted."""

from __future__ import annotations

import csv
import io
import re

import pytest

from rag.records import Paper
from rag.tasks.comparison import Cell, Row, Table
from ui.tables import render_table

ABSTRACT = ("Transport plans are costly at scale. We propose a <b>sparse</b> solver. "
            "We evaluate on CIFAR-10. The solver is ten times faster | than Sinkhorn.")


def _table() -> Table:
    p = Paper(paper_id="p1", abstract=ABSTRACT, title="Sparse <script>transport</script>", venue="ICLR", year=2026)
    s = ["Transport plans are costly at scale.", "We propose a <b>sparse</b> solver.", "We evaluate on CIFAR-10.",
         "The solver is ten times faster | than Sinkhorn."]
    cells = {"problem": Cell(column="problem", paper_id="p1", text=s[0], sentence=s[0], role="background", position=0,
                             source="quoted"),
             "approach": Cell(column="approach", paper_id="p1", text=s[1], sentence=s[1], role="method", position=1,
                              source="quoted"),
             "finding": Cell(column="finding", paper_id="p1", text=s[3], sentence=s[3], role="result", position=3,
                             source="quoted"),
             "setting": Cell(column="setting", paper_id="p1")}
    return Table(topic="optimal transport", rows=[Row(paper=p, theme="Optimal transport", score=0.7, cells=cells)],
                 themes=["Optimal transport"])


def test_every_cell_links_to_its_marked_sentence_in_the_card():
    r = render_table(_table(), turn=3)
    links = re.findall(r'class="pc-cell" href="#([^"]+)"', r.chat)
    assert links == ["pc-3-1-s0", "pc-3-1-s1", "pc-3-1-s3"]
    for target in links:
        assert f'id="{target}"' in r.panel
    # no row states a setting: the column is left out of the chat and the Markdown export, kept in the CSV
    assert "| Finding |\n" in r.chat and "Setting" not in r.chat and "*not stated*" not in r.chat
    assert "| Finding |\n" in r.export_md and "setting" in r.csv.splitlines()[0]
    assert 'id="pc-3-1"' in r.panel and 'href="#pc-3-1"' in r.chat  # the paper's [1] opens its card


def test_table_text_is_escaped_in_chat_card_and_exports():
    r = render_table(_table(), turn=1)
    assert "<script>" not in r.chat + r.panel and "<b>" not in r.chat + r.panel
    assert "\\|" in r.chat  # a | in a sentence does not split the Markdown table
    rows = list(csv.DictReader(io.StringIO(r.csv)))
    assert rows[0]["finding"] == "The solver is ten times faster | than Sinkhorn." and rows[0]["setting"] == "not stated"
    assert "| Theme | Paper | Problem |" in r.export_md and r.citations[0].paper.paper_id == "p1"


def test_no_table_says_so_and_lists_the_nearest():
    t = Table(topic="sourdough", abstained=True, message="The library has no papers on this topic (“sourdough”).")
    r = render_table(t, turn=1)
    assert "no papers on this topic" in r.chat and "Nearest papers" in r.panel


# ----------------------------------------------------------------------------------------- in a browser


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*")
def test_compare_in_a_browser(browser, app_url, tmp_path):
    page = open_page(browser, app_url, 1440, 900, timeout_s=60, downloads=True)
    errors = page.errors
    # the empty chat offers a comparison among its examples: a click switches the mode and asks it
    page.locator("#pc-chat button").filter(has_text="Compare papers ·").first.click()
    page.wait_for_selector("#pc-chat table a.pc-cell")
    assert page.get_by_role("radio", name="Compare papers").is_checked()
    assert page.locator("#pc-chat table th").filter(has_text="Approach").count() >= 1
    cell = page.locator("#pc-chat a.pc-cell").first
    target = cell.get_attribute("href")
    # the turn's last steps first: the CSV button shows, then app.js places the answer at its top for up to
    # 1.5 s; a click while the chat still moves can land beside the cell (one CI run timed out here)
    page.wait_for_selector("#pc-dl-csv", state="visible")
    page.wait_for_selector(f"#pc-sources {target}", state="attached")
    page.wait_for_timeout(1600)
    cell.click()
    page.wait_for_selector(f"#pc-sources {target}.pc-current")
    mark = page.locator(f"#pc-sources {target}")
    assert mark.is_visible() and mark.evaluate("e => e.tagName") == "MARK"
    # the sentence is its paper's own: the cell's text is part of the marked sentence
    assert cell.inner_text().rstrip("…").strip()[:30] in mark.inner_text()
    with page.expect_download() as dl:
        page.click("#pc-dl-csv")
    path = tmp_path / "table.csv"
    dl.value.save_as(path)
    assert path.read_text(encoding="utf-8").startswith("n,paper_id,title")
    # the references as RIS beside BibTeX (Zotero, EndNote)
    with page.expect_download() as dl:
        page.click("#pc-dl-ris")
    ris = tmp_path / "table.ris"
    dl.value.save_as(ris)
    assert ris.read_text(encoding="utf-8").startswith("TY  - ") and "optimal transport" in ris.read_text().lower()
    # clearing the chat withdraws every download: no button offers the cleared table
    page.locator("#pc-chat button[aria-label='Clear'], #pc-chat button[title='Clear']").first.click()
    page.wait_for_selector("#pc-dl-csv", state="hidden")
    assert page.locator("#pc-dl-ris").is_disabled() and page.locator("#pc-dl-md").is_disabled()
    assert not errors, errors
    page.close()


from test_browser import app_url, browser, open_page  # noqa: E402,F401  (the served seeds app and Chromium)
