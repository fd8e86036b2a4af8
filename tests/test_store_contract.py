"""One contract every state store passes: in memory, through a JOBDIR file, in Redis, and Redis down."""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_detemplate.jobdir import load_state, save_state
from scrapy_detemplate.store import MemoryStore, StateStore, Value, dumps, from_json, loads, to_json

_spec = importlib.util.spec_from_file_location(
    "detemplate_redis_server", Path(__file__).parent / "integration" / "redis_server.py"
)
assert _spec is not None and _spec.loader is not None
redis_server = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = redis_server
_spec.loader.exec_module(redis_server)


class ReloadedStore:
    """A MemoryStore that goes through a JOBDIR state file after every write (the pause/resume path)."""

    def __init__(self, path: Path, max_keys: int) -> None:
        self.path = path
        self.max_keys = max_keys
        self.inner = MemoryStore(max_keys=max_keys)

    def _reload(self) -> None:
        save_state(self.inner, self.path, "test")
        fresh = MemoryStore(max_keys=self.max_keys)
        result = load_state(fresh, self.path)
        assert not result.error, result.error
        self.inner = fresh

    def get(self, namespace: str, key: str) -> Value:
        return self.inner.get(namespace, key)

    def set(self, namespace: str, key: str, value: Value) -> None:
        self.inner.set(namespace, key, value)
        self._reload()

    def delete(self, namespace: str, key: str) -> None:
        self.inner.delete(namespace, key)
        self._reload()

    def size(self, namespace: str) -> int:
        return self.inner.size(namespace)

    def close(self) -> None:
        self.inner.close()


BOUND = 3
KINDS = ["memory", "jobdir", "redis", "redis-down"]


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    srv = redis_server.RedisServer()
    yield srv
    srv.stop()


_counter = iter(range(10**9))


def make_store(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> tuple[StateStore, bool]:
    """A fresh store of ``kind`` and whether it bounds its keys (Redis leaves that to maxmemory)."""
    if kind == "memory":
        return MemoryStore(max_keys=BOUND), True
    if kind == "jobdir":
        return ReloadedStore(tmp_path / f"state-{next(_counter)}.json", BOUND), True
    pytest.importorskip("redis", reason="the redis client is not installed (pip install -e '.[test]')")
    from scrapy_detemplate.redis_store import RedisStore

    if kind == "redis":
        srv = request.getfixturevalue("server")
        return RedisStore.from_url(srv.url, f"test{next(_counter)}:detemplate"), False
    # Nothing listens there: every operation degrades to the bounded local store.
    dead = f"redis://127.0.0.1:{redis_server.free_port()}/0"
    return RedisStore.from_url(dead, "x", fallback=MemoryStore(max_keys=BOUND), retry_after=3600), True


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StateStore]:
    made, bounded = make_store(request.param, request, tmp_path)
    made.bounded = bounded  # type: ignore[attr-defined]
    yield made
    made.close()


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (``True`` is not ``1``, bytes are not str)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(), st.binary(),
)  # fmt: skip
keys = st.one_of(st.text(max_size=8), st.sampled_from(["$b", "$d", "v", "table"]))
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=20
)

SAMPLES: list[Value] = [
    None, True, False, 0, -(2**70), 1.5, float("inf"), "", "é\u2028x", b"", b"\x00\xff" * 5,
    {"names": ["a.html", "b.html"], "keys": [b"\x01\x02", b"\x03"]},
    {"v": 1, "clock": 7, "table": {"0a1b": 12345, "ffee": 3}},
    {"$b": "not bytes"}, {"$d": {"$b": b"x"}}, [[[]]], {"": {"": [b"", None]}},
]  # fmt: skip


def test_absent_key_is_none(store):
    assert store.get("ns", "nothing") is None
    assert store.size("ns") == 0


@pytest.mark.parametrize("value", SAMPLES, ids=range(len(SAMPLES)))
def test_values_come_back_equal_with_their_types(store, value):
    store.set("ns", "k", value)
    assert same(store.get("ns", "k"), value)


def test_set_overwrites_and_in_place_updates_show_after_set(store):
    store.set("segments", "site", {"clock": 1, "table": {}})
    state = store.get("segments", "site")
    state["clock"] = 2
    state["table"]["00ff"] = 5
    store.set("segments", "site", state)
    assert same(store.get("segments", "site"), {"clock": 2, "table": {"00ff": 5}})


def test_delete_and_size(store):
    store.set("ns", "a", 1)
    store.set("ns", "b:*?[x]", 2)  # key characters that mean something to Redis patterns
    store.set("other", "a", 3)
    assert (store.size("ns"), store.size("other"), store.size("n")) == (2, 1, 0)
    store.delete("ns", "a")
    store.delete("ns", "never there")
    assert store.get("ns", "a") is None
    assert (store.size("ns"), store.get("ns", "b:*?[x]"), store.get("other", "a")) == (1, 2, 3)


def test_namespaces_do_not_share_keys(store):
    store.set("sandwich", "ex.com/", "directory")
    store.set("segments", "ex.com/", "site")
    assert (store.get("sandwich", "ex.com/"), store.get("segments", "ex.com/")) == ("directory", "site")


def test_bounded_stores_keep_the_most_recently_used(store):
    if not store.bounded:
        pytest.skip("Redis bounds memory with the server's maxmemory policy, not by key count")
    for key in "abc":
        store.set("ns", key, key)
    store.get("ns", "a")
    store.set("ns", "d", "d")
    assert store.size("ns") == BOUND
    assert [store.get("ns", k) for k in "abcd"] == ["a", None, "c", "d"]


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=values)
def test_any_plain_value_survives(store, value):
    store.set("ns", "k", value)
    assert same(store.get("ns", "k"), value)


# -- the codec itself -----------------------------------------------------


@settings(max_examples=200, derandomize=True)
@given(value=values)
def test_codec_round_trip(value):
    assert same(from_json(to_json(value)), value)
    assert same(loads(dumps(value)), value)


def test_codec_handles_deep_values_without_recursion():
    deep: Any = b"leaf"
    for _ in range(5000):
        deep = {"c": [deep]}
    back = from_json(to_json(deep))
    for _ in range(5000):
        back = back["c"][0]
    assert back == b"leaf"


def test_codec_refuses_what_is_not_plain_data():
    with pytest.raises(TypeError):
        to_json({1: "int key"})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        to_json({"x": object()})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        loads(b'{"$b": "***"}')
