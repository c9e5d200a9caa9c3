// The Map tab's glue to Gradio (the drawing is rag/maps/viewer.js): load plotly.js and the map's data
// through Gradio's file route, draw, light the papers of the last answer (or of the "show on map" link
// clicked), and hand a clicked paper's id to the server, which renders its card.
(function () {
  "use strict";
  if (window.pcMapOpen) return;
  let plotly = null, plotlySrc = null, cache = {key: null, data: null}, handle = null, chosen = null;

  // The bundle the map needs (the small SVG one, or the full one for WebGL past a few thousand papers);
  // the full one is a superset, so once it is loaded nothing else is.
  const FULL = /plotly\.min\.js$/;
  function loadPlotly(src) {
    if (plotly && (plotlySrc === src || FULL.test(plotlySrc))) return plotly;
    plotlySrc = src;
    plotly = new Promise((ok, bad) => {
      const s = document.createElement("script");
      s.src = src; s.onload = ok; s.onerror = () => { plotly = null; bad(new Error("plotly.js did not load")); };
      document.head.appendChild(s);
    });
    return plotly;
  }
  const idsOf = (a) => a.getAttribute("href").slice(5).split(",").filter(Boolean).map(decodeURIComponent);
  function litIds() {
    // A "show on map" click holds until a newer answer arrives; otherwise the newest answer's papers.
    const links = document.querySelectorAll("#pc-chat a.pc-show-map");
    if (chosen && chosen.n === links.length) return chosen.ids;
    return links.length ? idsOf(links[links.length - 1]) : [];
  }
  function pick(id) {
    const box = document.querySelector("#pc-map-pick textarea, #pc-map-pick input");
    if (!box) return;
    box.value = id;
    box.dispatchEvent(new Event("input", {bubbles: true}));
  }
  async function open() {
    const el = document.getElementById("pc-map");
    if (!el) return;
    if (handle && el.dataset.ready === "1" && el.dataset.key === cache.key) { handle.light(litIds()); return; }
    if (el.dataset.drawing) return;
    el.dataset.drawing = "1";
    try {
      await loadPlotly(el.dataset.plotly);
      if (cache.key !== el.dataset.key) {
        const r = await fetch(el.dataset.src);
        if (!r.ok) throw new Error(`the map's data did not load (${r.status})`);
        cache = {key: el.dataset.key, data: await r.json()};
      }
      handle = PaperMap.draw(el, cache.data, {onPick: pick});
      await handle.ready;
      handle.light(litIds());
    } catch (e) {
      el.innerHTML = `<div class="pc-empty">The map could not be drawn: ${PaperMap.esc(e.message)}</div>`;
    } finally {
      delete el.dataset.drawing;
    }
  }
  window.pcMapOpen = open;
  // plotly.js (1.1 MB basic bundle; 4.85 MB for a WebGL map) is read and compiled while the browser is idle after the page loaded, so that the
  // first open of the Map tab draws at once instead of waiting for it.
  if (window.__paperchatPlotly) {
    const early = () => loadPlotly(window.__paperchatPlotly).catch(() => {});
    if (window.requestIdleCallback) requestIdleCallback(early, {timeout: 1000}); else setTimeout(early, 500);
  }
  document.addEventListener("click", (ev) => {
    const a = ev.target && ev.target.closest ? ev.target.closest("a.pc-show-map") : null;
    if (!a) return;
    ev.preventDefault();
    ev.stopPropagation();
    chosen = {ids: idsOf(a), n: document.querySelectorAll("#pc-chat a.pc-show-map").length};
    const tab = Array.from(document.querySelectorAll('[role="tab"]')).find((b) => b.textContent.trim() === "Map");
    if (tab && tab.getAttribute("aria-selected") !== "true") tab.click();  // select -> view -> open()
    else open();
  }, true);
})();
