"""Cost of RTDM-TD learning and of template removal, as ratios to a plain lxml parse.

    .venv/bin/python bench/bench_rtdm.py [--paper-f1 | --applied | --recall] [--python-walk] [MANIFEST ...]
    .venv/bin/python bench/bench_rtdm.py --long-pages

In one process, over the corpus pages in manifest order (both corpora by
default), for every page: the time of ``lxml.html.document_fromstring`` on the
decoded page, and

* learn (per sample pair): building the page's labeled tree and
  ``ExtractSubTree(previous page of the site, page)`` (RTDM-TD, backtracking,
  retrieveTemplate), the costly step of FindTemplate;
* remove: exactly the step ``RtdmRunner.run`` performs on a page once its site
  has a template, :func:`~scrapy_detemplate.runners.rtdm.apply_templates`: find
  each of the site's templates in the page's tree (one template here: FindTemplate
  over the site's first 5 pages; decoded once per site, as the runner caches
  them), keep the best one that fits ``DETEMPLATE_RTDM_MATCH`` and turn it into
  template lines and elements.  Not timed: the parse, the page's visible lines
  (the engine computes them for every method), the state store's get and set,
  and rendering the clean page (the engine's, the same for every method).
  The removal includes :class:`~scrapy_detemplate.methods.rtdm.Recall`: whole
  subtrees of earlier pages of the site are recognised, not walked again.  It
  runs, as in a crawl, on a tree parsed just before (then its lines read), not
  on the tree the learning step has just walked;
* compile: turning a learned template into the form the removal walks
  (``LabelTree.compiled``), once per template and process, timed apart (as a
  ratio to the parse of the page it was first applied to).

Prints medians (and the 90th percentile) of the ratios and writes them to
``bench/results/rtdm.txt``.  ``--paper-f1`` adds the paper's own measure
(Section 6.1) as a function of MaxPages, see :func:`paper_f1`; ``--applied``
prints quality on the pages cleaned by a learned template only; ``--recall``
counts the pages where recall and the walk alone disagree, see :func:`recall_agreement`;
``--long-pages`` times the pages of issue 16 (400, 800 and 1,400 paragraphs that
differ from page to page) fed in sequence to the engine at the default bounds, and
what one unit of the mapping's work costs, see :func:`long_pages`;
``--python-walk`` times removal without the compiled walk (``methods/_walk``), as
on a machine where it could not be built (the figures are printed, not written).
"""

from __future__ import annotations

import contextlib
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import lxml.html
from _results import write_result  # bench/, the script's folder
from lxml import etree

from scrapy_detemplate._html import decode_html, find_body, keep_content_after_early_end, parse_html, visible_lines
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import Summary, read_manifest, score_page
from scrapy_detemplate.methods import rtdm
from scrapy_detemplate.methods.rtdm import (
    MAX_TEXT_LABEL,
    TEXT,
    FindTemplate,
    LabelTree,
    TooLarge,
    extract_subtree,
    page_tree,
    template_parts,
)
from scrapy_detemplate.runners.rtdm import apply_templates

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = [ROOT.parent / "shared/corpus/c2f.manifest.jsonl", ROOT.parent / "shared/corpus/dragnet10.manifest.jsonl"]
#: FindTemplate samples for the removal templates: a small sample, and the runner's default
#: MaxPages (sites with fewer pages learn from all but their last page).
REMOVAL_SAMPLES = (5, DetemplateConfig().rtdm_max_pages)
MAX_NODES = 5_000
MATCH = DetemplateConfig().rtdm_match
_TOKEN = re.compile(r"\w+")


def clock(fn, *args):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def parse_time(html: str) -> float:
    source = keep_content_after_early_end(html)
    best = float("inf")
    for _ in range(3):  # best of three: the parse is the yardstick
        best = min(best, clock(lxml.html.document_fromstring, source)[1])
    return best


