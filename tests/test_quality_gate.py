"""The evaluation gate: every method's quality on the dev corpus against recorded floors.

Runs when ``../shared/corpus`` is present (CI has it).  Floors live in
``tests/quality_floors.json``; lowering one is a reviewed edit of that file.  The corpora are measured
in two background processes from the start of the session (``tests/gate_runner.py``, started by
``tests/conftest.py``, which runs the gate's test last).
"""

from __future__ import annotations

import pytest
from gate_runner import CORPUS, FLOORS, Measuring, measure, scores, shares

from scrapy_detemplate.evaluation import gate

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside the checkout")


@needs_corpus
def test_no_method_falls_below_its_floor():
    assert gate(scores(), FLOORS) == []


def test_the_corpora_are_shared_out_longest_first_to_the_least_loaded():
    assert shares(["c2f", "docs", "dragnet10", "wcxb-dev"]) == [["wcxb-dev"], ["c2f", "docs", "dragnet10"]]
    assert shares(["c2f", "docs", "dragnet10", "wcxb-dev"], workers=3) == [["wcxb-dev"], ["c2f"], ["docs", "dragnet10"]]
    assert shares(["c2f", "new"]) == [["new"], ["c2f"]]
    assert shares(["c2f"]) == [["c2f"]]


def test_a_process_that_fails_fails_the_gate_with_its_error():
    measuring = Measuring([["no-such-corpus"]])
    try:
        with pytest.raises(RuntimeError, match=r"(?s)no-such-corpus ended with exit status 1:.*KeyError"):
            measuring.scores()
    finally:
        measuring.stop()


@needs_corpus
def test_the_gate_fails_on_a_deliberately_worsened_method():
    # The combined method allowed to remove only lines the trees call nearly certain template.
    worse = measure("dragnet10", ["combined"], {"combined_threshold": 0.01})
    failures = gate({"dragnet10": worse}, {"dragnet10": {"combined": FLOORS["dragnet10"]["combined"]}})
    assert any("dragnet10/combined/f1" in f for f in failures)


def test_gate_reports_missing_and_lowered_figures():
    floors = {"c": {"m": {"f1": 0.8, "removal": 0.5}}}
    assert gate({"c": {"m": {"f1": 0.799, "removal": 0.6}}}, floors) == []
    assert gate({"c": {"m": {"f1": 0.79, "removal": 0.6}}}, floors) == ["c/m/f1: 0.790 is below its floor 0.800"]
    assert gate({}, floors) == ["c/m/f1: not measured (floor 0.800)", "c/m/removal: not measured (floor 0.500)"]
