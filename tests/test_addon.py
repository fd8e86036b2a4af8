from __future__ import annotations

import pytest
from scrapy.utils.test import get_crawler

from scrapy_detemplate import DEFAULT_SETTINGS, Addon
from scrapy_detemplate._firstpages import ACTIVE_ROOM, first_pages_for, limit_active
from scrapy_detemplate.middlewares import DetemplateDownloaderMiddleware, DetemplateSpiderMiddleware
from scrapy_detemplate.pipelines import DetemplatePipeline


def components(settings: dict) -> dict:
    crawler = get_crawler(settings_dict=settings)
    crawler._apply_settings()
    keys = ("DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "ITEM_PIPELINES", *DEFAULT_SETTINGS)
    return {
        "SCRAPER_SLOT_MAX_ACTIVE_SIZE": crawler.settings.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE"),
        **{key: crawler.settings.get(key) if key.startswith("DETEMPLATE") else crawler.settings.getdict(key)
           for key in keys},
    }  # fmt: skip


def test_the_addon_equals_configuring_everything_by_hand():
    by_hand = {
        "DOWNLOADER_MIDDLEWARES": {DetemplateDownloaderMiddleware: 540},
        "SPIDER_MIDDLEWARES": {DetemplateSpiderMiddleware: 550},
        "ITEM_PIPELINES": {DetemplatePipeline: 100},
        "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 5_000_000 + 32 * 1024 * 1024,  # as README says
        **DEFAULT_SETTINGS,
    }
    assert components({"ADDONS": {Addon: 0}}) == components(by_hand)


def test_the_addon_keeps_user_settings_and_priorities():
    settings = components(
        {"ADDONS": {Addon: 0}, "DETEMPLATE_TEXT_FIELD": "body_text", "ITEM_PIPELINES": {DetemplatePipeline: 900}}
    )
    assert settings["DETEMPLATE_TEXT_FIELD"] == "body_text"
    assert settings["ITEM_PIPELINES"] == {DetemplatePipeline: 900}


DEFAULT_SIZE = 5_000_000  # Scrapy's SCRAPER_SLOT_MAX_ACTIVE_SIZE


@pytest.mark.parametrize(
    ("settings", "size"),
    [
        ({}, DEFAULT_SIZE + ACTIVE_ROOM),  # a first page's items wait with their responses: room for them
        ({"SCRAPER_SLOT_MAX_ACTIVE_SIZE": 6_000_000}, 6_000_000),  # the project's own size
        ({"SCRAPER_SLOT_MAX_ACTIVE_SIZE": DEFAULT_SIZE}, DEFAULT_SIZE),  # even when it is Scrapy's default
        ({"DETEMPLATE_FIRST_PAGE_WAIT": 0}, DEFAULT_SIZE),  # nothing waits
        ({"DETEMPLATE_FIRST_PAGE_PEERS": 0}, DEFAULT_SIZE),
        ({"DETEMPLATE_METHOD": "sandwich"}, DEFAULT_SIZE),
        ({"DETEMPLATE_REPLACE_BODY": True}, DEFAULT_SIZE),
        ({"DETEMPLATE_ENABLED": False}, DEFAULT_SIZE),
        ({"DETEMPLATE_FIRST_PAGE_WAIT": "soon"}, DEFAULT_SIZE),  # invalid: the crawl fails at start-up anyway
    ],
)
def test_the_addon_makes_room_in_the_scraper_for_waiting_first_pages_only_when_they_wait(settings, size):
    crawler = get_crawler(settings_dict={"ADDONS": {Addon: 0}, **settings})
    crawler._apply_settings()
    assert crawler.settings.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE") == size


def test_the_waiting_first_pages_leave_scrapys_own_flow_its_room():
    assert limit_active(DEFAULT_SIZE) == DEFAULT_SIZE // 2  # by hand, Scrapy's default: half, as before
    assert limit_active(DEFAULT_SIZE + ACTIVE_ROOM) == DEFAULT_SIZE // 2 + ACTIVE_ROOM  # the add-on's room on top
    assert limit_active(2000) == 1000  # a small size: never more than half
    crawler = get_crawler(settings_dict={"ADDONS": {Addon: 0}})
    crawler._apply_settings()
    pages = first_pages_for(crawler)
    assert pages is not None and pages.limit_active == DEFAULT_SIZE // 2 + ACTIVE_ROOM
