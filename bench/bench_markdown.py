"""Markdown out on real pages: does it keep the words and the structure, and what does it cost?

    .venv/bin/python bench/bench_markdown.py [--corpus ../shared/corpus] [--corpora docs,c2f]
                                             [--all-pages] [--no-peer] [--python-walk]
                                             [--out bench/results/markdown.txt]

Needs ``markdown-it-py`` (test extra) and, for the comparison, ``html-to-markdown`` (bench extra).

For the first page of every site of each corpus (its first manifest line; a
fresh engine, the default method, ``DETEMPLATE_MARKDOWN`` on), against the
kept HTML and the text output of that same engine call:

* **words**: the Markdown read back by markdown-it-py (CommonMark + tables),
  rendered to HTML and taken as visible text (the METRICS.md rules, as for the
  text output), against the words of the text output
  (``re.findall(r"\\w+", s.lower())``): micro precision, recall, F1 over the
  bag of words, and how many pages have the very same word sequence.  The raw
  Markdown string's own words are shown too (list numbers, fence languages and
  ``\\`` escapes make them differ; they are not the contract).
* **structure**: in the kept HTML, ``<pre>`` with visible text (not inside
  another), tables with two or more rows of cells, ``h1``-``h6`` with visible
  text, ``li`` with visible text; in the Markdown as parsed back: fenced/indented code blocks, tables
  with two or more rows, headings, list items; and, apart, the tables with two
  or more rows that hold no table (layout tables hold tables).  Ratio = sum over pages of
  ``min(markdown, html)`` / sum of html (what is kept; the sums of both are
  printed as well).
* **cost**, per page, as a ratio to a plain ``lxml.html.document_fromstring`` of
  the page bytes timed right before: ``render`` = :func:`to_markdown` on the
  tree the engine holds (timed inside the engine call); ``added`` = what
  Markdown adds to the whole engine call: the call with ``DETEMPLATE_MARKDOWN``
  on minus the same call with it off (two more engines, HTML off, fed the same
  pages in the same order, the two calls alternating which goes first), so the
  removal that Markdown makes the engine do when only text is wanted otherwise
  is counted too; ``h2m kept`` =
  ``html_to_markdown.convert`` on the kept HTML string (``result.html``, what a
  user would convert); ``h2m page`` = the same converter on the whole page.
  Medians and 90th percentiles of the per-page ratios.  Times are the thread's
  CPU time (``time.thread_time_ns``): the machine is shared, and wall-clock
  times there include the time the process waits for a core.  With ``--all-pages`` the
  cost is also measured on every page of each corpus, in crawl order.

The same html-to-markdown output is scored for words and structure, for comparison.
``--python-walk`` renders with the Python renderer alone (the compiled walk's
reference, as before it was compiled), for the figures to compare with.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median, quantiles
from typing import Any

import lxml.html
from lxml import etree
from markdown_it import MarkdownIt

from scrapy_detemplate import markdown
from scrapy_detemplate._html import parse_html, visible_text
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import CorpusPage, read_manifest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _results import CORPUS, write_result  # noqa: E402

HEADERS = {"Content-Type": "text/html"}
MD = MarkdownIt("commonmark").enable("table")
WORD = re.compile(r"\w+")
KINDS = ("code blocks", "tables 2+ rows", "headings", "list items", "tables 2+ rows holding no table")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def markdown_text(markdown: str) -> str:
    """The visible text of the Markdown as a CommonMark reader shows it."""
    return visible_text(parse_html("<html><body>" + MD.render(markdown) + "</body></html>"))


def html_counts(root: etree._Element | None) -> tuple[int, ...]:
    """Structure in the kept tree (the one ``result.html`` is written from; parsing that string
    again can differ where libxml2 repaired the page, e.g. text after an empty ``<li/>``)."""
    if root is None:
        return (0,) * len(KINDS)
    code = sum(1 for pre in root.iter("pre") if _text(pre) and not any(a.tag == "pre" for a in pre.iterancestors()))
    tables = sum(1 for table in root.iter("table") if _own_rows(table) >= 2)
    headings = sum(1 for h in root.iter("h1", "h2", "h3", "h4", "h5", "h6") if _text(h))
    items = sum(1 for li in root.iter("li") if _text(li))
    # Layout tables hold tables: those cannot be a GFM grid (they are unwrapped, cells in order).
    data = sum(1 for t in root.iter("table") if _own_rows(t) >= 2 and next(t.iterdescendants("table"), None) is None)
    return (code, tables, headings, items, data)


def _text(el: etree._Element) -> bool:
    """Whether the element shows any text (as Markdown never writes an empty block)."""
    return bool(visible_text(_wrap(el)).strip())


def _wrap(el: etree._Element) -> etree._Element:
    html = etree.Element("html")
    body = etree.SubElement(html, "body")
    body.append(_copy(el))
    return html


def _copy(el: etree._Element) -> etree._Element:
    import copy

    clone = copy.deepcopy(el)
    clone.tail = None
    return clone


def _own_rows(table: etree._Element) -> int:
    rows = 0
    for child in table:
        trs = [child] if child.tag == "tr" else [tr for tr in child if tr.tag == "tr"] if child.tag in (
            "thead", "tbody", "tfoot") else []  # fmt: skip
        rows += sum(1 for tr in trs if any(c.tag in ("td", "th") for c in tr))
    return rows


def markdown_counts(markdown: str) -> tuple[int, ...]:
    tokens = MD.parse(markdown)
    code = sum(1 for t in tokens if t.type in ("fence", "code_block"))
    headings = sum(1 for t in tokens if t.type == "heading_open")
    items = sum(1 for t in tokens if t.type == "list_item_open")
    tables, rows = 0, 0
    for t in tokens:
        if t.type == "table_open":
            rows = 0
        elif t.type == "tr_open":
            rows += 1
        elif t.type == "table_close" and rows >= 2:
            tables += 1
    return (code, tables, headings, items, tables)


@dataclass(slots=True)
class Score:
    """Bag-of-words overlap and structure counts, summed over pages."""

    overlap: int = 0
    produced: int = 0
    expected: int = 0
    same_sequence: int = 0
    pages: int = 0
    raw_overlap: int = 0
    raw_produced: int = 0
    kept: list[int] = field(default_factory=lambda: [0] * len(KINDS))
    found: list[int] = field(default_factory=lambda: [0] * len(KINDS))
    in_html: list[int] = field(default_factory=lambda: [0] * len(KINDS))
    mismatches: list[str] = field(default_factory=list)

    def add(self, url: str, markdown: str, text: str, counts: tuple[int, ...]) -> None:
        got, want = words(markdown_text(markdown)), words(text)
        common = sum((Counter(got) & Counter(want)).values())
        self.overlap += common
        self.produced += len(got)
        self.expected += len(want)
        self.same_sequence += got == want
        self.pages += 1
        raw = words(markdown)
        self.raw_overlap += sum((Counter(raw) & Counter(want)).values())
        self.raw_produced += len(raw)
        if got != want:
            self.mismatches.append(f"{url}: {len(got)} words vs {len(want)}, {common} in common")
        for i, (md, ht) in enumerate(zip(markdown_counts(markdown), counts, strict=True)):
            self.kept[i] += min(md, ht)
            self.found[i] += md
            self.in_html[i] += ht

    def f1(self, overlap: int, produced: int) -> tuple[float, float, float]:
        p = overlap / produced if produced else 1.0
        r = overlap / self.expected if self.expected else 1.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)


class TimedDetemplater(Detemplater):
    """The engine, with the time of its Markdown rendering (the last call) kept, and, when
    ``count`` is on, the structure of the tree it rendered (counted outside the timing)."""

    markdown_ns = 0
    count = False
    counts: tuple[int, ...] = (0,) * len(KINDS)

    def _markdown(self, root: etree._Element, url: str) -> str:
        start = time.thread_time_ns()
        out = super()._markdown(root, url)
        self.markdown_ns = time.thread_time_ns() - start
        if self.count:
            self.counts = html_counts(root)
        return out


def first_pages(manifest: Path) -> list[CorpusPage]:
    seen: set[str] = set()
    pages = []
    for page in read_manifest(manifest):
        if page.site not in seen:
            seen.add(page.site)
            pages.append(page)
    return pages


def parse_ns(body: bytes) -> int:
    start = time.thread_time_ns()
    lxml.html.document_fromstring(body)
    return time.thread_time_ns() - start


def timed(func: Callable[[], Any]) -> tuple[Any, int]:
    start = time.thread_time_ns()
    out = func()
    return out, time.thread_time_ns() - start


def p90(values: list[float]) -> float:
    return quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]


def run(corpus: str, pages: Iterable[CorpusPage], convert: Callable[[str], str] | None, score: bool) -> dict[str, Any]:
    engine = TimedDetemplater(DetemplateConfig(markdown=True, html=True))  # the peer converts result.html
    engine.count = score
    text_only, with_markdown = Detemplater(DetemplateConfig()), Detemplater(DetemplateConfig(markdown=True))
    ours, peer = Score(), Score()
    ratios: dict[str, list[float]] = {"render": [], "added": [], "h2m kept": [], "h2m page": []}
    ms: dict[str, list[float]] = {k: [] for k in ("parse", *ratios)}
    for index, page in enumerate(pages):
        try:
            floor = parse_ns(page.body)
        except (etree.ParserError, ValueError):
            continue
        engine.markdown_ns = 0
        result = engine.process(page.url, page.body, headers=HEADERS)
        if not result.markdown and not result.text:
            continue
        ms["parse"].append(floor / 1e6)
        ratios["render"].append(engine.markdown_ns / floor)
        ms["render"].append(engine.markdown_ns / 1e6)
        call_ns = {}
        for twin in (text_only, with_markdown) if index % 2 else (with_markdown, text_only):
            start = time.thread_time_ns()
            twin.process(page.url, page.body, headers=HEADERS)
            call_ns[twin] = time.thread_time_ns() - start
        added = call_ns[with_markdown] - call_ns[text_only]
        ratios["added"].append(added / floor)
        ms["added"].append(added / 1e6)
        if score:
            ours.add(page.url, result.markdown, result.text, engine.counts)
        if convert is not None:
            peer_md, ns = timed(lambda html=result.html: convert(html))  # type: ignore[misc]
            ratios["h2m kept"].append(ns / floor)
            ms["h2m kept"].append(ns / 1e6)
            html = page.body.decode("utf-8", "replace")
            _, ns = timed(lambda html=html: convert(html))  # type: ignore[misc]
            ratios["h2m page"].append(ns / floor)
            ms["h2m page"].append(ns / 1e6)
            if score:
                peer.add(page.url, peer_md, result.text, engine.counts)
    return {"corpus": corpus, "ours": ours, "peer": peer, "ratios": ratios, "ms": ms}


def report(runs: list[dict[str, Any]], cost_runs: list[dict[str, Any]], peer: bool) -> str:
    walk = "compiled walk" if markdown._compiled_renderer is not None else "Python renderer"
    lines = [f"Markdown out: first page of every site, default method (combined), DETEMPLATE_MARKDOWN on ({walk})", ""]
    for r in runs:
        for name, s in (("to_markdown", r["ours"]), ("html-to-markdown", r["peer"])):
            if not s.pages:
                continue
            p, rec, f1 = s.f1(s.overlap, s.produced)
            _, _, raw_f1 = s.f1(s.raw_overlap, s.raw_produced)
            lines.append(
                f"{r['corpus']:<5} {name:<17} {s.pages:>3} pages  words vs text output: P {p:.4f} R {rec:.4f} "
                f"F1 {f1:.4f} (same word sequence on {s.same_sequence}/{s.pages} pages; raw Markdown string F1 "
                f"{raw_f1:.3f})"
            )
            kinds = ", ".join(
                f"{kind} {kept / html if html else 1:.3f} ({found} in Markdown / {html} in HTML)"
                for kind, kept, found, html in zip(KINDS, s.kept, s.found, s.in_html, strict=True)
            )
            lines.append(f"      {'':<17} kept of the HTML's: {kinds}")
            lines.extend(f"      {'':<17} differs: {m}" for m in s.mismatches[:5])
    lines += ["", "Cost per page, ratio to a plain lxml.html parse of the page bytes (median, p90; median ms)"]
    for r in cost_runs:
        for name, values in r["ratios"].items():
            if values:
                lines.append(
                    f"{r['corpus']:<5} {r['scope']:<11} {name:<9} {len(values):>5} pages  {median(values):.3f} parses "
                    f"(p90 {p90(values):.2f}); {median(r['ms'][name]):.3f} ms, parse {median(r['ms']['parse']):.3f} ms"
                )
    if not peer:
        lines.append("(html-to-markdown not installed: no comparison)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--corpora", default="docs,c2f")
    parser.add_argument("--all-pages", action="store_true", help="also time every page of each corpus")
    parser.add_argument("--pages", type=int, default=None, help="with --all-pages: at most N pages per corpus")
    parser.add_argument("--no-peer", action="store_true", help="skip html-to-markdown")
    parser.add_argument("--python-walk", action="store_true", help="render with the Python renderer alone")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "markdown.txt")
    args = parser.parse_args(argv)
    convert: Callable[[str], str] | None = None
    if not args.no_peer:
        try:
            import html_to_markdown
        except ImportError:
            pass
        else:

            def convert(html: str) -> str:
                return html_to_markdown.convert(html).content or ""

    logging.getLogger("scrapy_detemplate").setLevel(logging.ERROR)
    if args.python_walk:
        markdown._compiled_renderer = None  # to_markdown then takes the Python renderer
    runs, cost_runs = [], []
    for corpus in args.corpora.split(","):
        manifest = args.corpus / f"{corpus}.manifest.jsonl"
        r = run(corpus, first_pages(manifest), convert, score=True)
        runs.append(r)
        cost_runs.append({**r, "scope": "first pages"})
        if args.all_pages:
            every = run(corpus, itertools.islice(read_manifest(manifest), args.pages), convert, score=False)
            cost_runs.append({**every, "scope": "all pages"})
    text = report(runs, cost_runs, convert is not None)
    print(text)
    path = write_result(args.out.name, text) if args.out.parent == HERE / "results" else args.out
    if path == args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
