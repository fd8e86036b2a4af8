"""Cost of every method per page, and a real crawl's throughput with and without the add-on.

    .venv/bin/python bench/bench_all.py [--corpus ../shared/corpus] [--pages N] [--default-pages N] [--crawl-pages N]
                                        [--rounds 3] [--concurrency N] [--out bench/results/bench_all.txt]

One run, one process for part 1, fresh ``scrapy crawl`` processes for part 2:

1. **Cost per page on the corpus pages** (every ``*.manifest.jsonl`` in
   ``--corpus``, pages in manifest order, at most ``--pages`` per corpus).  For
   every method in :data:`~scrapy_detemplate.runners.RUNNERS`, a fresh
   :class:`~scrapy_detemplate.engine.Detemplater` takes the pages in crawl order;
   per page, one right after the other:

   * ``parse``: ``lxml.html.document_fromstring`` of the page bytes (the cost floor);
   * ``step``: the method's ``runner.run`` inside that very engine call, timed by a
     wrapper around the engine's runner: the work on the parsed page whose
     visible lines the engine has already computed (as for every method);
   * ``engine``: the whole ``Detemplater.process(url, body, headers=...)`` call
     (checks, decode, parse, visible lines, the step, rendering of HTML and text).

   Reported per corpus and method: pages, median ms, and the median and 90th
   percentile of the per-page ratios step/parse and engine/parse.  Where a
   method's work depends on how much of the site it has seen, its pages are
   also split by phase (see :data:`PHASES`; printed with the table).  The
   wrapper's own bookkeeping (a few microseconds) is taken off the engine time.

   **Part 1b, the default method on every page** (at most ``--default-pages`` per
   corpus; all by default): the same measure for the default method alone, on
   all of a corpus's sites rather than the first few that ``--pages`` holds, a
   site's first :data:`LEARNING` pages (learning) apart from its later ones
   (steady: its template learned).

   **Markdown** (``docs`` and ``c2f``): a fresh engine with the default method
   and ``DETEMPLATE_MARKDOWN`` on takes each corpus's pages in order; per page
   the same parse, and ``render`` = the engine's Markdown rendering of the tree
   it keeps (:func:`~scrapy_detemplate.markdown.to_markdown`, timed inside the
   engine call).  Reported: the median and 90th percentile of render/parse.

2. **Throughput of a real crawl** of the example project's demo site, grown to
   about ``--crawl-pages`` pages, and of a documentation site of the ``docs``
   corpus (``--docs-site``, its pages served ``--docs-copies`` times under
   ``/v0/``, ``/v1/``..., an index at ``/``), each served on 127.0.0.1 from this process:
   ``scrapy crawl site`` (``example_project/``, its settings: the add-on with
   the default method) alternated with the same crawl with the add-on off
   (``-s DETEMPLATE_ENABLED=False``: every component raises ``NotConfigured``)
   and with ``DETEMPLATE_METHOD=sandwich``, ``--rounds`` times each.
   Requests per second are Scrapy's own stats, ``downloader/response_status_count/200 /
   elapsed_time_seconds`` (the docs site's links to pages it does not hold get
   404s), written as JSON by :class:`StatsToJson`; the table
   gives their median per variant and the ratio to the crawl without the
   add-on, and checks that the add-on's items carry ``content`` and the others not.

Both tables are printed and written to ``--out``.  ``--crawl-pages 0`` skips
part 2; ``--pages 0`` skips part 1 (1b too); ``--default-pages 0`` skips part 1b;
``--only markdown`` runs the Markdown rows alone.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import logging
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median, quantiles
from typing import Any
from urllib.parse import urlsplit

import lxml.html
import scrapy
from _results import CORPUS  # bench/, the script's folder
from lxml import etree
from scrapy import signals
from scrapy.exceptions import NotConfigured

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import CorpusPage, read_manifest
from scrapy_detemplate.runners import RUNNERS, ParsedPage, Runner, Verdict

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXAMPLE = ROOT / "example_project"
#: What a crawl's downloader middleware hands the engine for a corpus page (no charset known).
HEADERS = {"Content-Type": "text/html"}
#: The floor first, then the registry's order.
METHODS = ("none", *(name for name in RUNNERS if name != "none"))

#: The method a project gets without setting one.
DEFAULT_METHOD = DetemplateConfig().method

#: A site's pages that count as learning for the default method: the DF evidence is fully weighed
#: from the 6th page on (``site_df_when_warm``), and the new-text rule applies from the 4th.
LEARNING = 5

#: What each phase of a method means; methods not listed do the same work on every page.
PHASES = {
    ("sandwich", "cold"): "first page of its URL directory: line keys only, no peer to compare",
    ("sandwich", "warm"): "a peer in the directory: LCS of the line keys with it",
    ("segments", "cold"): "no segment of the site reaches the DF threshold yet: table update + Sandwich fallback",
    ("segments", "warm"): "table update + template detection",
    ("rtdm", "learn"): "a FindTemplate sample (the meanwhile Sandwich cleans it; the last one also applies)",
    ("rtdm", "apply"): "a learned template located in the page",
    ("combined", "learning"): f"one of its site's first {LEARNING} pages (its DF evidence not yet fully weighed)",
    ("combined", "steady"): "a later page of its site: the site's template learned",
}


# -- part 1: cost per page ----------------------------------------------------


class TimedRunner:
    """The engine's runner, timed: the nanoseconds and the phase of its last ``run``, and
    the nanoseconds of its own bookkeeping (``own_ns``, taken off the engine call's time)."""

    def __init__(self, method: str, runner: Runner) -> None:
        self.method = method
        self.inner = runner
        self.name = runner.name
        self.ns: int | None = None
        self.own_ns = 0
        self.phase = ""
        self._site_pages: dict[str, int] = {}

    def run(self, page: ParsedPage) -> Verdict:
        entered = time.perf_counter_ns()
        seen = self._site_pages.get(page.site, 0)
        self._site_pages[page.site] = seen + 1
        learned = self._learned()
        start = time.perf_counter_ns()
        verdict = self.inner.run(page)
        self.ns = time.perf_counter_ns() - start
        self.phase = phase_of(self.method, verdict, self._learned() > learned, seen)
        self.own_ns = time.perf_counter_ns() - entered - self.ns
        return verdict

    def _learned(self) -> int:
        counts = getattr(self.inner, "counts", None)  # RtdmRunner's
        return int(counts.get("learned", 0)) if isinstance(counts, dict) else 0


def phase_of(method: str, verdict: Verdict, learned: bool, site_pages: int) -> str:
    """The phase of the site a page was processed in (keys of :data:`PHASES`, else ``"all"``)."""
    if method == "rtdm":
        return "learn" if verdict.detail == "learning" or learned else "apply"
    if method == "sandwich":
        return "cold" if verdict.detail == "no_peer" else "warm"
    if method == "segments":
        # ``method`` is set when the first-pages fallback decided.
        return "cold" if verdict.method or verdict.detail == "warming_up" else "warm"
    if method == "combined":  # ``site_pages``: the pages of its site seen before this one
        return "learning" if site_pages < LEARNING else "steady"
    return "all"


@dataclass(frozen=True, slots=True)
class Sample:
    phase: str
    parse_ns: int
    step_ns: int
    engine_ns: int


@dataclass(slots=True)
class MethodRun:
    method: str
    samples: list[Sample] = field(default_factory=list)
    passthrough: int = 0  # the engine never called the method (too large, no body...)
    unparsable: int = 0  # lxml refused the bytes: no floor to compare with


def time_method(method: str, pages: Sequence[CorpusPage]) -> MethodRun:
    """A fresh engine for ``method`` over ``pages`` in order; parse and engine call per page."""
    engine = Detemplater(DetemplateConfig(method=method))
    timed = TimedRunner(method, engine.runner)
    engine.runner = timed
    out = MethodRun(method)
    gc.collect()
    for page in pages:
        try:
            start = time.perf_counter_ns()
            lxml.html.document_fromstring(page.body)
            parse_ns = time.perf_counter_ns() - start
        except (etree.ParserError, ValueError):
            parse_ns = 0
        timed.ns, timed.own_ns = None, 0
        start = time.perf_counter_ns()
        engine.process(page.url, page.body, headers=HEADERS)
        engine_ns = time.perf_counter_ns() - start - timed.own_ns
        if timed.ns is None:
            out.passthrough += 1
        elif not parse_ns:
            out.unparsable += 1
        else:
            out.samples.append(Sample(timed.phase, parse_ns, timed.ns, engine_ns))
    return out


@dataclass(frozen=True, slots=True)
class CostRow:
    corpus: str
    method: str
    phase: str
    pages: int
    parse_ms: float
    step_ms: float
    step_ratio: float
    step_ratio_p90: float
    engine_ms: float
    engine_ratio: float
    engine_ratio_p90: float


def cost_rows(corpus: str, run: MethodRun) -> list[CostRow]:
    """The ``all`` row, then one row per phase for the methods that have phases."""
    groups = {"all": run.samples}
    for phase in sorted({s.phase for s in run.samples} - {"all"}):
        groups[phase] = [s for s in run.samples if s.phase == phase]
    rows = []
    for phase, samples in groups.items():
        if not samples:
            continue
        step = [s.step_ns / s.parse_ns for s in samples]
        engine = [s.engine_ns / s.parse_ns for s in samples]
        rows.append(
            CostRow(
                corpus, run.method, phase, len(samples),
                median(s.parse_ns for s in samples) / 1e6, median(s.step_ns for s in samples) / 1e6,
                median(step), p90(step), median(s.engine_ns for s in samples) / 1e6, median(engine), p90(engine),
            )
        )  # fmt: skip
    return rows


def p90(values: list[float]) -> float:
    return quantiles(values, n=10, method="inclusive")[-1] if len(values) > 1 else values[0]


@contextmanager
def engine_warnings_off() -> Iterator[None]:
    """The engine's passthrough warnings silenced (the reports count such pages instead)."""
    quiet = logging.getLogger("scrapy_detemplate")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        yield
    finally:
        quiet.setLevel(level)


def cost_report(manifests: Iterable[Path], pages: int | None = None) -> tuple[list[CostRow], str]:
    """Part 1 over ``manifests`` (at most ``pages`` pages each): the rows and the table."""
    rows: list[CostRow] = []
    notes: list[str] = []
    with engine_warnings_off():
        for manifest in manifests:
            corpus = manifest.name.removesuffix(".manifest.jsonl")
            corpus_pages = list(itertools.islice(read_manifest(manifest), pages))
            left_out: dict[tuple[int, int], list[str]] = {}
            for method in METHODS:
                run = time_method(method, corpus_pages)
                rows.extend(cost_rows(corpus, run))
                if run.passthrough or run.unparsable:
                    left_out.setdefault((run.passthrough, run.unparsable), []).append(method)
            for (passthrough, unparsable), methods in left_out.items():
                notes.append(
                    f"{corpus}: {passthrough} pages passed through by the engine (no method ran) and {unparsable} "
                    f"not parsable by lxml are left out ({', '.join(methods)})"
                )
    head = ("corpus", "method", "phase", "pages", "parse ms", "step ms", "step/parse", "p90",
            "engine ms", "engine/parse", "p90")  # fmt: skip
    fmt = "{:<10} {:<9} {:<6} {:>5} {:>9} {:>8} {:>10} {:>7} {:>9} {:>12} {:>7}"
    lines = [
        "Part 1: cost per page, median over pages of the per-page ratio to a plain lxml.html parse",
        "  parse  = lxml.html.document_fromstring(page bytes), timed right before the engine call",
        "  step   = runner.run(page) inside that engine call (the method alone; visible lines already computed)",
        "  engine = Detemplater.process(url, body, headers): checks, decode, parse, visible lines, step, render",
        "  phases (the 'all' row covers every page):",
        *(f"    {m} {p}: {what}" for (m, p), what in PHASES.items()),
        "",
        fmt.format(*head),
    ]
    for r in rows:
        lines.append(
            fmt.format(
                r.corpus, r.method, r.phase, r.pages, f"{r.parse_ms:.3f}", f"{r.step_ms:.3f}", f"{r.step_ratio:.3f}",
                f"{r.step_ratio_p90:.2f}", f"{r.engine_ms:.3f}", f"{r.engine_ratio:.2f}", f"{r.engine_ratio_p90:.2f}",
            )
        )  # fmt: skip
    lines.extend(notes)
    return rows, "\n".join(lines)


def default_report(manifests: Iterable[Path], pages: int | None = None) -> tuple[list[CostRow], str]:
    """The default method over every page of each corpus (at most ``pages``), its sites'
    learning pages apart from their steady ones: issue 15's measure, on all of a corpus's sites
    rather than on the first few that part 1's sample holds."""
    rows: list[CostRow] = []
    with engine_warnings_off():
        for manifest in manifests:
            corpus = manifest.name.removesuffix(".manifest.jsonl")
            run = time_method(DEFAULT_METHOD, list(itertools.islice(read_manifest(manifest), pages)))
            rows.extend(cost_rows(corpus, run))
    head = ("corpus", "phase", "pages", "parse ms", "engine ms", "engine/parse", "p90")
    fmt = "{:<10} {:<8} {:>5} {:>9} {:>9} {:>12} {:>7}"
    lines = [
        f"Part 1b: the default method ({DEFAULT_METHOD}) on every page of each corpus, in manifest order",
        "  (one fresh engine per corpus; parse and engine as in part 1; median over pages of engine/parse)",
        *(f"  {p}: {what}" for (m, p), what in PHASES.items() if m == DEFAULT_METHOD),
        "",
        fmt.format(*head),
    ]
    for r in rows:
        lines.append(
            fmt.format(r.corpus, r.phase, r.pages, f"{r.parse_ms:.3f}", f"{r.engine_ms:.3f}", f"{r.engine_ratio:.2f}",
                       f"{r.engine_ratio_p90:.2f}")
        )  # fmt: skip
    return rows, "\n".join(lines)


class MarkdownTimed(Detemplater):
    """The engine, with the nanoseconds of its last Markdown rendering kept."""

    markdown_ns: int | None = None

    def _markdown(self, root: etree._Element, url: str) -> str:
        start = time.perf_counter_ns()
        out = super()._markdown(root, url)
        self.markdown_ns = time.perf_counter_ns() - start
        return out


#: Corpora the Markdown rows are measured on.
MARKDOWN_CORPORA = ("docs", "c2f")


def markdown_report(
    manifests: Iterable[Path], pages: int | None = None, corpora: Sequence[str] = MARKDOWN_CORPORA
) -> tuple[list[tuple[str, ...]], str]:
    """The cost of Markdown out per page against a parse, on the manifests of ``corpora``."""
    rows: list[tuple[str, ...]] = []
    with engine_warnings_off():
        for manifest in manifests:
            corpus = manifest.name.removesuffix(".manifest.jsonl")
            if corpus not in corpora:
                continue
            engine = MarkdownTimed(DetemplateConfig(markdown=True))
            parse, render = [], []
            gc.collect()
            for page in itertools.islice(read_manifest(manifest), pages):
                try:
                    start = time.perf_counter_ns()
                    lxml.html.document_fromstring(page.body)
                    parse_ns = time.perf_counter_ns() - start
                except (etree.ParserError, ValueError):
                    continue
                engine.markdown_ns = None
                engine.process(page.url, page.body, headers=HEADERS)
                if engine.markdown_ns is not None and parse_ns:
                    parse.append(parse_ns)
                    render.append(engine.markdown_ns)
            if parse:
                ratios = [r / p for r, p in zip(render, parse, strict=True)]
                rows.append((corpus, str(len(parse)), f"{median(parse) / 1e6:.3f}", f"{median(render) / 1e6:.3f}",
                             f"{median(ratios):.3f}", f"{p90(ratios):.2f}"))  # fmt: skip
    fmt = "{:<10} {:>5} {:>9} {:>10} {:>13} {:>7}"
    lines = [
        "Markdown out: cost per page, median over pages of the per-page ratio to a plain lxml.html parse",
        "  render = to_markdown on the tree the engine keeps (default method, DETEMPLATE_MARKDOWN on),",
        "  timed inside Detemplater.process; parse as above",
        "",
        fmt.format("corpus", "pages", "parse ms", "render ms", "render/parse", "p90"),
        *(fmt.format(*row) for row in rows),
    ]
    return rows, "\n".join(lines)


# -- part 2: crawl throughput -------------------------------------------------

#: The baseline crawl: the example project with ``DETEMPLATE_ENABLED=False``.
OFF = "add-on off"


class StatsToJson:
    """A Scrapy extension: the crawl's stats as JSON in ``BENCH_ALL_STATS`` when the engine stops.

    Loaded inside the crawl's process (``-s EXTENSIONS=...``, this directory on
    ``PYTHONPATH``); adds the effective ``CONCURRENT_REQUESTS`` and the CPU
    seconds the crawl's process spent from spider open to engine stop (less
    sensitive than wall-clock time to other work on a shared machine).
    """

    def __init__(self, crawler: Any, path: str) -> None:
        self.crawler = crawler
        self.path = path
        self.cpu_start = time.process_time()

    def spider_opened(self) -> None:
        self.cpu_start = time.process_time()

    @classmethod
    def from_crawler(cls, crawler: Any) -> StatsToJson:
        path = crawler.settings.get("BENCH_ALL_STATS")
        if not path:
            raise NotConfigured("BENCH_ALL_STATS is not set")
        ext = cls(crawler, path)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        return ext

    def engine_stopped(self) -> None:
        stats = {k: v for k, v in self.crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
        stats["setting/CONCURRENT_REQUESTS"] = self.crawler.settings.getint("CONCURRENT_REQUESTS")
        stats["bench/cpu_seconds"] = time.process_time() - self.cpu_start
        Path(self.path).write_text(json.dumps(stats, indent=1, sort_keys=True), encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Crawl:
    variant: str
    responses: int
    seconds: float
    cpu_seconds: float
    items: int
    with_content: int
    detemplate_pages: int
    concurrency: int

    @property
    def rps(self) -> float:
        return self.responses / self.seconds

    @property
    def cpu_ms(self) -> float:
        """CPU milliseconds of the crawl's process per response."""
        return 1000 * self.cpu_seconds / self.responses


def run_crawl(base: str, settings: dict[str, str], workdir: Path, variant: str) -> Crawl:
    """One ``scrapy crawl site`` of the example project in a fresh process."""
    stats_path, feed = workdir / "stats.json", workdir / "items.jsonl"
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start_url={base}/", "-O", str(feed),
               "-s", "EXTENSIONS=" + json.dumps({f"{Path(__file__).stem}.StatsToJson": 0}),
               "-s", f"BENCH_ALL_STATS={stats_path}"]  # fmt: skip
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    path = os.pathsep.join(filter(None, [str(EXAMPLE), str(HERE), os.environ.get("PYTHONPATH")]))
    proc = subprocess.run(
        command, cwd=EXAMPLE, env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, timeout=900
    )
    if proc.returncode != 0 or not stats_path.exists():
        raise RuntimeError(f"crawl {variant!r} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    stats = json.loads(stats_path.read_text(encoding="utf-8"))
    items = [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()]
    return Crawl(
        variant,
        int(stats.get("downloader/response_status_count/200", 0)),
        float(stats["elapsed_time_seconds"]),
        float(stats["bench/cpu_seconds"]),
        len(items),
        sum(1 for item in items if item.get("content")),
        int(stats.get("detemplate/pages", 0)),
        int(stats["setting/CONCURRENT_REQUESTS"]),
    )


def docs_site(corpus: Path, name: str, copies: int) -> dict[str, Any]:
    """A documentation site of the ``docs`` corpus to serve: its pages ``copies`` times, under
    ``/v0/``, ``/v1/``... (as a site keeps the manuals of several versions), and an index at
    ``/`` linking to every page.  Links between the pages are the site's own (relative ones
    stay inside their copy; those to pages the corpus does not hold get a 404)."""
    sys.path.insert(0, str(EXAMPLE))
    import demosite

    pages = [p for p in read_manifest(corpus / "docs.manifest.jsonl") if p.site == name]
    if not pages:
        raise SystemExit(f"no site {name!r} in {corpus / 'docs.manifest.jsonl'}")
    site: dict[str, Any] = {}
    for copy in range(copies):
        for page in pages:
            path = f"/v{copy}" + (urlsplit(page.url).path or "/")
            site[path] = demosite.Page(path, "", page.body, content_type="text/html")
    links = "\n".join(f'<li><a href="{path}">{path}</a></li>' for path in site)
    index = f"<html><head><title>{name}</title></head><body><ul>\n{links}\n</ul></body></html>"
    site["/"] = demosite.Page("/", name, index.encode("utf-8"))
    return site


def crawl_report(
    target_pages: int, rounds: int = 3, concurrency: int | None = None, docs: tuple[Path, str, int] | None = None
) -> str:
    """Part 2: the demo site grown to about ``target_pages`` pages (and, with ``docs``, a
    documentation site of the corpus: ``(corpus, site, copies)``), crawled in alternation."""
    sys.path.insert(0, str(EXAMPLE))
    import demosite

    demo = demosite.build_site(articles_per_section=max(4, -(-(target_pages - 6) // len(demosite.SECTIONS))))
    sites = [(f"a {len(demo)}-page demo site (example_project/demosite.py)", demo)]
    if docs is not None:
        corpus, name, copies = docs
        pages = docs_site(corpus, name, copies)
        sites.append((f"the docs site {name} of the corpus, {copies} copies ({len(pages)} pages)", pages))
    return "\n\n".join(crawl_site(title, site, rounds, concurrency) for title, site in sites)


def crawl_site(title: str, site: dict[str, Any], rounds: int, concurrency: int | None) -> str:
    """The crawls of one site served on 127.0.0.1, the variants alternated ``rounds`` times."""
    import demosite

    variants = {
        "add-on (combined)": {},  # the example project's settings: the default method
        OFF: {"DETEMPLATE_ENABLED": "False"},
        "add-on (sandwich)": {"DETEMPLATE_METHOD": "sandwich"},
    }
    common = {"CONCURRENT_REQUESTS": str(concurrency)} if concurrency else {}
    crawls: dict[str, list[Crawl]] = {name: [] for name in variants}
    server, base = demosite.serve(site)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(rounds):
                for name, settings in variants.items():
                    workdir = Path(tmp) / f"{name.replace(' ', '_')}-{len(crawls[name])}"
                    workdir.mkdir()
                    crawls[name].append(run_crawl(base, {**common, **settings}, workdir, name))
    finally:
        server.shutdown()
    off = median(c.rps for c in crawls[OFF])
    off_cpu = median(c.cpu_ms for c in crawls[OFF])
    concurrencies = sorted({c.concurrency for runs in crawls.values() for c in runs})
    source = "set with --concurrency" if concurrency else "the example project's setting"
    fmt = "{:<18} {:>6} {:>9} {:>8} {:>13} {:>7} {:>13} {:>11} {:>7} {:>13}"
    head = ("variant", "crawls", "responses", "req/s", "req/s min-max", "vs off", "ms/resp added",
            "CPU ms/resp", "CPU x off", "content/items")  # fmt: skip
    lines = [
        f"Part 2: scrapy crawl site (example_project) of {title} on 127.0.0.1, "
        f"{rounds} rounds alternating the variants",
        f"  CONCURRENT_REQUESTS={','.join(map(str, concurrencies))} ({source}); the server runs in the bench "
        "process on the same machine",
        "  req/s = 200 responses (downloader/response_status_count/200) / elapsed_time_seconds from Scrapy's",
        "  stats, median over the rounds (a 404's link to a page the site does not have is left out);",
        "  vs off = req/s / req/s without the add-on; ms/resp added = 1000 / req/s - 1000 / (req/s without)",
        "  CPU ms/resp = CPU time of the crawl's process (spider open to engine stop) per response, median;",
        "  CPU x off = its ratio to the crawl without the add-on (steadier than req/s when the machine is shared)",
        "",
        fmt.format(*head),
    ]
    for name, runs in crawls.items():
        rps = median(c.rps for c in runs)
        cpu = median(c.cpu_ms for c in runs)
        added = 1000 * (1 / rps - 1 / off)
        lines.append(
            fmt.format(
                name, len(runs), "/".join(sorted({str(c.responses) for c in runs})), f"{rps:.1f}",
                f"{min(c.rps for c in runs):.1f}-{max(c.rps for c in runs):.1f}", f"{rps / off:.3f}",
                f"{added:+.2f}", f"{cpu:.2f}", f"{cpu / off_cpu:.3f}",
                f"{min(c.with_content for c in runs)}/{max(c.items for c in runs)}",
            )
        )  # fmt: skip
    on_ok = all(c.with_content == c.items == c.detemplate_pages > 0 for k in variants if k != OFF
                for c in crawls[k])  # fmt: skip
    off_ok = all(c.with_content == 0 and c.detemplate_pages == 0 for c in crawls[OFF])
    lines.append(
        f"check: every item of the add-on crawls has 'content' and was processed (detemplate/pages): "
        f"{'yes' if on_ok else 'NO'}; the add-on-off crawls have neither: {'yes' if off_ok else 'NO'}"
    )
    return "\n".join(lines)


# -- main ---------------------------------------------------------------------


def environment() -> str:
    return (
        f"bench_all: Python {platform.python_version()}, lxml {'.'.join(map(str, etree.LXML_VERSION))}, "
        f"Scrapy {scrapy.__version__}, {os.cpu_count()} CPUs, {platform.machine()}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="directory of *.manifest.jsonl files")
    parser.add_argument("--pages", type=int, default=None, help="at most N pages per corpus (0: skip part 1)")
    parser.add_argument(
        "--default-pages", type=int, default=None, help="at most N pages per corpus for part 1b (0: skip it)"
    )
    parser.add_argument("--crawl-pages", type=int, default=1000, help="demo site size for part 2 (0: skip it)")
    parser.add_argument("--rounds", type=int, default=3, help="crawls per variant in part 2")
    parser.add_argument("--concurrency", type=int, default=None, help="CONCURRENT_REQUESTS for every crawl")
    parser.add_argument("--docs-site", default="celery-5.2", help="docs site of the corpus crawled too ('': none)")
    parser.add_argument("--docs-copies", type=int, default=10, help="copies of the docs site served (/v0/, /v1/...)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bench_all.txt")
    parser.add_argument("--only", choices=["markdown"], help="run only these rows (written to --out)")
    args = parser.parse_args(argv)
    sections = [environment()]
    print(sections[0], flush=True)
    started = time.monotonic()
    if args.pages != 0:
        manifests = sorted(args.corpus.glob("*.manifest.jsonl"))
        if not manifests:
            parser.error(f"no *.manifest.jsonl in {args.corpus}")
        if args.only is None:
            sections.append(cost_report(manifests, args.pages)[1])
            print(sections[-1], flush=True)
            if args.default_pages != 0:
                sections.append(default_report(manifests, args.default_pages)[1])
                print(sections[-1], flush=True)
        sections.append(markdown_report(manifests, args.pages)[1])
        print(sections[-1], flush=True)
    if args.crawl_pages and args.only is None:
        docs = (args.corpus, args.docs_site, args.docs_copies) if args.docs_site else None
        sections.append(crawl_report(args.crawl_pages, args.rounds, args.concurrency, docs))
        print(sections[-1], flush=True)
    sections.append(f"(run took {time.monotonic() - started:.0f} s)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n\n".join(sections) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
