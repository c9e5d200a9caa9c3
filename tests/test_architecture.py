"""The shape of the house: small rooms with one job, no import circles, and a library that never reaches into the UI.

A module past ~400 lines or a class past ~300 has more than one job: split it before adding to it.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from conftest import ROOT

RAG = ROOT / "rag"
UI = ROOT / "ui"
MAX_MODULE_LINES = 400
MAX_CLASS_LINES = 300
# The wings of rag/, lowest first: a module imports only its own wing or the wings below it, so a change to
# how a library stores papers never reaches up into what reads an abstract, and the tasks sit on top.
# (Reading sits below the library: its functions are pure text and vectors, and ingest uses them to store
# each sentence's role.)
WINGS: list[set[str]] = [
    {"rag", "rag.records", "rag.settings", "rag.errors", "rag.prompts"},
    {"rag.reading", "rag.embedders", "rag.exports"},
    {"rag.loaders"},
    {"rag.library"},
    {"rag.tasks"},
    {"rag.evaluation", "rag.maps", "rag.fetch"},
    {"rag.cli"},
]
# The one place rag/ may import the UI: `paperchat serve`, imported when that command runs.
UI_IMPORT_ALLOWED = {("rag.cli", "ui.app")}


def modules(folder: Path = RAG) -> dict[str, Path]:
    out = {}
    for path in sorted(folder.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


@functools.cache
def _module_names() -> frozenset[str]:
    return frozenset(modules()) | frozenset(modules(UI))


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(name: str, path: Path) -> set[str]:
    """Every module `name` imports, at its top or inside functions (a lazy import still makes a circle),
    except under `if TYPE_CHECKING:`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            target = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            subs = {f"{target}.{a.name}" for a in node.names}  # a name may be a module
            # `from pkg import x` of modules x imports those modules; their package is a parent, imported already
            if node.module and not (subs and subs <= _module_names()):
                found.add(target)
            found.update(subs)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found



def graph(folder: Path = RAG) -> dict[str, set[str]]:
    mods = modules(folder)
    return {name: {m for m in imports(name, path) if m in mods and m != name} for name, path in mods.items()}


def test_no_module_or_class_outgrows_its_room():
    too_big = []
    for name, path in modules().items():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES:
            too_big.append(f"module {name}: {lines} lines (> {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    too_big.append(f"class {name}.{node.name}: {size} lines (> {MAX_CLASS_LINES})")
    assert not too_big, "split these into rooms with one job each:\n" + "\n".join(too_big)


def test_every_module_says_its_job_first():
    silent = [name for name, path in modules().items()
              if path.stat().st_size and not (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").strip()]
    assert not silent, f"modules without a docstring saying their job: {silent}"


def test_no_import_circle_inside_rag_or_ui():
    g = {**graph(RAG), **graph(UI)}  # (the UI imports rag/, never the reverse: no circle can span the two)
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def walk(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(g[m]):
            if state.get(n) == 1:
                cycles.append(stack[stack.index(n):] + [n])
            elif n not in state:
                walk(n)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            walk(m)
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_library_never_imports_the_ui():
    bad = []
    for name, path in modules().items():
        for m in imports(name, path):
            top = m.split(".")[0]
            if top in ("ui", "gradio") and (name, m) not in UI_IMPORT_ALLOWED and not any(
                    m.startswith(f"{allowed}.") for n, allowed in UI_IMPORT_ALLOWED if n == name):
                bad.append(f"{name} imports {m}")
    assert not bad, "rag/ is the library the UI calls, never the other way round:\n" + "\n".join(bad)


def test_the_import_graph_is_read():
    """The checks above would pass vacuously if the import graph came out empty; and the embedded-store
    guard is entered through rag.library.chroma only."""
    g = graph()
    assert "rag.library.catalogue" in g["rag.library.library"] and "rag.errors" in g["rag.library.locks"]
    assert "rag.library.store" in g["rag.library.chroma"]
    outside = {m for m, deps in g.items() if not m.startswith("rag.library.store") and any(d.startswith("rag.library.store") for d in deps)}
    assert outside == {"rag.library.chroma"}, f"only rag.library.chroma may enter rag.library.store, not {sorted(outside - {'rag.library.chroma'})}"


def wing_of(module: str) -> int:
    """The level of a module's wing: the longest wing name that is the module or a package above it."""
    best, level = "", -1
    for i, wing in enumerate(WINGS):
        for w in wing:
            if (module == w or module.startswith(w + ".")) and len(w) > len(best):
                best, level = w, i
    return level


def test_every_module_lives_in_a_wing():
    homeless = [m for m in modules() if wing_of(m) < 0 or (m.count(".") == 1 and m not in set().union(*WINGS))]
    assert not homeless, ("rag/ keeps at its top only the shared records, settings, errors and prompts; "
                          f"put these in the wing they belong to (and name a new wing in WINGS): {homeless}")


def test_imports_run_down_the_wings():
    upward = [f"{m} imports {d}" for m, deps in graph().items() for d in sorted(deps)
              if wing_of(d) > wing_of(m) and not (m == "rag.cli" or m.startswith("rag.cli."))]
    assert not upward, ("a wing imports only its own or lower wings "
                        "(shared < reading, embedders, exports < loaders < library < tasks < evaluation, maps < cli):\n"
                        + "\n".join(upward))


def test_the_readme_maps_every_module():
    """The module table ("Where things live", in README.md or docs/) names every module of rag/."""
    import re

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    text = next(t for t in (p.read_text(encoding="utf-8") for p in pages if p.exists()) if "### Where things live" in t)
    table = text.split("### Where things live", 1)[1].split("\n## ", 1)[0]
    named = set()
    for row in table.splitlines():
        if row.startswith("| `"):
            named |= set(re.findall(r"`(rag/[^`]*)`", row.split("|")[1]))
    missing = []
    for path in modules().values():
        rel = path.relative_to(ROOT).as_posix()
        if path.name == "__init__.py" and not path.stat().st_size:
            continue
        if rel not in named and not any(n.endswith("/") and rel.startswith(n) for n in named):
            missing.append(rel)
    assert not missing, f"add these to the README's table of modules: {missing}"
