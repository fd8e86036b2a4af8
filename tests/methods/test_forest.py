from __future__ import annotations

import math

import pytest

from scrapy_detemplate.methods.forest import Forest

# One stump on feature 1 (x1 <= 0.5 -> -1, else +2) and one leaf-only tree (+0.5).
MODEL = {
    "features": ["a", "b"],
    "base": 0.25,
    "rate": 0.5,
    "trees": [
        {"feature": [1, -2, -2], "threshold": [0.5, -2, -2], "left": [1, -1, -1], "right": [2, -1, -1],
         "value": [0.0, -1.0, 2.0]},
        {"feature": [-2], "threshold": [-2], "left": [-1], "right": [-1], "value": [0.5]},
    ],
}  # fmt: skip


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_probability_is_the_sigmoid_of_base_plus_rate_times_leaf_values():
    forest = Forest(MODEL)
    assert forest.probability([9.0, 0.5]) == pytest.approx(sigmoid(0.25 + 0.5 * (-1.0 + 0.5)))
    assert forest.probability([9.0, 0.7]) == pytest.approx(sigmoid(0.25 + 0.5 * (2.0 + 0.5)))


def test_a_malformed_model_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="not a forest model"):
        Forest({"features": [], "base": 0})


def test_the_compiled_scorer_equals_the_reference_on_the_shipped_model():
    import random

    from scrapy_detemplate.runners.combined import load_forest

    forest = load_forest()
    fast = forest.compiled()
    rng = random.Random(7)
    for _ in range(300):
        x = [rng.choice((0.0, 1.0, rng.random(), rng.uniform(-1, 8))) for _ in forest.features]
        assert fast(x) == pytest.approx(forest.probability(x), abs=1e-12)
    assert Forest(MODEL).compiled()([9.0, 0.7]) == pytest.approx(Forest(MODEL).probability([9.0, 0.7]))


def test_the_mean_forest_scores_the_mean_of_both_forests_log_odds():
    from scrapy_detemplate.methods.forest import mean_forest

    other = {**MODEL, "base": -1.0, "rate": 0.25, "trees": [MODEL["trees"][1], MODEL["trees"][0]]}
    a, b = Forest(MODEL), Forest(other)
    mean = mean_forest(a, b)
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    for x in ([9.0, 0.5], [9.0, 0.7], [0.0, -3.0]):
        expected = (logit(a.probability(x)) + logit(b.probability(x))) / 2
        assert logit(mean.probability(x)) == pytest.approx(expected, abs=1e-9)
        assert mean.scorer()([x]) == [mean.probability(x)]  # compiled where built: the same floats
    with pytest.raises(ValueError, match="different features"):
        mean_forest(a, Forest({**MODEL, "features": ["a", "c"]}))
    tempered = mean_forest(a, b, 0.72, -0.13)  # a site's first pages' (runners.combined.FIRST_PAGE_SCALE)
    for x in ([9.0, 0.5], [9.0, 0.7], [0.0, -3.0]):
        expected = 0.72 * logit(mean.probability(x)) - 0.13
        assert logit(tempered.probability(x)) == pytest.approx(expected, abs=1e-9)
        assert tempered.scorer()([x]) == [tempered.probability(x)]
