"""A generated documentation site: API reference pages in a Sphinx-like theme.

Each page has the template a documentation generator puts around its content (a
header with the project's name and a search box, a sidebar table of contents
naming every page with the current one marked, prev/next bars above and below
the content, a footer) and content that a news-trained extractor loses: API
entries (a signature in a ``<dt>``, a description, a field list of parameters),
code blocks, a table of short cells, a definition list, several sections.

The generator knows which visible lines are content and which are template, so a
test can check that the content survives whole and the template goes.
"""

from __future__ import annotations

import html
import random
from dataclasses import dataclass

PROJECT = "Frobnicate 3.2 documentation"
MODULES = (
    "frob.core", "frob.io", "frob.net", "frob.cache", "frob.config", "frob.cli", "frob.plugins", "frob.testing",
    "frob.util", "frob.types", "frob.errors", "frob.async", "frob.compat", "frob.logging",
)  # fmt: skip
HEADER = (PROJECT, "Quick search", "Go", "Home", "Tutorial", "API reference", "Changelog")
FOOTER = ("© Copyright 2026, the Frobnicate developers.", "Created using Sphinx 7.2.6.", "Show page source")

_NOUNS = ("buffer", "stream", "record", "handle", "socket", "entry", "schema", "token", "frame", "queue", "layer")
_VERBS = ("reads", "writes", "returns", "validates", "flushes", "opens", "closes", "parses", "caches", "wraps")
_ADJ = ("current", "default", "raw", "encoded", "pending", "shared", "optional", "nested", "cached", "remote")


def sentence(rng: random.Random, words: int = 12) -> str:
    """A generated sentence of ``words`` words, ending in a number and a full stop (shared with ``forumsite``)."""
    parts = [f"{rng.choice(_ADJ)} {rng.choice(_NOUNS)}" if i % 3 == 0 else rng.choice(_VERBS) for i in range(words)]
    text = " ".join(parts)
    return text[0].upper() + text[1:] + f" {rng.randint(1, 999)}."


@dataclass(frozen=True)
class DocPage:
    url: str
    body: bytes
    content: tuple[str, ...]  # visible lines of the content, in order
    template: tuple[str, ...]  # visible lines of the template


def _api_entry(rng: random.Random, module: str, n: int) -> tuple[str, list[str]]:
    name = f"{rng.choice(_VERBS).rstrip('s')}_{rng.choice(_NOUNS)}{n}"
    args = ", ".join(f"{rng.choice(_NOUNS)}{i}: int = {rng.randint(0, 9)}" for i in range(rng.randint(1, 3)))
    signature = f"{module}.{name}({args}) -> {rng.choice(_NOUNS).title()}"
    description = sentence(rng, 14)
    params = [f"{rng.choice(_NOUNS)}{i} – {sentence(rng, 6)}" for i in range(2)]
    returns = f"A {rng.choice(_ADJ)} {rng.choice(_NOUNS)} {rng.randint(1, 99)}."
    markup = (
        f'<dl class="py function"><dt class="sig sig-object py" id="{module}.{name}">'
        f'<span class="sig-name descname">{html.escape(signature)}</span>'
        f'<a class="headerlink" href="#{module}.{name}" title="Permalink to this definition">¶</a></dt>'
        f"<dd><p>{description}</p>"
        '<dl class="field-list simple"><dt class="field-odd">Parameters</dt><dd class="field-odd"><ul class="simple">'
        + "".join(f"<li><p>{html.escape(p)}</p></li>" for p in params)
        + f'</ul></dd><dt class="field-even">Returns</dt><dd class="field-even"><p>{returns}</p></dd></dl></dd></dl>'
    )
    return markup, [signature, description, "Parameters", *params, "Returns", returns]


def _code_block(rng: random.Random, language: str, n: int) -> tuple[str, list[str]]:
    lines = [f"{rng.choice(_NOUNS)}_{n}_{i} = frob.{rng.choice(_VERBS)}({rng.randint(0, 99)})" for i in range(4)]
    markup = (
        f'<div class="highlight-{language} notranslate"><div class="highlight"><pre>'
        + "\n".join(html.escape(line) for line in lines)
        + "</pre></div></div>"
    )
    return markup, lines


def _table(rng: random.Random) -> tuple[str, list[str]]:
    header = ["Option", "Type", "Default"]
    rows = [[f"{rng.choice(_NOUNS)}_{rng.choice(_ADJ)}", rng.choice(("int", "str", "bool")), str(rng.randint(0, 64))]
            for _ in range(4)]  # fmt: skip
    markup = (
        '<table class="docutils align-default"><thead><tr>'
        + "".join(f"<th><p>{h}</p></th>" for h in header)
        + "</tr></thead><tbody>"
        + "".join("<tr>" + "".join(f"<td><p>{c}</p></td>" for c in row) + "</tr>" for row in rows)
        + "</tbody></table>"
    )
    return markup, [*header, *(cell for row in rows for cell in row)]


