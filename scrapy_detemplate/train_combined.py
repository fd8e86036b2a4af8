"""Train the combined method's boosted trees from corpora with gold text.

    python -m scrapy_detemplate.train_combined CORPUS.manifest.jsonl [...] -o model.json
    python -m scrapy_detemplate.train_combined CORPUS.manifest.jsonl [...] --cv 5

Pages are taken in manifest order, site after site, so site-level features are
exactly what a crawl would have seen.  A line is labelled content when at least
half of its words align with the gold text's, in order, each gold word claimed
once (:func:`line_labels`).  Each line weighs as many words as it has,
as the content measures count words.  Needs scikit-learn (training only); the
model is written as plain JSON trees (:mod:`scrapy_detemplate.methods.forest`).

``--cv K`` measures the method on sites it has never seen: the sites of all
corpora are split into K folds, each fold is cleaned by a model trained on the
other folds (exactly as the runner decides), and content precision, recall and
F1 are reported per corpus as ``scrapy-detemplate eval`` reports them.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import hashlib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapy_detemplate._html import Line, parse_html, reveal_noscript
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.evaluation import (
    FAILED_F1,
    KEEP_ALL_MARGIN,
    CorpusPage,
    ManifestError,
    Summary,
    below_keep_all,
    failed_pages,
    format_table,
    read_manifest,
    score_page,
)
from scrapy_detemplate.methods import names as _names
from scrapy_detemplate.methods.forest import Forest
from scrapy_detemplate.runners.base import ParsedPage
from scrapy_detemplate.runners.combined import (
    _NAMES_AT,
    FEATURES,
    KEEP_WEIGHT,
    NOTHING_DECLARED,
    CombinedEvidence,
    Declared,
    Scorer,
    copy_flags,
    decide,
    declared,
    declaring_kinds,
    drop_copies,
    furniture_lines,
    keep_rows_whole,
    keep_weight,
    model_forests,
    model_names,
    on_first_page,
    scorers,
    table_rows,
    with_declared,
)
from scrapy_detemplate.store import MemoryStore

_TOKEN = re.compile(r"\w+")
#: Most leaves of a tree, fewest lines in a leaf, and the leaves' L2 regularisation.
LEAVES = 63
MIN_LEAF = 100
L2 = 1.0
#: The model is the mean (in log-odds) of one boosted ensemble per entry, each choosing every split
#: among that share of the features, drawn at random (:func:`fit`): one sees them all, one half.
MAX_FEATURES = (1.0, 0.5)


def line_labels(lines: Sequence[Line], gold: str) -> list[int]:
    """1 for a content line, 0 for template, judged against the gold text.

    The page's words, line after line, are aligned with the gold's words
    (:class:`difflib.SequenceMatcher`'s matching blocks, without its junk
    heuristic), and a line is content when at least half of its words are
    aligned.  Each word of the gold is claimed once and in order, as the
    content measures count words: a headline repeated in a breadcrumb, a
    teaser of the lede under "related", a menu entry whose one word also
    stands in the article are template, where a test of whether the line's
    trigrams occur anywhere in the gold called them content.  Measured on
    sites never seen (5 site folds, two splits; the same features and rules),
    against that test: site-macro F1 c2f 0.950 -> 0.960, dragnet10 0.928 ->
    0.940, docs 0.959 -> 0.973, wcxb-dev micro 0.863 -> 0.866
    (docs/methods/combined.md).
    """
    gold_tokens = _TOKEN.findall(gold.lower())
    line_tokens = [_TOKEN.findall(line.text.lower()) for line in lines]
    page_tokens: list[str] = []
    owner: list[int] = []
    for index, tokens in enumerate(line_tokens):
        page_tokens += tokens
        owner += [index] * len(tokens)
    aligned = [0] * len(line_tokens)
    matcher = difflib.SequenceMatcher(None, page_tokens, gold_tokens, autojunk=False)
    for start, _, size in matcher.get_matching_blocks():
        for position in range(start, start + size):
            aligned[owner[position]] += 1
    return [1 if tokens and aligned[index] * 2 >= len(tokens) else 0 for index, tokens in enumerate(line_tokens)]


@dataclass(slots=True)
class PageLines:
    """One page's lines as the combined method sees them, with their labels."""

    corpus: str
    site: str
    rows: list[list[float]]
    labels: list[int]
    weights: list[float]
    texts: list[str]
    gold: str
    visible: str
    kind: str = ""  # the manifest's page_type, if any
    names: list[_names.LineNames] = field(default_factory=list)  # each line's class/id names
    declared: Declared = NOTHING_DECLARED  # its declared reviews and questions (:func:`declared`)
    rows_whole: list[list[int]] = field(default_factory=list)  # its data rows' lines (:func:`table_rows`)
    furniture: list[int] = field(default_factory=list)  # its marked furniture's lines (:func:`furniture_lines`)
    keep_weight: float = KEEP_WEIGHT  # its first-page cut's lean toward keeping (:func:`keep_weight`)


