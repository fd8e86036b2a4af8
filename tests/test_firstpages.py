"""FirstPages: a site's first page waits for the site's next page, and never for ever."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from scrapy import Request

from scrapy_detemplate._crawler import META_KEY
from scrapy_detemplate._firstpages import FirstPages
from scrapy_detemplate.config import DetemplateConfig, InvalidSetting
from scrapy_detemplate.engine import CleanResult, Detemplater

HTML = {"Content-Type": "text/html"}
PAGE = (
    "<html><body><nav>Home | News | Sport | Weather</nav><p>{}</p>"
    "<ul><li>Latest: markets close higher</li><li>Latest: rain on Sunday</li></ul>"
    "<footer>(c) Example News, all rights reserved</footer></body></html>"
)


def page(n: int) -> bytes:
    return PAGE.format(f"Story {n}: the council met on Tuesday and spoke at length about the harbour.").encode()


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def refill(item: dict[str, Any], result: CleanResult, fields: list[str]) -> None:
    for field in fields:
        item[field] = result.text


def setup(wait: float = 30.0, peers: int = 1, **limits: int) -> tuple[Detemplater, FirstPages, Clock]:
    engine = Detemplater()
    clock = Clock()
    pages = FirstPages(engine, wait, refill, peers=peers, clock=clock, **limits)
    pages.awaited = True
    return engine, pages, clock


def clean(engine: Detemplater, pages: FirstPages, url: str, body: bytes) -> tuple[Request, CleanResult]:
    """What the downloader middleware does with one response."""
    site = engine.config.site_key(url)
    first = pages.first(site)
    request = Request(url)
    result = engine.process(url, body, headers=HTML)
    request.meta[META_KEY] = result
    pages.cleaned(site, request, (url, body, HTML), result, first)
    return request, result


def fired(deferred: Any) -> bool:
    return bool(deferred.called)


def test_the_first_pages_item_is_filled_again_when_the_next_page_comes() -> None:
    engine, pages, _ = setup()
    request, first = clean(engine, pages, "http://ex.com/a/1", page(1))
    item = {"content": first.text}
    assert pages.hold(first, item, ["content"])
    done = pages.waiter(item)
    assert done is not None and not fired(done)
    clean(engine, pages, "http://ex.com/a/2", page(2))
    expected = Detemplater().clean_with_peers("http://ex.com/a/1", page(1), [("http://ex.com/a/2", page(2), HTML)])
    assert expected is not None and expected.text != first.text  # else nothing here could fail
    assert fired(done) and item["content"] == expected.text
    assert request.meta[META_KEY].text == expected.text  # items still to come get it from meta
    assert (pages.waiting, pages.waiting_items, pages.waiter(item)) == (0, 0, None)


def test_only_a_sites_first_page_waits_and_only_for_another_page_of_its_site() -> None:
    engine, pages, _ = setup()
    _, first = clean(engine, pages, "http://ex.com/a/1", page(1))
    _, again = clean(engine, pages, "http://ex.com/a/1", page(1))  # the same URL again: not a peer
    assert pages.waiting == 1 and not pages.hold(again, {}, ["content"])
    clean(engine, pages, "http://other.org/x", page(3))  # another site: its own first page
    assert pages.waiting == 2
    item: dict[str, Any] = {"content": first.text}
    assert pages.hold(first, item, ["content"])
    assert not pages.hold(first, {}, [])  # an item no field was written into waits for nothing


def test_with_three_peers_it_waits_for_the_third_or_goes_with_those_it_has() -> None:
    engine, pages, clock = setup(wait=10, peers=3)
    _, first = clean(engine, pages, "http://ex.com/a/1", page(1))
    item = {"content": first.text}
    pages.hold(first, item, ["content"])
    done = pages.waiter(item)
    peers = [(f"http://ex.com/a/{n}", page(n), HTML) for n in (2, 3, 4)]
    for url, body, _ in peers[:2]:
        clean(engine, pages, url, body)
    assert not fired(done)
    clean(engine, pages, *peers[2][:2])
    expected = Detemplater().clean_with_peers("http://ex.com/a/1", page(1), peers)
    assert expected is not None and fired(done) and item["content"] == expected.text
    # Another site: two peers when the wait ends, cleaned with those two.
    _, first = clean(engine, pages, "http://ex.org/1", page(5))
    item = {"content": first.text}
    pages.hold(first, item, ["content"])
    clean(engine, pages, "http://ex.org/2", page(6))
    clean(engine, pages, "http://ex.org/3", page(7))
    clock.now = 10.0
    pages.expire()
    two = [("http://ex.org/2", page(6), HTML), ("http://ex.org/3", page(7), HTML)]
    expected = Detemplater().clean_with_peers("http://ex.org/1", page(5), two)
    assert expected is not None and item["content"] == expected.text != first.text


def test_a_page_passed_through_neither_waits_nor_answers() -> None:
    engine, pages, _ = setup()
    clean(engine, pages, "http://ex.com/a.pdf", b"")  # empty: passed through
    assert pages.waiting == 0
    _, first = clean(engine, pages, "http://ex.com/a/1", page(1))
    item: dict[str, Any] = {"content": first.text}
    pages.hold(first, item, ["content"])
    clean(engine, pages, "http://ex.com/a/2", b"")
    assert pages.waiting == 1 and not fired(pages.waiter(item))


def test_without_the_pipeline_no_item_waits() -> None:
    engine, pages, _ = setup()
    pages.awaited = False
    _, first = clean(engine, pages, "http://ex.com/a/1", page(1))
    assert not pages.hold(first, {"content": first.text}, ["content"])


def test_a_first_page_is_let_go_with_its_first_cleaning_after_the_wait() -> None:
    engine, pages, clock = setup(wait=10)
    _, first = clean(engine, pages, "http://ex.com/a/1", page(1))
    item = {"content": first.text}
    pages.hold(first, item, ["content"])
    clock.now = 9.9
    pages.expire()
    assert pages.waiting == 1
    clock.now = 10.0
    pages.expire()
    assert pages.waiting == 0 and item["content"] == first.text
    clean(engine, pages, "http://ex.com/a/2", page(2))  # too late: nothing waits any more
    assert item["content"] == first.text


@pytest.mark.parametrize(
    "limits",
    [{"limit": 2}, {"limit_bytes": 2 * len(page(0)) + 1}, {"limit_active": 2 * 1024 + 1}],  # 1 kB a response at least
)
def test_past_the_limit_the_oldest_site_is_let_go_and_closing_lets_all_go(limits: dict[str, int]) -> None:
    engine, pages, clock = setup(**limits)
    items = []
    for n, host in enumerate(("a.com", "b.com", "c.com")):
        clock.now = n
        _, first = clean(engine, pages, f"http://{host}/1", page(n))
        item = {"content": first.text}
        pages.hold(first, item, ["content"])
        items.append(pages.waiter(item))
    assert pages.waiting == 2 and [fired(d) for d in items] == [True, False, False]
    pages.let_all_go("closed")
    assert pages.waiting == 0 and all(fired(d) for d in items)


def test_past_the_limit_a_site_with_no_next_page_on_its_way_goes_before_older_ones() -> None:
    engine, pages, clock = setup(limit=2)
    on_way = Request("http://a.com/2")
    pages.scheduled(on_way)  # a.com's next page is in the scheduler
    items = {}
    for n, host in enumerate(("a.com", "b.com", "c.com")):
        clock.now = n
        _, first = clean(engine, pages, f"http://{host}/1", page(n))
        item = {"content": first.text}
        pages.hold(first, item, ["content"])
        items[host] = pages.waiter(item)
    # b.com went, not a.com, the oldest: a.com's next page is on its way.
    assert pages.waiting == 2 and [fired(d) for d in items.values()] == [False, True, False]
    pages.arrived(on_way)  # its response came: a.com has nothing more on its way
    _, first = clean(engine, pages, "http://d.com/1", page(3))
    assert pages.waiting == 2 and fired(items["a.com"]) and not fired(items["c.com"])
    pages.let_all_go("closed")


def test_requests_count_as_on_their_way_until_their_response_or_until_scrapy_lets_them_go() -> None:
    _, pages, _ = setup()
    first, second = Request("http://a.com/1"), Request("http://a.com/2")
    pages.scheduled(first)
    pages.scheduled(first)  # the same request twice (a signal sent again) counts once
    pages.scheduled(second)
    pages.scheduled(Request("http://b.com/1"))  # nothing keeps it: let go at once, never counted after
    assert pages.pending("a.com") == 2 and pages.pending("b.com") == 0
    pages.arrived(first)
    pages.arrived(first)  # twice: still once
    assert pages.pending("a.com") == 1
    del second  # redirected, retried, dropped by another middleware: Scrapy lets it go
    gc.collect()
    assert pages.pending("a.com") == 0 and not pages._on_way and not pages._pending


def test_a_refill_that_fails_still_lets_the_item_go() -> None:
    def broken(item: Any, result: CleanResult, fields: list[str]) -> None:
        raise RuntimeError("no")

    engine = Detemplater()
    pages = FirstPages(engine, 30.0, broken, peers=1)
    pages.awaited = True
    _, first = clean(engine, pages, "http://ex.com/a/1", page(1))
    item = {"content": first.text}
    pages.hold(first, item, ["content"])
    done = pages.waiter(item)
    clean(engine, pages, "http://ex.com/a/2", page(2))
    assert fired(done) and item["content"] == first.text


def test_other_methods_have_no_first_pages_to_clean_again() -> None:
    engine = Detemplater(DetemplateConfig(method="sandwich"))
    pages = FirstPages(engine, 30.0, refill)
    assert not pages.first("ex.com")
    assert engine.clean_with_peers("http://ex.com/1", page(1), [("http://ex.com/2", page(2), None)]) is None


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DETEMPLATE_FIRST_PAGE_WAIT", -1),
        ("DETEMPLATE_FIRST_PAGE_WAIT", 3601),
        ("DETEMPLATE_FIRST_PAGE_WAIT", float("nan")),
        ("DETEMPLATE_FIRST_PAGE_WAIT", "soon"),
        ("DETEMPLATE_FIRST_PAGE_PEERS", -1),
        ("DETEMPLATE_FIRST_PAGE_PEERS", 21),
        ("DETEMPLATE_FIRST_PAGE_PEERS", 1.5),
    ],
)
def test_an_invalid_setting_is_named(name: str, value: object) -> None:
    with pytest.raises(InvalidSetting, match=name):
        DetemplateConfig.from_settings({name: value})
