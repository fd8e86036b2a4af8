"""Where the default method's time goes, per page, on the corpus pages (issue 15's profile).

    .venv/bin/python bench/profile_default.py [--corpus ../shared/corpus] [--pages 200]
                                              [--out bench/results/profile_default.txt]

One fresh engine with the default settings per corpus takes the corpus's first
``--pages`` pages in manifest order (a crawl's order), as ``Detemplater.process(url,
bytes, headers)``.  Every step the engine calls is timed in place: the functions
are wrapped where the engine and the runner look them up (so this follows the
code as it is, and fails loudly when a step is renamed), and the engine call as a
whole is timed around them; "other" is the call minus its timed steps.  Right
before each engine call, a plain ``lxml.html.document_fromstring`` of the same
bytes is timed: every figure is a ratio to it.

Pages are split by the site's phase: **learning** (the first ``LEARNING`` pages
of a site: its site evidence is still warming up) and **steady** (later pages,
the site's template known).  Per corpus and phase: the median ratio of each step
and of the whole call (medians do not add up to the total's median), then a
``cProfile`` of the steady pages of ``docs`` (and c2f): the functions with the
most time of their own.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import pstats
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from statistics import median
from typing import Any

import lxml.html
from _results import CORPUS  # bench/, the script's folder

from scrapy_detemplate import engine as engine_module
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import CorpusPage, read_manifest
from scrapy_detemplate.runners import base as runner_base
from scrapy_detemplate.runners import combined

HERE = Path(__file__).resolve().parent
HEADERS = {"Content-Type": "text/html"}
#: Pages of a site that count as learning: the DF evidence is fully weighted from the 6th page on
#: (``site_df_when_warm``), and the new-text rule applies from the 4th.
LEARNING = 5
CORPORA = ("c2f", "dragnet10", "docs", "wcxb-dev")
PROFILED = ("docs", "c2f")

#: (label, module or class, attribute): the steps of the default engine call, in call order.
STEPS: tuple[tuple[str, Any, str], ...] = (
    ("decode", engine_module, "decode_html"),
    ("parse", engine_module, "parse_html"),
    ("checks", engine_module, "tree_size_and_depth"),
    ("visible lines", runner_base, "visible_lines"),
    ("line features", combined, "line_features_into"),
    ("site features", combined.CombinedEvidence, "site_features_into"),
    ("genre", combined.CombinedEvidence, "genre"),
    ("names", combined, "page_columns_into"),  # a site's first page only (its Python walk inside when the
    ("names", combined, "page_columns"),  # compiled one is not built); the Python runner's path (one column)
    ("decide", combined, "decide_rows"),
    ("furniture", combined, "furniture_lines"),
    ("table rows", combined, "keep_table_rows_whole"),
    ("removal", engine_module, "remove_template"),
)


class Clock:
    """Nanoseconds spent in each wrapped step during the current page."""

    def __init__(self) -> None:
        self.spent: dict[str, int] = defaultdict(int)

    def wrap(self, label: str, func: Callable[..., Any]) -> Callable[..., Any]:
        spent = self.spent

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter_ns()
            try:
                return func(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter_ns() - start

        return timed


@contextmanager
def timed_steps(clock: Clock) -> Iterator[None]:
    saved = []
    for label, owner, name in STEPS:
        func = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)  # KeyError: renamed
        saved.append((owner, name, func))
        setattr(owner, name, clock.wrap(label, func))
    try:
        yield
    finally:
        for owner, name, func in saved:
            setattr(owner, name, func)


def measure(pages: list[CorpusPage]) -> dict[str, dict[str, list[float]]]:
    """phase -> step -> per-page ratios to a parse (``engine`` is the whole call)."""
    engine = Detemplater(DetemplateConfig())
    clock = Clock()
    seen: dict[str, int] = defaultdict(int)
    out: dict[str, dict[str, list[float]]] = {"learning": defaultdict(list), "steady": defaultdict(list)}
    with timed_steps(clock):
        for page in pages:
            start = time.perf_counter_ns()
            lxml.html.document_fromstring(page.body)
            parse = time.perf_counter_ns() - start
            clock.spent.clear()
            start = time.perf_counter_ns()
            result = engine.process(page.url, page.body, headers=HEADERS)
            total = time.perf_counter_ns() - start
            site = engine.config.site_key(page.url)
            phase = "learning" if seen[site] < LEARNING else "steady"
            seen[site] += 1
            if result.status == "passthrough" or not parse:
                continue
            ratios = out[phase]
            ratios["engine call"].append(total / parse)
            for label in dict.fromkeys(label for label, _, _ in STEPS):
                ratios[label].append(clock.spent.get(label, 0) / parse)
            ratios["other"].append((total - sum(clock.spent.values())) / parse)
    return out


def profile(pages: list[CorpusPage]) -> str:
    """cProfile of the steady pages (each site's pages after its first LEARNING), top functions by own time."""
    engine = Detemplater(DetemplateConfig())
    seen: dict[str, int] = defaultdict(int)
    profiler = cProfile.Profile()
    for page in pages:
        site = engine.config.site_key(page.url)
        steady = seen[site] >= LEARNING
        seen[site] += 1
        if steady:
            profiler.enable()
        engine.process(page.url, page.body, headers=HEADERS)
        if steady:
            profiler.disable()
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(18)
    lines = [line for line in buffer.getvalue().splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(lines[start - 1 :])


def report(corpus: Path, limit: int) -> str:
    labels = ["engine call", *dict.fromkeys(label for label, _, _ in STEPS), "other"]
    head = f"{'corpus':<10} {'phase':<9} {'pages':>5} " + " ".join(f"{label:>13}" for label in labels)
    lines = [
        "Default method (combined), one engine per corpus, its first pages in manifest order;",
        "median per page of each step's time as a ratio to a plain lxml.html parse of the same page",
        f"(learning: a site's first {LEARNING} pages; steady: its later pages). Steps: the functions the engine",
        "calls, timed where it calls them (decode = decode_html, checks = the node-count and depth guard,",
        "names = the learned class/id names' columns, on a site's first page only,",
        "furniture = the lines in furniture the page marks (dialogs, the footer landmark, widgets),",
        "removal = editing the tree, only when HTML or Markdown is asked for); other = the rest of the call.",
        "",
        head,
    ]
    profiles = []
    for name in CORPORA:
        path = corpus / f"{name}.manifest.jsonl"
        if not path.exists():
            continue
        pages = list(itertools.islice(read_manifest(path), limit))
        for phase, ratios in measure(pages).items():
            if not ratios:
                continue
            count = len(ratios["engine call"])
            cells = " ".join(f"{median(ratios[label]):>13.2f}" for label in labels)
            lines.append(f"{name:<10} {phase:<9} {count:>5} {cells}")
        if name in PROFILED:
            profiles.append(f"cProfile, {name}, steady pages (own time; the profiler slows Python code more than C):")
            profiles.append(profile(pages))
    return "\n".join([*lines, "", *profiles])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--pages", type=int, default=200, help="first N pages of each corpus")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "profile_default.txt")
    args = parser.parse_args(argv)
    text = report(args.corpus, args.pages)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
