"""The map as data for the viewer (rag/maps/viewer.js) and as one self-contained HTML page.

The page inlines plotly.js from the installed plotly package, the viewer and the data: it opens from a
file on a machine with no network. A click on a point shows the paper's card (title, authors, venue,
year, topic, link and the start of its abstract, kept short so a page of 87k papers stays openable).
"""

from __future__ import annotations

import json
from pathlib import Path

from rag.exports.terminal import readable
from rag.reading.snippets import snippet
from rag.maps.records import LibraryMap

HERE = Path(__file__).resolve().parent
ABSTRACT_CHARS = 300  # of each abstract in the standalone page
ABSTRACTS_UP_TO = 20_000  # papers; past this the page carries no abstracts (87k x 300 chars = 26 MB)
# Up to this many papers the map is drawn in SVG with plotly.js's basic bundle (1.1 MB, vendor/); past it,
# in WebGL with the full bundle (4.85 MB). Reading the full bundle cost ~1.8 s and a software-WebGL context
# more, under load, on every first open; SVG draws a few thousand points in well under a second
# (docs/performance.md, "Opening the Map tab").
SVG_UP_TO = 3000
BASIC_BUNDLE = HERE / "vendor" / "plotly-basic.min.js"


def draws_svg(n: int) -> bool:
    return n <= SVG_UP_TO


def plotly_js_path(n: int | None = None) -> Path:
    """The plotly.js a map of n papers needs, served from the package (no CDN): the vendored basic bundle
    (SVG scatter) up to SVG_UP_TO papers, else plotly.min.js as shipped in the plotly Python package."""
    import importlib.util

    if n is not None and draws_svg(n):
        return BASIC_BUNDLE

    spec = importlib.util.find_spec("plotly")
    if spec is None or spec.origin is None:
        raise RuntimeError("the map needs the 'plotly' package (pip install plotly)")
    path = Path(spec.origin).parent / "package_data" / "plotly.min.js"
    if not path.exists():
        raise RuntimeError(f"plotly.min.js is missing from the plotly package ({path})")
    return path


def viewer_js() -> str:
    return (HERE / "viewer.js").read_text(encoding="utf-8")


def viewer_data(m: LibraryMap, catalogue: dict[str, dict], abstracts: dict[str, str] | None = None,
                lit: list[str] | None = None) -> dict:
    """Columns for the viewer, in the map's order."""
    metas = [catalogue.get(pid, {}) for pid in m.ids]
    data = {
        "library": m.library, "method": m.method, "ids": m.ids,
        "x": [round(float(v), 3) for v in m.xy[:, 0]], "y": [round(float(v), 3) for v in m.xy[:, 1]],
        "t": [md.get("title", "") for md in metas], "v": [md.get("venue", "") for md in metas],
        "yr": [int(md.get("year") or 0) for md in metas], "r": [int(r) for r in m.region],
        "topics": [t.as_json() for t in m.topics], "lit": lit or [],
        "draw": "svg" if draws_svg(len(m.ids)) else "webgl",
    }
    if abstracts is not None:
        data["a"] = [snippet(abstracts.get(pid, ""), ABSTRACT_CHARS) for pid in m.ids]
        data["au"] = [", ".join(json.loads(md.get("authors") or "[]")[:3]) for md in metas]
        data["u"] = [md.get("url", "") for md in metas]
    return data


def _json_for_script(obj) -> str:
    # Inside <script>: no "</" (a title "</script>" would end it) and no HTML comment openers.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")


