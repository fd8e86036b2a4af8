"""scrapy-redis' own scheduler, dupefilter and item pipeline, two worker processes, one redis-server.

Each worker is a real process (``redis_worker.py``, a ``RedisSpider``) crawling the demo site served
on 127.0.0.1 with a small delay per page (so both workers take part, and a worker is killed while it
holds requests).  The add-on shares learned state in the same Redis (``DETEMPLATE_REDIS_URL``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import demosite
import pytest

from scrapy_detemplate.store import loads

from .redis_server import RedisServer

pytest.importorskip("scrapy_redis", reason="scrapy-redis is not installed (pip install -e '.[test]')")

pytestmark = pytest.mark.integration

WORKER = Path(__file__).with_name("redis_worker.py")
PAGE_DELAY = 0.05  # seconds the server takes per page


class SlowHandler(BaseHTTPRequestHandler):
    """Serves the demo pages after a delay; counts requests per worker (User-Agent) and in flight.

    A request of a worker that ``hold`` names, or past the number of requests ``hold_after`` gives its worker
    (counted as they arrive), waits until ``released`` is set, its worker leaves ``hold`` (unless it is past
    its number), or 30 s pass.
    """

    pages: ClassVar[dict[str, demosite.Page]] = {}
    delay: ClassVar[float] = PAGE_DELAY
    lock: ClassVar[threading.Lock] = threading.Lock()
    in_flight: ClassVar[Counter[str]] = Counter()
    served: ClassVar[Counter[str]] = Counter()
    requested: ClassVar[dict[str, set[str]]] = {}
    hold: ClassVar[list[str]] = []
    hold_after: ClassVar[dict[str, int]] = {}
    received: ClassVar[Counter[str]] = Counter()
    released: ClassVar[threading.Event] = threading.Event()

    def do_GET(self) -> None:
        who = self.headers.get("User-Agent", "")
        with self.lock:
            self.in_flight[who] += 1
            self.requested.setdefault(who, set()).add(self.path)
            self.received[who] += 1
            past = self.received[who] > self.hold_after.get(who, self.received[who])
        try:
            time.sleep(self.delay)
            deadline = time.monotonic() + 30
            while (past or who in self.hold) and time.monotonic() < deadline and not self.released.wait(0.02):
                pass
            demosite.send_page(self, self.pages.get(self.path.split("?")[0]))
        finally:
            with self.lock:
                self.in_flight[who] -= 1
                self.served[who] += 1

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[tuple[dict[str, demosite.Page], str, type[SlowHandler]]]:
    pages = demosite.build_site(articles_per_section=12)  # 54 pages
    fresh = {"pages": pages, "in_flight": Counter(), "served": Counter(), "requested": {}, "hold": []}
    fresh.update(hold_after={}, received=Counter())
    fresh["released"] = threading.Event()
    handler = type("Handler", (SlowHandler,), fresh)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield pages, f"http://127.0.0.1:{server.server_address[1]}", handler
    handler.released.set()
    server.shutdown()


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    srv = RedisServer()
    yield srv
    srv.stop()


#: How long a wait for the workers' progress may take: a worker is a new process that imports Scrapy
#: and reads the model, seconds on an idle machine; once, with two training runs on the same two cores,
#: a 60-second wait timed out. A wait ends as soon as what it waits for is there.
PATIENCE = 180.0


class Worker:
    def __init__(self, name: str, server: RedisServer, out: Path, follow: bool, settings: dict[str, Any]) -> None:
        self.name, self.out = name, out / name
        self.out.mkdir(parents=True)
        job = {"name": name, "redis_url": server.url, "follow": follow, "out": str(self.out), "settings": settings}
        self.log = (self.out / "log.txt").open("w")
        self.proc = subprocess.Popen([sys.executable, str(WORKER), json.dumps(job)], stderr=self.log, text=True)

    def wait(self, timeout: float = 2 * PATIENCE) -> dict[str, Any]:
        """Wait for a normal exit (bounded); the worker's stats."""
        try:
            self.proc.wait(timeout=timeout)
        finally:
            self.stop()
        assert self.proc.returncode == 0, (self.out / "log.txt").read_text()[-3000:]
        return dict(json.loads((self.out / "stats.json").read_text()))

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.log.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.close()


def items(server: RedisServer) -> list[dict[str, Any]]:
    client = server.client()
    rows = [json.loads(raw) for raw in client.lrange("site:items", 0, -1)]
    client.close()
    return rows


def feed(server: RedisServer, urls: list[str]) -> None:
    client = server.client()
    client.rpush("site:start_urls", *[json.dumps({"url": url}) for url in urls])
    client.close()


