"""Exactness of the regularized tree isotonic regression (Section 4)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_detemplate.methods.isotonic import cost, quantize, smooth, smooth_reference


def brute_force(parent, x, gamma, w, values):
    """Minimum of equation (4) over every assignment of ``values`` to the nodes."""
    return min(cost(parent, x, gamma, y, w) for y in itertools.product(values, repeat=len(parent)))


@st.composite
def trees(draw, max_nodes=6, values=None):
    n = draw(st.integers(1, max_nodes))
    parent = [-1] + [draw(st.integers(0, i - 1)) for i in range(1, n)]
    score = st.sampled_from(values) if values else st.floats(0, 1, allow_nan=False).map(lambda v: round(v, 3))
    x = [draw(score) for _ in range(n)]
    gamma = [draw(st.sampled_from([0.0, 0.05, 0.2, 0.5, 1.5])) for _ in range(n)]
    w = [draw(st.integers(1, 3)) * 1.0 for _ in range(n)]
    return parent, x, gamma, w


@settings(derandomize=True, max_examples=150, deadline=None)
@given(trees(values=[0.0, 0.1, 0.4, 0.5, 0.9, 1.0]))
def test_dp_cost_equals_brute_force_over_node_scores(tree):
    parent, x, gamma, w = tree
    best = brute_force(parent, x, gamma, w, sorted(set(x)))
    ref = smooth_reference(parent, x, gamma, w)
    assert ref.cost == pytest.approx(best)
    assert cost(parent, x, gamma, ref.y, w) == pytest.approx(best)


@settings(derandomize=True, max_examples=80, deadline=None)
@given(trees(max_nodes=5))
def test_lemma3_node_scores_suffice(tree):
    """A denser grid of candidate values (midpoints, ends) finds nothing cheaper."""
    parent, x, gamma, w = tree
    xs = sorted(set(x))
    grid = sorted(set(xs + [0.0, 1.0] + [(a + b) / 2 for a, b in itertools.pairwise(xs)]))
    assert brute_force(parent, x, gamma, w, grid) == pytest.approx(brute_force(parent, x, gamma, w, xs))


@settings(derandomize=True, max_examples=200, deadline=None)
@given(trees(max_nodes=30))
def test_fast_variant_equals_reference(tree):
    parent, x, gamma, w = tree
    ref = smooth_reference(parent, x, gamma, w)
    fast = smooth(parent, x, gamma, w)
    assert fast.cost == pytest.approx(ref.cost)
    assert cost(parent, x, gamma, fast.y, w) == pytest.approx(ref.cost)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(trees(max_nodes=6))
def test_fast_variant_equals_brute_force(tree):
    parent, x, gamma, w = tree
    assert smooth(parent, x, gamma, w).cost == pytest.approx(brute_force(parent, x, gamma, w, sorted(set(x))))


def test_zero_penalty_follows_children_and_keeps_low_parent():
    # x(parent) lower than its children is allowed by (1) and kept.
    parent = [-1, 0, 0]
    result = smooth(parent, [0.1, 0.9, 0.8], [0.0, 0.0, 0.0])
    assert result.y == [0.1, 0.9, 0.8]
    assert result.cost == 0.0


def test_high_parent_is_pulled_down_to_its_children():
    # y(parent) <= min y(children): the parent's 0.9 cannot stand above a 0.2 child.
    parent = [-1, 0, 0]
    result = smooth(parent, [0.9, 0.2, 0.2], [0.0, 0.0, 0.0])
    assert result.y == [0.2, 0.2, 0.2]


def test_large_penalty_makes_one_section():
    parent = [-1, 0, 0, 1]
    x = [0.2, 0.8, 0.3, 0.9]
    result = smooth(parent, x, [0.0, 10.0, 10.0, 10.0])
    assert len(set(result.y)) == 1
    assert result.sections(parent) == [0]


def test_weights_count_hidden_children():
    # A child standing for 3 nodes outweighs a parent that stands for 1 (L1 median).
    parent = [-1, 0]
    assert smooth(parent, [0.1, 0.9], [0.0, 5.0], [1.0, 3.0]).y == [0.9, 0.9]
    assert smooth(parent, [0.1, 0.9], [0.0, 5.0], [3.0, 1.0]).y == [0.1, 0.1]


def test_bad_parent_array_is_rejected():
    with pytest.raises(ValueError, match="pre-order"):
        smooth([-1, 2, 0], [0.1, 0.2, 0.3], [0.0] * 3)
    with pytest.raises(ValueError, match="one entry per node"):
        smooth([-1, 0], [0.1], [0.0, 0.0])


def test_empty_tree():
    assert smooth([], [], []).y == []
    assert smooth_reference([], [], []).cost == 0.0


def test_deep_chain_is_iterative():
    n = 5000
    parent = [-1, *range(n - 1)]
    x = quantize([(i % 7) / 7 for i in range(n)], 20)
    result = smooth(parent, x, [0.01] * n)
    assert len(result.y) == n
    assert all(result.y[i] >= result.y[parent[i]] for i in range(1, n))


def test_quantize_bounds():
    assert quantize([-0.2, 0.26, 1.7], 4) == [0.0, 0.25, 1.0]
    with pytest.raises(ValueError):
        quantize([0.5], 0)
