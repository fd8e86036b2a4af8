"""Quality figures exactly as ``METRICS.md`` defines them.

Tokens are ``re.findall(r"\\w+", text.lower())``; bags are multisets.  Per page:
precision, recall and F1 of the extracted text against the gold text, and
template removal TR = 1 - |leaked| / |non-gold visible text|.  Pages are
averaged per site, then sites are averaged ("site-macro", the headline);
the plain mean over pages is "micro".
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean, median
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import lxml.html

from scrapy_detemplate._html import _XML_DECL, decode_html, parse_html, visible_text

if TYPE_CHECKING:
    from scrapy_detemplate.config import DetemplateConfig
    from scrapy_detemplate.engine import CleanResult

_TOKEN = re.compile(r"\w+")


def bag(text: str) -> Counter[str]:
    return Counter(_TOKEN.findall(text.lower()))


#: A page scoring below this F1 counts as a failure (the ``fail`` column, :func:`failed_pages`).
FAILED_F1 = 0.5


@dataclass(frozen=True, slots=True)
class PageScore:
    precision: float
    recall: float
    f1: float
    removal: float
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.f1 < FAILED_F1


def score_page(extracted: str, gold: str, visible: str, seconds: float = 0.0) -> PageScore:
    """Score one page: E = extracted, G = gold, V = visible page text."""
    return score_bags(bag(extracted), bag(gold), bag(visible), seconds)


def score_bags(e: Counter[str], g: Counter[str], v: Counter[str], seconds: float = 0.0) -> PageScore:
    """:func:`score_page` of the texts' bags (a page's gold and visible bags serve every method)."""
    e_total, g_total = e.total(), g.total()
    if e_total == 0 and g_total == 0:
        p = r = f1 = 1.0
    elif e_total == 0 or g_total == 0:
        p = r = f1 = 0.0
    else:
        hit = (e & g).total()
        p, r = hit / e_total, hit / g_total
        f1 = 2 * p * r / (p + r) if p + r else 0.0
    template = v - g
    leaked = (e - g) & template
    t_total = template.total()
    removal = 1.0 - leaked.total() / t_total if t_total else 1.0
    return PageScore(p, r, f1, removal, seconds)


@dataclass(slots=True)
class Summary:
    """Site-macro and micro means of page scores."""

    sites: dict[str, list[PageScore]] = field(default_factory=dict)
    #: The same scores by the manifest's ``page_type`` (pages without one are left out).
    kinds: dict[str, list[PageScore]] = field(default_factory=dict)

    def add(self, site: str, score: PageScore, kind: str = "") -> None:
        self.sites.setdefault(site, []).append(score)
        if kind:
            self.kinds.setdefault(kind, []).append(score)

    def kind_means(self, kind: str) -> dict[str, float]:
        """Plain means over the pages of one page type (micro: most types hold one page a site)."""
        return _means(self.kinds[kind])

    def site_means(self, site: str) -> dict[str, float]:
        return _means(self.sites[site])

    def macro(self) -> dict[str, float]:
        per_site = [self.site_means(s) for s in self.sites]
        if not per_site:
            return {}
        return {k: mean(m[k] for m in per_site) for k in per_site[0]}

    def micro(self) -> dict[str, float]:
        return _means([s for scores in self.sites.values() for s in scores])

    @property
    def pages(self) -> int:
        return sum(len(v) for v in self.sites.values())


#: How far below keeping every line a site's F1 may fall before :func:`below_keep_all` names it.
KEEP_ALL_MARGIN = 0.03


def below_keep_all(
    summary: Summary, keep_all: Summary, margin: float = KEEP_ALL_MARGIN
) -> list[tuple[str, float, float]]:
    """The sites whose F1 is more than ``margin`` below keeping every line's, worst first, as
    ``(site, F1, keep-all F1)``: the bound no site may break (losing content is worse than a
    leaked menu line).  ``keep_all`` holds the same pages scored with their whole visible text."""
    rows = [(site, summary.site_means(site)["f1"], keep_all.site_means(site)["f1"]) for site in summary.sites]
    return sorted((row for row in rows if row[1] < row[2] - margin), key=lambda row: (row[1] - row[2], row[0]))


def failed_pages(summary: Summary, keep_all: Summary) -> tuple[int, int, int]:
    """Of the pages below an F1 of :data:`FAILED_F1` (:attr:`PageScore.failed`): how many, on how many
    of them keeping every line is not (the cleaning lost what the page's whole text would have
    given), and how many keep less than half of their gold (recall below 0.5: content lost, the
    worst failure, as against a page whose gold is a small part of it).  ``keep_all`` holds the
    same pages, in the same order, scored with their whole visible text."""
    failed = spoilt = lost = 0
    for site, scores in summary.sites.items():
        for score, whole in zip(scores, keep_all.sites[site], strict=True):
            if score.failed:
                failed += 1
                spoilt += not whole.failed
                lost += score.recall < 0.5
    return failed, spoilt, lost


def _means(scores: list[PageScore]) -> dict[str, float]:
    return {
        "precision": mean(s.precision for s in scores),
        "recall": mean(s.recall for s in scores),
        "f1": mean(s.f1 for s in scores),
        "removal": mean(s.removal for s in scores),
        "failures": mean(1.0 if s.failed else 0.0 for s in scores),
        "ms_per_page": 1000 * mean(s.seconds for s in scores),
    }


@dataclass(slots=True)
class CorpusPage:
    site: str
    url: str
    body: bytes
    gold: str
    #: The manifest's ``page_type`` (wcxb-dev: article, forum, product, ...), else "".
    kind: str = ""
    _html: str | None = None
    _visible: str | None = None

    @property
    def html(self) -> str:
        """The page decoded as Scrapy would (no headers: BOM, meta, detection)."""
        if self._html is None:
            self._html = decode_html(self.body)[1]
        return self._html

    def visible_text(self) -> str:
        """All visible text of the page (V in METRICS.md), computed once."""
        if self._visible is None:
            self._visible = visible_text(parse_html(self.html))
        return self._visible


class ManifestError(ValueError):
    """A corpus manifest that cannot be read; the message is short and never holds a page."""


def read_manifest(path: str | Path) -> Iterator[CorpusPage]:
    """Pages of a corpus, in crawl order.

    Either a manifest like ``../shared/corpus/*.manifest.jsonl`` (``html`` and
    ``gold`` are file paths relative to it; ``html`` may be gzipped, ``.gz``) or a JSONL corpus whose lines hold
    the page itself: ``{"site", "url", "html" or "html_b64", "gold_text"}``.
    Raises :class:`ManifestError` for anything else (a file of pages without
    gold text, as ``clean`` reads, is the usual mistake).
    """
    path = Path(path)
    try:
        lines = path.open(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"cannot read manifest {_short(str(path))}: {exc.strerror}") from exc
    with lines:
        for number, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            where = f"{_short(path.name)} line {number}"
            try:
                entry = json.loads(raw)
                # A page without site or URL (a few in wcxb-dev) is a site of its own.
                site = entry.get("site") or urlsplit(entry.get("url") or "").hostname or entry.get("source_name") or ""
                site = site or str(entry.get("html", ""))[:200]
                url = entry.get("url") or f"http://{re.sub(r'[^A-Za-z0-9.-]+', '-', site)}/"
                kind = entry.get("page_type", "")
                if "gold_text" in entry:
                    body = base64.b64decode(entry["html_b64"]) if "html_b64" in entry else entry["html"].encode("utf-8")
                    yield CorpusPage(site, url, body, entry["gold_text"], kind)
                    continue
                html_path, gold_path = entry["html"], entry["gold"]
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
                raise ManifestError(f"{where}: not a corpus manifest line ({MANIFEST_FORMAT})") from exc
            if len(html_path) > 500 or "<" in html_path:
                raise ManifestError(f'{where}: "html" holds a page, not a file path ({MANIFEST_FORMAT})')
            try:
                body = (path.parent / html_path).read_bytes()
                if html_path.endswith(".gz"):
                    body = gzip.decompress(body)
                gold = (path.parent / gold_path).read_text(encoding="utf-8")
            except (OSError, ValueError, EOFError) as exc:
                raise ManifestError(f"{where}: cannot read a page or its gold text ({type(exc).__name__})") from exc
            yield CorpusPage(site, url, body, gold, kind)


#: What a manifest line is, for error messages (README "Command line" says more).
MANIFEST_FORMAT = (
    'a line is {"site", "url", "html": PATH, "gold": PATH} with paths relative to the manifest, '
    'or {"site", "url", "html" or "html_b64", "gold_text"}'
)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def scored_text(result: CleanResult, page: CorpusPage) -> str:
    """The text a method is scored on: its clean text, or the whole visible text when it passed the
    page through without one (the page reaches the user unchanged)."""
    return result.text if result.status != "passthrough" or result.text else page.visible_text()


def first_sites(pages: Iterable[CorpusPage], count: int) -> list[CorpusPage]:
    """The pages of the first ``count`` sites, in order (all of them when ``count`` is 0)."""
    pages = list(pages)
    if not count:
        return pages
    sites = set(list(dict.fromkeys(page.site for page in pages))[:count])
    return [page for page in pages if page.site in sites]


def run_method(config: DetemplateConfig, pages: Iterable[CorpusPage]) -> Summary:
    """One engine over the pages in crawl order, each scored as it comes out."""
    return run_methods([config], pages)[0]


def run_methods(configs: Sequence[DetemplateConfig], pages: Iterable[CorpusPage]) -> list[Summary]:
    """One engine per config, each over the pages in crawl order: every page goes through each engine
    in turn (the engines share nothing, so each sees what :func:`run_method` shows it) and is read,
    and its gold and visible text counted, once for all of them."""
    from scrapy_detemplate.engine import Detemplater

    engines = [Detemplater(config) for config in configs]
    summaries = [Summary() for _ in configs]
    for page in pages:
        gold, visible = bag(page.gold), bag(page.visible_text())
        for engine, summary in zip(engines, summaries, strict=True):
            start = time.perf_counter()
            result = engine.process(page.url, page.body)
            seconds = time.perf_counter() - start
            summary.add(page.site, score_bags(bag(scored_text(result, page)), gold, visible, seconds), page.kind)
    return summaries


def run_peer(extract: Callable[[str], str], pages: Iterable[CorpusPage]) -> Summary:
    """A page-level extractor over the same pages; a failure scores as empty output."""
    summary = Summary()
    for page in pages:
        start = time.perf_counter()
        try:
            text = extract(decode_html(page.body)[1])
        except Exception:
            text = ""
        seconds = time.perf_counter() - start
        summary.add(page.site, score_page(text, page.gold, page.visible_text(), seconds), page.kind)
    return summary


def parse_cost(pages: Iterable[CorpusPage]) -> float:
    """Median seconds of decoding and a plain ``lxml.html`` parse: the cost floor."""
    times = []
    for page in pages:
        start = time.perf_counter()
        lxml.html.document_fromstring(_XML_DECL.sub("", decode_html(page.body)[1], count=1) or "<html></html>")
        times.append(time.perf_counter() - start)
    return median(times) if times else 0.0


def plot(points: dict[str, dict[str, tuple[float, float]]], path: str | Path) -> None:
    """Quality (site-macro F1) against cost (ms per page, log scale): one panel per corpus.

    ``points[corpus][name] = (ms_per_page, f1)``.  Needs matplotlib (bench extra).
    """
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(points), figsize=(6.5 * len(points), 5), squeeze=False)
    for ax, (corpus, named) in zip(axes[0], points.items(), strict=True):
        for name, (ms, f1) in named.items():
            ours = not name.startswith("peer:")
            ax.scatter(ms, f1, marker="o" if ours else "s", color="tab:blue" if ours else "tab:gray", s=36)
            ax.annotate(name.removeprefix("peer:"), (ms, f1), textcoords="offset points", xytext=(5, 3), fontsize=8)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("cost: ms per page (log)")
        ax.set_ylabel("content F1 (site-macro)")
        ax.set_title(corpus)
        ax.grid(True, alpha=0.3)
    fig.suptitle("scrapy-detemplate methods (circles) and peers (squares)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def format_table(rows: Iterable[tuple[str, dict[str, float]]]) -> str:
    """A plain-text table of P/R/F1/TR/failures/ms rows."""
    header = f"{'':<34} {'P':>6} {'R':>6} {'F1':>6} {'TR':>6} {'fail':>6} {'ms/pg':>7}"
    out = [header]
    for name, m in rows:
        out.append(
            f"{name[:34]:<34} {m['precision']:6.3f} {m['recall']:6.3f} {m['f1']:6.3f} "
            f"{m['removal']:6.3f} {m['failures']:6.3f} {m['ms_per_page']:7.2f}"
        )
    return "\n".join(out)


#: How far below its floor a score may fall before the gate fails.  Methods are
#: deterministic, so this only absorbs float noise and library drift.
GATE_TOLERANCE = 0.002
GATED = ("f1", "removal")


def gate(scores: dict[str, dict[str, dict[str, float]]], floors: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    """Compare ``scores[corpus][method]`` (site-macro figures) with recorded floors.

    Returns one message per figure that fell more than :data:`GATE_TOLERANCE`
    below its floor, or is missing; an empty list means the gate passes.
    Raising a floor is free; lowering one is an edit to the floors file, which a
    reviewer sees.
    """
    failures = []
    for corpus, methods in floors.items():
        for method, figures in methods.items():
            got = scores.get(corpus, {}).get(method)
            for name, floor in figures.items():
                if got is None or name not in got:
                    failures.append(f"{corpus}/{method}/{name}: not measured (floor {floor:.3f})")
                elif got[name] < floor - GATE_TOLERANCE:
                    failures.append(f"{corpus}/{method}/{name}: {got[name]:.3f} is below its floor {floor:.3f}")
    return failures
