"""Scrapy middlewares: clean every HTML response, put the result into items.

With ``DETEMPLATE_METHOD = "rtdm"`` and ``DETEMPLATE_RTDM_HOLD`` above 0, the
downloader middleware holds the responses of sites still learning their
template (:class:`PageHolder`) and lets them go, cleaned with the learned
template, when the site has learned; see ``docs/methods/rtdm.md``.

With the default method, the items of a site's first page wait in the
pipeline for the site's next pages, and are filled again with the first page
cleaned beside them (``DETEMPLATE_FIRST_PAGE_WAIT``, ``_firstpages.py``).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from itemadapter import ItemAdapter, is_item
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Request, Response, TextResponse
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from scrapy_detemplate._crawler import (
    META_KEY,
    ORIGINAL_BODY_META_KEY,
    SKIP_META_KEY,
    engine_for,
    logger,
    record,
    summary,
)
from scrapy_detemplate._firstpages import FirstPages, first_pages_for
from scrapy_detemplate.config import DetemplateConfig, InvalidSetting
from scrapy_detemplate.engine import CleanResult, Detemplater
from scrapy_detemplate.report import ReportWriter
from scrapy_detemplate.runners.rtdm import HOLD

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector


#: Why held pages were let go (a fixed set: stats keys stay bounded).
RELEASE_REASONS = ("learned", "full", "timeout", "idle", "closed")

T = TypeVar("T")


class PageHolder(Generic[T]):
    """A bounded buffer of the pages of sites that are still learning (rtdm's hold option).

    At most ``limit`` pages are held, all sites together.  A site's pages go out
    together through ``release(site, pages, reason)``: ``learned`` when the
    caller says the site has learned (:meth:`release`), ``full`` for the site
    of the oldest held page when one more page would pass ``limit``, ``idle``
    or ``closed`` for every site (:meth:`release_all`).  :meth:`expire` lets
    go (``timeout``) the pages held ``seconds`` or longer.  The clock is
    injected so that tests need no waiting.
    """

    def __init__(
        self,
        limit: int,
        seconds: float,
        release: Callable[[str, list[T], str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.seconds = seconds
        self._release = release
        self._clock = clock
        self._sites: dict[str, list[tuple[float, T]]] = {}
        self.count = 0

    def hold(self, site: str, page: T) -> None:
        self._sites.setdefault(site, []).append((self._clock(), page))
        self.count += 1
        if self.count > self.limit:
            self.release(min(self._sites, key=lambda s: self._sites[s][0][0]), "full")

    def holds(self, site: str) -> bool:
        return site in self._sites

    def release(self, site: str, reason: str) -> None:
        held = self._sites.pop(site, None)
        if held:
            self.count -= len(held)
            self._release(site, [page for _, page in held], reason)

    def release_all(self, reason: str) -> None:
        for site in list(self._sites):
            self.release(site, reason)

    def expire(self) -> None:
        deadline = self._clock() - self.seconds
        for site in list(self._sites):
            held = self._sites[site]
            due = [page for since, page in held if since <= deadline]
            if not due:
                continue
            rest = held[len(due) :]  # held in time order: the due ones come first
            if rest:
                self._sites[site] = rest
            else:
                del self._sites[site]
            self.count -= len(due)
            self._release(site, due, "timeout")


class _Held:
    """A held response, what Scrapy awaits for it, and what it became once let go."""

    __slots__ = ("out", "request", "response", "waiter")

    def __init__(self, request: Request, response: Response) -> None:
        self.request = request
        self.response = response
        self.waiter: Deferred[Response] = Deferred()
        self.out: Response | None = None


class DetemplateDownloaderMiddleware:
    """Feeds every 2xx response to the engine and attaches the result.

    The result is ``response.meta["detemplate"]`` (a :class:`CleanResult`); the
    response itself is returned unchanged, so the spider still follows links in
    the template.  With ``DETEMPLATE_REPLACE_BODY`` the body is replaced by the
    template-free HTML and the original bytes are kept in
    ``response.meta["detemplate_original_body"]``.

    With :meth:`hold_pages` (rtdm, ``DETEMPLATE_RTDM_HOLD``), a response the
    engine calls a sample of a learning site is held: ``process_response``
    returns a coroutine that Scrapy awaits, and the held request keeps its place
    in ``downloader.active`` (so held pages count against ``CONCURRENT_REQUESTS``).
    When the page is let go it is run again and cleaned with the site's template.

    With a ``report`` (``DETEMPLATE_REPORT_DIR``), every result is counted in
    it and its sample pages are processed with ``mark=True`` and written as they
    come; the report's index is written when the spider closes.
    """

    def __init__(
        self,
        engine: Detemplater,
        stats: StatsCollector | None = None,
        replace_body: bool = False,
        report: ReportWriter | None = None,
    ) -> None:
        self.engine = engine
        self.stats = stats
        self.replace_body = replace_body
        self.report = report
        self.holder: PageHolder[_Held] | None = None
        self.first_pages: FirstPages | None = None
        self._crawler: Crawler | None = None
        self._timer: Any = None
        self._closing = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DetemplateDownloaderMiddleware:
        if not crawler.settings.getbool("DETEMPLATE_ENABLED", True):
            raise NotConfigured("DETEMPLATE_ENABLED is off")
        engine = engine_for(crawler)
        config = engine.config
        report = None
        if config.report_dir:
            title = f"scrapy-detemplate report: spider {getattr(crawler.spidercls, 'name', '')}, method {config.method}"
            try:
                report = ReportWriter(config.report_dir, config.report_pages, title=title)
            except OSError as exc:
                expected = f"a writable directory ({exc})"
                raise InvalidSetting("DETEMPLATE_REPORT_DIR", config.report_dir, expected) from exc
        mw = cls(engine, crawler.stats, config.replace_body, report)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        if config.method == "rtdm" and config.rtdm_hold:
            concurrency = crawler.settings.getint("CONCURRENT_REQUESTS")
            if 0 < concurrency <= config.rtdm_hold:
                raise InvalidSetting(
                    "DETEMPLATE_RTDM_HOLD", config.rtdm_hold,
                    f"fewer pages than CONCURRENT_REQUESTS ({concurrency}): a held response keeps its download slot",
                )  # fmt: skip
            mw.hold_pages(config.rtdm_hold, config.rtdm_hold_seconds, crawler)
        first_pages = first_pages_for(crawler)
        if first_pages is not None:
            mw.wait_for_peers(first_pages, crawler)
        return mw

    def hold_pages(
        self, limit: int, seconds: float, crawler: Crawler | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """Hold the pages of learning sites, ``limit`` at most, ``seconds`` at most each."""
        runner: Any = self.engine.runner
        runner.hold_learning_pages()
        self.holder = PageHolder(limit, seconds, self._release, clock)
        self._crawler = crawler
        if crawler is not None:
            crawler.signals.connect(self._start_timer, signal=signals.spider_opened)
            crawler.signals.connect(self._stop_timer, signal=signals.engine_stopped)

    def wait_for_peers(self, first_pages: FirstPages, crawler: Crawler | None = None) -> None:
        """Let the items of sites' first pages wait for their site's next pages (``_firstpages.py``)."""
        self.first_pages = first_pages
        if self._crawler is None:
            self._crawler = crawler
            if crawler is not None:
                crawler.signals.connect(self._start_timer, signal=signals.spider_opened)
                crawler.signals.connect(self._stop_timer, signal=signals.engine_stopped)

    def spider_closed(self, spider: Spider | None = None) -> None:
        if self.first_pages is not None:
            self.first_pages.let_all_go("closed")
        if self.holder is not None:
            self._closing = True
            self.holder.release_all("closed")  # nothing should be left by now; never lose one
            self._stop_timer()
        line = summary(self.stats)
        if line:
            logger.info(line)
        if self.report is not None:
            try:
                logger.info("detemplate: report written to %s", self.report.close())
            except Exception:
                logger.error("detemplate: could not write the report", exc_info=True)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response | Coroutine[Any, Any, Response]:
        if self.first_pages is not None:  # no longer on its way (which first page goes first when too many wait)
            self.first_pages.arrived(request)
        # A spider that copies meta into a new request (meta={**response.meta, ...})
        # copies the earlier page's result too: it never belongs to this response.
        request.meta.pop(META_KEY, None)
        request.meta.pop(ORIGINAL_BODY_META_KEY, None)
        if request.meta.get(SKIP_META_KEY):
            self._inc("detemplate/skipped")
            return response
        if not 200 <= response.status < 300:
            self._inc("detemplate/skipped")
            return response
        try:
            headers = _headers(response)
            site = self.engine.config.site_key(response.url) if self.first_pages is not None else ""
            first = self.first_pages is not None and self.first_pages.first(site)
            source = (response.url, response.body, headers)
            result = self.engine.process(response.url, response.body, headers=headers, mark=self._sample(response.url))
            if self.holder is not None:
                if result.reason == HOLD:
                    return self._hold(request, response)
                site = self.engine.config.site_key(response.url)
                runner: Any = self.engine.runner
                if self.holder.holds(site) and not runner.learning(site):
                    self.holder.release(site, "learned")
            response = self._finish(request, response, result)
            if self.first_pages is not None:  # the result as stored (the report's copy drops its marks)
                self._peer(site, request, source, request.meta[META_KEY], first)
            return response
        except Exception:  # a failure here must never lose the response
            logger.error("detemplate: failed on %s; response passed on unchanged", response.url, exc_info=True)
            self._inc("detemplate/error")
        return response

    def process_exception(self, request: Request, exception: BaseException, spider: Spider | None = None) -> None:
        if self.first_pages is not None:  # no longer on its way; the exception goes on
            self.first_pages.arrived(request)

    def _peer(self, site: str, request: Request, source: Any, result: CleanResult, first: bool) -> None:
        assert self.first_pages is not None
        try:
            self.first_pages.cleaned(site, request, source, result, first)
        except Exception:  # the page's own result stands
            logger.error("detemplate: could not clean %s's first page again", site, exc_info=True)
            self._inc("detemplate/error")

    def _sample(self, url: str) -> bool:
        """Whether this page is one of the report's samples (marked)."""
        return self.report is not None and self.report.wants_sample(self.engine.config.site_key(url))

    def _finish(self, request: Request, response: Response, result: CleanResult) -> Response:
        record(self.stats, result)
        if self.report is not None:
            try:
                self.report.add(self.engine.config.site_key(response.url), result)
            except Exception:  # a report must never break a crawl
                logger.error("detemplate: could not add %s to the report", response.url, exc_info=True)
                self._inc("detemplate/report/error")
            result = replace(result, marked_html="") if result.marked_html else result
        request.meta[META_KEY] = result
        if self.replace_body and result.status == "cleaned" and isinstance(response, TextResponse):
            request.meta[ORIGINAL_BODY_META_KEY] = response.body
            return response.replace(body=result.html.encode("utf-8"), encoding="utf-8")
        return response

    # -- holding (rtdm, DETEMPLATE_RTDM_HOLD) --------------------------------

    def _hold(self, request: Request, response: Response) -> Response | Coroutine[Any, Any, Response]:
        assert self.holder is not None
        held = _Held(request, response)
        self.holder.hold(self.engine.config.site_key(response.url), held)
        self._inc("detemplate/rtdm/held")
        if self._closing:  # no time left to wait
            self.holder.release_all("closed")
        if held.out is not None:  # let go at once (the buffer was full)
            return held.out
        return _wait(held.waiter)

    def _release(self, site: str, pages: list[_Held], reason: str) -> None:
        """Clean the pages with the site's template, learned now from the samples
        it has unless a timeout let them go; then hand them back to Scrapy."""
        runner: Any = self.engine.runner
        if reason != "timeout":
            try:
                runner.learn_now(site)
            except Exception:
                logger.error("detemplate: rtdm could not learn %s from its samples", site, exc_info=True)
        for held in pages:
            held.out = held.response  # unless cleaned below
            try:
                with runner.replay():
                    result = self.engine.process(
                        held.response.url, held.response.body, headers=_headers(held.response),
                        mark=self._sample(held.response.url),
                    )  # fmt: skip
                held.out = self._finish(held.request, held.response, result)
            except Exception:  # never lose a held page
                logger.error("detemplate: failed on held %s; passed on unchanged", held.response.url, exc_info=True)
                self._inc("detemplate/error")
            self._inc(f"detemplate/rtdm/released/{reason}")
        for held in pages:
            held.waiter.callback(held.out if held.out is not None else held.response)

    def _start_timer(self) -> None:
        if self._timer is not None or (self.holder is None and self.first_pages is None):
            return
        seconds = [self.holder.seconds] if self.holder is not None else []
        seconds += [self.first_pages.wait] if self.first_pages is not None else []
        self._timer = _looping_call(self._tick)
        self._timer.start(min(1.0, *(s / 4 for s in seconds)), now=False)

    def _stop_timer(self) -> None:
        if self._timer is not None and self._timer.running:
            self._timer.stop()

    def _tick(self) -> None:
        """Let go of held pages when the crawl closes or has nothing else to do, or when they waited too long."""
        pages = self.first_pages
        holder = self.holder
        held = holder.count if holder is not None else 0
        waiting = pages.waiting_items if pages is not None else 0
        if pages is not None and pages.waiting:
            try:
                state = _crawl_state(self._crawler, held, waiting)
                if state:
                    pages.let_all_go(state)
                else:
                    pages.expire()
            except Exception:
                logger.error("detemplate: could not let first pages go", exc_info=True)
        if holder is None:
            return
        try:
            state = _crawl_state(self._crawler, held, waiting)
            if state == "closed":
                self._closing = True
            if state and holder.count:
                holder.release_all(state)
            else:
                holder.expire()
        except Exception:
            logger.error("detemplate: could not release held pages", exc_info=True)

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)


