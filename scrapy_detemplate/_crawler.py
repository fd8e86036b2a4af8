"""One engine per crawler, shared by the middlewares and the pipeline; stats."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import CleanResult, Detemplater

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger("scrapy_detemplate")

META_KEY = "detemplate"
ORIGINAL_BODY_META_KEY = "detemplate_original_body"
SKIP_META_KEY = "dont_detemplate"

# Keyed by crawler, so it lives exactly as long as the crawl.
_ENGINES: WeakKeyDictionary[Crawler, Detemplater] = WeakKeyDictionary()


def engine_for(crawler: Crawler) -> Detemplater:
    """The crawler's engine, built (and the settings validated) on first use."""
    engine = _ENGINES.get(crawler)
    if engine is None:
        from scrapy_detemplate.state import lock_runner, open_state

        config = DetemplateConfig.from_settings(crawler.settings)
        engine = Detemplater(config, open_state(crawler, config))  # JOBDIR / Redis / bounded memory
        engine.runner = lock_runner(engine.runner, engine.store)  # per-site locks in a shared store
        _ENGINES[crawler] = engine
        logger.info("detemplate: method %r enabled", engine.config.method)
        check_components(crawler, config)
        report_compiled(crawler.stats)
        if config.method == "rtdm":
            report_walk(crawler.stats)
    return engine


def report_compiled(stats: StatsCollector | None) -> None:
    """Say once, at start-up, whether the compiled modules run (stats ``detemplate/compiled``:
    1 when every one loaded, the default's and the Markdown walk, else 0 and a warning naming
    what is missing and why)."""
    from scrapy_detemplate import _compiled
    from scrapy_detemplate.methods.rtdm import WALK_MODULE

    # rtdm's walk is reported on its own (report_walk), with its own stat, when rtdm runs.
    status = {name: why for name, why in _compiled.status().items() if name != WALK_MODULE}
    missing = {name: why for name, why in status.items() if why}
    if missing:
        logger.warning(
            "detemplate: running the Python functions instead of %s, about four times the time for the "
            "default (same results): %s", ", ".join(sorted(missing)), "; ".join(missing.values()),
        )  # fmt: skip
    else:
        logger.info("detemplate: compiled modules in use: %s", ", ".join(sorted(status)))
    if stats is not None:
        stats.set_value("detemplate/compiled", int(not missing))


def report_walk(stats: StatsCollector | None) -> None:
    """Say once, at start-up, whether rtdm removes templates with the compiled walk
    (stats ``detemplate/rtdm/compiled_walk``: 1 or 0); it turns off without a word
    when the extension is missing or was built against another lxml."""
    from scrapy_detemplate.methods.rtdm import compiled_walk

    in_use, why_not = compiled_walk()
    if in_use:
        logger.info("detemplate: rtdm removes templates with the compiled walk (scrapy_detemplate.methods._walk)")
    else:
        logger.warning("detemplate: rtdm removes templates with the Python walk, about twice the time: %s", why_not)
    if stats is not None:
        stats.set_value("detemplate/rtdm/compiled_walk", int(in_use))


_ADD_ON = "enable the add-on (ADDONS = {'scrapy_detemplate.Addon': 0}, in the ADDONS dict settings.py has) or"


def check_components(crawler: Crawler, config: DetemplateConfig) -> None:
    """Warn, once per crawl, about a hand configuration that cannot fill items.

    Only what a running component can see: a configuration that enables none
    of them (the add-on line pasted above ``ADDONS = {}``) runs no code of
    ours, so nothing can warn about it.
    """
    from scrapy_detemplate.middlewares import DetemplateDownloaderMiddleware, DetemplateSpiderMiddleware
    from scrapy_detemplate.pipelines import DetemplatePipeline

    downloader = _enabled(crawler, "DOWNLOADER_MIDDLEWARES", DetemplateDownloaderMiddleware)
    spider = _enabled(crawler, "SPIDER_MIDDLEWARES", DetemplateSpiderMiddleware)
    pipeline = _enabled(crawler, "ITEM_PIPELINES", DetemplatePipeline)
    fields = any((config.text_field, config.html_field, config.method_field))
    if spider and not downloader:
        logger.warning(
            "detemplate: DetemplateSpiderMiddleware is enabled but DetemplateDownloaderMiddleware is not enabled: "
            "no response is cleaned, so no item gets its %r field; %s add it to DOWNLOADER_MIDDLEWARES (540)",
            config.text_field, _ADD_ON,
        )  # fmt: skip
    elif downloader and not spider and fields and not config.source_field:
        logger.warning(
            "detemplate: DetemplateDownloaderMiddleware is enabled but DetemplateSpiderMiddleware is not enabled: "
            "results reach response.meta['detemplate'] only, items get no %r field; %s add it to "
            "SPIDER_MIDDLEWARES (550), or set DETEMPLATE_TEXT_FIELD = '' if meta is all you read",
            config.text_field, _ADD_ON,
        )  # fmt: skip
    elif pipeline and not spider and not downloader and not config.source_field:
        logger.warning(
            "detemplate: DetemplatePipeline is enabled without the middlewares or DETEMPLATE_SOURCE_FIELD: "
            "it fills no item; %s add the middlewares (or set DETEMPLATE_SOURCE_FIELD for items carrying HTML)",
            _ADD_ON,
        )  # fmt: skip


def _enabled(crawler: Crawler, setting: str, component: type) -> bool:
    """Whether ``component`` (or a subclass) is enabled in a component priority dict setting."""
    from scrapy.utils.conf import build_component_list
    from scrapy.utils.misc import load_object

    for entry in build_component_list(crawler.settings.getwithbase(setting)):
        try:
            obj = load_object(entry) if isinstance(entry, str) else entry
        except Exception:  # Scrapy itself reports a path that does not load
            continue
        if isinstance(obj, type) and issubclass(obj, component):
            return True
    return False


def record(stats: StatsCollector | None, result: CleanResult) -> None:
    """Count one result under ``detemplate/`` (a bounded set of keys)."""
    if stats is None:
        return
    stats.inc_value("detemplate/pages")
    if result.status == "passthrough":
        stats.inc_value("detemplate/passed_through")
        stats.inc_value(f"detemplate/passed_through/{result.reason}")
        if result.reason == "error":
            stats.inc_value("detemplate/error")
        return
    stats.inc_value(f"detemplate/{result.status}")
    if result.reason:  # e.g. unchanged/no_peer, cleaned/learning, cleaned/applied
        stats.inc_value(f"detemplate/{result.status}/{result.reason}")
    stats.inc_value(f"detemplate/method/{result.method}")
    stats.inc_value("detemplate/chars_total", result.chars_total)
    stats.inc_value("detemplate/template_chars_removed", result.chars_removed)
    stats.inc_value("detemplate/template_bytes_removed", result.bytes_removed)


def summary(stats: StatsCollector | None) -> str:
    """One line for the crawl log at close."""
    if stats is None:
        return ""
    get = stats.get_value
    pages = get("detemplate/pages", 0)
    total = get("detemplate/chars_total", 0) or 0
    removed = get("detemplate/template_chars_removed", 0) or 0
    share = 100.0 * removed / total if total else 0.0
    return (
        f"detemplate: {pages} pages, {get('detemplate/cleaned', 0)} cleaned, "
        f"{get('detemplate/unchanged', 0)} unchanged, {get('detemplate/passed_through', 0)} passed through; "
        f"{share:.1f}% of visible text removed as template"
    )
