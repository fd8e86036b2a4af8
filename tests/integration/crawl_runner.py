"""Runs one real Scrapy crawl in its own process (a Twisted reactor starts once).

    python crawl_runner.py '{"settings": {...}, "start_url": "...", "urls": [[url, meta], ...], "out": DIR}'

With ``start_url`` it runs the example project's spider (follows every link);
with ``urls`` it fetches exactly those and yields one item per response with a
digest of the body the spider saw (and requests ``meta["then"]``'s ``[url, priority]``
after it); with ``follow`` (``{"start": url, "links":
[[url, meta], ...]}``) it fetches ``start``, then, from its callback, each link
with a copy of the start response's meta updated with that link's meta, as
spiders commonly do, and yields one item per response.  Items go to ``DIR/items.jsonl`` through a
real feed export; the crawl's stats to ``DIR/stats.json``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.crawler import Crawler, CrawlerProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "example_project"))

from demo.spiders.site import SiteSpider


class ListSpider(scrapy.Spider):
    name = "list"

    def __init__(self, urls: list[list[Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls

    async def start(self):  # type: ignore[no-untyped-def]
        for url, meta in self.urls:
            yield scrapy.Request(url, meta=dict(meta), dont_filter=True)

    def parse(self, response, **kwargs):  # type: ignore[no-untyped-def]
        yield {
            "url": response.url,
            "status": response.status,
            "length": len(response.body),
            "sha256": hashlib.sha256(response.body).hexdigest(),
            "result_status": getattr(response.meta.get("detemplate"), "status", None),
            "result_reason": getattr(response.meta.get("detemplate"), "reason", None),
        }
        for url, priority in response.meta.get("then", []):  # links found on the page, in the scheduler's order
            yield scrapy.Request(url, priority=priority, dont_filter=True)


class FollowSpider(scrapy.Spider):
    """Follows links with ``meta={**response.meta, ...}`` (common practice)."""

    name = "follow"

    def __init__(self, follow: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.follow = follow

    async def start(self):  # type: ignore[no-untyped-def]
        yield scrapy.Request(self.follow["start"], callback=self.parse_start)

    def parse_start(self, response, **kwargs):  # type: ignore[no-untyped-def]
        yield {"url": response.url, "status": response.status}
        for url, meta in self.follow["links"]:
            yield response.follow(url, self.parse, meta={**response.meta, **meta}, dont_filter=True)

    def parse(self, response, **kwargs):  # type: ignore[no-untyped-def]
        yield {"url": response.url, "status": response.status}


def site_of_path(url: str) -> str:
    """A site key for many sites on one test server: the host and the path's first segment
    (``DETEMPLATE_SITE_KEY = "crawl_runner.site_of_path"``)."""
    parts = urlsplit(url)
    return f"{parts.netloc}/{parts.path.lstrip('/').split('/', 1)[0]}"


def crawl_settings(out: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """Quiet local-crawl settings, items to ``out/items.jsonl`` through a real feed, then ``settings``."""
    return {
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "FEED_EXPORT_ENCODING": "utf-8",
        "FEEDS": {str(out / "items.jsonl"): {"format": "jsonlines"}},
        **settings,
    }


def write_stats(crawler: Crawler, out: Path) -> None:
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
    (out / "stats.json").write_text(json.dumps(stats, indent=1))


def main() -> None:
    job = json.loads(sys.argv[1])
    out = Path(job["out"])
    process = CrawlerProcess(crawl_settings(out, job.get("settings", {})))
    if "urls" in job:
        crawler = process.create_crawler(ListSpider)
        process.crawl(crawler, urls=job["urls"])
    elif "follow" in job:
        crawler = process.create_crawler(FollowSpider)
        process.crawl(crawler, follow=job["follow"])
    else:
        crawler = process.create_crawler(SiteSpider)
        process.crawl(crawler, start_url=job["start_url"])
    process.start()
    write_stats(crawler, out)


if __name__ == "__main__":
    main()
