from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_detemplate.methods.sandwich import (
    closest_name,
    lcs_indexes,
    line_key,
    pack_keys,
    source_line_keys,
    unpack_keys,
)


def brute_force_lcs_length(a: list[int], b: list[int]) -> int:
    @cache
    def length(i: int, j: int) -> int:
        if i == len(a) or j == len(b):
            return 0
        if a[i] == b[j]:
            return 1 + length(i + 1, j + 1)
        return max(length(i + 1, j), length(i, j + 1))

    return length(0, 0)


def is_subsequence(needle: list[int], haystack: list[int]) -> bool:
    it = iter(haystack)
    return all(any(x == y for y in it) for x in needle)


lines = st.lists(st.integers(0, 4), max_size=12)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(lines, lines)
def test_lcs_indexes_are_a_longest_common_subsequence(page, peer):
    matched = lcs_indexes(page, peer)
    assert matched == sorted(set(matched))
    assert len(matched) == brute_force_lcs_length(page, peer)
    assert is_subsequence([page[i] for i in matched], peer)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(lines, lines)
def test_anchored_lcs_is_always_a_common_subsequence(page, peer):
    matched = lcs_indexes(page, peer, exact_cells=4)
    assert matched == sorted(set(matched))
    assert is_subsequence([page[i] for i in matched], peer)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.permutations(list(range(12))), st.lists(st.integers(100, 110), max_size=4), st.data())
def test_anchored_lcs_is_exact_on_distinct_lines(peer, extra, data):
    # With every line unique, the anchors are an LIS, which is the LCS.
    page = data.draw(st.permutations(peer[: data.draw(st.integers(0, 12))] + sorted(set(extra))))
    assert len(lcs_indexes(page, peer, exact_cells=4)) == brute_force_lcs_length(page, peer)


def test_no_peer_means_no_template():
    assert lcs_indexes([1, 2, 3], []) == []


def test_split_content_between_template_lines():
    page = ["<nav>", "story one", "<aside>", "story two", "<footer>"]
    peer = ["<nav>", "other", "<aside>", "more", "<footer>"]
    keys = {text: line_key(text) for text in page + peer}
    assert lcs_indexes([keys[t] for t in page], [keys[t] for t in peer]) == [0, 2, 4]


def test_keys_are_stable_and_fold_white_space():
    assert line_key("abc") == line_key("abc") != line_key("abd")
    assert source_line_keys(["  <p>a   b</p>"]) == source_line_keys(["<p>a b</p>"])


def test_packed_keys_round_trip():
    keys = [line_key(str(i)) for i in range(50)]
    assert unpack_keys(pack_keys(keys)) == keys


def test_closest_name_by_edit_distance_ties_to_most_recent():
    assert closest_name("story-12.html", ["index.html", "story-11.html", "about.html"]) == 1
    assert closest_name("b", ["a", "c"]) == 1
    assert closest_name("x", []) is None
