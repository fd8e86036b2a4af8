"""Train the templateness classifier from a crawl, without human labels.

Section 5.1-5.2 of Chakrabarti, Kumar and Punera (WWW 2007): SITELEVEL(theta)
labels every page's DOM nodes from the site's other pages, then one logistic
regression per node-size bucket learns them from page-level features.

    python -m scrapy_detemplate.train CORPUS.manifest.jsonl [...] -o model.json

Training needs numpy (an optional, training-only dependency); the model is
written as JSON coefficients and scored in pure Python at crawl time.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scrapy_detemplate._html import decode_html, parse_html
from scrapy_detemplate.evaluation import ManifestError, read_manifest
from scrapy_detemplate.methods.templateness import (
    FEATURES,
    BucketModel,
    TemplatenessModel,
    build_table,
    label_nodes,
    node_hashes,
    sitelevel_templates,
)

#: Upper bounds of ``text_share`` for the four size buckets (the paper's four area classes).
DEFAULT_BUCKETS = (0.02, 0.1, 0.4)


def collect(
    manifests: Sequence[str], theta: float = 0.1, min_chars: int = 20, max_pages: int = 200
) -> tuple[list[list[float]], list[int], list[str]]:
    """Feature rows, SITELEVEL(theta) labels and site names of every scored node."""
    rows: list[list[float]] = []
    labels: list[int] = []
    sites: list[str] = []
    for manifest in manifests:
        by_site: dict[str, list[Any]] = {}
        for page in read_manifest(manifest):
            pages = by_site.setdefault(page.site, [])
            if len(pages) >= max_pages:
                continue
            root = parse_html(decode_html(page.body)[1])
            if root is None:
                continue
            table = build_table(root, page.url, min_chars=min_chars)
            if not table.elements:
                continue
            pages.append((table, node_hashes(root)))
        for site, pages in by_site.items():
            templates = sitelevel_templates([h.values() for _, h in pages], theta)
            for table, hashes in pages:
                rows.extend(table.features)
                labels.extend(label_nodes(table, hashes, templates))
                sites.extend([site] * len(table.elements))
    return rows, labels, sites


def fit_logistic(x: Any, y: Any, l2: float = 1.0, iterations: int = 30) -> tuple[float, list[float]]:
    """L2-regularised logistic regression by Newton's method (IRLS) on standardised ``x``."""
    import numpy as np

    n, d = x.shape
    a = np.hstack([np.ones((n, 1)), x])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[0] = 0.0
    for _ in range(iterations):
        z = np.clip(a @ w, -30, 30)
        p = 1.0 / (1.0 + np.exp(-z))
        grad = a.T @ (p - y) + reg * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-6:
            break
    return float(w[0]), [float(v) for v in w[1:]]


def train(
    rows: list[list[float]], labels: list[int], buckets: Sequence[float] = DEFAULT_BUCKETS, l2: float = 1.0
) -> TemplatenessModel:
    """One logistic model per size bucket (Section 5.2)."""
    import numpy as np

    x = np.asarray(rows, dtype=float)
    y = np.asarray(labels, dtype=float)
    share = x[:, FEATURES.index("text_share")]
    which = np.searchsorted(np.asarray(buckets), share, side="right")
    models = []
    for b in range(len(buckets) + 1):
        mask = which == b
        xb, yb = x[mask], y[mask]
        if len(yb) < 10 or yb.min() == yb.max():
            # Too few or one-class examples: a constant model at the bucket's base rate.
            rate = (float(yb.mean()) if len(yb) else 0.5) * 0.98 + 0.01
            d = len(FEATURES)
            models.append(BucketModel(math.log(rate / (1 - rate)), (0.0,) * d, (0.0,) * d, (1.0,) * d))
            continue
        mean = xb.mean(axis=0)
        scale = xb.std(axis=0)
        scale[scale == 0] = 1.0
        intercept, coef = fit_logistic((xb - mean) / scale, yb, l2=l2)
        models.append(
            BucketModel(intercept, tuple(coef), tuple(float(v) for v in mean), tuple(float(v) for v in scale))
        )
    return TemplatenessModel(FEATURES, tuple(buckets), tuple(models))


def accuracy(model: TemplatenessModel, rows: list[list[float]], labels: list[int]) -> dict[str, float]:
    """Agreement with SITELEVEL labels at 0.5, overall and for each class."""
    scores = model.score(rows)
    pos = [s >= 0.5 for s, y in zip(scores, labels, strict=True) if y]
    neg = [s < 0.5 for s, y in zip(scores, labels, strict=True) if not y]
    total = len(pos) + len(neg)
    return {
        "nodes": float(total),
        "positive_share": len(pos) / total if total else 0.0,
        "accuracy": (sum(pos) + sum(neg)) / total if total else 0.0,
        "template_recall": sum(pos) / len(pos) if pos else 0.0,
        "non_template_recall": sum(neg) / len(neg) if neg else 0.0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scrapy-detemplate train",
        description="Train the page-level templateness model from a crawl (SITELEVEL labels, no human labels).",
    )
    parser.add_argument("manifests", nargs="+", help="corpus manifests (JSON lines with site, url, html)")
    parser.add_argument("-o", "--output", required=True, help="where to write the model (JSON)")
    parser.add_argument("--theta", type=float, default=0.1, help="SITELEVEL share of a site's pages (default 0.1)")
    parser.add_argument("--min-chars", type=int, default=20, help="hidden-node size in visible characters")
    parser.add_argument("--max-pages", type=int, default=200, help="pages per site at most (default 200)")
    parser.add_argument(
        "--l2", type=float, default=3000.0, help="L2 penalty of the logistic regressions (default 3000)"
    )
    parser.add_argument("--check", nargs="*", default=[], help="manifests to report label agreement on")
    args = parser.parse_args(argv)
    try:
        import numpy  # noqa: F401
    except ImportError:
        parser.error("training needs numpy: pip install numpy")
    try:
        rows, labels, _ = collect(args.manifests, args.theta, args.min_chars, args.max_pages)
        checks = {Path(m).name: collect([m], args.theta, args.min_chars, args.max_pages) for m in args.check}
    except ManifestError as exc:
        parser.error(str(exc))
    if not rows:
        parser.error("no pages with a body in the given manifests")
    model = train(rows, labels, l2=args.l2)
    report: dict[str, object] = {"training": accuracy(model, rows, labels)}
    for name, (check_rows, check_labels, _) in checks.items():
        report[name] = accuracy(model, check_rows, check_labels)
    meta = {
        "trained_on": [Path(m).name for m in args.manifests],
        "theta": args.theta,
        "min_chars": args.min_chars,
        "l2": args.l2,
        "labels": "SITELEVEL(theta) with the 85% HTML rule (no human labels)",
        "report": report,
    }
    model = TemplatenessModel(model.features, model.buckets, model.models, meta)
    Path(args.output).write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
