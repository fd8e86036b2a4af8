"""``ADDONS = {"scrapy_detemplate.Addon": 0}`` turns everything on with defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.settings import SETTINGS_PRIORITIES

from scrapy_detemplate._firstpages import ACTIVE_ROOM
from scrapy_detemplate.config import DEFAULT_SETTINGS, DetemplateConfig
from scrapy_detemplate.middlewares import DetemplateDownloaderMiddleware, DetemplateSpiderMiddleware
from scrapy_detemplate.pipelines import DetemplatePipeline

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: Where the components sit.  The downloader middleware's 540 is below
#: HttpCompressionMiddleware (590), RedirectMiddleware (600) and
#: RetryMiddleware (550), so it sees final, decompressed responses once.
DOWNLOADER_MIDDLEWARE_PRIORITY = 540
SPIDER_MIDDLEWARE_PRIORITY = 550
PIPELINE_PRIORITY = 100


class Addon:
    """Registers the downloader middleware, the spider middleware and the pipeline, and makes room in
    Scrapy's scraper for the first pages' items that wait (:func:`make_room_for_first_pages`)."""

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        settings.setdefault_in_component_priority_dict(
            "DOWNLOADER_MIDDLEWARES", DetemplateDownloaderMiddleware, DOWNLOADER_MIDDLEWARE_PRIORITY
        )
        settings.setdefault_in_component_priority_dict(
            "SPIDER_MIDDLEWARES", DetemplateSpiderMiddleware, SPIDER_MIDDLEWARE_PRIORITY
        )
        settings.setdefault_in_component_priority_dict("ITEM_PIPELINES", DetemplatePipeline, PIPELINE_PRIORITY)
        for name, value in DEFAULT_SETTINGS.items():
            settings.setdefault(name, value, "addon")
        make_room_for_first_pages(settings)


def make_room_for_first_pages(settings: BaseSettings) -> None:
    """Add :data:`~scrapy_detemplate._firstpages.ACTIVE_ROOM` to ``SCRAPER_SLOT_MAX_ACTIVE_SIZE`` when
    a site's first page's items will wait (``DETEMPLATE_FIRST_PAGE_WAIT``) and the project leaves that
    size at Scrapy's default.

    A waiting item keeps its response in Scrapy's scraper, which past that size stops the downloads;
    the wait therefore keeps the first pages' responses under what the size leaves them.  Scrapy's
    5 MB leaves them 2.5 MB: the first pages of 8 sites of 300 kB pages (a shop's or a news site's
    today), so a crawl of more sites let most first pages go before a next page of their site came.
    A size the project sets is its own: left as it is.
    """
    if settings.getpriority("SCRAPER_SLOT_MAX_ACTIVE_SIZE") != SETTINGS_PRIORITIES["default"]:
        return
    if not settings.getbool("DETEMPLATE_ENABLED", True):
        return
    try:
        on = DetemplateConfig.from_settings(settings).cleans_first_pages_again
    except Exception:  # an invalid setting fails the crawl at start-up, naming itself
        return
    if on:
        size = settings.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE", 5_000_000)
        settings.set("SCRAPER_SLOT_MAX_ACTIVE_SIZE", size + ACTIVE_ROOM, priority="addon")
