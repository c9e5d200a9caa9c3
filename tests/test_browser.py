"""The chat UI in a real browser: headless Debian Chromium driven by Playwright (its own browser download
is not used). Loads the page, asks a seed question, waits for the streamed answer and the highlighted
evidence, follows a citation link, exports, switches mode, and leaves a screenshot in the test's tmp dir."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*(no_silent_downcasting|copy keyword).*")]  # gradio's own pandas use

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
QUESTION = "How can a widened residual stream keep the identity-mapping property so that large-scale training stays stable?"
CLAIM = "Projecting the residual connection space onto a manifold restores the identity mapping of hyper-connections."
MHC = "Manifold-Constrained Hyper-Connections"


@pytest.fixture(scope="module")
def app_url(seeds_library, seeds_settings):
    from ui.app import serve

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo = serve(seeds_settings, port=port, library=seeds_library, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def open_page(browser, url: str, width: int = 1440, height: int = 1000, timeout_s: float = 90, downloads=False):
    """The app in a new page, once its input box is there; the page's script errors collect in page.errors."""
    page = browser.new_page(viewport={"width": width, "height": height}, accept_downloads=downloads)
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.set_default_timeout(timeout_s * 1000)
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("#pc-input textarea")
    return page


def test_chat_in_a_browser(browser, app_url, tmp_path):
    page = open_page(browser, app_url, 1440, 900, timeout_s=60, downloads=True)
    errors = page.errors

    # status line names the answerer; the venue filter is filled from the library
    page.wait_for_selector("#pc-input textarea")
    assert "extractive" in page.inner_text("#pc-top")
    assert "76 papers" in page.inner_text("#pc-top")

    # ask: the answer streams into the chat, the sources panel fills with highlighted evidence
    page.fill("#pc-input textarea", QUESTION)
    page.click("#pc-send")
    page.wait_for_selector("#pc-chat a.pc-cite")
    page.wait_for_selector("#pc-sources .pc-card mark")
    answer = page.locator("#pc-chat .message-row, #pc-chat [data-testid='bot']").last.inner_text()
    assert re.search(r"\[\d+\]", answer), answer
    cards = page.locator("#pc-sources .pc-card")
    assert MHC in page.inner_text("#pc-sources")
    assert cards.count() >= 1
    assert re.fullmatch(r"(answers|related|weak) \d\.\d\d",
                        page.locator("#pc-sources .pc-card .pc-badge").first.inner_text().strip())
    # the sources panel escapes abstract text, so no markup leaks into the page as elements
    assert page.locator("#pc-sources script, #pc-sources img").count() == 0

    # a [n] mark is a link to its card
    link = page.locator("#pc-chat a.pc-cite").first
    target = link.get_attribute("href")
    link.click()
    page.wait_for_selector(f"{target}.pc-flash")
    assert page.locator(target).is_visible()

    # export the answer as Markdown
    with page.expect_download() as dl:
        page.click("#pc-dl-md")
    path = tmp_path / "answer.md"
    dl.value.save_as(path)
    assert MHC in path.read_text(encoding="utf-8")

    # switch mode: the input and button follow; a claim gets evidence cards with stance badges
    page.get_by_role("radio", name="Find support for a claim").check()
    page.wait_for_function("document.querySelector('#pc-send').innerText.includes('Find support')")
    assert "claim" in page.get_attribute("#pc-input textarea", "placeholder").lower()
    page.fill("#pc-input textarea", CLAIM)
    page.click("#pc-send")
    page.wait_for_selector("#pc-sources #pc-2-1 .pc-badge")
    assert MHC in page.inner_text("#pc-sources #pc-2-1")
    # first how well its sentence bears on the claim (graded as answers are), then the stance
    badges = [b.strip() for b in page.locator("#pc-sources #pc-2-1 .pc-badge").all_inner_texts()]
    assert re.fullmatch(r"(answers|related|weak) \d\.\d\d", badges[0]) and badges[1] == "stance: related", badges
    assert page.locator("#pc-sources details.pc-earlier").count() == 1  # the first answer, folded away
    assert page.locator("#pc-chat a.pc-cite[href='#pc-2-1']").count() >= 1

    shot = tmp_path / "paperchat.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 20_000
    assert not errors, errors
    page.close()
