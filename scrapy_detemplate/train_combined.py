"""Train the combined method's boosted trees from corpora with gold text.

    python -m scrapy_detemplate.train_combined CORPUS.manifest.jsonl [...] -o model.json

Pages are taken in manifest order, site after site, so site-level features are
exactly what a crawl would have seen.  A line is labelled content when at least
half of its word trigrams occur in the gold text (lines of one or two words:
when they occur in it as a phrase).  Needs scikit-learn (training only); the
model is written as plain JSON trees (:mod:`scrapy_detemplate.methods.forest`).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from scrapy_detemplate._html import Line, parse_html
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.evaluation import CorpusPage, read_manifest
from scrapy_detemplate.runners.base import ParsedPage
from scrapy_detemplate.runners.combined import FEATURES, CombinedEvidence
from scrapy_detemplate.store import MemoryStore

_TOKEN = re.compile(r"\w+")


def line_labels(lines: Sequence[Line], gold: str) -> list[int]:
    """1 for a content line, 0 for template, judged against the gold text."""
    gold_tokens = _TOKEN.findall(gold.lower())
    trigrams = set(zip(gold_tokens, gold_tokens[1:], gold_tokens[2:], strict=False))
    joined = f" {' '.join(gold_tokens)} "
    labels = []
    for line in lines:
        tokens = _TOKEN.findall(line.text.lower())
        if len(tokens) < 3:
            labels.append(1 if tokens and f" {' '.join(tokens)} " in joined else 0)
            continue
        grams = list(zip(tokens, tokens[1:], tokens[2:], strict=False))
        labels.append(1 if sum(g in trigrams for g in grams) * 2 >= len(grams) else 0)
    return labels


def collect(pages: Iterable[CorpusPage], config: DetemplateConfig | None = None) -> tuple[list[list[float]], list[int]]:
    """Features and labels of every line, pages in crawl order."""
    config = config or DetemplateConfig()
    evidence = CombinedEvidence(config, MemoryStore())
    xs: list[list[float]] = []
    ys: list[int] = []
    for page in pages:
        root = parse_html(page.html)
        if root is None:
            continue
        parsed = ParsedPage.of(page.url, page.html, root, config)
        if not parsed.lines:
            continue
        xs.extend(evidence.features(parsed))
        ys.extend(line_labels(parsed.lines, page.gold))
    return xs, ys


def fit(xs: list[list[float]], ys: list[int], trees: int = 60, depth: int = 3, seed: int = 0) -> dict[str, Any]:
    """Fit scikit-learn's GradientBoostingClassifier and export it as plain data."""
    from sklearn.ensemble import GradientBoostingClassifier

    clf = GradientBoostingClassifier(
        n_estimators=trees, max_depth=depth, learning_rate=0.2, subsample=0.5, random_state=seed
    ).fit(xs, ys)
    prior = clf.init_.class_prior_[1]
    import math

    exported = []
    for (tree,) in clf.estimators_:
        t = tree.tree_
        exported.append(
            {
                "feature": [int(f) for f in t.feature],
                "threshold": [float(x) for x in t.threshold],
                "left": [int(x) for x in t.children_left],
                "right": [int(x) for x in t.children_right],
                "value": [float(v[0][0]) for v in t.value],
            }
        )
    return {
        "features": list(FEATURES),
        "base": math.log(prior / (1 - prior)),
        "rate": float(clf.learning_rate),
        "trees": exported,
        "trained_on": None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scrapy-detemplate train-combined", description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--trees", type=int, default=60)
    parser.add_argument("--depth", type=int, default=3)
    args = parser.parse_args(argv)
    xs: list[list[float]] = []
    ys: list[int] = []
    for manifest in args.manifests:
        x, y = collect(read_manifest(manifest))
        xs += x
        ys += y
    model = fit(xs, ys, args.trees, args.depth)
    model["trained_on"] = [m.rsplit("/", 1)[-1] for m in args.manifests]
    with open(args.output, "w", encoding="utf-8") as out:
        json.dump(model, out, separators=(",", ":"))
    print(f"{len(ys)} lines ({sum(ys)} content) -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