async def _wait(waiter: Deferred[Response]) -> Response:
    return await maybe_deferred_to_future(waiter)


def _looping_call(func: Callable[[], None]) -> Any:
    try:  # Scrapy >= 2.14: asyncio or Twisted, whichever runs the crawl
        from scrapy.utils.asyncio import create_looping_call
    except ImportError:
        from twisted.internet.task import LoopingCall

        return LoopingCall(func)
    return create_looping_call(func)


def _crawl_state(crawler: Crawler | None, held: int, waiting: int = 0) -> str:
    """``"closed"`` when the spider is closing, ``"idle"`` when nothing but ``held``
    pages (rtdm) or ``waiting`` items (of sites' first pages) is left to download or
    scrape (no page can come to teach a site), else ``""``.

    The engine waits for every request in flight before it closes, and a held
    page is one, so spider_closed would never come: the closing is read from the
    engine's slot (private in Scrapy, read defensively: unknown means go on).
    A waiting item keeps its response in the scraper's slot, so with ``waiting``
    items the slot's active responses are theirs.
    """
    engine = getattr(crawler, "engine", None)
    if engine is None:
        return ""
    slot = getattr(engine, "_slot", None)
    if slot is None or getattr(slot, "closing", None) is not None:
        return "closed"
    try:
        scraper = engine.scraper.slot
        idle = (
            len(engine.downloader.active) <= held
            and not scraper.queue
            and scraper.itemproc_size <= waiting
            and (waiting > 0 or not scraper.active)
            and getattr(engine, "_start", None) is None
            and not slot.scheduler.has_pending_requests()
        )
    except AttributeError:
        return ""
    return "idle" if idle else ""


