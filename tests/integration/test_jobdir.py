"""Pause and resume with JOBDIR: learned state is saved at close and used by the resumed crawl."""

from __future__ import annotations

import json
import shutil
from urllib.parse import urlsplit

import pytest
from scrapy.utils.test import get_crawler

from scrapy_detemplate._crawler import engine_for
from scrapy_detemplate.config import directory_key
from scrapy_detemplate.jobdir import STATE_FILE, load_state, save_state
from scrapy_detemplate.store import MemoryStore

from .conftest import run_crawl

pytestmark = pytest.mark.integration

ADDON = {"ADDONS": {"scrapy_detemplate.Addon": 0}}


def directories(items):
    return {directory_key(item["url"], urlsplit(item["url"]).hostname or "") for item in items}


def test_resumed_crawl_uses_what_the_first_run_learned(site, tmp_path):
    pages, base = site
    job = tmp_path / "job"
    settings = {**ADDON, "JOBDIR": str(job), "CONCURRENT_REQUESTS": 1, "DETEMPLATE_METHOD": "sandwich"}
    (tmp_path / "first").mkdir()
    first = run_crawl(tmp_path / "first", start_url=base + "/", settings={**settings, "CLOSESPIDER_PAGECOUNT": 12})
    assert first.stats["finish_reason"] == "closespider_pagecount"
    assert first.stats["detemplate/state/saved_keys"] == len(directories(first.items))
    assert (job / STATE_FILE).exists()
    shutil.copytree(job, tmp_path / "job-copy")  # the same pause, for a control run that starts fresh

    (tmp_path / "resumed").mkdir()
    resumed = run_crawl(tmp_path / "resumed", start_url=base + "/", settings=settings)
    (tmp_path / "fresh").mkdir()
    fresh = run_crawl(
        tmp_path / "fresh",
        start_url=base + "/",
        settings={**settings, "JOBDIR": str(tmp_path / "job-copy"), "DETEMPLATE_STATE_FRESH": True},
    )

    # No page lost: the two runs together fetched the whole site.
    assert {urlsplit(i["url"]).path for i in first.items + resumed.items} == set(pages)
    assert resumed.stats["finish_reason"] == "finished"
    # The resumed run loaded the state and only had to wait for a peer in directories it had not seen.
    assert resumed.stats["detemplate/state/loaded_keys"] == first.stats["detemplate/state/saved_keys"]
    new_dirs = directories(resumed.items) - directories(first.items)
    no_peer = resumed.stats.get("detemplate/unchanged/no_peer", 0)
    assert no_peer <= len(new_dirs)
    # Starting fresh from the same pause: every directory starts without a peer.
    assert fresh.stats["detemplate/state/fresh"] == 1
    assert "detemplate/state/loaded_keys" not in fresh.stats
    assert fresh.stats["detemplate/unchanged/no_peer"] >= len(directories(fresh.items)) > no_peer
    assert resumed.stats["detemplate/cleaned"] > fresh.stats["detemplate/cleaned"]
    # What both runs learned is saved for the next resume.
    assert resumed.stats["detemplate/state/saved_keys"] == len(directories(first.items + resumed.items))


def _engine_stats(jobdir, **settings):
    settings = {**ADDON, "JOBDIR": str(jobdir), "DETEMPLATE_METHOD": "sandwich", **settings}
    crawler = get_crawler(settings_dict=settings)
    engine = engine_for(crawler)
    return engine, crawler.stats


@pytest.mark.parametrize(
    "content",
    [b"\x00\x01garbage", b'{"format": "something-else", "version": 1}',
     b'{"format": "scrapy-detemplate-state", "version": 99, "namespaces": {}}',
     b'{"format": "scrapy-detemplate-state", "version": 1, "namespaces": {"sandwich": [["k", {"$b": "!!"}]]}}',
     b'{"format": "scrapy-detemplate-state", "version": 1, "namespaces": {"sandwich": [["half"'],
    ids=["binary", "foreign", "future_version", "bad_bytes", "truncated"],
)  # fmt: skip
def test_corrupt_or_foreign_state_is_a_counted_cold_start(tmp_path, content, caplog):
    (tmp_path / STATE_FILE).write_bytes(content)
    engine, stats = _engine_stats(tmp_path)
    assert stats.get_value("detemplate/state/load_error") == 1
    assert engine.store.size("sandwich") == 0
    assert "starting cold" in caplog.text
    assert engine.process("http://ex.com/a/1", b"<html><body><p>One</p></body></html>").status == "unchanged"


def test_state_round_trips_through_the_crawler_hooks(tmp_path):
    engine, stats = _engine_stats(tmp_path)
    page = "<html><body><nav>Home</nav><p>{}</p><footer>(c) Ex</footer></body></html>"
    engine.process("http://ex.com/a/1", page.format("First story").encode())
    from scrapy_detemplate.state import _STATES

    crawler = next(c for c, s in _STATES.items() if s.store is engine.store)
    _STATES[crawler].spider_closed()
    assert stats.get_value("detemplate/state/saved_keys") == 1
    resumed, resumed_stats = _engine_stats(tmp_path)
    assert resumed_stats.get_value("detemplate/state/loaded_keys") == 1
    result = resumed.process("http://ex.com/a/2", page.format("Second story").encode())
    assert (result.status, result.text) == ("cleaned", "Second story")  # the peer came from the file


