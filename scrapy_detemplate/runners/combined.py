"""The combined method: page-level and site-level evidence for every line.

Per page, each visible line gets the page-level features of
:mod:`scrapy_detemplate.methods.density` (main container, line shape) and
site-level ones: the document frequency of its segments on the site's earlier
pages (the segment table of Wang et al., via :class:`SegmentsRunner`), and
whether it is in the Sandwich LCS with its directory peer (via
:class:`SandwichRunner`).  Boosted trees trained on gold text
(:mod:`scrapy_detemplate.train_combined`) turn them into a probability of being
content; lines below the threshold are template.  Site evidence only adds to
page evidence, so the first page of a site is already cleaned.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import threading
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from lxml import etree

from scrapy_detemplate import _compiled as _compiled_modules
from scrapy_detemplate._html import Line
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.methods import density as _density
from scrapy_detemplate.methods.density import FEATURES as PAGE_FEATURES
from scrapy_detemplate.methods.density import line_features
from scrapy_detemplate.methods.forest import Forest, mean_forest
from scrapy_detemplate.methods.kinds import (
    KIND_FEATURES,
    about_one_product,
    answer_lines,
    declared_answers,
    declared_reviews,
    kind_flags,
    review_lines,
)
from scrapy_detemplate.methods.names import NAME_FEATURES, KnownNames, page_columns, page_columns_into, valid_lexicon
from scrapy_detemplate.methods.segments import Segmentation
from scrapy_detemplate.runners.base import ParsedPage, Verdict, unusable_model
from scrapy_detemplate.runners.sandwich import SandwichRunner
from scrapy_detemplate.runners.segments import SegmentsRunner
from scrapy_detemplate.store import StateStore, Value

if TYPE_CHECKING:
    FeatureRows = Any  # _site.FeatureRows (compiled, no stubs)
    ForestScorer = Any  # _site.ForestScorer

#: :meth:`Forest.scorer`: the probabilities of many rows at once.
Scorer = Callable[[Sequence[Sequence[float]]], list[float]]

SITE_FEATURES = ("site_df", "in_sandwich_lcs", "has_peer", "log_pages_seen", "site_df_when_warm")
#: What kind of site the page stands on, as its earlier pages show it (:func:`page_shares`, averaged
#: over the site's last DF_WINDOW pages; -1.0 on its first page): the shares of their words in code
#: (``<pre>``, ``<code>``), in table cells, in links, in the main container, and new on the site.
GENRE_FEATURES = ("site_code_share", "site_table_share", "site_link_share", "site_container_share", "site_new_share")
#: :data:`~scrapy_detemplate.methods.names.NAME_FEATURES` last: learned class/id names, filled on a
#: site's first page only (0.0 elsewhere, and in the rows the known-site trees are fitted on).
FEATURES = (*PAGE_FEATURES, *SITE_FEATURES, *KIND_FEATURES, *GENRE_FEATURES, *NAME_FEATURES)
_NAMES_AT = FEATURES.index(NAME_FEATURES[0])
#: The state namespace of the genre columns: per site, the shares of its last DF_WINDOW pages.
NAMESPACE = "combined"
#: A site's first page is scored in log-odds ``FIRST_PAGE_SCALE * z + FIRST_PAGE_SHIFT``, ``z`` the mean of
#: both forests' (:func:`model_forests`).  Fitted on sites never seen: a logistic fit of the gold on the
#: out-of-fold log-odds of the other folds' first pages, per fold of two splits of the sites, gave slopes
#: 0.69-0.74 and intercepts -0.06 to -0.18 (these are their means).  The trees, fitted on the lines of
#: pages whose sites they have seen, are too sure on a page of a site never seen; tempered, the
#: expected-F1 cut keeps the lines it is unsure of, and the wcxb-dev sites more than 0.03 below keeping
#: every line fall from 15 / 17 to 10 / 8 (docs/methods/combined.md, "A site's first page, tempered").
FIRST_PAGE_SCALE = 0.72
FIRST_PAGE_SHIFT = -0.13
_WARM_DF = FEATURES.index("site_df_when_warm")
_KINDS_AT = FEATURES.index(KIND_FEATURES[0])
#: Where the cut keeps new text on a known site (``_keeps_new_text``): a page that declares a product
#: (``kinds.kind_flags``), and a site whose earlier pages hold at least CODE_SITE of their words in code.
_KIND_PRODUCT, _SITE_CODE = FEATURES.index("kind_product"), FEATURES.index("site_code_share")
#: The page declares a discussion: a ``Question`` among its types, which :func:`questions_and_answers` reads.
_KIND_DISCUSSION = FEATURES.index("kind_discussion")
CODE_SITE = 0.02
_LINK_DENSITY, _IN_CONTAINER, _LOG_WORDS = (FEATURES.index(f) for f in ("link_density", "in_container", "log_words"))
#: A line's size to the cut: its characters, ``expm1`` of this feature (``log1p`` of them).
_LOG_CHARS = FEATURES.index("log_chars")
_MENU_WORDS = math.log1p(3)
_SITE_DF, _IN_LCS, _PAGES_SEEN = (FEATURES.index(f) for f in ("site_df", "in_sandwich_lcs", "log_pages_seen"))
#: Page furniture around a line: a readability "unlikely candidate" ancestor, a ``<nav>``, an ``<aside>``.
_UNLIKELY, _UNDER_NAV, _UNDER_ASIDE = (FEATURES.index(f) for f in ("unlikely", "under_nav", "under_aside"))
#: A ``<button>`` around a line: with ``<nav>``, furniture even inside the main container (``_repeated_furniture``).
_UNDER_BUTTON = FEATURES.index("under_button")
#: A sentence of at least this many words (``log1p``) on nearly every earlier page is template even inside
#: the container (``_repeated_furniture``): a notice or a plea under every story, never an API entry's
#: ``Parameters`` or a table's column names.
_REPEATED_SENTENCE = math.log1p(10)
#: A line new on a site seen for at least 3 pages (DF share at most NEW_DF, not in the LCS, link
#: density below NEW_LINK_DENSITY) is removed only below the page's cut minus UNIQUE_MARGIN (``decide``).
_KNOWN_SITE = math.log1p(3) / 4
NEW_DF = 0.2
NEW_LINK_DENSITY = 0.5
UNIQUE_MARGIN = 0.1
#: Lines under at least two elements whose class/id names a comment thread (``comment_words`` is
#: ``min(count, 3) / 3``) are a thread; when the page keeps less than THREAD_ONLY_CHARS characters of
#: anything else and the thread's cut sentences hold THREAD_RATIO times that, the thread is the page.
_COMMENT_WORDS, _ENDS_SENTENCE, _UNDER_PRE = (
    FEATURES.index(f) for f in ("comment_words", "ends_sentence", "under_pre")
)
THREAD_WORDS = 0.5
THREAD_ONLY_CHARS = 150.0
THREAD_RATIO = 2.0
#: On a site's first pages (fewer than 3 seen before), the page's cut weighs its expected content F1 at
#: 1 - KEEP_WEIGHT and the share of the page it keeps at KEEP_WEIGHT (:func:`expected_f1_cut`): with no
#: site evidence yet, among lines the trees doubt, the cut errs toward keeping (0.15 before the first-page
#: trees and the lexicon of names; docs/methods/combined.md, "The cut on a site's first pages, again").
KEEP_WEIGHT = 0.2
#: The same lean on a site's first pages when the page declares one product (a shop's product page,
#: :func:`keep_weight`): less, as what such a page holds besides its product is a shop's furniture.
PRODUCT_KEEP_WEIGHT = 0.1
#: How many earlier pages of a site the DF share is taken over, at most.
DF_WINDOW = 20
#: The compiled per-line loop of ``site_features``, the rows in C and the decision on them
#: (``_site.pyx``), or ``None``: the Python ones run.
_compiled = _compiled_modules.load("scrapy_detemplate.methods._site")
#: What ``decide_rows`` reads: the columns of ``decide``'s rules, and their bounds.
_COLUMNS = (
    _WARM_DF, _IN_CONTAINER, _LINK_DENSITY, _LOG_WORDS, _PAGES_SEEN, _SITE_DF, _IN_LCS, _UNLIKELY, _UNDER_NAV,
    _UNDER_ASIDE, _COMMENT_WORDS, _ENDS_SENTENCE, _UNDER_PRE, _UNDER_BUTTON, _KIND_PRODUCT, _SITE_CODE, _LOG_CHARS,
)  # fmt: skip


def _limits(lean: float) -> tuple[float, ...]:
    """What ``decide_rows`` reads of :func:`decide`'s bounds, the first pages' cut leaning toward keeping by
    ``lean`` (:func:`keep_weight`)."""
    return (
        _MENU_WORDS, _KNOWN_SITE, NEW_DF, NEW_LINK_DENSITY, UNIQUE_MARGIN, THREAD_WORDS, THREAD_ONLY_CHARS,
        THREAD_RATIO, lean, _REPEATED_SENTENCE, CODE_SITE,
    )  # fmt: skip


#: What :func:`page_shares` reads: a line's words (``log1p``), its code, table, link, container and
#: newness columns.
_SHARE_COLUMNS = (
    _LOG_WORDS, FEATURES.index("under_pre"), FEATURES.index("under_code"), FEATURES.index("under_td"), _LINK_DENSITY,
    _IN_CONTAINER, _SITE_DF, _IN_LCS,
)  # fmt: skip


def line_features_into(root: etree._Element, lines: list[Line], title: str, rows: FeatureRows) -> bool:
    """:func:`~scrapy_detemplate.methods.density.line_features` written into the first columns of
    ``rows``, compiled; ``False`` when it was not (no compiled module, or a page it hands back)."""
    if _density._compiled is None:
        return False
    return bool(_density._compiled.line_features_into(root, lines, title, rows))


def decide_rows(
    rows: FeatureRows,
    scorer: ForestScorer,
    threshold: float,
    site_df: float,
    columns: tuple[int, ...],
    limits: tuple[float, ...],
) -> frozenset[int]:
    """:func:`decide` on rows in C (``_site.decide_rows``; only with the compiled module)."""
    assert _compiled is not None
    template: frozenset[int] = _compiled.decide_rows(rows, scorer, threshold, site_df, columns, limits)
    return template


def load_forest(path: str = "") -> Forest:
    """The model at ``path``, or the one shipped in the package (``ValueError``
    or ``OSError`` when the file is missing, unreadable or not a model)."""
    return load_forests(path)[0]


def load_forests(path: str = "") -> tuple[Forest, Forest]:
    """The forests of the model at ``path`` (or the shipped one): for a page of a site already
    seen, and for a site's first page.  A model with a ``first_pages`` forest (trees fitted on
    sites' first pages only, :func:`~scrapy_detemplate.train_combined.fit_model`) scores a first
    page with the mean of both in log-odds (:func:`mean_forest`), tempered (:data:`FIRST_PAGE_SCALE`);
    without one (a model trained before), the one forest scores every page.  ``ValueError`` or
    ``OSError`` when the file is missing, unreadable or not a model."""
    return model_forests(read_model(path), path or "(shipped)")


def read_model(path: str = "") -> object:
    """The model file at ``path`` (or the shipped one) as read from its JSON."""
    if path:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    return json.loads(resources.files("scrapy_detemplate.data").joinpath("combined_model.json").read_text())


def model_names(data: object, name: str = "") -> dict[str, float]:
    """The model's lexicon of class/id names (:mod:`~scrapy_detemplate.methods.names`; empty for a
    model trained without one: the name columns then stay 0.0)."""
    lexicon = data.get("names", {}) if isinstance(data, dict) else {}
    if not valid_lexicon(lexicon):
        raise ValueError(f"model {name}'s names are not a lexicon of names to numbers")
    return cast("dict[str, float]", lexicon)


def fill_names(rows: list[list[float]], lines: Sequence[Line], known: KnownNames) -> None:
    """The name columns of a site's first page's ``rows``, from ``known``'s lexicon (none: left 0.0)."""
    if known.lexicon and on_first_page(rows):
        for row, names in zip(rows, page_columns(lines, known), strict=True):
            row[_NAMES_AT:] = names


