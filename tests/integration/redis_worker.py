"""One scrapy-redis worker in its own process, as ``scrapy crawl`` would run it on a machine of a cluster.

    python redis_worker.py '{"name": "a", "redis_url": "redis://...", "follow": true, "out": DIR, "settings": {...}}'

The spider is a ``scrapy_redis.spiders.RedisSpider``: it takes its start URLs from the Redis list
``site:start_urls`` (JSON ``{"url": ...}``), its requests go through scrapy-redis' shared scheduler
queue and dupefilter, and its items to the shared Redis list ``site:items`` (scrapy-redis'
``RedisPipeline``), as each is scraped, so an item a worker finished is kept even if the worker is
killed.  With ``follow`` it follows every link of the page; without, it fetches exactly the URLs fed.
The add-on shares learned state through ``DETEMPLATE_REDIS_URL``.  The worker closes after
``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds with nothing to do; its stats go to ``DIR/stats.json``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response
from scrapy_redis.spiders import RedisSpider

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_runner import write_stats


class SiteWorker(RedisSpider):
    name = "site"
    redis_key = "site:start_urls"

    def __init__(self, worker: str = "", follow: bool = True, taken: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.worker = worker
        self.follow = follow
        self.taken = taken

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> SiteWorker:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.reached_downloader, signal=signals.request_reached_downloader)
        return spider

    def took(self, url: str) -> None:
        """A URL this worker took from Redis (a start URL from the list, a request from the shared queue
        that reached its downloader): written at once, so a worker killed right after has said so."""
        if self.taken:
            with open(self.taken, "a", encoding="utf-8") as out:
                out.write(url + "\n")

    def reached_downloader(self, request: scrapy.Request) -> None:
        self.took(request.url)

    def make_request_from_data(self, data: bytes) -> scrapy.Request:
        # scrapy-redis' own makes start requests with dont_filter=True: following links, a start URL would
        # be fetched again when a page links to it, so they are filtered then, and every URL is fetched once
        # across the workers.  A URL-list crawl keeps them unfiltered: a URL fed again is fetched again.
        url = json.loads(data)["url"]
        self.took(url)
        return scrapy.Request(url, callback=self.parse, dont_filter=not self.follow)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        result = response.meta.get("detemplate")
        yield {
            "url": response.url,
            "worker": self.worker,
            "result_status": getattr(result, "status", None),
            "result_reason": getattr(result, "reason", None),
        }
        if self.follow:
            yield from response.follow_all(css="a::attr(href)", callback=self.parse)


def worker_settings(job: dict[str, Any]) -> dict[str, Any]:
    return {
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "USER_AGENT": f"worker-{job['name']}",  # the test's server sees which worker fetches what
        # scrapy-redis: one request queue and one dupefilter for every worker, items to Redis.
        "REDIS_URL": job["redis_url"],
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": True,
        "ITEM_PIPELINES": {"scrapy_redis.pipelines.RedisPipeline": 300},
        "MAX_IDLE_TIME_BEFORE_CLOSE": 3,
        # scrapy-detemplate: learned state shared in the same Redis.
        "ADDONS": {"scrapy_detemplate.Addon": 0},
        "DETEMPLATE_REDIS_URL": job["redis_url"],
        **job.get("settings", {}),
    }


def main() -> None:
    job = json.loads(sys.argv[1])
    out = Path(job["out"])
    process = CrawlerProcess(worker_settings(job))
    crawler = process.create_crawler(SiteWorker)
    process.crawl(crawler, worker=job["name"], follow=job.get("follow", True), taken=str(out / "taken.txt"))
    process.start()
    write_stats(crawler, out)


if __name__ == "__main__":
    main()
