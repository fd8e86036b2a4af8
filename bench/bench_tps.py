"""Cost of TPS per page, as a ratio to a plain ``lxml.html.document_fromstring``.

One run over the corpus pages (``read_manifest``), in one process.  Per page
(the best of ``REPEAT`` timings of each step, to damp scheduler noise):

* ``parse``: ``lxml.html.document_fromstring`` of the decoded page (the unit);
* ``tps core``: ``convertTreeToSequence`` + ``segmentRegions`` (the default);
* ``core (size)``: ``convertTreeToSequence`` + ``searchRegion`` (Algorithms 2-4);
* ``runner``: ``TpsRunner.run`` (default settings) on a freshly parsed page,
  including the visible lines it needs and the verdict (Algorithm 5);
* ``engine``: ``Detemplater.process`` from bytes: decode, parse, run, render;
* ``engine none``: the same with ``method="none"`` (decode, parse, visible
  lines, no removal): what the engine costs without any method.

Prints the median of each step's ratio to ``parse`` (and the 90th percentile)
and writes the table to ``bench/results/tps.txt``.  Run from the repository root:

    .venv/bin/python bench/bench_tps.py [manifest ...]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from statistics import median, quantiles

import lxml.html
from _results import write_result  # bench/, the script's folder

from scrapy_detemplate._html import decode_html, find_body, parse_html
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.methods.tps import convertTreeToSequence, searchRegion, segmentRegions
from scrapy_detemplate.runners.base import ParsedPage
from scrapy_detemplate.runners.tps import TpsRunner
from scrapy_detemplate.store import MemoryStore

REPEAT = 2
MANIFESTS = ["../shared/corpus/c2f.manifest.jsonl", "../shared/corpus/dragnet10.manifest.jsonl"]


def best(fn: Callable[[], object], setup: Callable[[], None] | None = None) -> float:
    times = []
    for _ in range(REPEAT):
        if setup is not None:
            setup()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str]) -> int:
    config = DetemplateConfig(method="tps")
    runner = TpsRunner(config, MemoryStore())
    none = DetemplateConfig(method="none")
    rows: dict[str, list[float]] = {"tps core": [], "core (size)": [], "runner": [], "engine": [], "engine none": []}
    parse_ms: list[float] = []
    nodes: list[int] = []
    for manifest in argv or MANIFESTS:
        for page in read_manifest(manifest):
            _, html = decode_html(page.body)
            root = parse_html(html)
            body = find_body(root) if root is not None else None
            if root is None or body is None:
                continue
            parse = best(lambda html=html: lxml.html.document_fromstring(html))
            if parse <= 0:
                continue

            def core(body=body) -> None:  # type: ignore[no-untyped-def]
                tps = convertTreeToSequence(body)
                assert tps is not None
                segmentRegions(tps.symbols)  # the default, DETEMPLATE_TPS_SELECT=segments

            def core_size(body=body) -> None:  # type: ignore[no-untyped-def]
                tps = convertTreeToSequence(body)
                assert tps is not None
                searchRegion(tps.symbols)  # DETEMPLATE_TPS_SELECT=size (the paper's Algorithm 3)

            fresh: list[ParsedPage] = []

            def new_page(html=html, url=page.url, site=page.site, fresh=fresh) -> None:  # type: ignore[no-untyped-def]
                fresh[:] = [ParsedPage(url, site, site, html, parse_html(html))]  # type: ignore[arg-type]

            engine, floor = Detemplater(config), Detemplater(none)
            rows["tps core"].append(best(core) / parse)
            rows["core (size)"].append(best(core_size) / parse)
            rows["runner"].append(best(lambda fresh=fresh: runner.run(fresh[0]), new_page) / parse)
            rows["engine"].append(best(lambda b=page.body, u=page.url, e=engine: e.process(u, b)) / parse)
            rows["engine none"].append(best(lambda b=page.body, u=page.url, e=floor: e.process(u, b)) / parse)
            parse_ms.append(1000 * parse)
            nodes.append(sum(1 for _ in body.iter()))
    lines = [
        f"TPS cost per page, ratio to lxml.html.document_fromstring ({len(parse_ms)} pages, best of {REPEAT})",
        f"median parse: {median(parse_ms):.2f} ms; median body elements: {median(nodes):.0f}",
        f"{'step':<12} {'median':>8} {'p90':>8}",
    ]
    for name, ratios in rows.items():
        lines.append(f"{name:<12} {median(ratios):8.2f} {quantiles(ratios, n=10)[-1]:8.2f}")
    text = "\n".join(lines)
    print(text)
    write_result("tps.txt", text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
