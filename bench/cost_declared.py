"""What reading a page's declared reviews and questions costs the default, against a plain parse.

    .venv/bin/python bench/cost_declared.py [--corpus ../shared/corpus] [corpora ...]

``combined`` reads what a page declares of its own text (``runners/combined.py``, ``declared``: a
product's customer reviews, a page's questions and answers) on every page.  Per page of each corpus, the
best of three calls of ``declared`` on the parsed page (its lines already made, as in the engine) is
divided by a plain ``lxml.html.document_fromstring`` of the same bytes timed just before; the pages
that declare something (``"Question"`` in the source of a page that declares a discussion, or
``reviewBody`` in one that declares a product) are also shown apart: the others do nothing.
The kinds themselves (``kinds.declared_kinds``, read on every page) are timed the same way, beside
the three scans of the source it made before, one a needle (``kinds._declared_kinds_by_needle``).
Figures also go to ``bench/results/cost_declared.txt``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median, quantiles

import lxml.html
from _results import CORPUS, write_result  # bench/, the script's folder

from scrapy_detemplate._html import parse_html, reveal_noscript
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.methods.kinds import _declared_kinds_by_needle, declared_kinds, page_kinds
from scrapy_detemplate.runners.base import ParsedPage
from scrapy_detemplate.runners.combined import declared, with_declared

CORPORA = ("c2f", "dragnet10", "docs", "wcxb-dev")


def _p90(values: list[float]) -> float:
    """The 90th percentile, as ``bench_all.py`` takes it."""
    return quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]


def _row(label: str, ratios: list[float]) -> str:
    if not ratios:
        return f"{label:44} {0:6d}"
    return f"{label:44} {len(ratios):6d} {median(ratios):8.3f} {_p90(ratios):8.3f} {max(ratios):8.3f}"


def _best_of_three(call: Callable[..., object], *args: object) -> float:
    """The least of three calls' seconds."""
    spent = []
    for _ in range(3):
        start = time.perf_counter()
        call(*args)
        spent.append(time.perf_counter() - start)
    return min(spent)


def _declared_template(parsed: ParsedPage, product: bool, discussion: bool) -> frozenset[int]:
    """What the runner does with what the page declares."""
    return with_declared(frozenset(), declared(parsed, product, discussion))


def measure(corpus: Path, name: str) -> tuple[list[float], list[float], list[float], list[float]]:
    """The ratios of every page of ``name`` and of those that declare something, then of its kinds
    read in one scan and in three."""
    config = DetemplateConfig()
    every: list[float] = []
    declaring: list[float] = []
    one_scan: list[float] = []
    three: list[float] = []
    for page in read_manifest(corpus / f"{name}.manifest.jsonl"):
        html = page.html
        start = time.perf_counter()
        lxml.html.document_fromstring(html.encode("utf-8", "surrogatepass"))
        parse = time.perf_counter() - start
        root = parse_html(html)
        if root is None or parse <= 0.0:
            continue
        reveal_noscript(root)
        parsed = ParsedPage.of(page.url, html, root, config)
        parsed.lines  # noqa: B018  (made before the clock, as the engine has them)
        product, discussion = (bool(flag) for flag in page_kinds(html)[:2])
        spent = _best_of_three(_declared_template, parsed, product, discussion)
        every.append(spent / parse)
        if (discussion and '"Question"' in html) or (product and "reviewBody" in html):
            declaring.append(spent / parse)
        if declared_kinds(html) != _declared_kinds_by_needle(html):
            raise AssertionError(f"{page.url}: one scan reads other kinds than three")
        one_scan.append(_best_of_three(declared_kinds, html) / parse)
        three.append(_best_of_three(_declared_kinds_by_needle, html) / parse)
    return every, declaring, one_scan, three


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("corpora", nargs="*", default=list(CORPORA))
    args = parser.parse_args(argv)
    lines = [
        "What a page declares (combined's `declared`), per page, as a ratio to a plain lxml.html parse",
        "(bench/cost_declared.py): the median, the 90th percentile and the most; then the kinds it",
        "declares (`kinds.declared_kinds`), read in one scan of the source and, as before, in three.",
        "",
        f"{'pages':44} {'count':>6} {'median':>8} {'p90':>8} {'max':>8}",
    ]
    for name in args.corpora:
        every, declaring, one_scan, three = measure(args.corpus, name)
        lines.append(_row(f"{name}: every page", every))
        lines.append(_row(f"{name}: pages that declare something", declaring))
        lines.append(_row(f"{name}: its kinds, one scan (shipped)", one_scan))
        lines.append(_row(f"{name}: its kinds, three scans (before)", three))
    text = "\n".join(lines)
    print(text)
    print(f"written to {write_result('cost_declared.txt', text)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