def pages_by_site(manifests: list[Path]) -> dict[str, list[tuple[str, str]]]:
    sites: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for manifest in manifests:
        for page in read_manifest(manifest):
            _, html = decode_html(page.body)
            sites[page.site].append((html, page.gold))
    return sites


def parsed(pages: list[tuple[str, str]]) -> Iterator[tuple[str, etree._Element, etree._Element]]:
    """A site's pages that have a body, in order: ``(html, root, body)``."""
    for html, _ in pages:
        root = parse_html(html)
        body = find_body(root) if root is not None else None
        if root is not None and body is not None:
            yield html, root, body


def bench(sites: dict[str, list[tuple[str, str]]], samples: int = REMOVAL_SAMPLES[0]) -> list[str]:
    learn, removal, pairs_ms, remove_ms, sizes, compile_ = [], [], [], [], [], []
    skipped = 0
    for pages in sites.values():
        previous: LabelTree | None = None
        finder = FindTemplate(max(2, min(samples, len(pages) - 1)))
        for html, root, body in parsed(pages):
            parse = parse_time(html)
            try:
                if previous is not None:
                    start = time.perf_counter()
                    tree = page_tree(body, MAX_NODES)
                    extract_subtree(previous, tree)
                    seconds = time.perf_counter() - start
                    learn.append(seconds / parse)
                    pairs_ms.append(1000 * seconds)
                    sizes.append(len(tree))
                else:
                    tree = page_tree(body, MAX_NODES)
            except TooLarge:
                skipped += 1
                previous = None
                continue
            previous = tree
            if not finder.done:
                finder.add(tree, body)
                continue
            template = finder.current
            assert template is not None
            if template._compiled is None:
                compile_.append(clock(template.compiled)[1] / parse)
            # As in a crawl: the page is parsed, its lines read, then cleaned (a tree
            # just parsed, not one the learning step above has just walked).
            root = parse_html(html)
            body = find_body(root)
            assert body is not None
            slots = [line.slots for line in visible_lines(root)]
            _, seconds = clock(apply_templates, [template], body, slots, MATCH)
            removal.append(seconds / parse)
            remove_ms.append(1000 * seconds)
    out = [
        f"pages: {sum(len(p) for p in sites.values())}, sites: {len(sites)}, sample pairs: {len(learn)}, "
        f"removals: {len(removal)}, skipped (> {MAX_NODES} nodes): {skipped}",
        f"median labeled-tree size: {statistics.median(sizes):.0f} nodes",
        f"{'step':<34} {'median x parse':>15} {'p90 x parse':>12} {'median ms':>10}",
        f"{'learn (tree + ExtractSubTree pair)':<34} {statistics.median(learn):>15.2f} "
        f"{_p90(learn):>12.2f} {statistics.median(pairs_ms):>10.2f}",
        f"{f'compile, MaxPages {samples} (per template)':<34} {statistics.median(compile_):>15.3f} "
        f"{_p90(compile_):>12.3f}",
        f"{f'remove, MaxPages {samples} (see below)':<34} {statistics.median(removal):>15.3f} "
        f"{_p90(removal):>12.3f} {statistics.median(remove_ms):>10.3f}",
        "remove = apply_templates: find the site's template(s) in the parsed page, pick the best, template "
        "lines + elements; excludes parse, visible lines, store get/set, rendering; the template is FindTemplate's "
        "over the site's first MaxPages pages (all but the last for smaller sites), applied to the later pages",
    ]
    return out


