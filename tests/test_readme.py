"""The README and docs/ name only what exists, and the README stays a page a newcomer reads.

Every `paperchat COMMAND --option` they show is one the parser (rag/cli/parser.py) knows; every PAPERCHAT_
setting they name is a field of rag/settings.py or an environment variable the code reads; every setting of
rag/settings.py is in the README's table; every repository path they name exists; every relative link finds
its file and heading; bench/README.md names every script in bench/ and `make bench` runs its benchmarks.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest
from pydantic import AliasChoices, BaseModel

from conftest import ROOT
from rag.cli.parser import build_parser
from rag.settings import Settings

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
FENCE = re.compile(r"^( *)```[^\n]*\n(.*?)^\1```", re.M | re.S)
# A path in another project's repository, quoted as a source (docs/scale.md).
FOREIGN_PATHS = {"docs/docs/benchmarking.md"}


def rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def code_texts(text: str) -> list[str]:
    """What a page shows as code: each line of a fenced block (its comment cut off) and each inline span."""
    out = []
    for block in FENCE.finditer(text):
        out += [re.split(r"\s#\s", line)[0] for line in block.group(2).splitlines()]
    prose = FENCE.sub("", text)
    out += re.findall(r"`([^`\n]+)`", prose)
    return [t.replace("\\|", "|") for t in out]


def subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def options(p: argparse.ArgumentParser) -> set[str]:
    return {s for a in p._actions for s in a.option_strings}


def commands_named() -> list[tuple[str, str]]:
    """(page, the text after `paperchat`) for every `paperchat ...` a page shows as code."""
    found = []
    for page in PAGES:
        for code in code_texts(page.read_text(encoding="utf-8")):
            for m in re.finditer(r"(?<![\w/.-])paperchat\s+(\S.*)", code):
                found.append((rel(page), m.group(1)))
    return found


def check_command(rest: str, root: argparse.ArgumentParser) -> list[str]:
    """What is wrong with `paperchat REST` ([] if nothing): an unknown command, sub-command or option."""
    tokens = [t.strip("[](),;") for t in rest.split()]
    tokens = [t for t in tokens if t]
    globals_ = options(root)
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):  # global options (`--library NAME`)
        if tokens[i] not in globals_:
            return [f"unknown option {tokens[i]} before the command"]
        i += 2
    if i >= len(tokens) or not re.fullmatch(r"[a-z]+(\|[a-z]+)*", tokens[i]):
        return []  # `paperchat` named as a word, not a command line
    problems = []
    for name in tokens[i].split("|"):
        parser = subparsers(root).get(name)
        if parser is None:
            problems.append(f"no command {name!r}")
            continue
        rest_tokens = tokens[i + 1:]
        if (subs := subparsers(parser)) and rest_tokens:
            if rest_tokens[0] not in subs:
                problems.append(f"no sub-command {name} {rest_tokens[0]!r}")
                continue
            parser = subs[rest_tokens[0]]
        known = options(parser) | globals_
        problems += [f"{name}: no option {t}" for t in rest_tokens
                     if re.fullmatch(r"--[a-z][a-z0-9-]*", t) and t not in known]
    return problems


def test_every_command_the_docs_show_is_one_the_parser_knows():
    root = build_parser()
    named = commands_named()
    assert len(named) > 40, "the README and docs/ show the commands: none found means the scan is broken"
    bad = [f"{page}: paperchat {rest}  ->  {'; '.join(p)}" for page, rest in named
           if (p := check_command(rest, root))]
    assert not bad, "commands the docs show that rag/cli/parser.py does not have:\n" + "\n".join(bad)


def test_the_check_of_commands_catches_a_wrong_one():
    root = build_parser()
    assert check_command('ask "q" --json --bibtex refs.bib', root) == []
    assert check_command("eval retrieval --beir DIR --split test", root) == []
    assert check_command("--library papers87k ingest FILE", root) == []
    assert check_command("summarize TOPIC", root) == []  # the alias
    assert check_command("ask|summarise|cite|compare --json", root) == []
    assert check_command("asks QUESTION", root) == ["no command 'asks'"]
    assert check_command("compare TOPIC --top 5", root) == ["compare: no option --top"]
    assert check_command("eval speed", root) == ["no sub-command eval 'speed'"]


def setting_names() -> dict[str, str]:
    """Every environment variable rag/settings.py reads -> the field it sets."""
    names = {}
    for field, info in Settings.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            for sub in ann.model_fields:
                names[f"PAPERCHAT_{field}__{sub}".upper()] = f"{field}.{sub}"
        else:
            names[f"PAPERCHAT_{field}".upper()] = field
        if isinstance(info.validation_alias, AliasChoices):
            names.update({a: field for a in info.validation_alias.choices if isinstance(a, str)})
    return names


def settings_named(text: str, known: dict[str, str] | None = None) -> set[str]:
    """The PAPERCHAT_ / OPENAI_ variables a text names; `…__X` after a `PAPERCHAT_GROUP__…` in the same line
    is PAPERCHAT_GROUP__X, or, when the group has no X (a list of counts of several groups), whichever
    group's X there is."""
    known = setting_names() if known is None else known
    found = set()
    for line in text.splitlines():
        group = None
        for m in re.finditer(r"\b((?:PAPERCHAT|OPENAI)_[A-Z0-9_]*[A-Z0-9])|…__([A-Z0-9_]*[A-Z0-9])", line):
            if m.group(1):
                found.add(m.group(1))
                if "__" in m.group(1):
                    group = m.group(1).split("__")[0]
            elif group:
                name = f"{group}__{m.group(2)}"
                others = sorted(k for k in known if k.endswith(f"__{m.group(2)}"))
                found.add(name if name in known or not others else others[0])
    return found


