"""Compiled vs Python site evidence, name columns and forest scoring on every page of the corpora.

Two default engines per corpus take the pages in manifest order (the site state
evolves as in a crawl), one with the compiled ``_site`` and ``_names`` modules, one with the
Python functions.  Per page: the segmentation (keys, lengths, blocks, lines,
block elements and parents) and Sandwich's text keys, compiled vs Python on the
same lines; the columns of learned class/id names (``names.page_columns``, which
the runner asks on a site's first page only) on every page, compiled vs Python, with
what each kept from the pages before; the feature rows of the two engines (``repr``: bit-identical
floats; the compiled engine keeps its rows in C, ``FeatureRows``, read back
here); the compiled scorer's probabilities vs ``Forest.probability`` (the
reference) on those rows; the verdict's template lines and the clean text.

    nice .venv/bin/python bench/check_compiled_site.py [corpus ...]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from _results import CORPUS  # bench/, the script's folder

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.methods import forest, names, sandwich, segments
from scrapy_detemplate.runners import ParsedPage, Verdict, combined
from scrapy_detemplate.runners.combined import load_forest

CORPORA = ("c2f", "dragnet10", "docs", "wcxb-dev")
MODULES = (segments, sandwich, combined, forest)
COMPILED = segments._compiled
NAMES_COMPILED = names._compiled
HEADERS = [("Content-Type", "text/html")]


def use_compiled(on: bool) -> None:
    for module in MODULES:
        module._compiled = COMPILED if on else None  # type: ignore[attr-defined]
    names._compiled = NAMES_COMPILED if on else None


def probe(det: Detemplater, compiled: bool, seen: dict[str, Any]) -> None:
    """Record the engine's feature rows and verdict (the runner itself runs unchanged)."""
    runner: Any = det.runner
    features: Callable[[ParsedPage], list[list[float]]] = runner._evidence.features
    feature_rows: Callable[[ParsedPage, Any], Any] = runner._evidence.feature_rows
    run: Callable[[ParsedPage], Verdict] = runner.run

    def recording_features(page: ParsedPage) -> list[list[float]]:
        rows = features(page)
        seen[f"rows{compiled}"] = [list(r) for r in rows]
        return rows

    def recording_feature_rows(page: ParsedPage, rows: Any = None) -> Any:
        rows = feature_rows(page, rows)  # the compiled engine's rows, kept in C
        seen[f"rows{compiled}"] = rows.tolist()
        return rows

    def recording_run(page: ParsedPage) -> Verdict:
        if compiled:
            seen["page"] = page
        verdict = run(page)
        seen[f"verdict{compiled}"] = verdict
        return verdict

    runner._evidence.features = recording_features
    runner._evidence.feature_rows = recording_feature_rows
    runner.run = recording_run


def same_segmentation(a: segments.Segmentation, b: segments.Segmentation) -> bool:
    return (
        a.keys == b.keys
        and a.lengths == b.lengths
        and a.blocks == b.blocks
        and a.lines == b.lines
        and a.block_parents == b.block_parents
        and len(a.block_elements) == len(b.block_elements)
        and all(x is y for x, y in zip(a.block_elements, b.block_elements, strict=True))
    )


def check(corpus: str) -> tuple[int, int]:
    seen: dict[str, Any] = {}
    use_compiled(True)
    fast = Detemplater(DetemplateConfig())
    use_compiled(False)
    slow = Detemplater(DetemplateConfig())
    use_compiled(True)
    probe(fast, True, seen)
    probe(slow, False, seen)
    reference = load_forest()
    scorer = reference.scorer()
    assert scorer.__self__.__class__.__name__ == "ForestScorer"  # type: ignore[attr-defined]
    lexicon = combined.model_names(combined.read_model())
    known_fast, known_slow = names.KnownNames(lexicon), names.KnownNames(lexicon)
    pages = mismatches = 0
    for page in read_manifest(CORPUS / f"{corpus}.manifest.jsonl"):
        seen.clear()
        use_compiled(True)
        a = fast.process(page.url, page.body, headers=HEADERS)
        use_compiled(False)
        b = slow.process(page.url, page.body, headers=HEADERS)
        use_compiled(True)
        pages += 1
        problems = []
        if (a.status, a.reason, a.text) != (b.status, b.reason, b.text):
            problems.append("result")
        if ("rowsTrue" in seen) != ("rowsFalse" in seen):
            problems.append("runner ran on one side only")
        elif "rowsTrue" in seen:
            rows = seen["rowsTrue"]
            if repr(rows) != repr(seen["rowsFalse"]):
                problems.append("features")
            if seen["verdictTrue"] != seen["verdictFalse"]:
                problems.append("verdict")
            if scorer(rows) != [reference.probability(row) for row in rows]:
                problems.append("probabilities")
            lines = seen["page"].lines
            segments._compiled = None
            python_seg = segments.segment_lines(lines)
            segments._compiled = COMPILED
            compiled_seg = COMPILED.segment_lines(lines, segments.Segmentation)
            if compiled_seg is None:
                print(f"  handed back to Python: {page.url}")
            elif not same_segmentation(compiled_seg, python_seg):
                problems.append("segmentation")
            if sandwich.text_line_keys(lines) != sandwich._text_line_keys_py(lines):
                problems.append("text keys")
            fast_names = NAMES_COMPILED.page_columns(lines, known_fast)
            if fast_names is None:
                print(f"  names handed back to Python: {page.url}")
            elif repr(fast_names) != repr(names._page_columns_py(lines, known_slow)):
                problems.append("name columns")
        if problems:
            mismatches += 1
            print(f"  MISMATCH {page.url}: {', '.join(problems)}")
    return pages, mismatches


def main() -> None:
    if COMPILED is None or NAMES_COMPILED is None:
        sys.exit("scrapy_detemplate.methods._site or _names is not built")
    total = bad = 0
    for corpus in sys.argv[1:] or CORPORA:
        start = time.perf_counter()
        pages, mismatches = check(corpus)
        print(f"{corpus}: {pages} pages checked, {mismatches} mismatches ({time.perf_counter() - start:.0f} s)")
        total, bad = total + pages, bad + mismatches
    print(f"all: {total} pages checked, {bad} mismatches")


if __name__ == "__main__":
    main()