def _p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def terms(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


def paper_f1(sites: dict[str, list[tuple[str, str]]], max_pages: int) -> float:
    """Section 6.1: F1 of the template's terms against the site's reference terms.

    Reference S_i: terms outside a page's gold text that occur (outside the
    gold) on more than half of the site's pages (our stand-in for the paper's
    hand-made template term list).  Found T_i: terms of the text leaves of the
    template FindTemplate learns from the site's first ``max_pages`` pages.
    Site-macro mean of F_i = 2 P_i R_i / (P_i + R_i).
    """
    scores = []
    for pages in sites.values():
        df: Counter[str] = Counter()
        finder = FindTemplate(max_pages)
        usable = 0
        for html, gold in pages:
            root = parse_html(html)
            body = find_body(root) if root is not None else None
            if body is None:
                continue
            usable += 1
            gold_terms = terms(gold)
            df.update(terms("\n".join(line.text for line in visible_lines(root))) - gold_terms)
            if not finder.done:
                with contextlib.suppress(TooLarge):  # not a sample, like the runner
                    finder.add(page_tree(body, MAX_NODES), body)
        reference = {t for t, n in df.items() if n > usable / 2}
        template = finder.current
        found: set[str] = set()
        if template is not None:
            for label in template.labels:
                if label.startswith(TEXT):
                    found |= terms(label[1 : 1 + MAX_TEXT_LABEL])  # a long text's label is cut there
        if not reference and not found:
            scores.append(1.0)
            continue
        hit = len(reference & found)
        p = hit / len(found) if found else 0.0
        r = hit / len(reference) if reference else 0.0
        scores.append(2 * p * r / (p + r) if p + r else 0.0)
    return statistics.mean(scores)


def applied_quality(manifest: Path, max_pages: int) -> tuple[dict[str, float], float]:
    """Site-macro P/R/F1/TR over the pages cleaned *by a learned template* only
    (``reason == "applied"``; meanwhile method ``none``), and the share of such pages."""
    engine = Detemplater(DetemplateConfig(method="rtdm", rtdm_max_pages=max_pages, rtdm_meanwhile="none"))
    summary = Summary()
    total = applied = 0
    for page in read_manifest(manifest):
        result = engine.process(page.url, page.body)
        total += 1
        if result.reason == "applied":
            applied += 1
            summary.add(page.site, score_page(result.text, page.gold, page.visible_text()))
    return summary.macro(), applied / total


def recall_agreement(sites: dict[str, list[tuple[str, str]]], samples: int = REMOVAL_SAMPLES[0]) -> str:
    """Template lines with recall (the site's template, warm from its earlier pages)
    against the walk alone (a fresh copy of the template, which recalls nothing),
    on every page after the site's first ``samples``."""
    pages = differ = more = fewer = 0
    for site_pages in sites.values():
        finder = FindTemplate(max(2, min(samples, len(site_pages) - 1)))
        for _, root, body in parsed(site_pages):
            if not finder.done:
                with contextlib.suppress(TooLarge):
                    finder.add(page_tree(body, MAX_NODES), body)
                continue
            template = finder.current
            assert template is not None
            slots = [line.slots for line in visible_lines(root)]
            warm = template_parts(template, body, slots)[0]
            walked = template_parts(LabelTree(template.labels, template.parent), body, slots)[0]
            pages += 1
            differ += warm != walked
            more += len(warm - walked)
            fewer += len(walked - warm)
    return (
        f"recall against the walk alone, template from {samples} pages: {differ} of {pages} pages differ "
        f"({more} more template lines, {fewer} fewer)"
    )


def long_page(k: int, paragraphs: int) -> str:
    return "<html><body>" + "".join(f"<p>page {k} paragraph {i}</p>" for i in range(paragraphs)) + "</body></html>"


def long_pages() -> list[str]:
    """Seconds per page of the engine (``rtdm``, default bounds) on pages of 400, 800 and
    1,400 paragraphs, in sequence on one site; then the cost of one unit of the work
    ``DETEMPLATE_RTDM_MAX_CELLS`` bounds (a DP cell; a matrix counts
    :data:`~scrapy_detemplate.methods.rtdm.RECORD_WORK` more), for one large matrix and for many
    small ones, and of refusing a pair over the bound (the count alone)."""
    config = DetemplateConfig(method="rtdm")
    det = Detemplater(config)
    out = [f"== long pages, one site, rtdm at the default bounds (DETEMPLATE_RTDM_MAX_CELLS={config.rtdm_max_cells})"]
    for k, n in enumerate((400,) * 3 + (800,) * 3 + (1400,) * 3):
        result, seconds = clock(det.process, f"http://long.test/p/{k}", long_page(k, n).encode())
        out.append(f"{n:>5} paragraphs: {seconds:7.3f} s  {result.status}/{result.reason}")
    runner = det.runner
    out.append(f"runner counts: {getattr(runner, 'counts', {})}")

    def tree(html: str) -> LabelTree:
        root = parse_html(html)
        body = find_body(root) if root is not None else None
        assert body is not None
        return page_tree(body)

    big = (
        tree("<body>" + "".join(f"<br class=a{i % 7}>" for i in range(700)) + "</body>"),
        tree("<body>" + "".join(f"<hr class=b{i % 5}>" for i in range(700)) + "</body>"),
    )
    small = tree(long_page(1, 150)), tree(long_page(2, 150))
    for name, (t1, t2) in (("one 701 x 701 matrix", big), ("150 x 150 matrices of 2 x 2", small)):
        mapping, seconds = clock(rtdm.rtdm_td, t1, t2)
        out.append(
            f"{name:<28} work {mapping.work:>8}  {seconds:6.3f} s  {1e6 * seconds / mapping.work:5.2f} us per unit"
        )
    t1, t2 = tree(long_page(1, 400)), tree(long_page(2, 400))
    refused = time.perf_counter()
    with contextlib.suppress(TooLarge):
        rtdm.rtdm_td(t1, t2, max_cells=config.rtdm_max_cells)
    out.append(f"refusing 400 x 400 paragraphs at the bound: {time.perf_counter() - refused:.3f} s")
    return out


def main(argv: list[str]) -> None:
    if "--python-walk" in argv:  # time the Python walk, as where the compiled one cannot be built
        rtdm._compiled_walk = None
        print("(the Python walk: scrapy_detemplate.methods._walk not used)")
    if "--long-pages" in argv:
        lines = long_pages()
        print("\n".join(lines))
        write_result("rtdm_long_pages.txt", "\n".join(lines))
        return
    if "--recall" in argv:
        for manifest in [Path(a) for a in argv if not a.startswith("--")] or MANIFESTS:
            print(f"{manifest.name}: {recall_agreement(pages_by_site([manifest]))}")
        return
    if "--applied" in argv:
        for manifest in [Path(a) for a in argv if not a.startswith("--")] or MANIFESTS:
            for mp in (2, 5, 10, 25):
                m, share = applied_quality(manifest, mp)
                if not m:
                    print(f"{manifest.name} MaxPages={mp:<3} applied to no page")
                    continue
                print(
                    f"{manifest.name} MaxPages={mp:<3} applied {share:.0%} of pages: P {m['precision']:.3f} "
                    f"R {m['recall']:.3f} F1 {m['f1']:.3f} TR {m['removal']:.3f}"
                )
        return
    paper = "--paper-f1" in argv
    manifests = [Path(a) for a in argv if not a.startswith("--")] or MANIFESTS
    lines: list[str] = []
    for manifest in manifests:
        sites = pages_by_site([manifest])
        lines.append(f"== {manifest.name}")
        lines.extend(bench(sites))
        for samples in REMOVAL_SAMPLES[1:]:
            more = bench(sites, samples)
            lines.append(more[-3])  # compile
            lines.append(f"{more[-2]}   ({more[0].split(', ')[3]})")
        if paper:
            for mp in (2, 5, 10, 25):
                lines.append(f"paper template-term F1, MaxPages={mp}: {paper_f1(sites, mp):.3f}")
    print("\n".join(lines))
    if manifests == MANIFESTS and "--python-walk" not in argv:
        name = "rtdm_paper_f1.txt" if paper else "rtdm.txt"
        write_result(name, "\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