def _headers(response: Response) -> dict[str, str]:
    content_type = response.headers.get(b"Content-Type")
    if content_type:
        return {"Content-Type": content_type.decode("latin-1")}
    if not isinstance(response, TextResponse):
        # No header and Scrapy did not see text: not something to clean.
        return {"Content-Type": "application/octet-stream"}
    return {}


class ItemFiller:
    """Writes a result's fields into an item (shared by the spider middleware and the pipeline)."""

    def __init__(self, config: DetemplateConfig, stats: StatsCollector | None = None) -> None:
        self.fields = [
            (config.text_field, "text"),
            (config.html_field, "html"),
            (config.markdown_field, "markdown"),
            (config.method_field, "method"),
        ]
        self.overwrite = config.overwrite_fields
        self.stats = stats
        self._warned = False

    def fill(self, item: Any, result: CleanResult) -> list[str]:
        """Write ``result`` into ``item``; the fields written."""
        if result.status == "passthrough" and not result.text:
            return []  # nothing to say (non-HTML, empty, too large): the item stays as it is
        adapter = ItemAdapter(item)
        written = []
        for field, attr in self.fields:
            if not field:
                continue
            if not self.overwrite and adapter.get(field) not in (None, ""):
                continue
            try:
                adapter[field] = getattr(result, attr)
                written.append(field)
            except KeyError:  # an Item class that does not declare the field
                if self.stats is not None:
                    self.stats.inc_value("detemplate/item_field_missing")
                if not self._warned:
                    self._warned = True
                    logger.warning(
                        "detemplate: %s has no field %r; declare it or set DETEMPLATE_*_FIELD (logged once)",
                        type(item).__name__, field,
                    )  # fmt: skip
                continue
        if self.stats is not None:
            self.stats.inc_value("detemplate/items_filled")
        return written

    def refill(self, item: Any, result: CleanResult, fields: list[str]) -> None:
        """Write ``result`` again into the ``fields`` of ``item`` that :meth:`fill` wrote."""
        adapter = ItemAdapter(item)
        for field, attr in self.fields:
            if field and field in fields:
                adapter[field] = getattr(result, attr)
        if self.stats is not None:
            self.stats.inc_value("detemplate/first_page/items_filled_again")


