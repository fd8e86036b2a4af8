"""A site's first page, cleaned again once the site's next pages have come (``DETEMPLATE_FIRST_PAGE_WAIT``).

The default method reads what repeats across a site's pages; on a site's first
page there is nothing to read yet, and that page is cleaned by the trees alone.
Measured on the corpus (sites never seen, split 0, ``bench/first_pages.py``;
``docs/methods/combined.md``), the first pages of sites of two or more pages
cleaned with the evidence of the next three pages of their site: c2f 0.953 ->
0.964, dragnet10 0.907 -> 0.964, docs 0.976 -> 0.990 (with one page: 0.961,
0.964, 0.973); wcxb-dev's 0.798 -> 0.794.

The spider needs the first page at once (its links lead to the others), so the
response is never held.  What waits is the first page's items, in the pipeline:
the spider middleware fills them with the first cleaning as usual and tells
:class:`FirstPages` which items came from a first page; the pipeline awaits
them.  When ``peers`` more pages of the site have been cleaned, the first page
is cleaned again beside them (:meth:`Detemplater.clean_with_peers`: those
pages, then the first, in a store of their own; the crawl's state is neither
read nor changed), and the fields the first
cleaning wrote are written again.  An item that comes after that is filled with
the second cleaning at once (it is in the request's meta by then).

Nothing waits forever, nor stalls the crawl: a first page is let go after
``wait`` seconds, when more than :data:`LIMIT` sites wait, their pages pass
:data:`LIMIT_BYTES` or the first pages' responses what Scrapy's
``SCRAPER_SLOT_MAX_ACTIVE_SIZE`` leaves them (a waiting item keeps its response
in the scraper, and past that size the engine downloads nothing more; the
add-on adds :data:`ACTIVE_ROOM` to it; past these bounds a first page whose site
has no request on its way goes first, then the oldest), when the
crawl has nothing left to do but these items, and when it closes; it is then
cleaned again with the pages of its site that came meanwhile, if any, else it
keeps its first cleaning.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy import signals
from twisted.internet.defer import Deferred

from scrapy_detemplate._crawler import META_KEY, engine_for, logger

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request
    from scrapy.statscollectors import StatsCollector

    from scrapy_detemplate.engine import CleanResult, Detemplater, HeadersLike

#: At most this many sites' first pages wait at once (their items and their bodies are kept) ...
LIMIT = 32
#: ... and their bodies and their peers' together at most this many bytes.
LIMIT_BYTES = 64 * 1024 * 1024
#: ... and the first pages' responses, which wait in Scrapy's scraper with their items, at most what
#: the scraper holds before the engine stops downloading (``SCRAPER_SLOT_MAX_ACTIVE_SIZE``, counted
#: as Scrapy counts it, at least 1 kB a response) less :data:`SCRAPER_FLOW`, and at most half of it
#: (:func:`limit_active`): a crawl never stalls on waiting items.
SCRAPER_FLOW = 5_000_000 // 2  # half of Scrapy's default SCRAPER_SLOT_MAX_ACTIVE_SIZE
#: The room the add-on adds to ``SCRAPER_SLOT_MAX_ACTIVE_SIZE`` for them when the project does not set
#: it: with Scrapy's 5 MB alone, half of it holds the first pages of 8 sites of 300 kB pages.
ACTIVE_ROOM = 32 * 1024 * 1024


def limit_active(max_active_size: int) -> int:
    """How much the waiting first pages' responses may weigh in a scraper that holds ``max_active_size``."""
    return max(max_active_size - SCRAPER_FLOW, max_active_size // 2)


LIMIT_ACTIVE = limit_active(5_000_000)

#: Why a first page was let go with its first cleaning (a fixed set: stats keys stay bounded).
KEPT_REASONS = ("timeout", "full", "idle", "closed")

#: A page as the engine takes it again: URL, body, headers.
Source = tuple[str, bytes, "HeadersLike"]


@dataclass(eq=False)
class _Waiting:
    """One site's first page: its request, source and first cleaning, the pages of its site
    cleaned since (its peers), and the items filled from it."""

    site: str
    request: Request
    source: Source
    result: CleanResult
    since: float
    peers: list[Source] = field(default_factory=list)
    items: list[tuple[Any, list[str], Deferred[None]]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(len(body) for _, body, _ in (self.source, *self.peers))

    @property
    def active_size(self) -> int:
        """What the first page's response weighs in Scrapy's scraper while its items wait."""
        return max(len(self.source[1]), 1024)


class FirstPages:
    """The first pages of sites waiting for their site's next pages (see the module docstring).

    ``refill(item, result, fields)`` writes ``result`` into the ``fields`` of
    ``item`` that the first cleaning wrote (:meth:`ItemFiller.refill`).  The
    clock is injected so that tests need no waiting.
    """

    def __init__(
        self,
        engine: Detemplater,
        wait: float,
        refill: Callable[[Any, CleanResult, list[str]], None],
        stats: StatsCollector | None = None,
        peers: int = 3,
        limit: int = LIMIT,
        limit_bytes: int = LIMIT_BYTES,
        limit_active: int = LIMIT_ACTIVE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.wait = wait
        self.peers = peers
        self.limit = limit
        self.limit_bytes = limit_bytes
        self.limit_active = limit_active
        self._bytes = 0
        self._active = 0
        self.awaited = False  # set by the pipeline: without it no item may wait
        self._refill = refill
        self._stats = stats
        self._clock = clock
        self._sites: dict[str, _Waiting] = {}
        self._results: dict[int, _Waiting] = {}  # by id() of the first cleaning (held in _Waiting)
        self._items: dict[int, _Waiting] = {}  # by id() of a waiting item (held in _Waiting)
        # Requests on their way (scheduled, no response yet), by site: a count backed by a weak
        # reference to each request, so that one that never comes back (redirected, retried, dropped
        # by another middleware, kept on disk by JOBDIR) stops counting once Scrapy lets it go.
        self._pending: dict[str, int] = {}
        self._on_way: dict[int, tuple[weakref.ref[Request], str]] = {}

    @property
    def waiting(self) -> int:
        """Sites whose first page waits."""
        return len(self._sites)

    @property
    def waiting_items(self) -> int:
        """Items of those first pages waiting in the pipeline."""
        return len(self._items)

    def first(self, site: str) -> bool:
        """Whether the next page of ``site`` is its first (nothing of it in the site state)."""
        seen: Callable[[str], bool] | None = getattr(self.engine.runner, "seen", None)
        return seen is not None and not seen(site)

    def cleaned(self, site: str, request: Request, source: Source, result: CleanResult, first: bool) -> None:
        """A page of ``site`` was cleaned: kept when it was the site's ``first``, else a peer of the
        site's waiting first page (if any), which is cleaned again once it has ``peers`` of them."""
        if result.status == "passthrough":
            return  # no text to learn from or to give
        if first:
            if site in self._sites:  # two first pages at once (another process, a restart): keep the one
                return
            kept = self._sites[site] = _Waiting(site, request, source, result, self._clock())
            self._results[id(result)] = kept
            self._bytes += kept.size
            self._active += kept.active_size
            self._inc("detemplate/first_page/waiting")
        else:
            waiting = self._sites.get(site)
            if waiting is None or source[0] in (waiting.source[0], *(url for url, _, _ in waiting.peers)):
                return  # none waits, or the same URL again
            waiting.peers.append(source)
            self._bytes += len(source[1])
            if len(waiting.peers) >= self.peers:
                self.let_go(waiting, "")
        while self._sites and (
            len(self._sites) > self.limit or self._bytes > self.limit_bytes or self._active > self.limit_active
        ):
            self.let_go(min(self._sites.values(), key=self._keep_longer), "full")

    def _keep_longer(self, waiting: _Waiting) -> tuple[bool, float]:
        """Which first page goes first when too many wait: one whose site has no request on its way
        (:meth:`pending`: no next page is coming, as on a site of one page), the oldest first; only
        then one whose next pages are on their way, the oldest first."""
        return self.pending(waiting.site) > 0, waiting.since

    def scheduled(self, request: Request) -> None:
        """``request`` went into Scrapy's scheduler (signal ``request_scheduled``): a page of its site is
        on its way until :meth:`arrived`, or until Scrapy lets the request go (its weak reference's
        callback).  A hint, not a result: never raises."""
        key = id(request)
        if key in self._on_way:
            return
        try:
            site = self.engine.config.site_key(request.url)
        except Exception:  # the page's own cleaning reports a broken site key
            return
        self._on_way[key] = (weakref.ref(request, partial(self._gone, key)), site)
        self._pending[site] = self._pending.get(site, 0) + 1

    def arrived(self, request: Request) -> None:
        """``request``'s response (or failure) came, or the scheduler refused it (``request_dropped``)."""
        self._gone(id(request))

    def _gone(self, key: int, _: weakref.ref[Request] | None = None) -> None:
        entry = self._on_way.pop(key, None)
        if entry is None:
            return
        left = self._pending.get(entry[1], 0) - 1
        if left > 0:
            self._pending[entry[1]] = left
        else:
            self._pending.pop(entry[1], None)

    def pending(self, site: str) -> int:
        """Requests of ``site`` on their way: scheduled, no response yet."""
        return self._pending.get(site, 0)

    def hold(self, result: CleanResult, item: Any, fields: list[str]) -> bool:
        """Whether ``item``, filled from ``result`` (its ``fields``), waits for its page's second cleaning."""
        waiting = self._results.get(id(result))
        if waiting is None or waiting.result is not result or not self.awaited or not fields:
            return False
        waiting.items.append((item, fields, Deferred()))
        self._items[id(item)] = waiting
        return True

    def waiter(self, item: Any) -> Deferred[None] | None:
        """What the pipeline awaits for ``item`` (``None``: it waits for nothing)."""
        waiting = self._items.get(id(item))
        if waiting is None:
            return None
        for held, _, done in waiting.items:
            if held is item:
                return done
        return None

    def let_go(self, waiting: _Waiting, reason: str) -> None:
        """The first page is cleaned again with the peers it has (``reason``: why it waits no
        longer, ``""`` when it has them all), or keeps its first cleaning without any; its items go on."""
        self._forget(waiting)
        if reason:
            self._inc(f"detemplate/first_page/{'early' if waiting.peers else 'kept'}/{reason}")
        again = None
        if waiting.peers:
            url, body, headers = waiting.source
            try:
                again = self.engine.clean_with_peers(url, body, waiting.peers, headers=headers)
            except Exception:  # the first cleaning stays
                logger.error("detemplate: could not clean %s again", url, exc_info=True)
            if again is None or again.status == "passthrough":
                again = None
                self._inc("detemplate/first_page/kept/error")
            else:
                self._inc("detemplate/first_page/revisited")
                if waiting.request.meta.get(META_KEY) is waiting.result:
                    waiting.request.meta[META_KEY] = again  # items still to come are filled with it
        self._answer(waiting, again)

    def let_all_go(self, reason: str) -> None:
        for waiting in list(self._sites.values()):
            self.let_go(waiting, reason)

    def expire(self) -> None:
        deadline = self._clock() - self.wait
        for waiting in [w for w in self._sites.values() if w.since <= deadline]:
            self.let_go(waiting, "timeout")

    def _forget(self, waiting: _Waiting) -> None:
        if self._sites.pop(waiting.site, None) is not None:
            self._bytes -= waiting.size
            self._active -= waiting.active_size
        self._results.pop(id(waiting.result), None)

    def _answer(self, waiting: _Waiting, again: CleanResult | None) -> None:
        for item, fields, done in waiting.items:
            self._items.pop(id(item), None)
            try:
                if again is not None:
                    self._refill(item, again, fields)
            except Exception:  # the first cleaning stays; never lose the item
                logger.error("detemplate: could not fill an item again from %s", waiting.source[0], exc_info=True)
            finally:
                done.callback(None)  # the item goes on, whatever happened
        waiting.items.clear()

    def _inc(self, key: str) -> None:
        if self._stats is not None:
            self._stats.inc_value(key)


# Keyed by crawler, as the engines are: the three components share one.
_FIRST_PAGES: WeakKeyDictionary[Crawler, FirstPages | None] = WeakKeyDictionary()


def first_pages_for(crawler: Crawler) -> FirstPages | None:
    """The crawler's :class:`FirstPages`, or ``None`` when the method or the settings leave it off."""
    if crawler in _FIRST_PAGES:
        return _FIRST_PAGES[crawler]
    from scrapy_detemplate.middlewares import ItemFiller

    engine = engine_for(crawler)
    config = engine.config
    pages = None
    if config.cleans_first_pages_again and hasattr(engine.runner, "seen"):
        refill = ItemFiller(config, crawler.stats).refill
        active = limit_active(crawler.settings.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE", 5_000_000))
        pages = FirstPages(
            engine, config.first_page_wait, refill, crawler.stats, config.first_page_peers, limit_active=active
        )
        # Which sites have next pages on their way: requests scheduled, until their response comes
        # (the downloader middleware tells :meth:`FirstPages.arrived`) or the scheduler refuses them.
        crawler.signals.connect(pages.scheduled, signal=signals.request_scheduled)
        crawler.signals.connect(pages.arrived, signal=signals.request_dropped)
    _FIRST_PAGES[crawler] = pages
    return pages