def _glossary(rng: random.Random) -> tuple[str, list[str]]:
    terms = [(f"{rng.choice(_ADJ)} {rng.choice(_NOUNS)} {rng.randint(1, 99)}", sentence(rng, 9)) for _ in range(3)]
    markup = '<dl class="glossary">' + "".join(f"<dt>{t}</dt><dd><p>{d}</p></dd>" for t, d in terms) + "</dl>"
    return markup, [x for pair in terms for x in pair]


def page(index: int, seed: int = 0) -> DocPage:
    """Page ``index`` of the site (0 <= index < len(MODULES))."""
    rng = random.Random(seed * 1000 + index)
    module = MODULES[index]
    title = f"{module} — {rng.choice(_ADJ)} {rng.choice(_NOUNS)} handling"
    parts: list[str] = []
    content: list[str] = [title]
    parts.append(f'<h1>{html.escape(title)}<a class="headerlink" href="#">¶</a></h1>')
    intro = sentence(rng, 18)
    parts.append(f"<p>{intro}</p>")
    content.append(intro)
    for s, (heading, language) in enumerate((("Functions", "python"), ("Examples", "console"), ("Options", "ini"))):
        section = f"{heading} of {module}"
        parts.append(f'<section id="s{s}"><h2>{section}<a class="headerlink" href="#s{s}">¶</a></h2>')
        content.append(section)
        blocks = []
        if heading == "Functions":
            blocks = [_api_entry(rng, module, i) for i in range(rng.randint(2, 3))]
        elif heading == "Examples":
            blocks = [_code_block(rng, language, i) for i in range(2)]
        else:
            blocks = [_table(rng), _glossary(rng)]
        for markup, lines in blocks:
            parts.append(markup)
            content.extend(lines)
        parts.append("</section>")
    prev_title = MODULES[index - 1] if index else ""
    next_title = MODULES[index + 1] if index + 1 < len(MODULES) else ""
    bar_lines = [x for x in (prev_title and f"« {prev_title}", next_title and f"{next_title} »") if x]
    bar = (
        '<div class="related" role="navigation"><ul>'
        + (f'<li class="prev"><a href="{prev_title}.html">« {prev_title}</a></li>' if prev_title else "")
        + (f'<li class="next"><a href="{next_title}.html">{next_title} »</a></li>' if next_title else "")
        + "</ul></div>"
    )
    toc_items = "".join(
        f'<li class="toctree-l1 current"><a class="current reference internal" href="#">{m}</a></li>'
        if m == module
        else f'<li class="toctree-l1"><a class="reference internal" href="{m}.html">{m}</a></li>'
        for m in MODULES
    )
    sidebar = (
        '<div class="sphinxsidebar" role="navigation"><div class="sphinxsidebarwrapper">'
        f'<h3><a href="index.html">Table of Contents</a></h3><ul class="current">{toc_items}</ul>'
        '<div role="note"><h3>This Page</h3><ul class="this-page-menu"><li><a href="#">Show Source</a></li></ul></div>'
        '<div id="searchbox" role="search"><h3>Quick search</h3><form action="search.html"><input name="q">'
        '<input type="submit" value="Go"></form></div></div></div>'
    )
    header = (
        f'<div class="header"><a href="index.html">{PROJECT}</a>'
        '<ul class="nav"><li><a href="index.html">Home</a></li><li><a href="tutorial.html">Tutorial</a></li>'
        '<li><a href="api.html">API reference</a></li><li><a href="changes.html">Changelog</a></li></ul></div>'
    )
    footer = f'<div class="footer">{html.escape(FOOTER[0])} {FOOTER[1]} <a href="_sources/x.txt">{FOOTER[2]}</a></div>'
    body = (
        f"<!DOCTYPE html><html><head><title>{html.escape(title)} — {PROJECT}</title>"
        '<link rel="stylesheet" href="_static/basic.css"></head><body>'
        f'{header}{bar}<div class="document"><div class="documentwrapper"><div class="bodywrapper">'
        f'<div class="body" role="main">{"".join(parts)}</div></div></div>{sidebar}</div>{bar}{footer}'
        "</body></html>"
    )
    template = (*HEADER[:1], *HEADER[3:], *bar_lines, "Table of Contents", *MODULES, "This Page", "Show Source")
    return DocPage(f"http://docs.example/api/{module}.html", body.encode("utf-8"), tuple(content), template)


def site(seed: int = 0) -> list[DocPage]:
    """Every page of the site, in crawl order."""
    return [page(i, seed) for i in range(len(MODULES))]
