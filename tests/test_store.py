from __future__ import annotations

import pytest

from scrapy_detemplate.store import MemoryStore, StateStore


def test_memory_store_is_a_state_store():
    assert isinstance(MemoryStore(), StateStore)


def test_least_recently_used_key_is_evicted_at_the_bound():
    store = MemoryStore(max_keys=2)
    store.set("ns", "a", 1)
    store.set("ns", "b", 2)
    assert store.get("ns", "a") == 1  # a is now the most recent
    store.set("ns", "c", 3)
    assert store.get("ns", "b") is None
    assert (store.get("ns", "a"), store.get("ns", "c"), store.size("ns"), store.evictions) == (1, 3, 2, 1)


def test_namespaces_are_bounded_separately():
    store = MemoryStore(max_keys=1, limits={"big": 3})
    for key in "abcd":
        store.set("big", key, key)
        store.set("small", key, key)
    assert (store.size("big"), store.size("small")) == (3, 1)


def test_bad_bound_is_refused():
    with pytest.raises(ValueError, match="0"):
        MemoryStore(max_keys=0)
