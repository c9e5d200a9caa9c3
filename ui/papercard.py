"""The Library tab's paper card: the whole abstract with the rhetorical role of each sentence (rag.reading.roles),
and everything the record says about the paper. Pure HTML, no Gradio."""

from __future__ import annotations

from ui import markup
from ui.escape import h
from ui.identity import link_html, links, where_from

ROLE_TITLE = {"background": "background: what is known, the gap", "objective": "objective: what the paper sets out to do",
              "method": "method: how it is done", "result": "result: what was found",
              "other": "other"}


def paper_card(paper, sentences: list[str] | None = None, roles: list[str] | None = None) -> str:
    """One paper in full. With `roles` aligned to `sentences`, each run of sentences of one role is a
    paragraph headed by its role, and each sentence carries its role (data-role, tooltip)."""
    title = getattr(paper, "title", "") or "(untitled)"
    derived = ('<span class="pc-derived" title="the source has no title; this one is derived from the abstract">'
               "title derived from abstract</span>") if getattr(paper, "title_derived", False) else ""
    rows = []
    authors = getattr(paper, "authors", None) or []
    if authors:
        rows.append(("Authors", h(", ".join(authors))))
    venue_year = " ".join(x for x in (getattr(paper, "venue", "") or "", str(getattr(paper, "year", "") or "")) if x)
    if venue_year:
        rows.append(("Published", h(venue_year)))
    found = links(paper)
    if found:  # the URL shown whole (a reader may copy it); a DOI or arXiv id by its name
        rows.append(("Link" if len(found) == 1 else "Links", " · ".join(
            link_html(url if i == 0 and getattr(paper, "url", "") == url else label, url)
            for i, (label, url) in enumerate(found))))
    if getattr(paper, "keywords", None):
        rows.append(("Keywords", h(", ".join(paper.keywords))))
    if getattr(paper, "collections", None):
        rows.append(("Collections", h("; ".join(paper.collections))))
    if where := where_from(paper):
        rows.append(("File", f'<span class="pc-src pc-nomath">{h(where)}</span>'))
    rows.append(("Id", f'<code class="pc-nomath">{h(paper.paper_id)}</code>'))
    meta = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return (f'<article class="pc-card pc-paper" data-paper="{h(paper.paper_id)}">'
            f'<div class="pc-head"><span class="pc-title">{markup.html(title)}</span></div>{derived}'
            f'<dl class="pc-fields">{meta}</dl>{abstract_by_role(getattr(paper, "abstract", "") or "", sentences, roles)}'
            "</article>")


def abstract_by_role(abstract: str, sentences: list[str] | None, roles: list[str] | None) -> str:
    if not sentences or not roles or len(sentences) != len(roles):
        return f'<p class="pc-abstract">{markup.html(abstract)}</p>'
    groups: list[tuple[str, list[str]]] = []
    for sent, role in zip(sentences, roles):
        if groups and groups[-1][0] == role:
            groups[-1][1].append(sent)
        else:
            groups.append((role, [sent]))
    out = []
    for role, sents in groups:
        body = " ".join(f'<span class="pc-sent" data-role="{h(role)}" title="{h(ROLE_TITLE.get(role, role))}">'
                        f"{markup.html(s)}</span>" for s in sents)
        out.append(f'<p class="pc-abstract pc-role-{h(role)}"><span class="pc-role">{h(role)}</span> {body}</p>')
    legend = ('<div class="pc-note">Sentence roles from paperchat\'s classifier (trained on CSAbstruct); '
              "hover a sentence for its role.</div>")
    return legend + "".join(out)


def empty_card(message: str) -> str:
    return f'<div class="pc-empty">{h(message)}</div>'
