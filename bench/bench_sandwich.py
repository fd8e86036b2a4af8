"""Cost of Sandwich per page, as a ratio to a plain ``lxml.html`` parse of the same page.

    python bench/bench_sandwich.py [MANIFEST ...] [--repeat 3]

For every corpus page, in crawl order, in one process: a plain parse
(``lxml.html.document_fromstring`` of the decoded page), the Sandwich step alone
(line keys, LCS with the peer, peer update: ``runner.run``), and the whole engine
call (decode, parse, visible-text walk, Sandwich, render of clean HTML and text).
Prints medians and their ratios to the parse; each figure is the best of
``--repeat`` runs of the same page, to damp the noise of a shared machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import lxml.html
from _results import CORPUS  # bench/, the script's folder

from scrapy_detemplate import DetemplateConfig, Detemplater
from scrapy_detemplate._html import decode_html, parse_html
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.runners import ParsedPage
from scrapy_detemplate.runners.sandwich import SandwichRunner
from scrapy_detemplate.store import MemoryStore


def best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "manifests", nargs="*", default=[str(CORPUS / f"{c}.manifest.jsonl") for c in ("c2f", "dragnet10")]
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--unit", default="text", choices=("text", "source"))
    args = parser.parse_args()
    config = DetemplateConfig(sandwich_unit=args.unit)
    rows = []
    for manifest in args.manifests:
        parse_t, step_t = [], []
        step_runner = SandwichRunner(config, MemoryStore())
        pages = list(read_manifest(manifest))
        # The whole engine call: ``repeat`` fresh engines each take the stream in
        # order (state matters), and every page keeps its best time.
        total_t = [float("inf")] * len(pages)
        for _ in range(args.repeat):
            engine = Detemplater(config)
            for n, page in enumerate(pages):
                start = time.perf_counter()
                engine.process(page.url, page.body)
                total_t[n] = min(total_t[n], time.perf_counter() - start)
        for page in pages:
            _, html = decode_html(page.body)
            parse_t.append(best(lambda html=html: lxml.html.document_fromstring(html), args.repeat))
            root = parse_html(html)
            parsed = ParsedPage.of(page.url, html, root, config)
            _ = parsed.lines  # the walk is shared by all methods; not part of the step
            # Each repeat sees the same peer: restore the directory state before every run.
            before = step_runner._store.get("sandwich", parsed.directory)

            def step(parsed=parsed, before=before, runner=step_runner):  # type: ignore[no-untyped-def]
                if before is not None:
                    runner._store.set("sandwich", parsed.directory, before)
                runner.run(parsed)

            step_t.append(best(step, args.repeat))
        p, s, t = (statistics.median(x) for x in (parse_t, step_t, total_t))
        rows.append((Path(manifest).name, len(parse_t), p, s, t))
    print(f"Sandwich ({args.unit} lines): median per page, ratio to a plain lxml.html parse")
    header = ("corpus", "pages", "parse ms", "step ms", "step/parse", "engine ms", "engine/parse")
    print("{:<26} {:>5} {:>9} {:>8} {:>10} {:>9} {:>12}".format(*header))
    for name, n, p, s, t in rows:
        cells = (name, n, 1000 * p, 1000 * s, s / p, 1000 * t, t / p)
        print("{:<26} {:>5} {:>9.2f} {:>8.2f} {:>10.2f} {:>9.2f} {:>12.2f}".format(*cells))


if __name__ == "__main__":
    main()