def model_forests(data: object, name: str = "") -> tuple[Forest, Forest]:
    """:func:`load_forests` of a model already read (``data``, as ``train-combined`` writes it)."""
    if not isinstance(data, dict):
        raise ValueError(f"model {name} is not a forest model")
    forest = Forest(data)
    first = Forest(data["first_pages"]) if data.get("first_pages") is not None else None
    for one in (forest, first):
        if one is not None and one.features != FEATURES:
            raise ValueError(f"model {name} was trained on other features than this version computes")
    return forest, (mean_forest(forest, first, FIRST_PAGE_SCALE, FIRST_PAGE_SHIFT) if first is not None else forest)


def scorers(forests: tuple[Forest, Forest]) -> tuple[Scorer, Scorer]:
    """:meth:`Forest.scorer` of :func:`model_forests`' two forests (one scorer when they are one)."""
    known, first = forests
    scorer = known.scorer()
    return scorer, (scorer if first is known else first.scorer())


def first_page(value: float) -> bool:
    """Whether a row's ``log_pages_seen`` is a site's first page (no earlier page of it seen)."""
    return value == 0.0


def on_first_page(rows: Sequence[Sequence[float]]) -> bool:
    """Whether a page's feature rows (:meth:`CombinedEvidence.features`) are a site's first page's."""
    return bool(rows) and first_page(rows[0][_PAGES_SEEN])