_STYLE = """
body{margin:0;font:14px/1.4 ui-sans-serif,system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1f2937}
header{padding:8px 14px;border-bottom:1px solid #e5e7eb;display:flex;gap:12px;align-items:baseline}
header h1{font-size:16px;margin:0} header span{color:#6b7280}
main{display:flex;height:calc(100vh - 45px)}
#map{flex:1;display:flex;flex-direction:column;min-width:0}
.pcm-controls{display:flex;gap:10px;align-items:center;padding:6px 10px;flex-wrap:wrap;border-bottom:1px solid #f3f4f6}
.pcm-controls label{color:#4b5563} .pcm-find{flex:1;min-width:160px;padding:3px 6px} .pcm-count{color:#6b7280}
.pcm-plot{flex:1;min-height:300px}
#card{width:340px;border-left:1px solid #e5e7eb;padding:12px 14px;overflow:auto}
#card h2{font-size:15px;margin:0 0 6px} #card .meta{color:#6b7280;margin-bottom:8px} #card .topic{color:#4338ca}
@media (max-width:900px){main{flex-direction:column;height:auto} #map{flex:none;height:75vh}
#card{width:auto;border-left:0;border-top:1px solid #e5e7eb}}
"""

_SCRIPT = """
(function(){
  const data = JSON.parse(document.getElementById("pc-map-data").textContent);
  const card = document.getElementById("card"), esc = PaperMap.esc;
  function show(id, i) {
    const t = data.topics[data.r[i]];
    card.innerHTML = `<h2>${esc(data.t[i])}</h2><div class="meta">${esc(data.au ? data.au[i] : "")}` +
      `${data.au && data.au[i] ? " · " : ""}${esc(data.v[i] || "")} ${data.yr[i] || ""}</div>` +
      `<div class="topic">${esc(t ? t.name : "")}</div>` +
      (data.a && data.a[i] ? `<p>${esc(data.a[i])}</p>` : "") +
      (data.u && data.u[i] && /^https?:/.test(data.u[i]) ? `<a href="${esc(data.u[i])}" rel="noopener">${esc(data.u[i])}</a>` : "") +
      `<p class="meta">id ${esc(id)}</p>`;
    card.dataset.paper = id;
  }
  window.paperMap = PaperMap.draw(document.getElementById("map"), data, {onPick: show});
  if (data.lit && data.lit.length) window.paperMap.ready.then(() => window.paperMap.light(data.lit));
})();
"""


def standalone_html(m: LibraryMap, catalogue: dict[str, dict], abstracts: dict[str, str] | None = None,
                    lit: list[str] | None = None) -> str:
    """One HTML page holding plotly.js, the viewer and the map: opens offline, from a file."""
    import html

    data = viewer_data(m, catalogue, abstracts, lit)
    # no KaTeX in a file opened offline (the UI typesets its cards with it): TeX shown as Unicode, as the terminal does
    for key in ("t", "a"):
        if key in data:
            data[key] = [readable(x) for x in data[key]]
    title = f"Map of the library {m.library}"
    sub = f"{len(m.ids):,} papers · {sum(1 for t in m.topics if t.size)} topics · {m.method}"
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style>"
        f"<script>{plotly_js_path(len(m.ids)).read_text(encoding='utf-8')}</script>"
        f"<script>{viewer_js()}</script></head><body>"
        f"<header><h1>{html.escape(title)}</h1><span>{html.escape(sub)}; scroll to zoom, drag to pan, click a "
        "paper for its card</span></header>"
        '<main><div id="map"></div><aside id="card"><p class="meta">Click a paper to see its card.</p></aside></main>'
        f'<script type="application/json" id="pc-map-data">{_json_for_script(data)}</script>'
        f"<script>{_SCRIPT}</script></body></html>"
    )


def write_page(path: Path, m: LibraryMap, library) -> Path:
    """Write the standalone page of a library's map (abstract snippets for libraries up to ABSTRACTS_UP_TO)."""
    catalogue = library.catalogue
    abstracts = None
    if len(m.ids) <= ABSTRACTS_UP_TO:
        abstracts = {pid: p.abstract for pid, p in library.get_papers(m.ids, refresh=False).items()}
    path = Path(path)
    path.write_text(standalone_html(m, catalogue, abstracts), encoding="utf-8")
    return path
