"""Cost of the isotonic method per page, as a ratio to a plain lxml parse.

    .venv/bin/python bench/bench_isotonic.py [MANIFEST ...]

For every corpus page (both corpora by default), in one process: the time of
``lxml.html.document_fromstring`` on the decoded page, and the time of the
runner on the parsed page (features, scores, smoothing, verdict), split into
its parts.  Prints medians and writes them to ``bench/results/isotonic.txt``,
with the smoothing time of the largest pages and of synthetic trees.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

import lxml.html
from _results import write_result  # bench/, the script's folder

from scrapy_detemplate._html import decode_html, keep_content_after_early_end
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.methods.isotonic import quantize, smooth, smooth_reference
from scrapy_detemplate.methods.templateness import build_table
from scrapy_detemplate.runners.base import ParsedPage
from scrapy_detemplate.runners.isotonic import IsotonicRunner
from scrapy_detemplate.store import MemoryStore

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = [ROOT.parent / "shared/corpus/c2f.manifest.jsonl", ROOT.parent / "shared/corpus/dragnet10.manifest.jsonl"]


def clock(fn, *args):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def main(argv: list[str]) -> int:
    manifests = argv or [str(m) for m in MANIFESTS]
    config = DetemplateConfig(method="isotonic")
    runner = IsotonicRunner(config, MemoryStore())
    parse_s: list[float] = []
    run_s: list[float] = []
    ratios: list[float] = []
    feat_s: list[float] = []
    smooth_s: list[float] = []
    big: list[tuple[int, float, int]] = []
    for manifest in manifests:
        for page in read_manifest(manifest):
            html = keep_content_after_early_end(decode_html(page.body)[1])
            try:
                root, t_parse = clock(lxml.html.document_fromstring, html)
            except Exception:  # an unparsable page is not a timing
                continue
            parsed = ParsedPage(page.url, page.site, "", html, root)
            _, t_run = clock(runner.run, parsed)
            table, t_feat = clock(build_table, root, page.url, config.isotonic_min_chars)
            if not table.elements:
                continue
            x = quantize(runner.model.score(table.features), config.isotonic_levels)
            gamma = [config.isotonic_penalty * max(table.page_chars, 1) / max(c, 1) for c in table.chars]
            _, t_smooth = clock(smooth, table.parent, x, gamma, table.weight)
            parse_s.append(t_parse)
            run_s.append(t_run)
            ratios.append(t_run / max(t_parse, 1e-6))
            feat_s.append(t_feat)
            smooth_s.append(t_smooth)
            big.append((len(table.owner), t_smooth, len(table.elements)))
    big.sort(reverse=True)
    rng = random.Random(7)
    synthetic = []
    for n in (1000, 5000, 20000):
        parent = [-1] + [rng.randrange(max(0, i - 8), i) for i in range(1, n)]
        x = quantize([rng.random() for _ in range(n)], 20)
        gamma = [0.01 * n / max(1, n - i) for i in range(n)]
        _, t = clock(smooth, parent, x, gamma)
        synthetic.append((n, t))
    parent = [-1] + [rng.randrange(max(0, i - 8), i) for i in range(1, 1000)]
    x = quantize([rng.random() for _ in range(1000)], 20)
    _, t_ref = clock(smooth_reference, parent, x, [0.01] * 1000)
    _, t_fast = clock(smooth, parent, x, [0.01] * 1000)
    med = statistics.median
    lines = [
        f"pages: {len(ratios)} ({', '.join(Path(m).name for m in manifests)}); defaults "
        f"(min_chars={config.isotonic_min_chars}, levels={config.isotonic_levels}, smooth={config.isotonic_smooth})",
        f"{'measure':<46}{'median':>10}",
        f"{'lxml.html.document_fromstring, ms':<46}{1000 * med(parse_s):>10.2f}",
        f"{'isotonic runner (features+scores+smoothing), ms':<46}{1000 * med(run_s):>10.2f}",
        f"{'  of which features (build_table), ms':<46}{1000 * med(feat_s):>10.2f}",
        f"{'  of which smoothing (smooth), ms':<46}{1000 * med(smooth_s):>10.2f}",
        f"{'runner / parse (per-page ratio)':<46}{med(ratios):>10.2f}",
        f"{'runner / parse, 90th percentile':<46}{statistics.quantiles(ratios, n=10)[-1]:>10.2f}",
        "largest pages (body elements, scored nodes, smoothing ms):",
        *(f"  {n:>6} elements {k:>6} scored  {1000 * t:8.2f} ms" for n, t, k in big[:3]),
        "synthetic trees, 21 score levels (nodes, smoothing ms):",
        *(f"  {n:>6} nodes  {1000 * t:8.2f} ms" for n, t in synthetic),
        f"reference BUILDERROR/ISOTONESMOOTH on 1000 nodes: {1000 * t_ref:.1f} ms (fast: {1000 * t_fast:.1f} ms)",
    ]
    text = "\n".join(lines)
    print(text)
    write_result("isotonic.txt", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