def page_lines(
    pages: Iterable[CorpusPage], corpus: str = "", config: DetemplateConfig | None = None
) -> list[PageLines]:
    """Every page's line features, labels and weights (words), pages in crawl order."""
    config = config or DetemplateConfig()
    evidence = CombinedEvidence(config, MemoryStore())
    out = []
    for page in pages:
        root = parse_html(page.html)
        if root is not None:
            reveal_noscript(root)  # as the engine reads the page
        parsed = ParsedPage.of(page.url, page.html, root, config) if root is not None else None
        lines = parsed.lines if parsed is not None else []
        rows = evidence.features(parsed) if parsed is not None and lines else []
        out.append(
            PageLines(
                corpus, page.site, rows, line_labels(lines, page.gold),
                [max(1, len(_TOKEN.findall(line.text))) for line in lines], [line.text for line in lines],
                page.gold, page.visible_text(), page.kind, _names.line_names(lines),
                declared(parsed, *declaring_kinds(rows[0])) if parsed is not None and rows else NOTHING_DECLARED,
                table_rows(lines), sorted(furniture_lines(lines, root)) if root is not None else [],
                keep_weight(parsed.declared_names if parsed is not None else []),
            )
        )  # fmt: skip
    return out


#: A page's lines weigh their words times PAGE_WEIGHT over the square root of the page's words.
PAGE_WEIGHT = 30.0


def _stack(pages: Iterable[PageLines]) -> tuple[list[list[float]], list[int], list[float]]:
    """The training rows, labels and weights of ``pages``.

    Content F1 is a mean over pages (and sites), so a long page must not drown
    the short ones: a line weighs its words, scaled down by the square root of
    its page's words (a page of 10,000 words weighs 10 times one of 100, not
    100 times).  Measured on sites never seen (``--cv 5``, one split; the same
    features and rules), against weighting by words alone: site-macro F1 c2f
    0.943 -> 0.943, dragnet10 0.916 -> 0.922, docs 0.946 -> 0.952, wcxb-dev
    micro 0.854 -> 0.855 (docs/methods/combined.md).
    """
    xs: list[list[float]] = []
    ys: list[int] = []
    ws: list[float] = []
    for page in pages:
        xs += page.rows
        ys += page.labels
        scale = PAGE_WEIGHT / math.sqrt(sum(page.weights) or 1)
        ws += [w * scale for w in page.weights]
    return xs, ys, ws


def cross_validate(
    pages: Sequence[PageLines],
    folds: int = 5,
    trees: int = 80,
    leaves: int = LEAVES,
    config: DetemplateConfig | None = None,
    split: int = 0,
    min_leaf: int = MIN_LEAF,
    by_corpus: bool = False,
    per_kind: dict[str, list[float]] | None = None,
    keep_all: dict[str, Summary] | None = None,
) -> dict[str, Summary]:
    """Out-of-fold content scores per corpus, sites split into ``folds`` folds by a hash
    of their name; ``split`` numbers other splits of the same sites.  With
    ``by_corpus``, each corpus is a fold of its own (leave one corpus out: a
    genre or an era the model has never seen) and ``folds`` is ignored.  Pages
    with a type (wcxb-dev's ``page_type``) add their F1 to ``per_kind``; ``keep_all``
    gets each corpus's pages scored with their whole visible text (:func:`below_keep_all`)."""
    config = config or DetemplateConfig()
    if by_corpus:
        corpora = sorted({p.corpus for p in pages})
        folds = len(corpora)
        fold_of = {(p.corpus, p.site): corpora.index(p.corpus) for p in pages}
    else:
        fold_of = {(p.corpus, p.site): _fold(f"{split}/{p.corpus}/{p.site}", folds) for p in pages}
    summaries: dict[str, Summary] = {}
    for fold in range(folds):
        held_out = [p for p in pages if fold_of[(p.corpus, p.site)] == fold]
        if not held_out:
            continue
        training = [p for p in pages if fold_of[(p.corpus, p.site)] != fold]
        if not any(p.rows for p in training):
            raise ValueError(f"every site fell into fold {fold}: give more sites or fewer folds")
        scoring = model_scoring(fit_model(training, trees, leaves, min_leaf))
        for page in held_out:
            score = score_page(clean_text(page, scoring, config), page.gold, page.visible)
            summaries.setdefault(page.corpus, Summary()).add(page.site, score)
            if page.kind and per_kind is not None:
                per_kind.setdefault(page.kind, []).append(score.f1)
            if keep_all is not None:
                whole = score_page(page.visible, page.gold, page.visible)
                keep_all.setdefault(page.corpus, Summary()).add(page.site, whole)
    return summaries