class CombinedEvidence:
    """Computes :data:`FEATURES` for the lines of pages taken in crawl order."""

    def __init__(self, config: DetemplateConfig, store: StateStore) -> None:
        self._sandwich = SandwichRunner(dataclasses.replace(config, sandwich_unit="text"), store)
        self._segments = SegmentsRunner(dataclasses.replace(config, segments_first_pages="none"), store)
        self._store = store

    def features(self, page: ParsedPage) -> list[list[float]]:
        """Feature vectors of the page's lines; updates the site state (one call per page)."""
        title = page.root.findtext(".//title") or ""
        rows = line_features(page.root, page.lines, title)
        for row, site in zip(rows, self.site_features(page), strict=True):
            row += site
        # the genre follows the kinds
        columns = kind_flags(page.declared_names) + self.genre(page.site, page_shares(rows))
        columns += [0.0] * len(NAME_FEATURES)  # filled by the runner on a first page (:func:`fill_names`)
        for row in rows:
            row += columns
        return rows

    def seen(self, site: str) -> bool:
        """Whether an earlier page of ``site`` (one with words) is in the site state."""
        return bool(_earlier_shares(self._store.get(NAMESPACE, site))[0])

    def genre(self, site: str, shares: list[float] | None) -> list[float]:
        """The :data:`GENRE_FEATURES` of a page of ``site`` (the mean shares of its earlier pages);
        then the page's own ``shares`` join the site's state (none: a page without words)."""
        earlier, columns = _earlier_shares(self._store.get(NAMESPACE, site))
        if shares is not None:
            self._store.set(NAMESPACE, site, cast("Value", [*earlier, shares][-DF_WINDOW:]))
        return columns

    def feature_rows(self, page: ParsedPage, rows: FeatureRows | None = None) -> FeatureRows:
        """:meth:`features` in one C array (:class:`FeatureRows`), never as Python floats: the
        same numbers, the same site state updates.  Only with the compiled ``_site`` module.
        Written into ``rows`` when given (an earlier page's, its memory kept), else new ones."""
        assert _compiled is not None
        if rows is None:
            rows = _compiled.FeatureRows(len(page.lines), len(FEATURES))
        else:
            rows.reshape(len(page.lines))
        title = page.root.findtext(".//title") or ""
        if not line_features_into(page.root, page.lines, title, rows):
            rows.set_columns(line_features(page.root, page.lines, title), 0)
        self.site_features_into(page, rows)
        genre = self.genre(page.site, _compiled.page_shares(rows, _SHARE_COLUMNS, NEW_DF))
        rows.set_columns([kind_flags(page.declared_names) + genre] * len(page.lines), _KINDS_AT)  # genre after kinds
        return rows

    def site_features(self, page: ParsedPage) -> list[list[float]]:
        """The :data:`SITE_FEATURES` of the page's lines; updates the site state.

        A line's DF share is weighted by characters over its segments: a line
        of code whose keywords (``def``, ``return``) or a signature whose
        ``click to toggle source`` stand on every page of a documentation site
        is still mostly new text, and a line is only as repeated as most of it.
        """
        matched = self._sandwich.observe(page)[2]
        seg, dfs, clock = self._segments.observe(page, elements=False)  # the blocks' elements are not read
        window, log_seen, warm = _site_clock(clock)
        if _compiled is not None:
            rows: list[list[float]] = _compiled.site_rows(
                seg.keys, seg.lengths, seg.lines, dfs, len(page.lines), window, matched, log_seen, warm
            )
            return rows
        return _site_rows_py(seg, dfs, len(page.lines), window, matched, log_seen, warm)

    def site_features_into(self, page: ParsedPage, rows: FeatureRows) -> None:
        """:meth:`site_features` written into the last columns of ``rows`` (the DFs read from
        a list beside the segment keys, not from a dict)."""
        matched = self._sandwich.observe(page)[2]
        seg, each, clock = self._segments.observe_each(page)
        window, log_seen, warm = _site_clock(clock)
        rows.site_columns(seg.keys, seg.lengths, seg.lines, each, window, matched, log_seen, warm, len(PAGE_FEATURES))


def page_shares(rows: Sequence[Sequence[float]]) -> list[float] | None:
    """The shares of a page's words (a line's words are ``expm1`` of its ``log_words``) in code
    (under ``<pre>`` or ``<code>``), in table cells, in links, in the main container and new on
    the site (DF share at most NEW_DF, not in the Sandwich LCS); ``None`` for a page without words.

    What kind of site a page stands on shows in them: documentation sites hold code and new text,
    old news layouts table cells, shops and listings links.  Averaged over a site's earlier pages,
    they are :data:`GENRE_FEATURES`.  Compiled (``_site.page_shares``) on the rows kept in C.
    """
    words, under_pre, under_code, under_td, link, in_container, site_df, in_lcs = _SHARE_COLUMNS
    total = code = table = links = inside = new = 0.0
    for row in rows:
        try:
            w = math.expm1(row[words])
        except OverflowError:  # C's expm1 gives infinity (and the shares are then None)
            w = math.inf
        total += w
        code += w * (1.0 if (row[under_pre] or row[under_code]) else 0.0)
        table += w * (1.0 if row[under_td] else 0.0)
        links += w * row[link]
        inside += w * (1.0 if row[in_container] else 0.0)
        new += w * (1.0 if (row[site_df] <= NEW_DF and not row[in_lcs]) else 0.0)
    shares = [code / total, table / total, links / total, inside / total, new / total] if total > 0.0 else []
    return shares if shares and all(map(math.isfinite, shares)) else None


def _earlier_shares(stored: Value) -> tuple[list[list[float]], list[float]]:
    """The shares of a site's earlier pages as stored, and :data:`GENRE_FEATURES`, their means; none
    and -1.0 each when there are none or the value is not ours (a cold start).

    Read on every page, so checked in the pass that averages it (what :func:`valid_state` asks of a
    loaded state, but for a ``bool`` counted as a number): lists of the right lengths, numbers
    whose means are finite.
    """
    width = len(GENRE_FEATURES)
    if (
        isinstance(stored, list)
        and 0 < len(stored) <= DF_WINDOW
        and all(type(shares) is list and len(shares) == width for shares in stored)
    ):
        try:
            means = [sum(column) / len(stored) for column in zip(*stored, strict=True)]  # type: ignore[arg-type]
        except (TypeError, OverflowError):  # not numbers, or an int no float holds
            means = []
        if means and all(map(math.isfinite, means)):
            return cast("list[list[float]]", stored), means
    return [], [-1.0] * width


