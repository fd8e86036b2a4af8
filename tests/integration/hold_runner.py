"""Runs one real Scrapy crawl for the rtdm hold tests, in its own process.

    python hold_runner.py '{"settings": {...}, "urls": [...], "stop_url": URL, "wait_held": N, "out": DIR}'

Fetches ``urls``; with ``stop_url``, the spider's start() then waits until
``wait_held`` pages are held (the crawl's own ``detemplate/rtdm/held`` stat)
and fetches ``stop_url`` with ``dont_detemplate``: with
``CLOSESPIDER_PAGECOUNT=1`` that response, the first to leave the downloader,
closes the spider while the others are held.  Items go to ``DIR/items.jsonl``
through a real feed export; the stats to ``DIR/stats.json``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import scrapy
from scrapy.crawler import CrawlerProcess

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, or collected by pytest

from crawl_runner import crawl_settings, write_stats


class HoldSpider(scrapy.Spider):
    name = "hold"

    def __init__(self, urls: list[str], stop_url: str = "", wait_held: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls
        self.stop_url = stop_url
        self.wait_held = wait_held

    async def start(self):  # type: ignore[no-untyped-def]
        for url in self.urls:
            yield scrapy.Request(url, dont_filter=True)
        if not self.stop_url:
            return
        for _ in range(1200):  # a bound, not a timing: the test then fails on its counts instead of hanging
            if (self.crawler.stats.get_value("detemplate/rtdm/held") or 0) >= self.wait_held:
                break
            await asyncio.sleep(0.05)
        yield scrapy.Request(self.stop_url, meta={"dont_detemplate": True}, dont_filter=True)

    def parse(self, response, **kwargs):  # type: ignore[no-untyped-def]
        result = response.meta.get("detemplate")
        yield {
            "url": response.url,
            "result_status": getattr(result, "status", None),
            "result_reason": getattr(result, "reason", None),
        }


def main() -> None:
    job = json.loads(sys.argv[1])
    out = Path(job["out"])
    process = CrawlerProcess(crawl_settings(out, {"ADDONS": {"scrapy_detemplate.Addon": 0}, **job.get("settings", {})}))
    crawler = process.create_crawler(HoldSpider)
    process.crawl(crawler, urls=job["urls"], stop_url=job.get("stop_url", ""), wait_held=job.get("wait_held", 0))
    process.start()
    write_stats(crawler, out)


if __name__ == "__main__":
    main()
