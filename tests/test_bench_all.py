"""bench/bench_all.py: the cost part runs on a few pages and its table has the expected shape."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from scrapy_detemplate.runners import RUNNERS

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(ROOT / "bench"))

import bench_all  # noqa: E402


@pytest.fixture
def tiny_corpus(tmp_path, page):
    """Six pages of one site in two directories, as a self-contained JSONL corpus."""
    lines = []
    for number in range(6):
        directory = "news" if number % 2 else "sport"
        body = f"Story {number} tells a long tale of rivers and bridges. " * 5
        lines.append(
            json.dumps(
                {
                    "site": "ex.com",
                    "url": f"http://ex.com/{directory}/{number}.html",
                    "html": page.format(title=f"Title {number}", body=body),
                    "gold_text": f"Title {number}\n{body}",
                }
            )
        )
    path = tmp_path / "tiny.manifest.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_every_method_gets_positive_ratios(tiny_corpus):
    rows, table = bench_all.cost_report([tiny_corpus])
    assert {r.method for r in rows} == set(RUNNERS)
    for r in rows:
        assert r.corpus == "tiny"
        assert r.phase == "all" or (r.method, r.phase) in bench_all.PHASES
        assert r.pages > 0
        for value in (r.parse_ms, r.step_ms, r.step_ratio, r.step_ratio_p90, r.engine_ratio, r.engine_ratio_p90):
            assert value > 0 and math.isfinite(value), r
    everything = {r.method: r.pages for r in rows if r.phase == "all"}
    assert everything == dict.fromkeys(RUNNERS, 6)  # no page was left out
    for method in RUNNERS:
        assert f"tiny       {method}" in table


def test_phases_split_learning_from_applying(tiny_corpus):
    rows, _ = bench_all.cost_report([tiny_corpus])
    phases = {(r.method, r.phase): r.pages for r in rows}
    assert phases["sandwich", "cold"] == 2  # the first page of each directory has no peer
    assert phases["sandwich", "warm"] == 4
    assert phases["rtdm", "learn"] == 6  # fewer pages than a FindTemplate sample
    assert ("tps", "cold") not in phases and ("tps", "all") in phases
    assert phases["combined", "learning"] == 5  # a site's first five pages
    assert phases["combined", "steady"] == 1


def test_default_rows_cover_every_page_by_phase(tiny_corpus):
    rows, table = bench_all.default_report([tiny_corpus])
    assert {(r.method, r.phase): r.pages for r in rows} == {
        ("combined", "all"): 6,
        ("combined", "learning"): 5,
        ("combined", "steady"): 1,
    }
    assert all(r.engine_ratio > 0 and r.parse_ms > 0 for r in rows)
    assert "Part 1b" in table and "tiny       steady       1 " in table
    assert bench_all.default_report([tiny_corpus], pages=2)[0][0].pages == 2


def test_the_wrapper_times_its_own_bookkeeping_apart(tiny_corpus):
    engine = bench_all.Detemplater(bench_all.DetemplateConfig())
    timed = engine.runner = bench_all.TimedRunner("combined", engine.runner)
    page = next(bench_all.read_manifest(tiny_corpus))
    engine.process(page.url, page.body, headers=bench_all.HEADERS)
    assert timed.ns is not None and timed.ns > 0 and timed.own_ns > 0  # taken off the engine's time
    assert timed.phase == "learning"


@pytest.mark.skipif(not CORPUS.exists(), reason="no corpus in ../shared/corpus")
def test_script_on_three_pages_of_the_real_corpus(tmp_path):
    out = tmp_path / "bench_all.txt"
    assert bench_all.main(["--pages", "3", "--default-pages", "3", "--crawl-pages", "0", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Part 1" in text and "Part 1b" in text and "Part 2" not in text
    assert f"{'docs':<10} {'all':<8} {3:>5} " in text
    for corpus in ("c2f", "dragnet10"):
        for method in RUNNERS:
            assert f"{corpus:<10} {method:<9} all        3 " in text


def test_markdown_rows_time_the_rendering_against_a_parse(tiny_corpus):
    rows, table = bench_all.markdown_report([tiny_corpus], corpora=("tiny",))
    ((corpus, pages, parse_ms, render_ms, ratio, ratio_p90),) = rows
    assert corpus == "tiny" and pages == "6"
    assert all(float(v) > 0 for v in (parse_ms, render_ms, ratio, ratio_p90))
    assert "render/parse" in table
    assert bench_all.markdown_report([tiny_corpus])[0] == []  # only the corpora asked for