def wait_until(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_two_workers_crawl_every_page_once_and_share_what_they_learn(site, redis, tmp_path):
    pages, base, handler = site
    settings = {"CONCURRENT_REQUESTS": 2, "DETEMPLATE_METHOD": "rtdm", "DETEMPLATE_RTDM_MAX_PAGES": 4}
    # Start URLs for both (a batch is CONCURRENT_REQUESTS URLs); every other page is found through links.
    feed(redis, [base + "/", base + "/about.html", *(f"{base}/{s}/" for s in demosite.SECTIONS)])
    # The server holds each worker's first requests until both have asked for a page: a worker that starts
    # first would otherwise crawl the whole site before the other one's engine looks for work (an idle
    # Scrapy engine polls its scheduler every 5 seconds).
    # And each page takes 0.4 s, so the crawl outlasts that poll: a worker that went idle early comes back.
    handler.hold.extend(["worker-a", "worker-b"])
    handler.delay = 0.4
    workers = [Worker(name, redis, tmp_path, follow=True, settings=settings) for name in ("a", "b")]
    try:

        def both_asked() -> bool:
            with handler.lock:
                return {"worker-a", "worker-b"} <= handler.requested.keys()

        wait_until(both_asked, PATIENCE, "both workers to ask for a page")
        handler.released.set()
        stats = {w.name: w.wait() for w in workers}
    finally:
        for w in workers:
            w.stop()

    crawled = items(redis)
    by_url = Counter(item["url"].removeprefix(base) for item in crawled)
    assert set(by_url) == set(pages)  # every page of the site
    assert max(by_url.values()) == 1  # once, across both workers (the shared dupefilter)
    assert sum(handler.served.values()) == len(pages)  # the server agrees: no page fetched twice
    per_worker = Counter(item["worker"] for item in crawled)
    assert per_worker["a"] > 0 and per_worker["b"] > 0, per_worker  # both took part
    # Every item has its page's template-free text: article text kept, the template gone.
    for item in crawled:
        page = pages[item["url"].removeprefix(base)]
        assert item["content"], item
        for line in page.article:
            assert line in item["content"], (item["url"], line)
        if item["result_reason"] == "applied":
            left = set(demosite.TEMPLATE_LINES) & {line.strip() for line in item["content"].splitlines()}
            assert not left, (item["url"], left)

    # Learned state is shared: one rtdm state in Redis under the add-on's prefix, one template, learned once
    # (two workers learning apart would take two sets of sample pages), applied by both workers.
    client = redis.client()
    keys = client.keys("site:detemplate:rtdm:*")
    state = loads(client.get(keys[0])) if len(keys) == 1 else None
    client.close()
    assert len(keys) == 1, keys
    assert isinstance(state, dict) and len(state["templates"]) == 1 and state["learner"] is None
    reasons = Counter(item["result_reason"] for item in crawled)
    assert reasons["learning"] <= settings["DETEMPLATE_RTDM_MAX_PAGES"], reasons
    for name in ("a", "b"):
        assert stats[name].get("detemplate/cleaned/applied", 0) > 0, (name, stats[name])
        assert not [k for k in stats[name] if k.startswith(("detemplate/state/redis_error", "detemplate/error"))]


def test_a_worker_killed_mid_crawl_loses_nothing_once_its_requests_are_fed_again(site, redis, tmp_path):
    """SIGKILL one worker while it holds requests; the other finishes the queue; nothing is lost.

    scrapy-redis removes a request from the shared queue when a worker pops it: what the killed worker had
    popped and not finished is gone (scrapy-redis delivers at most once).  Items reach Redis as each is
    scraped (RedisPipeline), so what the killed worker finished is kept.  The set-up that loses nothing:
    the URLs to crawl are known (a seed list, a sitemap), each item carries its URL, and after the crawl
    the URLs with no item are fed again and crawled by any worker (start requests of a URL-list crawl are
    not filtered, scrapy-redis' default: the dupefilter saw the lost ones and would drop them).
    """
    pages, base, handler = site
    urls = [base + path for path in sorted(pages)]
    settings = {"CONCURRENT_REQUESTS": 4, "DETEMPLATE_METHOD": "combined"}
    feed(redis, urls)
    # "a" must hold requests when it is killed. Once, "b" crawled the whole list while the engine of "a" waited
    # for its first 5-second idle poll to read start URLs: "a" had no request to hold. So the server holds the
    # requests of "b" until "a" has asked for a page, and those of "a" past its first two from the start.
    handler.hold.append("worker-b")
    handler.hold_after["worker-a"] = 2
    a = Worker("a", redis, tmp_path, follow=False, settings=settings)
    b = Worker("b", redis, tmp_path, follow=False, settings=settings)
    try:
        wait_until(lambda: "worker-a" in handler.requested, PATIENCE, "worker a to ask for a page")
        handler.hold.remove("worker-b")
        # Kill "a" in the middle of the crawl, while the server holds requests of its (they cannot finish).
        wait_until(lambda: len(items(redis)) >= len(urls) // 4, PATIENCE, "a quarter of the pages")
        wait_until(lambda: handler.in_flight["worker-a"] > 0, PATIENCE, "a request of worker a in flight")
        held = handler.in_flight["worker-a"]
        a.kill()
        handler.released.set()
        b.wait()  # "b" finishes the queue alone
    finally:
        a.stop()
        b.stop()

    done = {item["url"] for item in items(redis)}
    lost = [url for url in urls if url not in done]
    # What scrapy-redis loses: only requests the killed worker had popped (at most its CONCURRENT_REQUESTS
    # in flight, and one batch of start URLs); at least the one the server was answering when it died.
    assert held >= 1 and 1 <= len(lost) <= 2 * settings["CONCURRENT_REQUESTS"], (held, lost)
    # Popped by "a", none else: the start URLs it took from the list and the requests that reached its
    # downloader (the server sees only those it sent before it died).
    assert set(lost) <= set((tmp_path / "a" / "taken.txt").read_text().split())
    client = redis.client()
    assert client.llen("site:start_urls") == 0 and client.zcard("site:requests") == 0  # the queue is finished
    client.close()

    # Feed the lost URLs again; a worker crawls them.
    feed(redis, lost)
    Worker("c", redis, tmp_path, follow=False, settings=settings).wait()
    crawled = items(redis)
    by_url = Counter(item["url"] for item in crawled)
    assert set(by_url) == set(urls) and max(by_url.values()) == 1  # every page, once
    assert all(item["content"] for item in crawled)
