"""``scrapy-detemplate``: the engine from the command line.

* ``clean``: JSONL pages in (``{"url", "html_b64"}`` or ``{"url", "html"}``), one
  JSONL result out per page, in order, flushed as soon as the page is done.
* ``eval``: a method (or several) over corpus manifests, scored as METRICS.md says.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import sys
from collections.abc import Sequence
from typing import IO, Any

from scrapy_detemplate.config import DEFAULT_SETTINGS, DetemplateConfig, InvalidSetting
from scrapy_detemplate.engine import CleanResult, Detemplater
from scrapy_detemplate.evaluation import Summary, format_table, read_manifest, score_page, timed
from scrapy_detemplate.runners import RUNNERS


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        config = _config(None if args.method == "all" else args.method, args.set)
    except InvalidSetting as exc:
        parser.error(str(exc))
    if args.command == "clean":
        return clean(config, args.input, args.output)
    return evaluate(args, parser)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scrapy-detemplate", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--method", default=None, help=f"method to run ({', '.join(sorted(RUNNERS))})")
    common.add_argument(
        "-s", "--set", action="append", default=[], metavar="NAME=VALUE",
        help="a DETEMPLATE_* setting, as with 'scrapy crawl -s'",
    )  # fmt: skip
    p_clean = sub.add_parser("clean", parents=[common], help="clean JSONL pages, in order")
    p_clean.add_argument("-i", "--input", type=argparse.FileType("r", encoding="utf-8"), default=sys.stdin)
    p_clean.add_argument("-o", "--output", type=argparse.FileType("w", encoding="utf-8"), default=sys.stdout)
    p_eval = sub.add_parser("eval", parents=[common], help="score methods on corpus manifests")
    p_eval.add_argument("manifests", nargs="+", help="corpus manifest(s), e.g. ../shared/corpus/c2f.manifest.jsonl")
    p_eval.add_argument("--per-site", action="store_true", help="also print one row per site")
    p_eval.add_argument("--json", type=argparse.FileType("w", encoding="utf-8"), help="write the figures as JSON")
    return parser


def _config(method: str | None, pairs: list[str]) -> DetemplateConfig:
    settings: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in DEFAULT_SETTINGS:
            raise InvalidSetting(name or pair, value, "NAME=VALUE with NAME one of the DETEMPLATE_* settings")
        settings[name] = value
    if method is not None:
        settings["DETEMPLATE_METHOD"] = method
    return DetemplateConfig.from_settings(settings)


def clean(config: DetemplateConfig, source: IO[str], sink: IO[str]) -> int:
    """The stable protocol: one JSON page per line in, one JSON result per line out."""
    engine = Detemplater(config)
    for number, raw in enumerate(source, 1):
        if not raw.strip():
            continue
        try:
            page = json.loads(raw)
            url = str(page["url"])
            body: bytes | str = base64.b64decode(page["html_b64"]) if "html_b64" in page else str(page["html"])
        except (ValueError, KeyError, TypeError, binascii.Error) as exc:
            print(f"scrapy-detemplate: line {number}: not a page ({exc})", file=sys.stderr)
            sink.write(json.dumps({"url": None, "error": f"line {number}: {exc}"}) + "\n")
            sink.flush()
            continue
        result = engine.process(url, body, headers=page.get("headers") or None)
        sink.write(json.dumps(_output(result), ensure_ascii=False) + "\n")
        sink.flush()
    return 0


def _output(result: CleanResult) -> dict[str, object]:
    return {
        "url": result.url,
        "text": result.text,
        "html": result.html,
        "method": result.method,
        "status": result.status,
        "reason": result.reason,
    }


def evaluate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    methods = sorted(RUNNERS) if args.method == "all" else [args.method or DEFAULT_SETTINGS["DETEMPLATE_METHOD"]]
    report: dict[str, Any] = {}
    for manifest in args.manifests:
        rows = []
        for method in methods:
            config = _config(method, args.set)
            summary = run_corpus(config, manifest)
            rows.append((method, summary.macro()))
            report.setdefault(manifest, {})[method] = {
                "macro": summary.macro(),
                "micro": summary.micro(),
                "pages": summary.pages,
                "sites": {s: summary.site_means(s) for s in summary.sites},
            }
            if args.per_site:
                print(format_table((f"  {s}", summary.site_means(s)) for s in summary.sites))
        print(f"{manifest} (site-macro)")
        print(format_table(rows))
    if args.json:
        json.dump(report, args.json, indent=1)
    return 0


def run_corpus(config: DetemplateConfig, manifest: str) -> Summary:
    """Run one engine over a manifest's pages in crawl order and score every page."""
    engine = Detemplater(config)
    summary = Summary()
    for page in read_manifest(manifest):
        result, seconds = timed(engine.process, page.url, page.body)
        text = result.text if result.status != "passthrough" or result.text else page.visible_text()
        summary.add(page.site, score_page(text, page.gold, page.visible_text(), seconds))
    return summary
