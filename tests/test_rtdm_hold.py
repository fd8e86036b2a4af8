"""rtdm's hold option: the bounded buffer, the runner's side, the downloader middleware.

No reactor and no waiting: the clock is a list the test moves, and the
middleware's held responses are Deferreds fired when the pages are let go.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler

from scrapy_detemplate.config import DetemplateConfig, InvalidSetting
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.middlewares import DetemplateDownloaderMiddleware, PageHolder
from scrapy_detemplate.runners.rtdm import HOLD, RtdmRunner

PAGE = """<html><body>
<div id="nav"><a href="/">Home</a> <a href="/news">News</a></div>
<div class="main"><h1>{title}</h1><p>{text}</p></div>
<div id="foot">(c) Example Corp</div>
</body></html>"""


def page(k: int) -> bytes:
    return PAGE.format(title=f"Title {k}", text=f"Story number {k} text").encode()


# -- the buffer ------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def holder(limit: int = 3, seconds: float = 10.0) -> tuple[PageHolder[str], list[tuple[str, list[str], str]], Clock]:
    released: list[tuple[str, list[str], str]] = []
    clock = Clock()
    return PageHolder(limit, seconds, lambda s, p, r: released.append((s, p, r)), clock), released, clock


def test_a_full_buffer_lets_go_of_the_site_with_the_oldest_page() -> None:
    h, released, clock = holder(limit=3)
    for site, name in (("a", "a1"), ("b", "b1"), ("a", "a2")):
        h.hold(site, name)
        clock.now += 1
    assert released == [] and h.count == 3
    h.hold("b", "b2")
    assert released == [("a", ["a1", "a2"], "full")]
    assert h.count == 2 and h.holds("b") and not h.holds("a")


def test_release_expire_and_release_all_let_every_page_go_once() -> None:
    h, released, clock = holder(limit=10, seconds=5)
    h.hold("a", "a1")
    clock.now = 3
    h.hold("a", "a2")
    h.hold("b", "b1")
    clock.now = 5
    h.expire()  # a1 waited 5 seconds
    assert released == [("a", ["a1"], "timeout")]
    h.release("a", "learned")
    h.release("a", "learned")  # nothing left: no call
    h.release_all("closed")
    assert released[1:] == [("a", ["a2"], "learned"), ("b", ["b1"], "closed")]
    assert h.count == 0


# -- the runner ------------------------------------------------------------------


def hold_engine(**kw: Any) -> Detemplater:
    det = Detemplater(DetemplateConfig(method="rtdm", rtdm_meanwhile="none", **kw))
    det.runner.hold_learning_pages()  # type: ignore[attr-defined]
    return det


def test_samples_come_back_held_and_are_cleaned_when_replayed_after_learning() -> None:
    det = hold_engine(rtdm_max_pages=3)
    runner: RtdmRunner = det.runner  # type: ignore[assignment]
    first = [det.process(f"http://ex.com/a/{k}", page(k)) for k in (1, 2)]
    assert [(r.status, r.reason) for r in first] == [("unchanged", HOLD)] * 2
    assert runner.learning("ex.com")
    third = det.process("http://ex.com/a/3", page(3))  # the third sample completes the template
    assert third.reason == "applied" and not runner.learning("ex.com")
    with runner.replay():
        again = det.process("http://ex.com/a/1", page(1))
    assert (again.reason, again.text.splitlines()) == ("applied", ["Title 1", "Story number 1 text"])


def test_learn_now_needs_two_samples_and_replay_never_samples() -> None:
    det = hold_engine(rtdm_max_pages=20)
    runner: RtdmRunner = det.runner  # type: ignore[assignment]
    det.process("http://ex.com/a/1", page(1))
    assert not runner.learn_now("ex.com")  # one page is no template
    with runner.replay():
        assert det.process("http://ex.com/a/1", page(1)).reason == "learning"  # meanwhile method
    state = det.store.get("rtdm", "ex.com")
    assert isinstance(state, dict) and state["learner"]["seen"] == 1  # type: ignore[index]
    det.process("http://ex.com/a/2", page(2))
    assert runner.learn_now("ex.com") and not runner.learning("ex.com")
    assert runner.counts["learned"] == 1
    with runner.replay():
        assert det.process("http://ex.com/a/2", page(2)).text.splitlines() == ["Title 2", "Story number 2 text"]


def test_without_hold_learning_pages_go_to_the_meanwhile_method() -> None:
    det = Detemplater(DetemplateConfig(method="rtdm", rtdm_max_pages=3, rtdm_hold=5))  # the engine alone never holds
    assert det.process("http://ex.com/a/1", page(1)).reason == "learning"


@pytest.mark.parametrize(("name", "value"), [("rtdm_hold", -1), ("rtdm_hold", 1.5), ("rtdm_hold_seconds", 0)])
def test_invalid_hold_settings_are_named(name: str, value: object) -> None:
    with pytest.raises(InvalidSetting, match=name.upper()):
        DetemplateConfig(method="rtdm", **{name: value})  # type: ignore[arg-type]


# -- the middleware ----------------------------------------------------------------


ADDON = {"ADDONS": {"scrapy_detemplate.Addon": 0}, "DETEMPLATE_METHOD": "rtdm"}


def test_hold_must_stay_below_the_crawl_concurrency() -> None:
    crawler = get_crawler(settings_dict={**ADDON, "DETEMPLATE_RTDM_HOLD": 8, "CONCURRENT_REQUESTS": 8})
    with pytest.raises(InvalidSetting, match=r"DETEMPLATE_RTDM_HOLD=8.*CONCURRENT_REQUESTS \(8\)"):
        DetemplateDownloaderMiddleware.from_crawler(crawler)
    crawler = get_crawler(settings_dict={**ADDON, "DETEMPLATE_RTDM_HOLD": 7, "CONCURRENT_REQUESTS": 8})
    assert DetemplateDownloaderMiddleware.from_crawler(crawler).holder is not None


def middleware(limit: int, max_pages: int) -> tuple[DetemplateDownloaderMiddleware, Clock, Any]:
    crawler = get_crawler()  # for its stats
    det = Detemplater(DetemplateConfig(method="rtdm", rtdm_max_pages=max_pages, rtdm_meanwhile="none"))
    mw = DetemplateDownloaderMiddleware(det, crawler.stats)
    clock = Clock()
    mw.hold_pages(limit, 10.0, clock=clock)
    return mw, clock, crawler.stats


def fetch(mw: DetemplateDownloaderMiddleware, k: int, host: str = "ex.com") -> tuple[Request, Any]:
    url = f"http://{host}/a/{k}"
    request = Request(url)
    response = HtmlResponse(url, body=page(k), headers={"Content-Type": "text/html"}, request=request)
    return request, mw.process_response(request, response)


def settle(out: Any) -> Any:
    """The response a held page's coroutine returns: it must be let go already
    (the bound only turns a page still held into a failure instead of a hang)."""
    assert asyncio.iscoroutine(out)
    return asyncio.run(asyncio.wait_for(out, 5))


def test_held_pages_are_let_go_cleaned_with_the_learned_template() -> None:
    mw, _, stats = middleware(limit=5, max_pages=3)
    held = [fetch(mw, k) for k in (1, 2)]
    assert all(asyncio.iscoroutine(out) for _, out in held) and stats.get_value("detemplate/rtdm/held") == 2
    assert "detemplate/pages" not in stats.get_stats()  # counted once, when let go
    request, out = fetch(mw, 3)  # completes the template: the held ones go
    assert out.url == "http://ex.com/a/3" and request.meta["detemplate"].reason == "applied"
    for (request, out), k in zip(held, (1, 2), strict=True):
        assert settle(out).url == f"http://ex.com/a/{k}"
        assert request.meta["detemplate"].text.splitlines() == [f"Title {k}", f"Story number {k} text"]
    assert stats.get_value("detemplate/rtdm/released/learned") == 2
    assert stats.get_value("detemplate/pages") == 3 and stats.get_value("detemplate/cleaned/applied") == 3


def test_a_full_buffer_learns_from_what_it_has_and_timeouts_use_the_meanwhile_method() -> None:
    mw, clock, stats = middleware(limit=2, max_pages=20)
    first = fetch(mw, 1)
    clock.now = 10
    assert mw.holder is not None
    mw.holder.expire()  # waited 10 s: let go, cleaned by the meanwhile method (none)
    assert settle(first[1]) is not None and first[0].meta["detemplate"].reason == "learning"
    held = [fetch(mw, k) for k in (2, 3)]
    last = fetch(mw, 4)  # a third page: the buffer is full, the site learns from its samples
    assert last[1].url == "http://ex.com/a/4"  # let go at once, with the others
    for request, out in [*held, last]:
        result = request.meta["detemplate"]
        assert result.reason == "applied" and "Home News" not in result.text
        if asyncio.iscoroutine(out):
            settle(out)
    assert stats.get_value("detemplate/rtdm/released/timeout") == 1
    assert stats.get_value("detemplate/rtdm/released/full") == 3
    assert stats.get_value("detemplate/rtdm/held") == 4


def test_closing_lets_every_held_page_go() -> None:
    mw, _, stats = middleware(limit=5, max_pages=20)
    held = [fetch(mw, k) for k in (1, 2, 3)]
    mw.spider_closed()
    for request, out in held:
        settle(out)
        assert request.meta["detemplate"].reason == "applied"
    assert stats.get_value("detemplate/rtdm/released/closed") == 3
    late = fetch(mw, 1, "other.com")  # a first sample of another site, after closing: nothing waits
    assert not asyncio.iscoroutine(late[1]) and late[0].meta["detemplate"].reason == "learning"
    assert stats.get_value("detemplate/rtdm/released/closed") == 4
