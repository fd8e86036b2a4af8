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
from scrapy_detemplate.evaluation import GATED, gate, read_manifest, run_methods

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
FLOORS = json.loads((Path(__file__).with_name("quality_floors.json")).read_text())
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside the checkout")


def measure(corpus: str, methods: list[str], settings: dict | None = None) -> dict[str, dict[str, float]]:
    """Each method's gated figures on the corpus: the pages read once for all of them."""
    configs = [DetemplateConfig(method=method, **(settings or {})) for method in methods]
    summaries = run_methods(configs, read_manifest(CORPUS / f"{corpus}.manifest.jsonl"))
    return {method: {k: s.macro()[k] for k in GATED} for method, s in zip(methods, summaries, strict=True)}


#: Seconds each corpus's methods took alone (one run, 2026-11-29): the longest corpus goes first, so that
#: the other worker takes the rest. A corpus not listed goes first.
SECONDS = {"wcxb-dev": 139, "c2f": 78, "docs": 49, "dragnet10": 30}


@needs_corpus
def test_no_method_falls_below_its_floor():
    corpora = sorted(FLOORS, key=lambda corpus: -SECONDS.get(corpus, 1000))
    with ProcessPoolExecutor(max_workers=2) as pool:
        measured = pool.map(measure, corpora, [list(FLOORS[corpus]) for corpus in corpora])
        scores = dict(zip(corpora, measured, strict=True))
    assert gate(scores, FLOORS) == []


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