def read_by_code(name: str) -> bool:
    """Whether code outside the tests reads this environment variable (e.g. a bench's cache folder)."""
    return any(name in p.read_text(encoding="utf-8") for d in ("rag", "ui", "bench") for p in (ROOT / d).rglob("*.py"))


def test_every_setting_the_docs_name_exists():
    known = setting_names()
    bad = [f"{rel(page)}: {name}" for page in PAGES for name in sorted(settings_named(page.read_text(encoding="utf-8")))
           if name not in known and not read_by_code(name)]
    assert not bad, ("settings the docs name that neither rag/settings.py has nor any code reads "
                     "(renamed? removed?):\n" + "\n".join(bad))


def readme_section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    assert f"\n## {title}\n" in text, f"the README has no '## {title}' section"
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_settings_table_has_every_setting():
    table = settings_named(readme_section("Settings"))
    missing = sorted(n for n in setting_names() if n not in table and not n.startswith("PAPERCHAT_OPENAI_"))
    assert not missing, f"add these to the README's Settings table: {missing}"


def test_the_check_of_settings_reads_the_short_forms():
    assert settings_named("| `PAPERCHAT_ASK__FLOOR`, `…__ANSWERS_AT` | x |") == {"PAPERCHAT_ASK__FLOOR", "PAPERCHAT_ASK__ANSWERS_AT"}
    assert settings_named("`PAPERCHAT_ASK__SOURCES`, `…__K`") == {"PAPERCHAT_ASK__SOURCES", "PAPERCHAT_RETRIEVAL__K"}
    assert settings_named("`PAPERCHAT_ASK__SOURCES`, `…__KAY`") == {"PAPERCHAT_ASK__SOURCES", "PAPERCHAT_ASK__KAY"}
    assert "PAPERCHAT_ASK__FLOOR" in setting_names() and "OPENAI_BASE_URL" in setting_names()
    assert "PAPERCHAT_ASK__FLOR" not in setting_names()


