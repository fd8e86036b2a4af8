"""A learned lexicon of class, id and ``itemprop`` names: four columns of a site's first page.

The line features match a fixed list of class/id words (``nav``, ``footer``, ``comment``,
``article``...).  The long tail of names that themes and shop platforms share
(``menu-item-type-post_type``, ``site-footer``, ``search-form``, ``itemListElement``,
``elementor-widget-theme-post-content``, Sphinx's ``admonition``) is learned instead: per
training site, the share of the words under a name that are gold (the site's vote); per name,
the log-odds of the votes of the sites that show it, kept when at least :data:`MIN_SITES` do.

A line's names are those of the element its text starts in and of every ancestor up to
``<body>`` (nearest first): each class and id name whole (``c:``, ``i:``), its word parts of
three letters or more (``w:``, split at ``-``, ``_`` and camelCase) and each ``itemprop``
(``p:``), all in lower case.  The columns (:data:`NAME_FEATURES`): the mean log-odds of the
nearest ancestor with a known name, the least and the greatest over all known names, and how
many are known (at most 20); all 0.0 when none is.

They are filled on a site's first page only, where the page has no site evidence to weigh
against them (docs/methods/combined.md, "A learned lexicon of class and id names").
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from lxml import etree

from scrapy_detemplate import _compiled as _compiled_modules
from scrapy_detemplate._html import Line

NAME_FEATURES = ("name_nearest", "name_least", "name_most", "names_known")
#: A name enters the lexicon when at least this many training sites show it.
MIN_SITES = 10
#: ``names_known`` is capped here.
MOST_KNOWN = 20

_compiled = _compiled_modules.load("scrapy_detemplate.methods._names")

_PART = re.compile(r"[-_:/\s]+|(?<=[a-z])(?=[A-Z])")

#: One line's names: per element from the line's own up to (not including) ``<body>``.
LineNames = tuple[tuple[str, ...], ...]


def element_names(el: etree._Element) -> tuple[str, ...]:
    """The names of one element, sorted: ``c:``/``i:`` whole class and id names, ``w:`` their
    word parts, ``p:`` its ``itemprop`` values."""
    names: set[str] = set()
    for attr, prefix in (("class", "c:"), ("id", "i:")):
        for token in (el.get(attr) or "").split():
            names.update(_token_names(prefix, token))
    for value in (el.get("itemprop") or "").split():
        names.add("p:" + value.lower())
    return tuple(sorted(sys.intern(n) for n in names))


def _token_names(prefix: str, token: str) -> list[str]:
    """One class (``prefix`` ``c:``) or id (``i:``) token's names: itself and its word parts."""
    names = [prefix + token.lower()]
    names.extend("w:" + part.lower() for part in _PART.split(token) if len(part) >= 3 and part.isalpha())
    return names


def _start(line: Line) -> etree._Element | None:
    """The element a line's text starts in (a tail's parent)."""
    if not line.slots:
        return None
    el, tail = line.slots[0]
    return el.getparent() if tail else el


def _chain(el: etree._Element | None, memo: dict[etree._Element, LineNames]) -> LineNames:
    """The names of ``el`` and its ancestors below ``<body>``, nearest first (memoised)."""
    path = []
    node = el
    while node is not None and node.tag != "body":
        known = memo.get(node)
        if known is not None:
            break
        path.append(node)
        node = node.getparent()
    names: LineNames = memo.get(node, ()) if node is not None and node.tag != "body" else ()
    for element in reversed(path):
        own = element_names(element) if isinstance(element.tag, str) else None
        names = (own, *names) if own is not None else names
        memo[element] = names
    return names


def line_names(lines: Sequence[Line]) -> list[LineNames]:
    """Every line's names (:data:`LineNames`), for training."""
    memo: dict[etree._Element, LineNames] = {}
    return [_chain(_start(line), memo) for line in lines]


def columns(names: LineNames, lexicon: Mapping[str, float]) -> list[float]:
    """:data:`NAME_FEATURES` of a line's ``names``."""
    nearest = least = most = 0.0
    known = 0
    for level in names:
        values = [lexicon[n] for n in level if n in lexicon]
        if not values:
            continue
        if not known:
            nearest, least, most = sum(values) / len(values), min(values), max(values)
        else:
            least, most = min(least, min(values)), max(most, max(values))
        known += len(values)
    return [nearest, least, most, float(min(known, MOST_KNOWN))]


#: A runner's :class:`KnownNames` forgets what it kept when it holds this many attribute keys
#: (or class and id tokens).
STATS_AT_MOST = 100_000
#: Columns and counts: (nearest's mean, least, most, how many known).
Stats = tuple[float, float, float, int]
_UNSEEN = (-1.0, -1.0, -1.0, -1)  # a key not kept yet (one lookup, not two)


