"""``ADDONS = {"scrapy_detemplate.Addon": 0}`` turns everything on with defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_detemplate.config import DEFAULT_SETTINGS
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
    """Registers the downloader middleware, the spider middleware and the pipeline."""

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