class DetemplateSpiderMiddleware:
    """Puts the template-free content of a response into the items its callback yields."""

    def __init__(self, filler: ItemFiller, first_pages: FirstPages | None = None) -> None:
        self.filler = filler
        self.first_pages = first_pages

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DetemplateSpiderMiddleware:
        if not crawler.settings.getbool("DETEMPLATE_ENABLED", True):
            raise NotConfigured("DETEMPLATE_ENABLED is off")
        return cls(ItemFiller(engine_for(crawler).config, crawler.stats), first_pages_for(crawler))

    def _fill(self, response: Response, element: Any) -> Any:
        # Most of what a crawling callback yields is requests: they are never items, and
        # itemadapter's is_item asks every adapter it knows (tens of microseconds each).
        if isinstance(element, Request):
            return element
        if is_item(element):
            result = response.meta.get(META_KEY) if response.request is not None else None
            # Only the result computed for this very response (the downloader middleware
            # drops copied ones; the URL check holds where it did not see the response).
            if isinstance(result, CleanResult) and result.url == response.url:
                try:
                    fields = self.filler.fill(element, result)
                    if self.first_pages is not None:
                        self.first_pages.hold(result, element, fields)  # its page may be cleaned again
                except Exception:
                    logger.error("detemplate: could not fill an item from %s", response.url, exc_info=True)
        return element

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        for element in result:
            yield self._fill(response, element)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        async for element in result:
            yield self._fill(response, element)
