"""State shared in a real redis-server by crawler processes; a dead server does not stop a crawl."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from scrapy_detemplate.store import loads

from .conftest import RUNNER
from .redis_server import RedisServer, free_port

pytestmark = pytest.mark.integration

ADDON = {"ADDONS": {"scrapy_detemplate.Addon": 0}}


@pytest.fixture(scope="module")
def server():
    srv = RedisServer()
    yield srv
    srv.stop()


def launch(out: Path, urls: list[list[Any]], settings: dict[str, Any]) -> subprocess.Popen[str]:
    """Start one crawler process (the ListSpider of crawl_runner.py) without waiting for it."""
    out.mkdir()
    job = json.dumps({"out": str(out), "urls": urls, "settings": {**ADDON, **settings}})
    return subprocess.Popen([sys.executable, str(RUNNER), job], stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str], out: Path) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    _, log = proc.communicate(timeout=120)
    assert proc.returncode == 0, log[-3000:]
    items = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    return items, json.loads((out / "stats.json").read_text()), log


def site_state(server: RedisServer, prefix: str) -> dict[str, Any]:
    client = server.client()
    keys = client.keys(f"{prefix}:rtdm:*")
    assert len(keys) == 1, keys  # one site, one learned state
    state = loads(client.get(keys[0]))
    client.close()
    assert isinstance(state, dict)
    return state


def test_two_processes_learn_one_template_and_match_a_single_process_crawl(site, server, tmp_path):
    pages, base = site
    urls = [[base + path, {}] for path in sorted(pages)]
    settings = {"DETEMPLATE_METHOD": "rtdm", "DETEMPLATE_RTDM_MAX_PAGES": 4, "CONCURRENT_REQUESTS": 2}
    # The reference: one process, all pages (its state in Redis too, under its own prefix, to compare).
    single = launch(tmp_path / "single", urls, {**settings, "DETEMPLATE_REDIS_URL": server.url,
                                                 "DETEMPLATE_REDIS_KEY": "single:detemplate"})  # fmt: skip
    single_items, _, _ = finish(single, tmp_path / "single")
    shared = {**settings, "DETEMPLATE_REDIS_URL": server.url}  # default key: list:detemplate
    a = launch(tmp_path / "a", urls[0::2], shared)
    b = launch(tmp_path / "b", urls[1::2], shared)
    (items_a, stats_a, _), (items_b, stats_b, _) = finish(a, tmp_path / "a"), finish(b, tmp_path / "b")

    # Together they fetched every page once, without a Redis error.
    assert sorted(i["url"] for i in items_a + items_b) == sorted(u for u, _ in urls)
    assert not [k for k in {**stats_a, **stats_b} if k.startswith("detemplate/state/redis_error")]
    # One template learned for the site, the same as the single process learned, and both applied it.
    together, alone = site_state(server, "list:detemplate"), site_state(server, "single:detemplate")
    assert len(together["templates"]) == 1 and together["learner"] is None
    strip = [{k: v for k, v in t.items() if k != "uses"} for t in together["templates"]]
    assert strip == [{k: v for k, v in t.items() if k != "uses"} for t in alone["templates"]]
    reasons_a = Counter(i["result_reason"] for i in items_a)
    reasons_b = Counter(i["result_reason"] for i in items_b)
    assert reasons_a["applied"] > 0 and reasons_b["applied"] > 0
    learning = reasons_a["learning"] + reasons_b["learning"]
    assert learning == Counter(i["result_reason"] for i in single_items)["learning"] == 3  # 4 samples, 1 shared
    # Items equal the single-process crawl's wherever the template was applied in both.
    by_url = {i["url"]: i for i in single_items}
    applied = [i for i in items_a + items_b if i["result_reason"] == by_url[i["url"]]["result_reason"] == "applied"]
    assert len(applied) >= len(urls) - 2 * learning
    for item in applied:
        assert item["content"] == by_url[item["url"]]["content"], item["url"]
        assert item["sha256"] == by_url[item["url"]]["sha256"]


def test_killing_redis_mid_crawl_degrades_to_local_state(site, tmp_path):
    pages, base = site
    srv = RedisServer()
    try:
        urls = [[base + path, {}] for path in sorted(pages)]
        settings = {"DETEMPLATE_REDIS_URL": srv.url, "DETEMPLATE_METHOD": "sandwich", "CONCURRENT_REQUESTS": 1,
                    "DOWNLOAD_DELAY": 0.06}  # fmt: skip
        proc = launch(tmp_path / "crawl", urls, settings)
        client = srv.client()
        deadline = time.monotonic() + 60
        while len(client.keys("list:detemplate:sandwich:*")) < 2:  # the crawl is using Redis
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        srv.kill()
        items, stats, log = finish(proc, tmp_path / "crawl")
    finally:
        srv.stop()
    assert sorted(i["url"] for i in items) == sorted(u for u, _ in urls)  # no page lost
    assert stats["detemplate/state/redis_error"] >= 1
    assert log.count("Redis state store failed") == 1  # logged once
    assert "detemplate/error" not in stats
    assert stats["detemplate/cleaned"] >= len(pages) // 2  # it went on cleaning with local state


def test_unreachable_redis_from_the_start_still_crawls(site, tmp_path):
    pages, base = site
    urls = [[base + path, {}] for path in sorted(pages)[:6]]
    dead = f"redis://127.0.0.1:{free_port()}/0"
    proc = launch(tmp_path / "crawl", urls, {"DETEMPLATE_REDIS_URL": dead, "CONCURRENT_REQUESTS": 1})
    items, stats, _ = finish(proc, tmp_path / "crawl")
    assert len(items) == len(urls)
    assert stats["detemplate/state/redis_error"] >= 1
    assert stats["detemplate/cleaned"] >= 1


def _increment(store: Any, times: int, lock: bool) -> None:
    import contextlib

    for _ in range(times):
        with store.locked("ex.com") if lock else contextlib.nullcontext():
            state = store.get("segments", "ex.com") or {"clock": 0}
            time.sleep(0.0005)  # a page's work between read and write
            state["clock"] += 1
            store.set("segments", "ex.com", state)


@pytest.mark.parametrize("lock", [True, False], ids=["locked", "unlocked_control"])
def test_site_lock_makes_read_modify_write_safe_across_clients(server, lock):
    import threading

    from scrapy_detemplate.redis_store import RedisStore

    prefix = f"lock{int(lock)}{time.monotonic_ns()}"
    stores = [RedisStore.from_url(server.url, prefix) for _ in range(3)]
    threads = [threading.Thread(target=_increment, args=(s, 40, lock)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    clock = stores[0].get("segments", "ex.com")["clock"]
    if lock:
        assert clock == 120  # no update lost
        assert sum(s.counters["lock_waits"] for s in stores) > 0  # they did contend
    else:
        assert clock < 120  # the control: without the lock updates are lost
    for s in stores:
        s.close()


def test_segment_counts_are_not_lost_between_two_processes(site, server, tmp_path):
    pages, base = site
    urls = [[base + path, {}] for path in sorted(pages)]
    settings = {"DETEMPLATE_METHOD": "segments", "DETEMPLATE_REDIS_URL": server.url,
                "DETEMPLATE_REDIS_KEY": "seg:detemplate", "CONCURRENT_REQUESTS": 4}  # fmt: skip
    a, b = launch(tmp_path / "a", urls[0::2], settings), launch(tmp_path / "b", urls[1::2], settings)
    (items_a, _, _), (items_b, _, _) = finish(a, tmp_path / "a"), finish(b, tmp_path / "b")
    assert len(items_a) + len(items_b) == len(urls)
    client = server.client()
    state = loads(client.get(client.keys("seg:detemplate:segments:*")[0]))
    client.close()
    assert isinstance(state, dict) and state["clock"] == len(urls)  # every page of both counted once


def test_redis_url_without_the_redis_extra_stops_at_start_up(monkeypatch):
    from scrapy.utils.test import get_crawler

    from scrapy_detemplate._crawler import engine_for
    from scrapy_detemplate.config import InvalidSetting

    monkeypatch.setitem(sys.modules, "redis", None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, "scrapy_detemplate.redis_store", raising=False)
    crawler = get_crawler(settings_dict={**ADDON, "DETEMPLATE_REDIS_URL": "redis://127.0.0.1:6379/0"})
    with pytest.raises(InvalidSetting, match=r"scrapy-detemplate\[redis\]"):
        engine_for(crawler)