def valid_state(value: object) -> bool:
    """Whether ``value`` is a site's state as :meth:`CombinedEvidence.genre` writes it: the
    shares of at most DF_WINDOW pages, each as many numbers from 0 to 1 as :data:`GENRE_FEATURES`
    (compared, not converted: an ``int`` too large for a float is refused, not raised on)."""
    return (
        isinstance(value, list)
        and len(value) <= DF_WINDOW
        and all(
            isinstance(shares, list)
            and len(shares) == len(GENRE_FEATURES)
            and all(type(x) in (float, int) and 0.0 <= x <= 1.0 for x in shares)
            for shares in value
        )
    )


def _site_clock(clock: int) -> tuple[int, float, float]:
    """What the site features take from the site's clock (its pages seen, this one included):
    the DF window, the log of the earlier pages and how warm the site is."""
    seen = clock - 1  # earlier pages of the site
    return min(seen, DF_WINDOW), math.log1p(seen) / 4, min(1.0, seen / 5)


def _site_rows_py(
    seg: Segmentation,
    dfs: dict[str, int],
    count: int,
    window: int,
    matched: list[int] | None,
    log_seen: float,
    warm: float,
) -> list[list[float]]:
    """The reference per-line loop of :meth:`CombinedEvidence.site_features` (compiled in ``_site.pyx``)."""
    repeated = [0.0] * count  # characters weighted by their segment's DF share
    chars = [0] * count
    if window:
        for key, length, line in zip(seg.keys, seg.lengths, seg.lines, strict=True):
            repeated[line] += length * min((dfs.get(key, 1) - 1) / window, 1.0)
            chars[line] += length
    in_lcs = set(matched or ())
    out = []
    for i in range(count):
        share = repeated[i] / chars[i] if chars[i] else 0.0
        out.append([share, 1.0 if i in in_lcs else 0.0, 0.0 if matched is None else 1.0, log_seen, share * warm])
    return out


class CombinedRunner:
    name = "combined"

    def __init__(self, config: DetemplateConfig, store: StateStore) -> None:
        self._config = config
        self._evidence = CombinedEvidence(config, store)
        try:
            data = read_model(config.combined_model)
            name = config.combined_model or "(shipped)"
            forests = model_forests(data, name)
            self._names = KnownNames(model_names(data, name))
        except (OSError, ValueError) as exc:  # at start-up, naming the setting, not a bare traceback
            raise unusable_model("DETEMPLATE_COMBINED_MODEL", config.combined_model, "train-combined", exc) from exc
        # A site's first page: the first-page trees and the others, averaged (:func:`load_forests`).
        self._probabilities, self._first_probabilities = scorers(forests)
        self._threshold = config.combined_threshold
        self._site_df = config.combined_site_df
        # The compiled scorers decide on rows kept in C (:meth:`_decide_compiled`); else Python lists.
        self._scorer = getattr(self._probabilities, "__self__", None)
        self._first_scorer = getattr(self._first_probabilities, "__self__", None)
        if _compiled is None or not (
            isinstance(self._scorer, _compiled.ForestScorer) and isinstance(self._first_scorer, _compiled.ForestScorer)
        ):
            self._scorer = self._first_scorer = None
        # The rows' memory, kept from page to page (a large malloc after a parse costs); a page
        # decided meanwhile (another thread) takes its own.
        self._kept_rows: FeatureRows | None = None
        self._rows_free = threading.Lock()

    def seen(self, site: str) -> bool:
        """Whether the site state holds an earlier page of ``site`` (else the next is its first page)."""
        return self._evidence.seen(site)

    def on_store(self, store: StateStore) -> CombinedRunner:
        """The same model and settings over another store: pages cleaned apart from the crawl's
        state, which they neither read nor change (:meth:`Detemplater.clean_with_peers`)."""
        twin = copy.copy(self)
        twin._evidence = CombinedEvidence(self._config, store)
        twin._kept_rows = None
        twin._rows_free = threading.Lock()
        return twin

    def run(self, page: ParsedPage) -> Verdict:
        if self._scorer is not None:
            template = self._decide_compiled(page)
        else:
            rows = self._evidence.features(page)
            fill_names(rows, page.lines, self._names)
            probabilities = self._first_probabilities if on_first_page(rows) else self._probabilities
            template = decide(rows, probabilities, self._threshold, self._site_df, keep_weight(page.declared_names))
            template = _as_the_page_says(page, template, *(declaring_kinds(rows[0]) if rows else (False, False)))
            template = _settle(page.lines, template, *copy_flags(rows))
        if not template:
            return Verdict(detail="all_content")
        if len(template) == len(page.lines):
            return Verdict(detail="all_template")  # keep the page whole rather than return nothing
        return Verdict(template_lines=template)

    def _decide_compiled(self, page: ParsedPage) -> frozenset[int]:
        """:func:`decide` on the page's :meth:`CombinedEvidence.feature_rows`: the same lines,
        the rows kept in C from the evidence to the trees (``_site.pyx``)."""
        kept = self._rows_free.acquire(blocking=False)
        try:
            rows = self._evidence.feature_rows(page, self._kept_rows if kept else None)
            if kept:
                self._kept_rows = rows
            first = bool(page.lines) and first_page(rows.value(0, _PAGES_SEEN))
            if first and self._names.lexicon:
                page_columns_into(page.lines, self._names, rows, _NAMES_AT)
            scorer = self._first_scorer if first else self._scorer
            limits = _limits(keep_weight(page.declared_names))
            template = decide_rows(rows, scorer, self._threshold, self._site_df, _COLUMNS, limits)
            kinds = (bool(page.lines) and bool(rows.value(0, j)) for j in (_KIND_PRODUCT, _KIND_DISCUSSION))
            template = _as_the_page_says(page, template, *kinds)  # the C rows: declaring_kinds's columns
            return _settle(
                page.lines,
                template,
                lambda i: bool(rows.value(i, _IN_CONTAINER)),
                lambda i: bool(rows.value(i, _UNDER_PRE)),
            )
        finally:
            if kept:
                self._rows_free.release()


#: What a page declares of its lines (:func:`declared`): the customer reviews that go, the questions and
#: answers that stay.
Declared = tuple[frozenset[int], frozenset[int]]
NOTHING_DECLARED: Declared = (frozenset(), frozenset())


def declaring_kinds(row: Sequence[float]) -> tuple[bool, bool]:
    """What :func:`declared` reads by, from any row of the page (the kinds are the page's): its
    ``kind_product`` and ``kind_discussion`` columns."""
    return bool(row[_KIND_PRODUCT]), bool(row[_KIND_DISCUSSION])


def declared(page: ParsedPage, product: bool, discussion: bool) -> Declared:
    """What the page declares for search engines of its own lines: a product's customer reviews
    (:func:`customer_reviews`) and its questions and answers (:func:`questions_and_answers`).
    ``product`` and ``discussion`` are its kinds' columns: a page with neither reads nothing."""
    return customer_reviews(page, product), questions_and_answers(page, discussion)


