"""Where an engine call's time goes, phase by phase, as a ratio to one plain parse.

A copy of ``/work/briefs/phases.py`` (the lead's), linted, with ``decide`` given the
runner's batch scorer.  The first 120 pages of a corpus; the first 20 warm up.

    .venv/bin/python bench/phases.py docs [--python]

``--python``: the Python site evidence and scoring (``_site.pyx`` not used), for comparison.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import time

import lxml.html

from scrapy_detemplate._html import count_nodes, decode_html, deeper_than, parse_html, visible_lines
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater, remove_template
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.methods.density import line_features
from scrapy_detemplate.runners import ParsedPage, Verdict
from scrapy_detemplate.runners.combined import decide, keep_table_rows_whole


def main(corpus: str) -> None:
    pages = list(itertools.islice(read_manifest(f"/work/shared/corpus/{corpus}.manifest.jsonl"), 120))
    det = Detemplater(DetemplateConfig())
    runner = det.runner
    evidence = runner._evidence  # type: ignore[attr-defined]
    ratios: dict[str, list[float]] = {}
    clock = time.perf_counter
    for k, p in enumerate(pages):
        t0 = clock()
        lxml.html.document_fromstring(p.body)
        parse = clock() - t0
        ph: dict[str, float] = {}
        t = clock()
        _, html = decode_html(p.body, "text/html")
        ph["decode"] = clock() - t
        t = clock()
        root = parse_html(html)
        ph["parse"] = clock() - t
        if root is None:
            continue
        t = clock()
        count_nodes(root)
        deeper_than(root, 200)
        ph["checks"] = clock() - t
        page = ParsedPage.of(p.url, html, root, det.config)
        t = clock()
        lines = page.lines
        ph["lines"] = clock() - t
        if not lines:
            continue
        t = clock()
        title = root.findtext(".//title") or ""
        rows = line_features(root, lines, title)
        ph["line_features"] = clock() - t
        t = clock()
        site = evidence.site_features(page)
        ph["site_features"] = clock() - t
        for a, b in zip(rows, site, strict=True):
            a += b
        t = clock()
        template = decide(rows, runner._probabilities, runner._threshold, runner._site_df)  # type: ignore[attr-defined]
        ph["decide"] = clock() - t
        t = clock()
        template = keep_table_rows_whole(lines, template)
        ph["rows"] = clock() - t
        verdict = Verdict(template_lines=template)
        t = clock()
        out = remove_template(page, verdict)
        ph["remove"] = clock() - t
        t = clock()
        [line.text for line in visible_lines(out)]
        ph["clean_lines"] = clock() - t
        t = clock()
        lxml.html.tostring(out, encoding="unicode")
        ph["tostring"] = clock() - t
        if k < 20:
            continue
        for key, val in ph.items():
            ratios.setdefault(key, []).append(val / parse)
    total = 0.0
    for key, v in ratios.items():
        total += statistics.mean(v)
        print(f"{key:15s} median {statistics.median(v):.2f} mean {statistics.mean(v):.2f}")
    print("sum of means", round(total, 2))


if __name__ == "__main__":
    if "--python" in sys.argv[2:]:
        from scrapy_detemplate.methods import forest, sandwich, segments
        from scrapy_detemplate.runners import combined

        for module in (forest, sandwich, segments, combined):
            module._compiled = None  # type: ignore[attr-defined]
    main(sys.argv[1])