def test_save_is_atomic_and_keeps_lru_order(tmp_path):
    path = tmp_path / STATE_FILE
    store = MemoryStore(max_keys=3)
    for key in "abc":
        store.set("ns", key, key.encode())
    store.get("ns", "a")  # order now b, c, a
    assert save_state(store, path, "sandwich") == 3
    before = path.read_bytes()
    store.set("ns", "bad", {"x": object()})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        save_state(store, path)
    assert path.read_bytes() == before  # the failed save left the previous file whole
    assert [p.name for p in tmp_path.iterdir()] == [STATE_FILE]  # and no temporary file behind
    smaller = MemoryStore(max_keys=2)
    assert load_state(smaller, path).keys == 3
    assert [k for k, _ in smaller.items("ns")] == ["c", "a"]  # the least recently used went first
    assert json.loads(before)["method"] == "sandwich"


GOOD_PEER = ["ex.com/b/", {"names": ["1"], "keys": [{"$b": "AAAAAAAAAAA="}]}]


@pytest.mark.parametrize(
    ("method", "namespace", "key", "value"),
    [
        ("sandwich", "sandwich", "ex.com/a/", {"names": ["x"], "keys": [{"$b": "AAA="}]}),  # issue 16: 2 bytes
        ("sandwich", "sandwich", "ex.com/a/", {"names": ["x", "y"], "keys": "AAAAAAAAAAA="}),
        ("segments", "segments", "ex.com", {"v": 1, "clock": 3, "table": {"k": "not a count"}}),
        ("segments", "segments", "ex.com", {"v": 1, "clock": 3, "table": {"k": -5}}),
        ("rtdm", "rtdm", "ex.com", {"v": 1, "gen": "x", "templates": [], "learner": None}),
        ("rtdm", "rtdm", "ex.com", {"v": 1, "gen": 0, "templates": [{"labels": [5], "parent": [-1]}], "learner": None}),
        ("rtdm", "rtdm", "ex.com",
         {"v": 1, "gen": 0, "templates": [], "learner": {"labels": ["body"], "parent": [-1], "seen": "2"}}),
        ("rtdm", "rtdm", "ex.com", {"v": 1, "gen": 0, "templates": [], "learner": None, "refused": "many"}),
        ("combined", "nosuchnamespace", "ex.com", {"what": "ever"}),
    ],
    ids=["sandwich_short_keys", "sandwich_keys_not_a_list", "segments_count", "segments_negative", "rtdm_gen",
         "rtdm_label", "rtdm_seen", "rtdm_refused", "foreign_namespace"],
)  # fmt: skip
def test_state_entries_with_bad_values_are_dropped_on_load_logged_and_counted(
    tmp_path, caplog, method, namespace, key, value
):
    """Issue 16: a file with a valid layout but bad values loaded, then pages passed through as error."""
    state = {"format": "scrapy-detemplate-state", "version": 1, "namespaces": {namespace: [[key, value]]}}
    state["namespaces"].setdefault("sandwich", []).append(GOOD_PEER)
    (tmp_path / STATE_FILE).write_text(json.dumps(state))
    engine, stats = _engine_stats(tmp_path, DETEMPLATE_METHOD=method)
    assert stats.get_value("detemplate/state/invalid_entries") == 1
    assert stats.get_value("detemplate/state/loaded_keys") == 1  # the good entry
    assert engine.store.get("sandwich", "ex.com/b/") is not None
    assert f"{namespace}" in caplog.text and "invalid" in caplog.text
    page = b"<html><body><nav>Home</nav><p>One</p><footer>(c) Ex</footer></body></html>"
    assert engine.process("http://ex.com/a/1", page).status != "passthrough"


@pytest.mark.parametrize("method", ["sandwich", "segments", "rtdm", "combined"])
def test_what_every_runner_writes_passes_the_load_check(tmp_path, method):
    """Else a resumed crawl would drop its own state as invalid."""
    import demosite

    from scrapy_detemplate.config import DetemplateConfig
    from scrapy_detemplate.engine import Detemplater
    from scrapy_detemplate.runners import valid_state

    engine = Detemplater(DetemplateConfig(method=method, rtdm_max_pages=3, rtdm_max_cells=3_000))
    for path, page in demosite.build_site().items():
        engine.process("http://demo.test" + path, page.body)
    for k in range(4):  # a site too large for the mapping (rtdm marks it)
        engine.process(f"http://long.test/p/{k}", ("<p>x</p>" * 40 + f"<p>{k}</p>" * 40).encode())
    store = engine.store
    path = tmp_path / STATE_FILE
    saved = save_state(store, path, method)  # type: ignore[arg-type]
    assert saved > 0
    assert load_state(MemoryStore(), path, valid_state) == load_state(MemoryStore(), path)  # nothing left out
    if method == "rtdm":
        assert store.get("rtdm", "long.test")["too_large"] is True  # type: ignore[index]
        assert any(isinstance(v, dict) and v["templates"] for _, v in store.items("rtdm"))  # type: ignore[attr-defined]