def with_declared(template: frozenset[int], lines: Declared) -> frozenset[int]:
    """``template`` with the declared reviews and without the declared questions and answers."""
    reviews, answers = lines
    return (template | reviews) - answers if reviews or answers else template


def _as_the_page_says(page: ParsedPage, template: frozenset[int], product: bool, discussion: bool) -> frozenset[int]:
    """The cut's ``template`` with what the page says of its own lines: the furniture it marks goes (its
    dialogs, footer landmark and widgets: :func:`furniture_lines`), then its declared customer reviews go
    and its declared questions and answers stay (:func:`declared`)."""
    return with_declared(template | furniture_lines(page.lines, page.root), declared(page, product, discussion))


def questions_and_answers(page: ParsedPage, discussion: bool) -> frozenset[int]:
    """The lines that are one of the questions and answers the page declares (JSON-LD ``Question``:
    a ``FAQPage``'s, a ``QAPage``'s; :func:`~scrapy_detemplate.methods.kinds.answer_lines`): content,
    whatever the trees and the site say.  The page says they are its text, and the trees, on a
    service page's or a shop's list of questions (short lines, often in a collapsed block outside
    the main container), cut them: of the words of those lines over the four corpora, 77% are gold,
    and the cut took 2,795 words of them (76% gold) on sites never seen.  Measured on sites never seen
    (docs/methods/combined.md, "What a page declares of its own text").

    Read only on a page whose ``kind_discussion`` column is set (``discussion``): every page that
    declares a ``Question`` has it, and the page's source is not searched again."""
    if not discussion:
        return frozenset()
    answers = declared_answers(page.html, page.root)
    return answer_lines([line.text for line in page.lines], answers) if answers else frozenset()


def customer_reviews(page: ParsedPage, product: bool) -> frozenset[int]:
    """The lines of a page that declares a product (``product``: its ``kind_product`` column) that are
    its customers' reviews, as the page declares them for search engines (JSON-LD ``reviewBody``,
    microdata ``itemprop="reviewBody"``; :func:`~scrapy_detemplate.methods.kinds.review_lines`):
    template, whatever the trees say.  A product's content is what the shop says of it; WCXB's product
    gold leaves its reviews out (none of the 1,765 words of the 39 lines so matched on 5 shops' product
    pages), and the trees, with no site evidence on a shop's first page, keep them (sentences in the
    main container).
    A review printed over more than two lines is an editor's, the page's own text, and stays.
    Measured on sites never seen (docs/methods/combined.md, "What a page declares of its own text")."""
    if not product:
        return frozenset()
    reviews = declared_reviews(page.html, page.root)
    return review_lines([line.text for line in page.lines], reviews) if reviews else frozenset()


def copy_flags(rows: list[list[float]]) -> tuple[Callable[[int], bool], Callable[[int], bool]]:
    """What :func:`drop_copies` asks of a line, read from its row: inside the page's main container,
    and in a ``<pre>``."""
    return lambda i: bool(rows[i][_IN_CONTAINER]), lambda i: bool(rows[i][_UNDER_PRE])


def _settle(
    lines: Sequence[Line], template: frozenset[int], inside: Callable[[int], bool], code: Callable[[int], bool]
) -> frozenset[int]:
    """``decide``'s template after the two rules on the page's lines: table rows whole, then copies."""
    template = keep_table_rows_whole(lines, template)
    return drop_copies([line.text for line in lines], template, inside, code)


def keep_weight(declared: Sequence[str]) -> float:
    """How far the cut leans toward keeping on a site's first pages (:func:`decide`; on a known site it does
    not lean): :data:`KEEP_WEIGHT`, or :data:`PRODUCT_KEEP_WEIGHT` on a page that declares one product
    (``declared``: the names the page declares, :attr:`ParsedPage.declared_names`;
    :func:`~scrapy_detemplate.methods.kinds.about_one_product`: one ``Product``, or one ``ProductGroup`` of
    variants, and no list of items).

    A shop's product page, the first of its site, is what the lean toward keeping serves worst: the trees
    doubt its furniture (a warranty's pitch, the sales team's blurbs, "Complete the look", a cart) as much
    as its product, and the lean keeps both.  A page that declares one product says what it is about.
    Measured on sites never seen (docs/methods/combined.md, "A shop's product page: the cut leans less")."""
    return PRODUCT_KEEP_WEIGHT if about_one_product(declared) else KEEP_WEIGHT


