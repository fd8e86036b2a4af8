"""TPS quality with and without Algorithm 6, and the paper's "Content present" column.

For each corpus and each setting variant, runs the engine over the pages in
crawl order (as ``scrapy-detemplate eval`` does) and prints site-macro P/R/F1/TR
(METRICS.md) plus:

* ``lost``: share of pages whose content region was lost, i.e. recall of gold
  tokens below 0.5 (the complement of the paper's "Content present"; pages with
  an empty gold are left out of it), site-macro like the other figures;
* ``cmpl``: share of pages where Algorithm 6 kept the complement;
* ``none``: share of pages left unchanged (no region found, or no region that is content).

Usage (from the repository root)::

    .venv/bin/python bench/quality_tps.py ../shared/corpus/c2f.manifest.jsonl ../shared/corpus/dragnet10.manifest.jsonl

Figures also go to ``bench/results/tps_quality.txt``.
"""

from __future__ import annotations

import sys
from statistics import mean

from _results import write_result  # bench/, the script's folder

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import bag, read_manifest, score_page, scored_text

#: (label, settings) pairs: the paper as written, then the extensions (each fully specified).
VARIANTS: list[tuple[str, dict[str, object]]] = [
    ("paper: size, one-sided, Alg. 1", {"tps_select": "size", "tps_two_sided": False, "tps_complement": False}),
    ("paper: size, one-sided, Alg. 6", {"tps_select": "size", "tps_two_sided": False, "tps_complement": True}),
    ("size, two-sided, Alg. 1", {"tps_select": "size", "tps_complement": False}),
    ("size, two-sided, Alg. 6", {"tps_select": "size", "tps_complement": True}),
    ("text, two-sided, Alg. 1", {"tps_select": "text", "tps_complement": False}),
    ("text, two-sided, Alg. 6", {"tps_select": "text", "tps_complement": True}),
    ("segments, min share 0.05 (default)", {"tps_select": "segments", "tps_min_share": 0.05}),
    ("segments, min share 0", {"tps_select": "segments", "tps_min_share": 0.0}),
    ("segments, min share 0.10", {"tps_select": "segments", "tps_min_share": 0.10}),
]


def run(manifest: str, settings: dict[str, object]) -> dict[str, float]:
    engine = Detemplater(DetemplateConfig(method="tps", **settings))  # type: ignore[arg-type]
    sites: dict[str, list[tuple[float, ...]]] = {}
    for page in read_manifest(manifest):
        result = engine.process(page.url, page.body)
        s = score_page(scored_text(result, page), page.gold, page.visible_text())
        has_gold = bag(page.gold).total() > 0
        lost = float(s.recall < 0.5) if has_gold else float("nan")
        sites.setdefault(page.site, []).append(
            (
                s.precision,
                s.recall,
                s.f1,
                s.removal,
                lost,
                float(result.reason == "complement"),
                float(result.reason in ("no_region", "no_content_region")),
            )
        )
    columns = ("P", "R", "F1", "TR", "lost", "cmpl", "none")
    per_site = []
    for rows in sites.values():
        means = {}
        for k, name in enumerate(columns):
            values = [r[k] for r in rows if r[k] == r[k]]  # drop NaN
            means[name] = mean(values) if values else 0.0
        per_site.append(means)
    return {name: mean(m[name] for m in per_site) for name in columns}


def main(argv: list[str]) -> int:
    manifests = argv or ["../shared/corpus/c2f.manifest.jsonl", "../shared/corpus/dragnet10.manifest.jsonl"]
    out = []
    for manifest in manifests:
        out.append(f"{manifest} (site-macro)")
        out.append(f"{'variant':<38} {'P':>6} {'R':>6} {'F1':>6} {'TR':>6} {'lost':>6} {'cmpl':>6} {'none':>6}")
        print("\n".join(out[-2:]), flush=True)
        for label, settings in VARIANTS:
            m = run(manifest, settings)
            out.append(
                f"{label:<38} {m['P']:6.3f} {m['R']:6.3f} {m['F1']:6.3f} {m['TR']:6.3f} "
                f"{m['lost']:6.3f} {m['cmpl']:6.3f} {m['none']:6.3f}"
            )
            print(out[-1], flush=True)
        out.append("")
    text = "\n".join(out)
    write_result("tps_quality.txt", text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
