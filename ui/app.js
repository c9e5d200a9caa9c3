() => {
  // [n] marks in answers are anchor links to source cards: bring the card into view inside the sources
  // panel (opening a folded earlier turn if need be) and flash it, without jumping the whole page.
  if (window.__paperchatLinks) return;
  window.__paperchatLinks = true;
  // Math in the HTML panels (source cards, the library's paper card): KaTeX's auto-render as Gradio's own
  // frontend ships it (the module its Chatbot loads), from the app's /assets route: no CDN, works offline.
  // window.__paperchatKatex = {js, css} is set by the server (ui/markup.py katex_assets).
  const K = window.__paperchatKatex || {};
  let renderMath = null, loading = null, timer = null;
  const loadKatex = () => loading || (loading = (async () => {
    if (!K.js) return;
    if (K.css && !document.querySelector("link[data-pc-katex]")) {
      const l = document.createElement("link");
      l.rel = "stylesheet"; l.href = new URL(K.css, document.baseURI).href; l.dataset.pcKatex = "1";
      document.head.appendChild(l);
    }
    renderMath = (await import(new URL(K.js, document.baseURI).href)).default;
  })().catch((e) => console.warn("paperchat: KaTeX could not be loaded", e)));
  const MATH_OPTS = {
    delimiters: [{ left: "$$", right: "$$", display: true }, { left: "$", right: "$", display: false },
                 { left: "\\(", right: "\\)", display: false }, { left: "\\[", right: "\\]", display: true }],
    throwOnError: false, ignoredClasses: ["katex", "pc-nomath", "sizing-body"],
  };
  const typesetAll = () => {
    timer = null;
    const els = Array.from(document.querySelectorAll(".pc-math")).filter((el) => /[$]|\\[(\[]/.test(el.textContent));
    if (!els.length) return;
    // In a table (Gradio's Dataframe) only the cells' Markdown, which Gradio replaces whole on each update: text
    // KaTeX replaced elsewhere in its rows leaves Svelte writing to detached nodes (the Score column stayed empty).
    const targets = els.flatMap((el) => el.querySelector(".table-wrap")
      ? Array.from(el.querySelectorAll("[role=gridcell] .md")).filter((md) => /[$]|\\[(\[]/.test(md.textContent))
      : [el]);
    loadKatex().then(() => { if (renderMath) targets.forEach((el) => renderMath(el, MATH_OPTS)); });
  };
  window.__paperchatMath = typesetAll;
  // Texts that name a side ("on the right" / "below") follow where the sources column really is: Gradio
  // stacks the columns when they do not fit side by side. (A <style> of our own: Gradio rewrites app.css.)
  const side = document.createElement("style");
  document.head.appendChild(side);
  const SIDE = { false: ".pc-side-below { display: none !important; }", true: ".pc-side-right { display: none !important; }" };
  side.textContent = SIDE[false];
  const stackCheck = () => {
    const col = document.getElementById("pc-sources-col"), chat = document.getElementById("pc-chat");
    if (!col || !chat || !col.offsetParent) return;
    // Judged across, not down: side by side the column starts right of the chat, stacked it starts under the
    // chat's left edge. (Down was judged wrong while Gradio still laid out or a streaming answer grew the chat.)
    const c = col.getBoundingClientRect(), t = chat.getBoundingClientRect();
    if (!c.width || !t.width) return;
    const stacked = c.left < t.right - 4;
    if (side.textContent !== SIDE[stacked]) side.textContent = SIDE[stacked];
  };
  window.addEventListener("resize", stackCheck);
  new MutationObserver(() => {
    if (!timer) timer = setTimeout(() => { stackCheck(); followNew(); typesetAll(); }, 60);
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
  // The newest answer in view from its top, whatever came before it (a long table, a summary, a chat the reader
  // scrolled up): once it is complete, a short answer is shown whole (the chat at its end), a long one from its
  // first line. The chatbot autoscrolls once more after the last update (~50 ms after this ran, in Chromium), so
  // the place is set again for a moment -- unless the reader has scrolled meanwhile.
  const chatLog = () => document.querySelector('#pc-chat [role="log"]');
  const lastAnswer = (log) => { const rows = log ? log.querySelectorAll(".message-row.bot-row") : [];
    return rows.length ? rows[rows.length - 1] : null; };
  window.__paperchatTop = () => { let placed = null; [150, 400, 800, 1500].forEach((ms) => setTimeout(() => {
    const log = chatLog(), last = lastAnswer(log);
    if (!last) return;
    const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    if (placed !== null && Math.abs(log.scrollTop - placed) > 2 && !atEnd) return;  // the reader's own scroll
    const top = log.scrollTop + last.getBoundingClientRect().top - log.getBoundingClientRect().top - 8;
    log.scrollTop = last.offsetHeight + 8 <= log.clientHeight ? log.scrollHeight : top;
    placed = log.scrollTop;
  }, ms)); };
  // A paper's card opened from a row while the card sits under the table (a narrow window): bring it into view,
  // once per paper (a tick in the row opens nothing and moves nothing).
  let cardShown = null;
  window.__paperchatShowCard = () => setTimeout(() => {
    const g = document.getElementById("pc-card-group"), card = g && g.querySelector(".pc-paper");
    if (!card || !g.offsetParent || card.dataset.paper === cardShown) return;
    cardShown = card.dataset.paper;
    if (g.getBoundingClientRect().top > window.innerHeight - 120) g.scrollIntoView({ behavior: "smooth", block: "start" });
  }, 150);
  // A question just sent: its (still empty) answer is brought into view, even from a chat scrolled up.
  let answersSeen = 0;
  const followNew = () => {
    const log = chatLog();
    const n = log ? log.querySelectorAll(".message-row.bot-row").length : 0;
    if (n > answersSeen && log) log.scrollTop = log.scrollHeight;
    answersSeen = n;
  };
  document.addEventListener("click", (ev) => {
    const a = ev.target && ev.target.closest ? ev.target.closest('a[href^="#pc-"]') : null;
    if (!a) return;
    const el = document.getElementById(a.getAttribute("href").slice(1));
    if (!el) return;
    ev.preventDefault();
    ev.stopPropagation();
    const folded = el.closest("details");
    if (folded) folded.open = true;
    const panel = el.closest(".pc-panel");
    const box = panel ? panel.getBoundingClientRect() : null;
    const panelOnScreen = box && box.top >= 0 && box.top < window.innerHeight / 2;
    if (panelOnScreen && panel.scrollHeight > panel.clientHeight) {
      const top = el.getBoundingClientRect().top - box.top + panel.scrollTop - 4;
      panel.scrollTo({ top, behavior: "smooth" });
    } else {
      el.scrollIntoView({ behavior: "smooth", block: "start" });
    }
    if (el.tagName === "MARK") {  // a comparison cell's sentence: it stays marked as the one clicked
      document.querySelectorAll("mark.pc-current").forEach((m) => m.classList.remove("pc-current"));
      el.classList.add("pc-current");
    }
    el.classList.remove("pc-flash");
    void el.offsetWidth;
    el.classList.add("pc-flash");
    setTimeout(() => el.classList.remove("pc-flash"), 1800);
  }, true);
}
