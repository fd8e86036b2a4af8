"""The evaluation gate: every method's quality on the dev corpus against recorded floors.

Runs when ``../shared/corpus`` is present (CI has it).  Floors live in
``tests/quality_floors.json``; lowering one is a reviewed edit of that file.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.evaluation import GATED, gate, read_manifest, run_method

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
FLOORS = json.loads((Path(__file__).with_name("quality_floors.json")).read_text())
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside the checkout")


def measure(job: tuple[str, str, dict]) -> tuple[str, str, dict[str, float]]:
    corpus, method, settings = job
    pages = read_manifest(CORPUS / f"{corpus}.manifest.jsonl")
    macro = run_method(DetemplateConfig(method=method, **settings), pages).macro()
    return corpus, method, {k: macro[k] for k in GATED}


@needs_corpus
def test_no_method_falls_below_its_floor():
    jobs = [(corpus, method, {}) for corpus, methods in FLOORS.items() for method in methods]
    scores: dict = {}
    with ProcessPoolExecutor(max_workers=2) as pool:
        for corpus, method, figures in pool.map(measure, jobs):
            scores.setdefault(corpus, {})[method] = figures
    assert gate(scores, FLOORS) == []


@needs_corpus
def test_the_gate_fails_on_a_deliberately_worsened_method():
    # The combined method allowed to remove only lines the trees call nearly certain template.
    corpus, method, worse = measure(("dragnet10", "combined", {"combined_threshold": 0.01}))
    failures = gate({corpus: {method: worse}}, {corpus: {method: FLOORS[corpus][method]}})
    assert any("dragnet10/combined/f1" in f for f in failures)


def test_gate_reports_missing_and_lowered_figures():
    floors = {"c": {"m": {"f1": 0.8, "removal": 0.5}}}
    assert gate({"c": {"m": {"f1": 0.799, "removal": 0.6}}}, floors) == []
    assert gate({"c": {"m": {"f1": 0.79, "removal": 0.6}}}, floors) == ["c/m/f1: 0.790 is below its floor 0.800"]
    assert gate({}, floors) == ["c/m/f1: not measured (floor 0.800)", "c/m/removal: not measured (floor 0.500)"]