#: What :func:`clean_text` needs of a model: its two scorers (known sites, first pages) and its lexicon.
Scoring = tuple[Scorer, Scorer, dict[str, float]]


def model_scoring(model: dict[str, Any]) -> Scoring:
    """The :data:`Scoring` of a model as :func:`fit_model` returns it."""
    scorer, first_scorer = scorers(model_forests(model))
    return scorer, first_scorer, model_names(model)


def clean_text(page: PageLines, scoring: Scoring, config: DetemplateConfig) -> str:
    """The text a model (its :func:`model_scoring`) keeps of ``page``, decided as in
    :meth:`CombinedRunner.run` (the visible text when nothing or everything would go)."""
    if not page.rows:
        return page.visible
    scorer, first_scorer, lexicon = scoring
    rows, first = page.rows, on_first_page(page.rows)
    if first:
        rows = [list(row) for row in rows]
        _fill_names(rows, page.names, lexicon)
    template = decide(
        rows, first_scorer if first else scorer, config.combined_threshold, config.combined_site_df, page.keep_weight
    )
    template = keep_rows_whole(with_declared(template.union(page.furniture), page.declared), page.rows_whole)
    template = drop_copies(page.texts, template, *copy_flags(rows))
    if 0 < len(template) < len(rows):
        return "\n".join(t for i, t in enumerate(page.texts) if i not in template)
    return page.visible


def _fold(site: str, folds: int) -> int:
    """A site's fold: a hash of its name, the same in every run and process."""
    return int.from_bytes(hashlib.blake2b(site.encode("utf-8"), digest_size=8).digest(), "little") % folds


def fit_model(
    pages: Sequence[PageLines], trees: int = 80, leaves: int = LEAVES, min_leaf: int = MIN_LEAF
) -> dict[str, Any]:
    """The model of ``pages``: :func:`fit` on all their lines, and under ``first_pages`` the same
    fitted on the lines of sites' first pages alone (none when those lines are all of one class).

    A site's first page has no site evidence: the splits that serve a known site's pages best
    (its DF, the Sandwich LCS, the genre columns) are constant there, and each tree's leaves
    are shared by both kinds of page.  The runner scores a first page with the mean of both
    forests' log-odds (``runners.combined.model_forests``).  Measured on
    sites never seen (two splits, docs/methods/combined.md, "A model of first pages"): wcxb-dev
    micro +0.0020 / +0.0010, its sites more than 0.03 below keeping every line 30 -> 25 and
    33 -> 31, c2f and docs level, dragnet10 -0.0007 / -0.0003.
    """
    xs, ys, ws = _stack(pages)
    model = fit(xs, ys, ws, trees, leaves, min_leaf=min_leaf)
    first, model["names"] = _first_pages_named(pages)
    xs, ys, ws = _stack(first)
    if len(set(ys)) == 2:
        model["first_pages"] = fit(xs, ys, ws, trees, leaves, min_leaf=min_leaf)
    return model


#: Inner folds of sites for the name columns of the first-page forest's training rows.
NAME_FOLDS = 5