def decide(
    rows: list[list[float]],
    probabilities: Callable[[list[list[float]]], Sequence[float]],
    threshold: float,
    site_df: float,
    lean: float = KEEP_WEIGHT,
) -> frozenset[int]:
    """The template lines: decided outright, or below the page's :func:`expected_f1_cut`.

    ``probabilities`` gives the probability of content of each of the rows it
    is given (:meth:`Forest.scorer`); it is asked, in one call, about the rows
    not decided outright.

    Two kinds of line are template whatever the trees say.  Site evidence is
    decisive when it is overwhelming: a line that stood on nearly every earlier
    page of the site (after a few pages), unless it is text inside the page's
    main container (a documentation page's ``Parameters`` and ``Returns``, a
    table's column names: the trees still weigh those); a sentence of ten words or more
    goes there too (a notice or a plea under every story).  And a menu entry: a line of at most
    three words, all of it link text, outside the page's main container, that the
    site has shown before or that sits in page furniture (a ``<nav>``, an ``<aside>``,
    readability's unlikely candidates).  (The trees, weighted by words, care little
    about one-word lines; this rule leaves no stray menu words behind.)  A short link
    the site has not shown before, elsewhere, is left to the trees, on a site's first
    page too: where the main container was missed it is the page's own contents, a
    documentation page's members, a listing's items, a job board's offers
    (:func:`_menu_entry`).

    The other lines go below the page's own cut (:func:`expected_f1_cut`), and never
    at or above ``threshold``.  A page the trees are sure of is cut near 0.5; a page
    they are unsure of (a forum thread, a listing, a shop's grid, a site's first
    page) is cut lower, so more of it is kept: when the evidence is weak, the line
    stays.  One kind needs stronger page evidence still: on a site seen for a few
    pages, a line of text (not links) that site evidence calls new, on no earlier
    page and not in the Sandwich LCS, goes only below the cut minus
    :data:`UNIQUE_MARGIN`.  What repeats across a site's pages is template on any
    genre; what is new on a documentation page is its content, and page evidence
    alone, learned mostly from news, is weak there.  On a page that declares a
    product (:mod:`~scrapy_detemplate.methods.kinds`) the cut keeps such a line
    whatever the trees say: a shop's furniture repeats from product to product, and
    what is new is the product (its description, its specifications), which trees
    that learned from news, where the new text under a story is its comments, cut.
    Measured on sites never seen (two splits): products 0.592 -> 0.606 and 0.602 ->
    0.612, wcxb-dev micro +0.0009 / +0.0005, dragnet10 -0.0008 / -0.0009, c2f and docs
    level (docs/methods/combined.md, "New text on a known site").  The same on a site
    whose earlier pages hold code (at least :data:`CODE_SITE` of their words in ``<pre>``
    or ``<code>``: documentation, programming tutorials), outside page furniture: its new
    text is an API entry, a signature, an example, and trees that never saw its genre cut
    it.  Measured with documentation as a genre never seen (trained on the other corpora),
    on the out-of-fold scores: docs 0.906 -> 0.942; on sites never seen docs +0.0001, the
    other corpora unchanged (docs/methods/combined.md, "A site that shows code").
    On a site's first pages, with no
    site evidence at all, the cut leans toward keeping (``lean``: :data:`KEEP_WEIGHT`, less on a shop's
    product page, :func:`keep_weight`).  Code (the lines of a
    ``<pre>``, not mostly links) the cut never takes (:func:`_code`).
    A comment thread on a page that has nothing else (:func:`_unless_the_thread_is_the_page`)
    keeps the text lines the cut would take.
    """
    template: list[int] = []
    pending: list[int] = []
    for i, row in enumerate(rows):
        if _repeated_furniture(row, site_df) or _menu_entry(row):
            template.append(i)
        else:
            pending.append(i)
    if pending:
        scores = list(probabilities([rows[i] for i in pending]))
        sizes = [math.expm1(rows[i][_LOG_CHARS]) for i in pending]
        weight = lean if rows[pending[0]][_PAGES_SEEN] < _KNOWN_SITE else 0.0  # a site's first pages
        cut = min(expected_f1_cut(scores, sizes, weight), threshold)
        below: list[int] = []
        thread: list[int] = []  # the comment thread's text lines under the cut
        others = 0.0  # the kept lines' characters outside comment threads, in the order of the lines
        cut_thread = kept_thread = 0.0  # the thread's text lines under the cut and above it, in characters
        for i, p, size in zip(pending, scores, sizes, strict=True):
            new = _new_text_on_a_known_site(rows[i])
            if (
                p < (cut - UNIQUE_MARGIN if new else cut)
                and not _code(rows[i])
                and not (new and _keeps_new_text(rows[i]))
            ):
                below.append(i)
                if _thread_text(rows[i]):
                    thread.append(i)
                    cut_thread += size
            elif rows[i][_COMMENT_WORDS] < THREAD_WORDS:
                if others < THREAD_ONLY_CHARS:
                    others += size
            elif _thread_text(rows[i]):
                kept_thread += size
        template += _unless_the_thread_is_the_page(below, thread, others, cut_thread, kept_thread)
    return frozenset(template)


def _unless_the_thread_is_the_page(
    below: list[int], thread: list[int], others: float, cut_thread: float, kept_thread: float
) -> list[int]:
    """``below`` (the lines under the page's cut) without ``thread``, a comment thread's text
    lines among them, when the thread is all the page has: a link aggregator's thread page
    (lobste.rs, whose story is a title and a link), a forum whose posts are ``comment`` records.
    On a news page the thread under the story is not content, and there the story keeps more
    than :data:`THREAD_ONLY_CHARS`.  Only the thread's sentences and code come back (lines that
    end like a sentence or stand in a ``<pre>``, mostly text: :func:`_thread_text`): a forum's
    signatures and profile fields (a member's rig, "Posted March 19, 2024") stay cut.
    ``others`` is what the page keeps outside the thread, in characters (counted up to
    :data:`THREAD_ONLY_CHARS`); the thread weighs its text lines, those the cut takes
    (``cut_thread``) and those it keeps (``kept_thread``: a forum thread the trees keep but for
    one short reply between two rows of buttons), in characters."""
    if cut_thread <= 0.0 or others >= THREAD_ONLY_CHARS or cut_thread + kept_thread < THREAD_RATIO * max(others, 1.0):
        return below
    keep = set(thread)
    return [i for i in below if i not in keep]


def expected_f1_cut(probabilities: Sequence[float], sizes: Sequence[float], keep_weight: float = 0.0) -> float:
    """The probability below which a page's lines go, so that its expected content F1 is highest.

    With each line content with its probability ``p`` (the trees' out-of-site
    estimate) and weighing its length, the expected gold is ``G = sum(p * size)``;
    keeping the lines of probability at least ``c`` has expected F1 about
    ``2 * sum(p * size) / (sum(size) + G)`` over the kept lines (the plug-in
    estimate; Lipton et al. 2014, "Optimal thresholding of classifiers to maximize
    F1 measure": the best threshold is half the best F1 reached).  Lines are taken
    from the most probable down, a group of equal probabilities at a time; the cut is
    the probability of the last group of the best prefix (1.0, removing nothing, with
    no lines).  Measured on
    sites never seen against a fixed 0.45 with a first-page margin and a collapse
    rule (docs/methods/combined.md): wcxb-dev micro 0.855 -> 0.863, c2f 0.946 ->
    0.950, dragnet10 0.928 -> 0.929, docs 0.954 -> 0.953.

    ``keep_weight`` (the runner's :data:`KEEP_WEIGHT`) mixes the share of the page
    kept into what is maximised, ``(1 - keep_weight) * F1 + keep_weight * kept share``:
    a prefix that keeps more wins a near tie.  The trees, trained on labels that give
    each gold word to one line only, are sure of less than the plain expected F1
    needs to keep a doubtful block; ``decide`` passes :data:`KEEP_WEIGHT` on a site's
    first pages (none on a known site, whose own evidence decides).  Measured on sites
    never seen (two splits of the sites), 0.15 against none: the wcxb-dev first pages
    more than 0.03 below keeping every line go from 47 to 29 and 35, wcxb-dev micro
    +0.0002 and +0.0009, c2f, dragnet10 and docs within 0.0015; 0.2 against 0.15 with
    today's trees: 27 and 25 -> 17 and 17, micro level (docs/methods/combined.md).
    """
    order = sorted(range(len(probabilities)), key=lambda i: (-probabilities[i], i))
    gold = total = 0.0
    for i in order:
        gold += probabilities[i] * sizes[i]
        total += sizes[i]
    best, cut, kept, size = -1.0, 1.0, 0.0, 0.0
    for k, i in enumerate(order):
        kept += probabilities[i] * sizes[i]
        size += sizes[i]
        if k + 1 < len(order) and probabilities[order[k + 1]] == probabilities[i]:
            continue  # lines of equal probability are kept or removed together
        f1 = 2.0 * kept / (size + gold) if size + gold > 0 else 0.0
        if keep_weight:
            f1 = (1.0 - keep_weight) * f1 + keep_weight * (size / total if total > 0 else 0.0)
        if f1 > best:
            best, cut = f1, probabilities[i]
    return cut


