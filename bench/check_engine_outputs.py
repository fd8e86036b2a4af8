"""The default engine's verdicts and text, page for page, against those of another checkout.

A cost change must not change a single result.  First, with the code to compare
against (e.g. main's HEAD, in its own worktree), save every page's result; then,
with the new code, compare:

    .venv/bin/python bench/check_engine_outputs.py --save /tmp/head-outputs [corpus ...]
    .venv/bin/python bench/check_engine_outputs.py --compare /tmp/head-outputs [corpus ...]

One default engine per corpus takes the pages in manifest order (the site state
evolves as in a crawl).  Per page it records the runner's verdict (template
lines, detail) and the result (status, reason, method, text, template lines,
characters removed), one JSON line a page, ``<dir>/<corpus>.jsonl``.  The
comparison names every page that differs and in what; its exit status is 1
when one does.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from _results import CORPUS  # bench/, the script's folder

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.runners import ParsedPage, Verdict

CORPORA = ("c2f", "dragnet10", "docs", "wcxb-dev")
HEADERS = [("Content-Type", "text/html")]


def outputs(corpus: Path, name: str) -> list[dict[str, Any]]:
    """Every page's verdict and result, in manifest order."""
    det = Detemplater(DetemplateConfig())
    runner: Any = det.runner
    run = runner.run
    verdicts: list[Verdict] = []

    def recording_run(page: ParsedPage) -> Verdict:
        verdict: Verdict = run(page)
        verdicts.append(verdict)
        return verdict

    runner.run = recording_run
    out = []
    for page in read_manifest(corpus / f"{name}.manifest.jsonl"):
        verdicts.clear()
        result = det.process(page.url, page.body, headers=HEADERS)
        verdict = verdicts[0] if verdicts else None
        out.append(
            {
                "url": page.url,
                "verdict": None if verdict is None else [sorted(verdict.template_lines), verdict.detail],
                "status": result.status,
                "reason": result.reason,
                "method": result.method,
                "text": result.text,
                "template_lines": list(result.template_lines),
                "chars_removed": result.chars_removed,
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", type=Path, help="write the results to this directory")
    group.add_argument("--compare", type=Path, help="compare with the results saved in this directory")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("corpora", nargs="*", default=list(CORPORA))
    args = parser.parse_args(argv)
    differing = 0
    for name in args.corpora:
        start = time.perf_counter()
        results = outputs(args.corpus, name)
        if args.save:
            args.save.mkdir(parents=True, exist_ok=True)
            with (args.save / f"{name}.jsonl").open("w", encoding="utf-8") as f:
                f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in results)
            print(f"{name}: {len(results)} pages saved ({time.perf_counter() - start:.0f} s)")
            continue
        saved = [json.loads(line) for line in (args.compare / f"{name}.jsonl").open(encoding="utf-8")]
        bad = 0
        if len(saved) != len(results):
            print(f"  {name}: {len(results)} pages, {len(saved)} saved")
            bad += 1
        for old, new in zip(saved, results, strict=False):
            fields = [key for key in old if old[key] != new.get(key)]
            if fields:
                bad += 1
                print(f"  DIFFERS {new['url']}: {', '.join(fields)}")
        print(f"{name}: {len(results)} pages compared, {bad} differ ({time.perf_counter() - start:.0f} s)")
        differing += bad
    if args.compare:
        print(f"all: {differing} pages differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
