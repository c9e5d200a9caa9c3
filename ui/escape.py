"""Escaping library text for the page: as HTML (an element or attribute) or as Markdown shown literally.

Everything that comes from the library (abstracts, titles, file names, answers composed from abstracts) passes
through one of these before it reaches the page: abstracts may hold hostile HTML or Markdown. The lowest room of
ui/: ui.markup and ui.render both build on it.
"""

from __future__ import annotations

import html
import re
from typing import Any

_MD_INLINE = re.compile(r"([\\`*_\[\]{}~$|<>])")
_MD_LINE_START = re.compile(r"^(\s*)([#>+=-]|\d+[.)])", re.MULTILINE)


def h(text: Any) -> str:
    """HTML-escape text for an element or attribute; also neutralise template syntax (${...}, {{...}})."""
    s = html.escape("" if text is None else str(text), quote=True)
    return s.replace("$", "&#36;").replace("{", "&#123;").replace("}", "&#125;")


def md(text: Any) -> str:
    """Escape text so that a Markdown renderer shows it literally (no links, images, emphasis, HTML, LaTeX)."""
    s = html.escape("" if text is None else str(text), quote=False)
    s = _MD_INLINE.sub(r"\\\1", s)
    return _MD_LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), s)