def _first_pages_named(pages: Sequence[PageLines]) -> tuple[list[PageLines], dict[str, float]]:
    """The sites' first pages with their name columns filled, and the lexicon of all ``pages``
    (:mod:`~scrapy_detemplate.methods.names`).

    A training line must not be scored by a lexicon its own site voted in (the trees would learn
    to trust names more than they deserve on a site never seen): the sites fall into
    :data:`NAME_FOLDS` folds, and a first page's columns come from the lexicon of the other folds'
    sites.  Measured out of fold on sites never seen (docs/methods/combined.md, "A learned lexicon
    of class and id names")."""
    by_site: dict[tuple[str, str], list[PageLines]] = {}
    for page in pages:
        by_site.setdefault((page.corpus, page.site), []).append(page)
    votes = {
        site: _names.site_votes([p.labels for p in ps], [p.weights for p in ps], [p.names for p in ps])
        for site, ps in by_site.items()
        if any(p.names for p in ps)
    }
    fold_of = {site: _fold(f"names/{site[0]}/{site[1]}", NAME_FOLDS) for site in by_site}
    inner = [_names.lexicon(v for site, v in votes.items() if fold_of[site] != fold) for fold in range(NAME_FOLDS)]
    first = []
    for page in pages:
        if on_first_page(page.rows):
            rows = [list(row) for row in page.rows]
            _fill_names(rows, page.names, inner[fold_of[(page.corpus, page.site)]])
            first.append(dataclasses.replace(page, rows=rows))
    return first, _names.lexicon(votes.values())


def _fill_names(rows: list[list[float]], names: Sequence[_names.LineNames], lexicon: dict[str, float]) -> None:
    """The name columns of a first page's ``rows`` from each line's ``names`` (as
    ``runners.combined.fill_names`` from the page's lines)."""
    if lexicon and len(names) == len(rows):
        for row, line in zip(rows, names, strict=True):
            row[_NAMES_AT:] = _names.columns(line, lexicon)


