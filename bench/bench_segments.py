"""Cost per page of the ``segments`` method as a ratio to a plain lxml parse.

One run over the corpus pages in manifest order (the table grows as in a
crawl).  Per page, in the same process:

* ``parse``: ``lxml.html.document_fromstring`` of the decoded page (the unit);
* ``core``: ``SegmentsRunner.run`` without a first-pages fallback, on a parsed
  page whose visible lines are already computed (the engine computes them for
  every method): segmentation, table expansion, detection, shrinkage;
* ``core+lines``: the same plus the visible-line walk;
* ``run``: ``SegmentsRunner.run`` with the defaults (Sandwich on the first pages);
* ``engine``: ``Detemplater.process`` end to end (decode, parse, run, render).

Prints medians (ms) and the median of per-page ratios to ``parse``; writes the
same table to ``bench/results/segments.txt``.

    .venv/bin/python bench/bench_segments.py [manifest ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import lxml.html
from _results import CORPUS, write_result  # bench/, the script's folder

from scrapy_detemplate._html import decode_html, keep_content_after_early_end, parse_html, visible_lines
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.runners.base import ParsedPage
from scrapy_detemplate.runners.segments import SegmentsRunner
from scrapy_detemplate.store import MemoryStore

HERE = Path(__file__).resolve().parent
DEFAULT_MANIFESTS = [str(CORPUS / "c2f.manifest.jsonl"), str(CORPUS / "dragnet10.manifest.jsonl")]


def _best_of(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifests", nargs="*", default=DEFAULT_MANIFESTS)
    args = parser.parse_args(argv)
    config = DetemplateConfig(method="segments")
    runner = SegmentsRunner(config, MemoryStore())
    core = SegmentsRunner(DetemplateConfig(method="segments", segments_first_pages="none"), MemoryStore())
    engine = Detemplater(config)
    times: dict[str, list[float]] = {"parse": [], "core": [], "core+lines": [], "run": [], "engine": []}
    ratios: dict[str, list[float]] = {k: [] for k in times if k != "parse"}
    for manifest in args.manifests:
        for page in read_manifest(manifest):
            _, html = decode_html(page.body)
            source = keep_content_after_early_end(html)
            if not source.strip():
                continue
            parse = _best_of(lambda source=source: lxml.html.document_fromstring(source))
            root = parse_html(html)
            if root is None:
                continue
            lines_time = _best_of(lambda root=root: visible_lines(root))
            parsed = ParsedPage.of(page.url, html, root, config)
            if not parsed.lines:
                continue
            # The runners update their tables, so each runs once per page (no best-of).
            start = time.perf_counter()
            core.run(parsed)
            core_time = time.perf_counter() - start
            start = time.perf_counter()
            runner.run(parsed)
            run = time.perf_counter() - start
            start = time.perf_counter()
            engine.process(page.url, page.body)
            whole = time.perf_counter() - start
            steps = (("parse", parse), ("core", core_time), ("core+lines", core_time + lines_time), ("run", run),
                     ("engine", whole))  # fmt: skip
            for name, value in steps:
                times[name].append(value)
                if name != "parse":
                    ratios[name].append(value / parse)
    out = [
        f"segments: cost per page vs lxml.html.document_fromstring ({len(times['parse'])} pages; python "
        f"{sys.version.split()[0]}, lxml {'.'.join(map(str, lxml.etree.LXML_VERSION))})",
        f"{'step':<12} {'median ms':>10} {'p90 ms':>8} {'median ratio':>13} {'p90 ratio':>10}",
    ]
    for name, values in times.items():
        p90 = statistics.quantiles(values, n=10)[-1]
        if name == "parse":
            out.append(f"{name:<12} {1000 * statistics.median(values):10.2f} {1000 * p90:8.2f} {1.0:13.2f} {1.0:10.2f}")
            continue
        r = ratios[name]
        out.append(
            f"{name:<12} {1000 * statistics.median(values):10.2f} {1000 * p90:8.2f} "
            f"{statistics.median(r):13.2f} {statistics.quantiles(r, n=10)[-1]:10.2f}"
        )
    text = "\n".join(out)
    print(text)
    write_result("segments.txt", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