def _repeated_furniture(row: list[float], site_df: float) -> bool:
    """A line on nearly every earlier page of a warm site, outside the main container or, inside
    it, mostly links, in a ``<nav>`` or a ``<button>``, or a sentence of ten words or more: the warm
    DF decides it alone."""
    return row[_WARM_DF] >= site_df and bool(
        not row[_IN_CONTAINER]
        or row[_LINK_DENSITY] >= 0.5
        or row[_UNDER_NAV]
        or row[_UNDER_BUTTON]
        or (row[_LOG_WORDS] >= _REPEATED_SENTENCE and row[_ENDS_SENTENCE])
    )


def _menu_entry(row: list[float]) -> bool:
    """A short line of links outside the main container that is not new on the site, or sits in furniture.

    Every line of a site's first page is new: there, only furniture decides.  (Until this
    version any such line of a first page went; on sites never seen, two splits, wcxb-dev
    micro F1 0.8703 -> 0.8711 and 0.8691 -> 0.8700, collection +0.007 / +0.009, listing
    +0.004 / +0.006, c2f, dragnet10 and docs within 0.0002: docs/methods/combined.md.)"""
    if not (row[_LINK_DENSITY] >= 0.99 and not row[_IN_CONTAINER] and row[_LOG_WORDS] <= _MENU_WORDS):
        return False
    new = row[_SITE_DF] <= NEW_DF and not row[_IN_LCS]
    return not new or bool(row[_UNLIKELY] or row[_UNDER_NAV] or row[_UNDER_ASIDE])


def _code(row: list[float]) -> bool:
    """A line of a ``<pre>`` that is not mostly links: code, a shell session, a listing.  The cut never
    takes it (only the rules decided outright, and :func:`drop_copies`, remove it).  The trees, trained
    mostly on news, where a ``<pre>`` is rare, score code low on a page they have not seen: a blog's
    code sample, a documentation page's examples.  Measured on sites never seen (docs/methods/combined.md,
    "Code is kept")."""
    return bool(row[_UNDER_PRE] and row[_LINK_DENSITY] < NEW_LINK_DENSITY)


def _thread_text(row: list[float]) -> bool:
    return bool(
        row[_COMMENT_WORDS] >= THREAD_WORDS
        and (row[_ENDS_SENTENCE] or row[_UNDER_PRE])
        and row[_LINK_DENSITY] < NEW_LINK_DENSITY
    )


def _keeps_new_text(row: list[float]) -> bool:
    """Whether the cut keeps the line if it is new text on a known site, whatever the trees say: on a
    page that declares a product, and on a site that shows code (:data:`CODE_SITE`) outside page
    furniture (a ``<nav>``, an ``<aside>``, readability's unlikely candidates: a section's sidebar, a
    version picker).  Both are columns of the page, the same on its every line."""
    return bool(row[_KIND_PRODUCT]) or (
        row[_SITE_CODE] >= CODE_SITE and not (row[_UNLIKELY] or row[_UNDER_NAV] or row[_UNDER_ASIDE])
    )


def _new_text_on_a_known_site(row: list[float]) -> bool:
    return (
        row[_PAGES_SEEN] >= _KNOWN_SITE
        and row[_SITE_DF] <= NEW_DF
        and not row[_IN_LCS]
        and row[_LINK_DENSITY] < NEW_LINK_DENSITY
    )


#: A run of at least COPY_LINES lines and COPY_WORDS words that repeats, line for line, an earlier run
#: of the page is a copy (``drop_copies``); a line's earlier places are looked up to COPY_PLACES back.
COPY_LINES = 3
COPY_WORDS = 30
COPY_PLACES = 4


def drop_copies(
    texts: Sequence[str], template: frozenset[int], inside: Callable[[int], bool], code: Callable[[int], bool]
) -> frozenset[int]:
    """``template`` with the lines of every run the page already showed, word for word, and keeps.

    A run of at least :data:`COPY_LINES` lines and :data:`COPY_WORDS` words
    (words by spaces, and on a page written without spaces each pair of CJK
    characters and each four Thai-like ones one more, as in the line measures) that repeats an earlier run of the
    page line for line (the story printed twice, a forum post quoted whole, a
    product's bullet list in its summary and again in its details) is a
    copy: the content measures count every word, the gold holds it once,
    and a reader (a search index, a RAG store) wants it once.  Nothing is
    lost: a run is dropped only when none of the earlier run's lines is
    template, so the text stays where it stood first.
    One kind of repetition is the page's own, and stays: two runs inside the
    page's main container with other lines between them (a documentation
    page's inherited members, a summary table's descriptions again in the
    details, a changelog's entry under two releases).  A run right after its
    twin goes even there.  And a run that starts in a ``<pre>`` stays: code
    shown twice (an API object in its reference and again in an example).
    Measured on sites never seen (5 site folds, two splits): site-macro F1
    c2f +0.0000 / +0.0000, dragnet10 +0.0043 / +0.0046, docs -0.0001 /
    +0.0000, wcxb-dev micro +0.0022 / +0.0020 (docs/methods/combined.md).
    """
    places: dict[str, list[int]] = {}
    drop: list[int] = []
    count = len(texts)
    cjk: bool | None = None  # the page written without spaces; unknown until a run needs it
    j = 0
    while j < count:
        text = texts[j]
        length = start = 0
        seen = places.setdefault(text, [])
        for earlier in seen[-COPY_PLACES:]:
            run = 1
            while j + run < count and earlier + run < j and texts[earlier + run] == texts[j + run]:
                run += 1
            if run > length:
                length, start = run, earlier
        seen.append(j)
        if length < COPY_LINES:
            j += 1
            continue
        run_texts = texts[j : j + length]
        words = sum(len(line.split()) for line in run_texts)
        short = words < COPY_WORDS
        if short and words + _density.unspaced_words(run_texts) >= COPY_WORDS:
            # On a page written without spaces a pair of CJK characters is a word, and four Thai-like ones,
            # as in the line measures; the page is asked only when that makes the run long enough.
            if cjk is None:
                cjk = _density.written_without_spaces(texts)
            short = not cjk
        if short:
            j += 1
            continue
        if (
            not any(start + k in template for k in range(length))
            and not (j > start + length and inside(j) and inside(start))
            and not code(j)
        ):
            drop.extend(range(j, j + length))
        # A run, dropped or not, is passed whole: its tail is not looked at again as a run of its own,
        # so a page is read in time linear in its lines (a page of two long equal halves included).
        for k in range(1, length):
            places.setdefault(texts[j + k], []).append(j + k)
        j += length
    return template.union(drop) if drop else template


#: A table row of at most this many lines, with no table inside, is a row of data (``keep_table_rows_whole``).
ROW_LINES = 12
_ROW_STOPS = ("tr", "table", "body")