def fit(
    xs: list[list[float]],
    ys: list[int],
    ws: list[float] | None = None,
    trees: int = 80,
    leaves: int = LEAVES,
    seed: int = 0,
    min_leaf: int = MIN_LEAF,
    l2: float = L2,
    max_features: Sequence[float] = MAX_FEATURES,
) -> dict[str, Any]:
    """Fit scikit-learn's HistGradientBoostingClassifier once per ``max_features`` entry; export their mean.

    Regularised for sites it has never seen: a leaf holds at least ``min_leaf``
    lines and leaf values are shrunk by ``l2`` (both chosen by the site-grouped
    cross-validation, docs/methods/combined.md).  Each ensemble picks every
    split among a random share of the features (``max_features``: 1.0 is all of
    them); their log-odds are averaged, which is one forest of all their trees
    at rate ``1 / len(max_features)``.  The ensemble that sees only half of the
    features per split must find other evidence than the strongest columns; the
    mean of it and the plain one scored better than the plain one alone on every
    corpus, on two splits of the sites (docs/methods/combined.md, "Two
    ensembles, averaged").

    The exported trees give the classifiers' own mean (checked here on the
    training rows), so scoring needs neither scikit-learn nor numpy.
    """
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.asarray(xs, dtype=float)
    exported = []
    bases = []
    sample = x[:: max(1, len(x) // 2000)]
    log_odds = np.zeros(len(sample))
    bag = len(max_features)
    for share in max_features:
        clf = HistGradientBoostingClassifier(
            max_iter=trees,
            max_leaf_nodes=leaves,
            min_samples_leaf=min_leaf,
            l2_regularization=l2,
            learning_rate=0.2,
            early_stopping=False,
            max_features=share,
            random_state=seed,
        ).fit(x, ys, sample_weight=ws)
        bases.append(float(np.ravel(clf._baseline_prediction)[0]))
        log_odds += clf.decision_function(sample) / bag
        for (predictor,) in clf._predictors:
            nodes = predictor.nodes
            leaf = nodes["is_leaf"].astype(bool)
            exported.append(
                {
                    "feature": [-2 if lf else int(f) for f, lf in zip(nodes["feature_idx"], leaf, strict=True)],
                    "threshold": [0.0 if lf else float(t) for t, lf in zip(nodes["num_threshold"], leaf, strict=True)],
                    "left": [-1 if lf else int(n) for n, lf in zip(nodes["left"], leaf, strict=True)],
                    "right": [-1 if lf else int(n) for n, lf in zip(nodes["right"], leaf, strict=True)],
                    "value": [float(v) for v in nodes["value"]],
                }
            )
    model = {
        "features": list(FEATURES),
        "base": sum(bases) / bag,
        "rate": 1.0 / bag,  # leaf values already carry the learning rate; the mean of the ensembles
        "trees": exported,
        "trained_on": None,
    }
    forest = Forest(model)
    expected = 1.0 / (1.0 + np.exp(-log_odds))
    gap = max(abs(forest.probability(row) - p) for row, p in zip(sample, expected, strict=True))
    if gap > 1e-6:
        raise RuntimeError(f"exported trees disagree with the classifiers by {gap}")
    return model


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scrapy-detemplate train-combined", description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", nargs="+")
    parser.add_argument("-o", "--output", help="where to write the model")
    parser.add_argument("--cv", type=int, default=0, metavar="K", help="cross-validate over K folds of sites instead")
    parser.add_argument("--splits", type=int, default=1, help="with --cv: this many different splits of the sites")
    parser.add_argument(
        "--leave-corpus-out", action="store_true",
        help="score each corpus with a model trained on the other corpora only (no -o, no --cv)",
    )  # fmt: skip
    parser.add_argument("--trees", type=int, default=80)
    parser.add_argument("--leaves", type=int, default=LEAVES)
    args = parser.parse_args(argv)
    if (bool(args.output) + bool(args.cv) + args.leave_corpus_out) != 1:
        parser.error("give one of -o/--output, --cv or --leave-corpus-out")
    pages: list[PageLines] = []
    try:
        for manifest in args.manifests:
            pages += page_lines(read_manifest(manifest), corpus=Path(manifest).name.split(".")[0])
    except ManifestError as exc:
        parser.error(str(exc))
    if args.cv or args.leave_corpus_out:
        rows: dict[str, list[tuple[str, dict[str, float]]]] = {}
        kinds: dict[str, list[float]] = {}
        below: list[str] = []
        fails: list[str] = []
        for split in range(1 if args.leave_corpus_out else args.splits):
            keep_all: dict[str, Summary] = {}
            summaries = cross_validate(
                pages, args.cv, args.trees, args.leaves, split=split, by_corpus=args.leave_corpus_out,
                per_kind=kinds, keep_all=keep_all,
            )  # fmt: skip
            for corpus, summary in summaries.items():
                rows.setdefault(corpus, []).append((f"combined, split {split}", summary.macro()))
                rows[corpus].append((f"  micro (page mean), split {split}", summary.micro()))
                sites = below_keep_all(summary, keep_all[corpus])
                # The five sites furthest below keeping every line, or least above it: named whether
                # or not they break the bound, so a corpus with none below still shows its weakest.
                weakest = below_keep_all(summary, keep_all[corpus], margin=-math.inf)[:5]
                worst = ", ".join(f"{site} {f1:.3f}/{keep:.3f}" for site, f1, keep in weakest)
                count = f"{corpus}, split {split}: {len(sites)} of {len(summary.sites)}"
                below.append(count + (f"; worst {worst}" if worst else ""))
                failed, spoilt, lost = failed_pages(summary, keep_all[corpus])
                fails.append(
                    f"{corpus}, split {split}: {failed} of {summary.pages}; keeping every line {FAILED_F1} or more on"
                    f" {spoilt} of them; less than half of the gold kept on {lost}"
                )
        for corpus, table in rows.items():
            if args.splits > 1 and not args.leave_corpus_out:
                macro = [m for name, m in table if not name.startswith("  micro")]
                table.append(("mean", {k: sum(m[k] for m in macro) / len(macro) for k in macro[0]}))
            how = "the other corpora only" if args.leave_corpus_out else f"{args.cv} folds of sites"
            print(f"{corpus}: sites never seen in training ({how}), site-macro")
            print(format_table(table))
        if kinds:
            over = f" (pages of all {args.splits} splits)" if args.splits > 1 and not args.leave_corpus_out else ""
            means = ", ".join(f"{k} {sum(v) / len(v):.3f}" for k, v in sorted(kinds.items()))
            print(f"micro F1 per page type{over}: {means}")
        print(
            f"sites more than {KEEP_ALL_MARGIN} below keeping every line, and the five worst against it"
            " (F1 / keep-all F1):"
        )
        print("\n".join(f"  {line}" for line in below))
        print(f"pages below an F1 of {FAILED_F1}:")
        print("\n".join(f"  {line}" for line in fails))
        return 0
    model = fit_model(pages, args.trees, args.leaves)
    ys = [label for page in pages for label in page.labels]
    model["trained_on"] = [m.rsplit("/", 1)[-1] for m in args.manifests]
    with open(args.output, "w", encoding="utf-8") as out:
        json.dump(model, out, separators=(",", ":"))
    print(f"{len(ys)} lines ({sum(ys)} content) -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
