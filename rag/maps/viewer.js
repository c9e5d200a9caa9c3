// The map viewer: one scatter of every paper (SVG up to a few thousand papers, data.draw "svg", else WebGL:
// plotly scattergl), topic labels, venue/year filters
// that dim what they exclude (lit papers too), a title finder that lights matches as one types, and a
// legend naming what the lit papers are. Used by the standalone page (rag/maps/page.py)
// and by the UI's Map tab (ui/app.js); needs the global Plotly (served from the plotly package, no CDN).
(function () {
  "use strict";
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#e15759",
                   "#86bcb6", "#8cd17d", "#b6992d", "#499894", "#d37295", "#a0cbe8", "#ffbe7d", "#79706e"];
  const DIM = "rgba(170,170,170,0.18)";
  const LIT = "#e11d48";
  const LIT_DIM = "rgba(225,29,72,0.25)";  // a lit paper the filters exclude: still findable, visibly out
  const FIND_MAX = 200;  // matches lit at most (all are counted)
  const FIND_WAIT_MS = 150;  // typing pauses this long before the finder searches (87k titles: ~20 ms)

  function esc(s) {
    return String(s == null ? "" : s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;",
      '"': "&quot;", "'": "&#39;"})[c]);
  }

  function webgl() {
    try {
      const c = document.createElement("canvas");
      return !!(c.getContext("webgl") || c.getContext("experimental-webgl"));
    } catch (e) { return false; }
  }

  // [min, max] of a long array (a spread into Math.min overflows the stack at 87k papers).
  function extent(a) {
    let lo = Infinity, hi = -Infinity;
    for (const v of a) { if (v < lo) lo = v; if (v > hi) hi = v; }
    return lo <= hi ? [lo, hi] : [0, 1];
  }

  function padded([lo, hi]) {
    const d = (hi - lo) * 0.06 || 1;
    return [lo - d, hi + d];
  }

  // A label's words on lines of at most `width` characters (a longer word stands alone).
  function wrap(text, width) {
    const lines = [];
    for (const w of text.split(" ")) {
      const last = lines.length - 1;
      if (last >= 0 && (lines[last] + " " + w).length <= width) lines[last] += " " + w;
      else lines.push(w);
    }
    return lines.join("<br>");
  }

  function controls(box, data, onChange, onFind) {
    const venues = {};
    data.v.forEach((v) => { if (v) venues[v] = (venues[v] || 0) + 1; });
    const years = Array.from(new Set(data.yr.filter((y) => y))).sort((a, b) => a - b);
    const opt = (v, label) => `<option value="${esc(v)}">${esc(label)}</option>`;
    box.innerHTML =
      `<label>Venue <select class="pcm-venue">${opt("", "all venues")}` +
      Object.keys(venues).sort().map((v) => opt(v, `${v} (${venues[v]})`)).join("") + `</select></label>` +
      `<label>From <select class="pcm-from">${opt("", "any")}${years.map((y) => opt(y, y)).join("")}</select></label>` +
      `<label>To <select class="pcm-to">${opt("", "any")}${years.map((y) => opt(y, y)).join("")}</select></label>` +
      `<input class="pcm-find" type="search" placeholder="Find a paper by title…">` +
      `<span class="pcm-count"></span>`;
    const get = () => [box.querySelector(".pcm-venue").value, box.querySelector(".pcm-from").value,
                       box.querySelector(".pcm-to").value];
    box.querySelectorAll("select").forEach((s) => s.addEventListener("change", () => onChange(...get())));
    const find = box.querySelector(".pcm-find");
    let wait = null;
    find.addEventListener("input", () => { clearTimeout(wait); wait = setTimeout(() => onFind(find.value), FIND_WAIT_MS); });
    find.addEventListener("keydown", (e) => { if (e.key === "Enter") { clearTimeout(wait); onFind(find.value); } });
    return (text) => { box.querySelector(".pcm-count").textContent = text; };
  }

  // el: the element to draw in; data: {ids, x, y, t (titles), v (venues), yr (years), r (region), topics};
  // opts.onPick(id, index): a click on a point. Returns {filter, light, ready (a Promise)}.
  function draw(el, data, opts) {
    opts = opts || {};
    const n = data.ids.length;
    el.innerHTML = '<div class="pcm-controls"></div><div class="pcm-plot"></div>';
    const plot = el.querySelector(".pcm-plot");
    const index = new Map(data.ids.map((id, i) => [id, i]));
    const topicName = (r) => (data.topics[r] ? data.topics[r].name : "");
    const base = data.r.map((r) => PALETTE[r % PALETTE.length]);
    const hover = data.ids.map((_, i) =>
      `<b>${esc(data.t[i]).slice(0, 140)}</b><br>${esc(data.v[i] || "")} ${data.yr[i] || ""}` +
      `<br><i>${esc(topicName(data.r[i]))}</i>`);
    const gl = data.draw !== "svg" && webgl();  // an SVG map never asks for a WebGL context
    if (data.draw !== "svg" && !gl && n > 5000) {
      plot.innerHTML = '<p class="pcm-msg">This browser offers no WebGL, which a map of this size needs.</p>';
      return {filter() {}, light() { return 0; }, ready: Promise.resolve()};
    }
    const type = data.draw === "svg" || !gl ? "scatter" : "scattergl";
    const size = n > 20000 ? 3 : n > 2000 ? 5 : 9;
    const traces = [
      {type, mode: "markers", x: data.x, y: data.y, text: hover, hovertemplate: "%{text}<extra></extra>",
       marker: {size, color: base.slice(), line: {width: 0}}, name: "papers", showlegend: false},
      {type, mode: "markers", x: [], y: [], text: [], hovertemplate: "%{text}<extra></extra>",
       marker: {size: Math.max(size * 2, 10), color: LIT, line: {width: 1.5, color: "#ffffff"}},
       name: "lit", customdata: [], showlegend: false},
    ];
    // The axes span the papers, not their labels: autorange also fits every label's text, and in a plot 330 px
    // wide the labels' 250 px drew the papers into a knot 60 px across in its middle.
    const xs = extent(data.x), ys = extent(data.y);
    const named = data.topics.filter((t) => t.papers > 0);
    // The topic labels for a plot `width` px wide, centred on their topics; in a narrow plot, on lines of a few
    // words. declutter moves those the plot's edge would cut inside it and hides those that would cover another.
    const labels = (width, narrow = width < 640) => named.map((t) => {
      return {x: t.x, y: t.y, text: `<b>${narrow ? wrap(esc(t.name), 22) : esc(t.name)}</b>`, showarrow: false,
              font: {size: narrow ? 11 : 12, color: "#1f2937"}, bgcolor: "rgba(255,255,255,0.78)", borderpad: 2,
              captureevents: false, xshift: 0, yshift: 0, visible: true};
    });
    const annotations = labels(el.clientWidth || window.innerWidth);
    const layout = {
      margin: {l: 4, r: 4, t: 4, b: 4}, hovermode: "closest", dragmode: "pan", showlegend: true,
      legend: {x: 0.01, y: 0.99, xanchor: "left", yanchor: "top", bgcolor: "rgba(255,255,255,0.85)",
               bordercolor: "#e5e7eb", borderwidth: 1, font: {size: 12}, itemclick: false, itemdoubleclick: false},
      xaxis: {visible: false, zeroline: false, range: padded(xs)},
      yaxis: {visible: false, zeroline: false, scaleanchor: "x", range: padded(ys)},
      annotations, plot_bgcolor: "#ffffff", paper_bgcolor: "#ffffff",
    };
    const config = {scrollZoom: true, displaylogo: false, responsive: true,
                    modeBarButtonsToRemove: ["select2d", "lasso2d", "toImage"]};
    const lower = data.t.map((t) => (t || "").toLowerCase());
    let lit = [], litLabel = "", answer = {ids: [], label: ""}, finding = "";
    let pass = null;  // per paper: passes the venue/year filters (null: no filter set)
    const count = controls(el.querySelector(".pcm-controls"), data, filter, find);
    const topicCount = data.topics.filter((t) => t.papers > 0).length;
    let filterText = `${n.toLocaleString()} papers · ${topicCount} topics`, findText = "";
    const say = () => count(findText ? `${findText} · ${filterText}` : filterText);
    say();

    function filter(venue, from, to) {
      const lo = from ? +from : -Infinity, hi = to ? +to : Infinity;
      let shown = 0;
      pass = venue || from || to ? data.ids.map((_, i) =>
        (!venue || data.v[i] === venue) && (!data.yr[i] ? !(from || to) : data.yr[i] >= lo && data.yr[i] <= hi)) : null;
      const color = base.map((c, i) => {
        const ok = !pass || pass[i];
        if (ok) shown++;
        return ok ? c : DIM;
      });
      Plotly.restyle(plot, {"marker.color": [color]}, [0]);
      filterText = pass ? `${shown.toLocaleString()} of ${n.toLocaleString()} papers pass the filters`
                        : `${n.toLocaleString()} papers · ${topicCount} topics`;
      drawLit();
      say();
      return shown;
    }

    // The lit trace: its points, their colours (dimmed where the filters exclude them) and its legend.
    function drawLit() {
      const shown = pass ? lit.filter((i) => pass[i]).length : lit.length;
      const name = lit.length && pass && shown < lit.length ? `${litLabel} (${shown} of ${lit.length} pass the filters)` : litLabel;
      Plotly.restyle(plot, {x: [lit.map((i) => data.x[i])], y: [lit.map((i) => data.y[i])],
                            text: [lit.map((i) => hover[i])], customdata: [lit.map((i) => data.ids[i])],
                            "marker.color": [lit.map((i) => (!pass || pass[i] ? LIT : LIT_DIM))],
                            name: [name], showlegend: [lit.length > 0]}, [1]);
      el.dataset.lit = String(lit.length);
      el.dataset.litShown = String(shown);
    }

    function show(ids, label) {
      lit = (ids || []).map((id) => index.get(id)).filter((i) => i !== undefined);
      litLabel = label || `${lit.length} lit paper${lit.length === 1 ? "" : "s"}`;
      drawLit();
      return lit.length;
    }

    // light(ids, label): the papers of an answer (or any list), named in the legend; the finder's
    // matches take their place while it holds text, and they return when it is cleared.
    function light(ids, label) {
      const k = (ids || []).filter((id) => index.has(id)).length;
      answer = {ids: ids || [], label: label || `${k} paper${k === 1 ? "" : "s"} of the last answer`};
      return finding ? lit.length : show(answer.ids, answer.label);
    }

    function find(text) {
      const q = (text || "").trim().toLowerCase();
      finding = q;
      if (!q) { findText = ""; say(); return show(answer.ids, answer.label); }
      const hits = [];
      let total = 0;
      for (let i = 0; i < n; i++) {
        if (lower[i].includes(q)) { total++; if (hits.length < FIND_MAX) hits.push(data.ids[i]); }
      }
      const quoted = `“${text.trim()}”`;
      findText = total === 1 ? `1 title matches ${quoted}` : `${total.toLocaleString()} titles match ${quoted}`;
      if (total > FIND_MAX) findText += ` (the first ${FIND_MAX} lit)`;
      say();
      el.dataset.found = String(total);
      return show(hits, total === 1 ? `1 title matching ${quoted}` : `${Math.min(total, FIND_MAX)} titles matching ${quoted}`);
    }

    // A label the plot's edge would cut is moved inside it (centred on a topic near the edge, "Cross-modal
    // retrieval and intra-alignment conflict" lost its last word); of labels that would cover one another, the
    // topic with fewer papers gives way (its papers keep their colour, and their hover names it). Run once
    // drawn, and again when the plot is resized, zoomed or panned.
    let tidying = false;
    function declutter() {
      tidying = true;
      return Plotly.relayout(plot, {annotations: labels(plot.getBoundingClientRect().width)}).then(() => {
        const frame = plot.getBoundingClientRect(), boxes = {}, update = {};
        plot.querySelectorAll(".annotation[data-index]").forEach((g) => {
          const i = +g.dataset.index, b = g.getBoundingClientRect();
          const dx = Math.max(0, frame.left + 2 - b.left) + Math.min(0, frame.right - 2 - b.right);
          const dy = Math.max(0, frame.top + 2 - b.top) + Math.min(0, frame.bottom - 2 - b.bottom);
          if (dx) update[`annotations[${i}].xshift`] = dx;
          if (dy) update[`annotations[${i}].yshift`] = -dy;  // plotly's y grows upwards
          boxes[i] = {left: b.left + dx, right: b.right + dx, top: b.top + dy, bottom: b.bottom + dy};
        });
        const apart = (a, b) => a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
        const kept = [];
        let hidden = 0;
        named.map((_, i) => i).sort((a, b) => named[b].papers - named[a].papers).forEach((i) => {
          if (!boxes[i]) return;
          if (kept.every((j) => apart(boxes[i], boxes[j]))) kept.push(i);
          else { update[`annotations[${i}].visible`] = false; hidden++; }
        });
        el.dataset.labelsHidden = String(hidden);
        return Object.keys(update).length ? Plotly.relayout(plot, update) : null;
      }).finally(() => { tidying = false; });
    }

    const ready = Plotly.newPlot(plot, traces, layout, config).then(() => declutter()).then(() => {
      let wait = null;
      const later = () => { clearTimeout(wait); wait = setTimeout(declutter, 250); };
      // a zoom or pan moves the labels apart or together; declutter's own relayouts say only "annotations"
      plot.on("plotly_relayout", (ev) => { if (!tidying && ev && Object.keys(ev).some((k) => !k.startsWith("annotations"))) later(); });
      window.addEventListener("resize", later);
      plot.on("plotly_click", (ev) => {
        const p = ev && ev.points && ev.points[0];
        if (!p) return;
        const i = p.curveNumber === 0 ? p.pointNumber : index.get(p.customdata);
        if (i !== undefined && opts.onPick) opts.onPick(data.ids[i], i);
      });
      el.dataset.ready = "1";
      window.paperMapReady = performance.now();
    });
    return {filter, light, find, ready, plot};
  }

  window.PaperMap = {draw, esc};
})();
