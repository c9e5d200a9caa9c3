// The map viewer: one WebGL scatter (plotly scattergl) of every paper, topic labels, venue/year filters
// that dim what they exclude, a title finder, lit papers. Used by the standalone page (rag/maps/page.py)
// and by the UI's Map tab (ui/app.js); needs the global Plotly (served from the plotly package, no CDN).
(function () {
  "use strict";
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#e15759",
                   "#86bcb6", "#8cd17d", "#b6992d", "#499894", "#d37295", "#a0cbe8", "#ffbe7d", "#79706e"];
  const DIM = "rgba(170,170,170,0.18)";
  const LIT = "#e11d48";

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
    find.addEventListener("keydown", (e) => { if (e.key === "Enter") onFind(find.value); });
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
    const gl = webgl();
    if (!gl && n > 5000) {
      plot.innerHTML = '<p class="pcm-msg">This browser offers no WebGL, which a map of this size needs.</p>';
      return {filter() {}, light() { return 0; }, ready: Promise.resolve()};
    }
    const type = gl ? "scattergl" : "scatter";
    const size = n > 20000 ? 3 : n > 2000 ? 5 : 9;
    const traces = [
      {type, mode: "markers", x: data.x, y: data.y, text: hover, hovertemplate: "%{text}<extra></extra>",
       marker: {size, color: base.slice(), line: {width: 0}}, name: "papers"},
      {type, mode: "markers", x: [], y: [], text: [], hovertemplate: "%{text}<extra></extra>",
       marker: {size: Math.max(size * 2, 10), color: LIT, line: {width: 1.5, color: "#ffffff"}},
       name: "lit", customdata: []},
    ];
    const annotations = data.topics.filter((t) => t.papers > 0).map((t) => ({
      x: t.x, y: t.y, text: `<b>${esc(t.name)}</b>`, showarrow: false, font: {size: 12, color: "#1f2937"},
      bgcolor: "rgba(255,255,255,0.78)", borderpad: 2, captureevents: false}));
    const layout = {
      margin: {l: 4, r: 4, t: 4, b: 4}, hovermode: "closest", dragmode: "pan", showlegend: false,
      xaxis: {visible: false, zeroline: false}, yaxis: {visible: false, zeroline: false, scaleanchor: "x"},
      annotations, plot_bgcolor: "#ffffff", paper_bgcolor: "#ffffff",
    };
    const config = {scrollZoom: true, displaylogo: false, responsive: true,
                    modeBarButtonsToRemove: ["select2d", "lasso2d", "toImage"]};
    let lit = [];
    const count = controls(el.querySelector(".pcm-controls"), data, filter, find);
    count(`${n.toLocaleString()} papers · ${data.topics.filter((t) => t.papers > 0).length} topics`);

    function filter(venue, from, to) {
      const lo = from ? +from : -Infinity, hi = to ? +to : Infinity;
      let shown = 0;
      const color = base.map((c, i) => {
        const ok = (!venue || data.v[i] === venue) && (!data.yr[i] ? !(from || to) : data.yr[i] >= lo && data.yr[i] <= hi);
        if (ok) shown++;
        return ok ? c : DIM;
      });
      Plotly.restyle(plot, {"marker.color": [color]}, [0]);
      count(venue || from || to ? `${shown.toLocaleString()} of ${n.toLocaleString()} papers pass the filters`
                                : `${n.toLocaleString()} papers`);
      return shown;
    }

    function light(ids) {
      lit = (ids || []).map((id) => index.get(id)).filter((i) => i !== undefined);
      Plotly.restyle(plot, {x: [lit.map((i) => data.x[i])], y: [lit.map((i) => data.y[i])],
                            text: [lit.map((i) => hover[i])], customdata: [lit.map((i) => data.ids[i])]}, [1]);
      el.dataset.lit = String(lit.length);
      return lit.length;
    }

    function find(text) {
      const q = (text || "").trim().toLowerCase();
      if (!q) return light([]);
      const hits = [];
      for (let i = 0; i < n && hits.length < 50; i++) if ((data.t[i] || "").toLowerCase().includes(q)) hits.push(data.ids[i]);
      count(`${hits.length}${hits.length === 50 ? "+" : ""} titles match “${text}”`);
      return light(hits);
    }

    const ready = Plotly.newPlot(plot, traces, layout, config).then(() => {
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
