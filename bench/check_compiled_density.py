"""Check the compiled line features (``scrapy_detemplate/methods/_density.pyx``) against the Python function.

For every page of the corpora, on the engine's own path (``decode_html``, ``parse_html``, the page's
visible lines, the title as the combined method reads it), the compiled ``line_features`` must return
exactly what ``density._line_features_py`` returns: the same number of rows and every float ``==``
(bit for bit: ``==`` on Python floats).  Pages the compiled function hands back to Python (it returns
``None``) are counted; they are correct by construction, but should be rare.

Usage: ``nice .venv/bin/python bench/check_compiled_density.py [corpus ...]`` (corpora default to
c2f dragnet10 docs wcxb-dev, in ``../shared/corpus`` beside the checkout).  Prints pages checked,
mismatches and hand-backs per corpus; exits 1 on any mismatch, or when the compiled module is not built.
"""

from __future__ import annotations

import argparse
import sys
import time

from _results import CORPUS  # bench/, the script's folder

from scrapy_detemplate._html import decode_html, parse_html, visible_lines
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.methods import density


def first_difference(slow: list[list[float]], fast: list[list[float]]) -> str:
    if len(slow) != len(fast):
        return f"{len(fast)} rows instead of {len(slow)}"
    for i, (a, b) in enumerate(zip(slow, fast, strict=True)):
        if a != b:
            names = [f"{name}: {x!r} != {y!r}" for name, x, y in zip(density.FEATURES, a, b, strict=False) if x != y]
            return f"line {i}: {'; '.join(names[:4])}"
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpora", nargs="*", default=["c2f", "dragnet10", "docs", "wcxb-dev"])
    args = parser.parse_args()
    compiled = density._compiled
    if compiled is None:
        print("the compiled line features are not built or not loaded", file=sys.stderr)
        return 1
    total_bad = 0
    for corpus in args.corpora:
        pages = bad = handed_back = lines_checked = 0
        started = time.perf_counter()
        for page in read_manifest(CORPUS / f"{corpus}.manifest.jsonl"):
            _, html = decode_html(page.body, "text/html")
            root = parse_html(html)
            if root is None:
                continue
            lines = visible_lines(root)
            title = root.findtext(".//title") or ""
            slow = density._line_features_py(root, lines, title)
            fast = compiled.line_features(root, lines, title)
            pages += 1
            lines_checked += len(lines)
            if fast is None:
                handed_back += 1
                continue
            why = first_difference(slow, fast)
            if why or fast != slow:
                bad += 1
                print(f"MISMATCH {corpus} {page.url}: {why}", flush=True)
        total_bad += bad
        print(
            f"{corpus}: {pages} pages ({lines_checked} lines) checked, {bad} mismatches, {handed_back} handed back "
            f"to Python ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
