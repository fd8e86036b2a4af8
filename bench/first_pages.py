"""A site's first page cleaned alone, and cleaned again beside the next pages of its site, on sites never seen.

    .venv/bin/python bench/first_pages.py [--corpus ../shared/corpus] [--corpora c2f,dragnet10,docs,wcxb-dev]
                                          [--peers 1,3] [--split 0] [--out bench/results/first_pages.txt]

What ``DETEMPLATE_FIRST_PAGE_WAIT`` / ``DETEMPLATE_FIRST_PAGE_PEERS`` do in a crawl
(``scrapy_detemplate/_firstpages.py``), measured as ``train-combined --cv`` measures
the default: 5 folds of sites by a hash of their name (``--split`` numbers other
splits), each fold's sites cleaned by a model trained on the other folds' pages,
as shipped (the training is unchanged: only how the held-out first pages are
cleaned differs).  For each site of two or more pages, its first page (in
manifest order) is scored three ways: alone (its features computed on an empty
site state, as now), and beside the next K pages of its site for each K of
``--peers`` (those pages, then the first, through one fresh evidence: what
:meth:`Detemplater.clean_with_peers` does).  Reported: per corpus, the first
pages' mean F1 each way, and the corpus's site-macro F1 with those first pages
cleaned each way (every other page as in ``--cv``).  Needs the ``train`` extra;
about 10 minutes for the four corpora on two cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import CORPUS, write_result

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.evaluation import CorpusPage, Summary, read_manifest, score_page
from scrapy_detemplate.train_combined import PageLines, _fold, clean_text, fit_model, model_scoring, page_lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--corpora", default="c2f,dragnet10,docs,wcxb-dev")
    parser.add_argument("--peers", default="1,3", help="comma-separated numbers of next pages")
    parser.add_argument("--split", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="default: bench/results/first_pages.txt")
    args = parser.parse_args(argv)
    ks = [int(k) for k in args.peers.split(",")]
    started = time.perf_counter()
    pages: list[PageLines] = []
    beside: dict[int, dict[int, PageLines]] = {k: {} for k in ks}  # K -> page index -> first page beside K
    for name in args.corpora.split(","):
        manifest = list(read_manifest(args.corpus / f"{name}.manifest.jsonl"))
        at = len(pages)
        pages += page_lines(manifest, corpus=name)
        by_site: dict[str, list[tuple[int, CorpusPage]]] = defaultdict(list)
        for i, page in enumerate(manifest):
            by_site[page.site].append((at + i, page))
        for site_pages in by_site.values():
            if len(site_pages) < 2:
                continue
            (first_at, first), rest = site_pages[0], [page for _, page in site_pages[1:]]
            for k in ks:
                beside[k][first_at] = page_lines([*rest[:k], first], corpus=name)[-1]
                assert beside[k][first_at].texts == pages[first_at].texts
    config = DetemplateConfig()
    fold_of = [_fold(f"{args.split}/{p.corpus}/{p.site}", 5) for p in pages]
    ways = ["alone", *(f"beside {k}" for k in ks)]
    summaries: dict[str, dict[str, Summary]] = defaultdict(lambda: {way: Summary() for way in ways})
    firsts: dict[str, dict[str, list[float]]] = defaultdict(lambda: {way: [] for way in ways})
    for fold in range(5):
        scoring = model_scoring(fit_model([p for p, f in zip(pages, fold_of, strict=True) if f != fold]))
        for i, page in enumerate(pages):
            if fold_of[i] != fold:
                continue
            alone = score_page(clean_text(page, scoring, config), page.gold, page.visible)
            scores = {"alone": alone}
            for k in ks:
                other = beside[k].get(i)
                scores[f"beside {k}"] = (
                    alone if other is None else score_page(clean_text(other, scoring, config), page.gold, page.visible)
                )
            for way, score in scores.items():
                summaries[page.corpus][way].add(page.site, score)
                if i in beside[ks[0]]:
                    firsts[page.corpus][way].append(score.f1)
        print(f"fold {fold} done, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    lines = [
        f"A site's first page cleaned alone and beside the next K pages of its site; sites never seen (5 folds of "
        f"sites, split {args.split}; the shipped training). Corpus: {args.corpus}.",
        "Per corpus: its sites of 2+ pages, their first pages' mean F1 each way; the corpus's site-macro F1 with",
        "those first pages cleaned that way (every other page as in train-combined --cv).",
        "",
        f"{'corpus':<11} {'first pages':>11}  " + "  ".join(f"{way:>18}" for way in ways),
    ]
    for name, by_way in summaries.items():
        count = len(firsts[name]["alone"])
        first_f1 = [mean(firsts[name][way]) if count else float("nan") for way in ways]
        macro = [by_way[way].macro()["f1"] for way in ways]
        cells = "  ".join(f"{f:>8.3f} / {m:<7.4f}" for f, m in zip(first_f1, macro, strict=True))
        lines.append(f"{name:<11} {count:>11}  {cells}")
    lines += ["", "(each cell: the first pages' mean F1 / the corpus's site-macro F1)"]
    lines.append(f"{time.perf_counter() - started:.0f} s")
    text = "\n".join(lines)
    print(text)
    out = write_result("first_pages.txt", text) if args.out is None else args.out
    if args.out is not None:
        out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