class KnownNames:
    """What a runner keeps of a lexicon from page to page (themes repeat their attributes): per
    element key (its ``class``, ``id`` and ``itemprop`` joined by NUL: :func:`key`) the
    (mean, least, most, how many) of its known names, or None; per class and per id token its
    known names.  :func:`page_columns` and the compiled ``_names.page_columns`` read and fill it."""

    __slots__ = ("classes", "ids", "lexicon", "table", "triples")

    def __init__(self, lexicon: Mapping[str, float]) -> None:
        self.lexicon = lexicon
        self.triples: dict[str, Stats | None] = {}
        self.classes: dict[str, tuple[str, ...]] = {}
        self.ids: dict[str, tuple[str, ...]] = {}
        self.table: object = None  # the compiled module's table of the lexicon, made on its first page

    def bound(self) -> None:
        """Forget what is kept once it reaches :data:`STATS_AT_MOST` (called before each page)."""
        if max(len(self.triples), len(self.classes), len(self.ids)) >= STATS_AT_MOST:
            self.triples.clear()
            self.classes.clear()
            self.ids.clear()

    def own(self, key: str) -> Stats | None:
        """The stats of the known names of an element whose :func:`key` is ``key`` (those of
        :func:`element_names`): kept from an earlier element, else computed and kept."""
        kept = self.triples.get(key, _UNSEEN)
        if kept is not _UNSEEN:
            return kept
        cls, id_, prop = key.split("\0")
        found: set[str] = set()
        for value, tokens, prefix in ((cls, self.classes, "c:"), (id_, self.ids, "i:")):
            for token in value.split():
                known = tokens.get(token)
                if known is None:
                    known = tokens[token] = tuple(n for n in _token_names(prefix, token) if n in self.lexicon)
                found.update(known)
        found.update(n for n in ("p:" + v.lower() for v in prop.split()) if n in self.lexicon)
        values = [self.lexicon[n] for n in sorted(found)]  # summed in element_names' order
        own = (sum(values) / len(values), min(values), max(values), len(values)) if values else None
        self.triples[key] = own
        return own


def key(el: etree._Element) -> str:
    """An element's ``class``, ``id`` and ``itemprop`` values joined by NUL (no attribute value
    holds one)."""
    return f"{el.get('class') or ''}\0{el.get('id') or ''}\0{el.get('itemprop') or ''}"


_NO_KEY = "\0\0"


def page_columns(lines: Sequence[Line], known: KnownNames) -> list[list[float]]:
    """:data:`NAME_FEATURES` of every line of a page: :func:`columns` of :func:`line_names`, the
    same numbers, computed once per element from its parent's (the runner's path), compiled
    (``_names.pyx``) where that was built."""
    known.bound()
    if _compiled is not None:
        out: list[list[float]] | None = _compiled.page_columns(list(lines), known)
        if out is not None:
            return out
    return _page_columns_py(lines, known)


class ColumnRows(Protocol):
    """The runner's C array of feature rows (``_site.FeatureRows``), as far as the names write it."""

    def set_columns(self, rows: list[list[float]], at: int) -> None: ...


def page_columns_into(lines: Sequence[Line], known: KnownNames, rows: ColumnRows, at: int) -> None:
    """:func:`page_columns` written into columns ``at`` to ``at + 3`` of ``rows``: by the
    compiled walk straight into the C array, else (not built, or a page it hands back) the
    Python walk's lists through ``rows.set_columns``."""
    known.bound()
    if _compiled is None or not _compiled.page_columns_into(list(lines), known, rows, at):
        rows.set_columns(_page_columns_py(lines, known), at)


def _page_columns_py(lines: Sequence[Line], known: KnownNames) -> list[list[float]]:
    memo: dict[etree._Element, Stats] = {}
    out = []
    for line in lines:
        nearest, least, most, count = _element_columns(_start(line), known, memo)
        out.append([nearest, least, most, float(min(count, MOST_KNOWN))])
    return out


_NONE: Stats = (0.0, 0.0, 0.0, 0)


def _element_columns(el: etree._Element | None, known: KnownNames, memo: dict[etree._Element, Stats]) -> Stats:
    """(nearest, least, most, known) of ``el``'s names and its ancestors' below ``<body>``."""
    path = []
    node = el
    base = _NONE
    while node is not None and node.tag != "body":
        kept = memo.get(node)
        if kept is not None:
            base = kept
            break
        path.append(node)
        node = node.getparent()
    for element in reversed(path):
        if isinstance(element.tag, str):
            k = key(element)
            own = None if k == _NO_KEY else known.own(k)
            if own is not None:
                mean, least, most, count = own
                if base[3]:
                    base = (mean, min(base[1], least), max(base[2], most), base[3] + count)
                else:
                    base = own
        memo[element] = base
    return base


def site_votes(
    labels: Iterable[Sequence[int]], weights: Iterable[Sequence[float]], names: Iterable[Sequence[LineNames]]
) -> dict[str, float]:
    """One site's votes: per name on its pages, the share of the words under it that are gold
    (``labels``, ``weights`` and ``names`` per page, per line)."""
    gold: dict[str, float] = {}
    total: dict[str, float] = {}
    for page_labels, page_weights, page_names in zip(labels, weights, names, strict=True):
        for label, weight, line in zip(page_labels, page_weights, page_names, strict=True):
            for name in {n for level in line for n in level}:
                total[name] = total.get(name, 0.0) + weight
                if label:
                    gold[name] = gold.get(name, 0.0) + weight
    return {name: gold.get(name, 0.0) / w for name, w in total.items() if w > 0}


def lexicon(votes: Iterable[Mapping[str, float]], min_sites: int = MIN_SITES) -> dict[str, float]:
    """Per name shown by at least ``min_sites`` of the sites' ``votes``: the log-odds
    ``log((sum + 0.5) / (sites - sum + 0.5))`` of their votes, rounded to four places."""
    share: dict[str, float] = {}
    sites: dict[str, int] = {}
    for site in votes:
        for name, vote in site.items():
            share[name] = share.get(name, 0.0) + vote
            sites[name] = sites.get(name, 0) + 1
    return {
        name: round(math.log((share[name] + 0.5) / (n - share[name] + 0.5)), 4)
        for name, n in sorted(sites.items())
        if n >= min_sites
    }


def valid_lexicon(value: object) -> bool:
    """Whether ``value`` is a lexicon as :func:`lexicon` makes it (names to finite numbers)."""
    return isinstance(value, dict) and all(
        isinstance(k, str) and type(v) in (float, int) and -1e6 <= v <= 1e6 for k, v in value.items()
    )  # compared, not converted: an int no float holds is refused, not raised on