def paths_named(text: str) -> set[str]:
    """Repository paths a text shows as code (`bench/NAME.py`, with a placeholder, is none), and
    the modules of `python -m rag.…` as paths."""
    found = set()
    for code in code_texts(text):
        for m in re.finditer(r"(?<![\w./-])((?:rag|ui|bench|tests|prompts|seeds|docs)/[\w./*-]*)", code):
            if not re.search(r"\b(?:NAME|N|DIR|FILE|ID|HASH)\b", m.group(1)):
                found.add(m.group(1).rstrip(".,:"))
        for m in re.finditer(r"python -m (rag(?:\.\w+)+)", code):
            found.add(m.group(1).replace(".", "/") + ".py")
    return found - FOREIGN_PATHS


def test_every_repository_path_the_docs_name_exists():
    bad = [f"{rel(page)}: {p}" for page in PAGES for p in sorted(paths_named(page.read_text(encoding="utf-8")))
           if not (any(ROOT.glob(p)) if "*" in p else (ROOT / p).exists())]
    assert not bad, "paths the docs name that are not in the repository (moved? renamed?):\n" + "\n".join(bad)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text lower-cased, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for m in re.finditer(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text(encoding="utf-8")), re.M):
        s = slug(m.group(1))
        out.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    return out


def links(page: Path) -> list[str]:
    prose = re.sub(r"`[^`\n]+`", "", FENCE.sub("", page.read_text(encoding="utf-8")))
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", prose) if not re.match(r"[a-z]+:", t)]


def test_every_relative_link_resolves():
    bad, n = [], 0
    for page in PAGES:
        for target in links(page):
            n += 1
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                bad.append(f"{rel(page)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{rel(page)}: {target} (no heading '#{anchor}' in {dest.name})")
    assert n > 40, "the README and docs/ link to each other: none found means the scan is broken"
    assert not bad, "links that lead nowhere:\n" + "\n".join(bad)


def test_the_readme_is_a_page_a_newcomer_reads():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines; move the detail to docs/ (the README is under 200)"
    text = "\n".join(lines)
    for must in ("make run", "make test", "## Command line", "## The chat UI", "## Settings", "## Where things live"):
        assert must in text, f"the README lost {must!r}"


BENCH = ROOT / "bench"
KINDS = {"benchmark (`make bench`)", "training (shipped weights)", "study", "helper"}


def bench_table() -> dict[str, str]:
    rows = {}
    for line in (BENCH / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `bench/") and len(cells) >= 2:
            rows[cells[0].strip("`")] = cells[1]
    return rows


def test_bench_readme_names_every_script_with_its_kind():
    table = bench_table()
    scripts = {p.relative_to(ROOT).as_posix() for p in BENCH.rglob("*.py") if "results" not in p.parts}
    assert not scripts - set(table), f"add these to the table in bench/README.md: {sorted(scripts - set(table))}"
    assert not set(table) - scripts, f"bench/README.md names scripts that are gone: {sorted(set(table) - scripts)}"
    odd = {s: k for s, k in table.items() if k not in KINDS}
    assert not odd, f"each script's kind is one of {sorted(KINDS)}: {odd}"


def test_make_bench_runs_the_benchmarks():
    tree = ast.parse((BENCH / "run_all.py").read_text(encoding="utf-8"))
    [scripts] = [ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                 and any(getattr(t, "id", "") == "SCRIPTS" for t in n.targets)]
    benchmarks = {s for s, k in bench_table().items() if k == "benchmark (`make bench`)"}
    assert {f"bench/{s}.py" for s in scripts} == benchmarks, (
        "bench/run_all.py's SCRIPTS (what `make bench` runs) and the benchmarks of bench/README.md differ")
    assert "bench/run_all.py" in (ROOT / "Makefile").read_text(encoding="utf-8")


@pytest.mark.parametrize("heading, anchor", [("## ask --json", "ask---json"),
                                             ("## The map: is near on the map near in meaning?",
                                              "the-map-is-near-on-the-map-near-in-meaning"),
                                             ("## Reference managers: RIS, CSL-JSON, Zotero",
                                              "reference-managers-ris-csl-json-zotero")])
def test_anchors_are_githubs(heading, anchor):
    assert slug(heading.lstrip("# ")) == anchor