def keep_table_rows_whole(lines: Sequence[Line], template: frozenset[int]) -> frozenset[int]:
    """``template`` without the lines of a data row that keeps some of its lines.

    A reference table's short cells (``int``, ``str``, ``True``) stand on many
    pages of a documentation site, so site evidence calls them template; but a
    row of data is one record: when some of its cells are content, all are.  A
    row is the nearest ``<tr>`` above a line, with no table inside it and at most
    :data:`ROW_LINES` lines (a layout row holding a whole page is not one).
    Only the rows of template lines are looked at, so a page without them pays
    one walk up per template line.  Compiled when it can be (the same rows).
    """
    if _tree is not None:
        return _tree.keep_table_rows_whole(  # type: ignore[no-any-return]
            lines if isinstance(lines, list) else list(lines), template, ROW_LINES, _keep_table_rows_whole_py
        )
    return _keep_table_rows_whole_py(lines, template)


def _keep_table_rows_whole_py(lines: Sequence[Line], template: frozenset[int]) -> frozenset[int]:
    """:func:`keep_table_rows_whole` in Python (the reference of the compiled one, and its fallback)."""
    candidates = {row for i in template if (row := _row_of(lines[i])) is not None}
    if not candidates:
        return template
    row_of: dict[etree._Element | None, etree._Element] = {
        el: row for row in candidates if row.find(".//table") is None for el in row.iter()
    }
    members: dict[etree._Element, list[int]] = {}
    for i, line in enumerate(lines):
        row = row_of.get(_owner(line))
        if row is not None:
            members.setdefault(row, []).append(i)
    return keep_rows_whole(template, [found for found in members.values() if len(found) <= ROW_LINES])


def table_rows(lines: Sequence[Line]) -> list[list[int]]:
    """The data rows :func:`keep_table_rows_whole` keeps whole, each as its lines' indexes: for
    training and measuring (``train_combined.PageLines``), where the pages' trees are long gone."""
    members: dict[etree._Element, list[int]] = {}
    for i, line in enumerate(lines):
        row = _row_of(line)
        if row is not None:
            members.setdefault(row, []).append(i)
    return [found for row, found in members.items() if len(found) <= ROW_LINES and row.find(".//table") is None]


def keep_rows_whole(template: frozenset[int], rows: Sequence[Sequence[int]]) -> frozenset[int]:
    """``template`` without the lines of a data row (its lines' indexes) that keeps some of its lines:
    the rule of :func:`keep_table_rows_whole`, on rows its Python walk or :func:`table_rows` found."""
    keep = {i for found in rows if not all(i in template for i in found) for i in found}
    return template - keep if keep else template


def _owner(line: Line) -> etree._Element | None:
    """The element holding the line's first piece of text."""
    if not line.slots:
        return None
    el, is_tail = line.slots[0]
    return el.getparent() if is_tail else el


def _row_of(line: Line) -> etree._Element | None:
    """The nearest ``<tr>`` above the line, unless a table or the body comes first."""
    node = _owner(line)
    if node is not None and node.tag not in _ROW_STOPS:
        node = next(node.iterancestors(*_ROW_STOPS), None)
    return node if node is not None and node.tag == "tr" else None


#: The compiled walks (``scrapy_detemplate/_tree.pyx``), or None when they are not built.
_tree = _compiled_modules.load("scrapy_detemplate._tree")

#: The blanks an attribute's value may stand between (HTML's ASCII white space).
_BLANKS = " \t\n\r\f"

#: The ``role`` values of furniture the page marks itself: WAI-ARIA's dialogs, the page's footer, and the
#: widgets that are a page's controls, not its text (menus, a drop-down's options, tooltips, status
#: messages).  The compiled walk's ``_furniture_role`` reads the same list.
_FURNITURE_ROLES = (
    "dialog", "alertdialog", "contentinfo", "menu", "menubar", "menuitem", "option", "tooltip", "status",
)  # fmt: skip


def furniture_lines(lines: list[Line], root: etree._Element) -> frozenset[int]:
    """The lines whose first piece of text stands in furniture the page marks as such: a dialog (a
    ``<dialog>``, an element whose ``role`` is ``dialog`` or ``alertdialog``, or whose ``aria-modal`` is
    ``true``), the page's footer landmark (``role`` ``contentinfo``), a widget (``role`` ``menu``,
    ``menubar``, ``menuitem``, ``option``, ``tooltip`` or ``status``), or an element the page
    keeps out of search engines' snippets (``data-nosnippet``); values in any ASCII case, blanks around
    them left out.

    WAI-ARIA's dialog is "a descendant window of the primary window": a cart, a sign-in form, a store
    or country picker, a newsletter or cookie prompt, a search overlay.  Its ``contentinfo`` is "a large
    perceivable region that contains information about the parent document": the copyright, the
    privacy links, the site's own footer menus.  Its widgets are controls: a menu of choices, a
    drop-down's options, a tooltip, a status message ("Added to your cart").  ``data-nosnippet`` is
    Google's mark for text a page does not want quoted as its own (a cookie banner, a header, a
    promotion).  The cleaning reads the source, not the screen, so a dialog's text stands among the
    page's lines, and on a site's first page, with no site evidence to say any of it repeats, the trees
    leave much of it (in the out-of-fold scores, the cut kept 45k of wcxb-dev's 116k words in dialogs,
    800 of them gold, 6.1k words under ``contentinfo``, none gold, and 3.8k under the widgets and
    ``data-nosnippet``, 2% gold).  ``combined`` removes them (docs/methods/combined.md, "A page's
    dialogs", "A page's footer landmark" and "A page's widgets").  Compiled (one walk of libxml2's
    nodes, then each line's ancestors) when it is built; this function's Python walk is its reference."""
    if _tree is not None:
        found: frozenset[int] | None = _tree.furniture_lines(root, lines)
        if found is not None:
            return found
    return _furniture_lines_py(lines, root)


def _is_furniture(el: etree._Element) -> bool:
    """Whether ``el`` is furniture the page marks as such (:func:`furniture_lines`)."""
    if el.tag == "dialog":
        return True
    role = (el.get("role") or "").strip(_BLANKS)
    if role.isascii() and role.lower() in _FURNITURE_ROLES:
        return True
    modal = (el.get("aria-modal") or "").strip(_BLANKS)
    if modal.isascii() and modal.lower() == "true":
        return True
    return el.get("data-nosnippet") is not None


def _furniture_lines_py(lines: Sequence[Line], root: etree._Element) -> frozenset[int]:
    """:func:`furniture_lines` in Python (the reference of the compiled walk, and its fallback)."""
    top = root.getroottree().getroot()
    inside: set[etree._Element] = set()
    for el in top.iter(etree.Element):
        if el not in inside and _is_furniture(el):
            inside.update(el.iter())
    if not inside:
        return frozenset()
    return frozenset(i for i, line in enumerate(lines) if _owner(line) in inside)
