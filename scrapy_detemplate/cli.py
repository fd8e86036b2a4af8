"""``scrapy-detemplate``: the engine from the command line.

* ``clean``: JSONL pages in (``{"url", "html_b64"}`` or ``{"url", "html"}``), one
  JSONL result out per page, in order, flushed as soon as the page is done
  (``--markdown``: with a ``"markdown"`` key too).
* ``report``: the same JSONL pages in, a static HTML report of what was removed
  out (``-o DIR``; open ``DIR/index.html``); see :mod:`scrapy_detemplate.report`.
* ``eval``: a method (or several) over corpus manifests, scored as METRICS.md says.
* ``train``: retrain the templateness model of the ``isotonic`` method from a crawl
  (``scrapy-detemplate train CORPUS.manifest.jsonl -o model.json``; see ``--help``).
* ``train-combined``: retrain the ``combined`` method's trees from corpora with gold text.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import dataclasses
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from scrapy_detemplate.config import DEFAULT_SETTINGS, DetemplateConfig, InvalidSetting
from scrapy_detemplate.engine import CleanResult, Detemplater
from scrapy_detemplate.evaluation import Summary, format_table, parse_cost, plot, read_manifest, run_method, run_peer
from scrapy_detemplate.peers import PEERS, load_peer
from scrapy_detemplate.report import ReportWriter
from scrapy_detemplate.runners import RUNNERS


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["train"]:
        # Retrain the templateness model (isotonic method); needs the train extra (numpy).
        from scrapy_detemplate.train import main as train_main

        return train_main(argv[1:])
    if argv[:1] == ["train-combined"]:
        # Retrain the combined method's trees from corpora with gold text; needs the train extra.
        from scrapy_detemplate.train_combined import main as train_combined_main

        return train_combined_main(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        config = _config(None if args.command == "eval" else args.method, args.set)
    except InvalidSetting as exc:
        parser.error(str(exc))
    try:
        if args.command == "clean":
            if args.markdown:
                config = dataclasses.replace(config, markdown=True)
            return clean(config, args.input, args.output)
        if args.command == "report":
            return report(config, args.input, args.output, args.pages, args.title)
        return evaluate(args, parser)
    except InvalidSetting as exc:  # found when the engine is built (e.g. a model file that is not one)
        parser.error(str(exc))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scrapy-detemplate", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("train", help="retrain the isotonic method's model (train extra): train --help")
    sub.add_parser("train-combined", help="retrain the combined method's trees (train extra): train-combined --help")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--method", default=None, help=f"method to run ({', '.join(sorted(RUNNERS))}); eval: also 'all' or a comma list"
    )
    common.add_argument(
        "-s", "--set", action="append", default=[], metavar="NAME=VALUE",
        help="a DETEMPLATE_* setting, as with 'scrapy crawl -s'",
    )  # fmt: skip
    p_clean = sub.add_parser("clean", parents=[common], help="clean JSONL pages, in order")
    p_clean.add_argument("-i", "--input", type=argparse.FileType("r", encoding="utf-8"), default=sys.stdin)
    p_clean.add_argument("-o", "--output", type=argparse.FileType("w", encoding="utf-8"), default=sys.stdout)
    p_report = sub.add_parser("report", parents=[common], help="JSONL pages in, an HTML report of what was removed")
    p_report.add_argument("-i", "--input", type=argparse.FileType("r", encoding="utf-8"), default=sys.stdin)
    p_report.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write the report into")
    p_report.add_argument(
        "--pages", type=int, default=None, help="sample pages per site (default: DETEMPLATE_REPORT_PAGES, 3)"
    )
    p_report.add_argument("--title", default="scrapy-detemplate report", help="title of the report's index")
    p_clean.add_argument(
        "--markdown", action="store_true",
        help="add the content as Markdown (\"markdown\" key); -s DETEMPLATE_MARKDOWN_LINKS=True keeps link targets",
    )  # fmt: skip
    p_eval = sub.add_parser("eval", parents=[common], help="score methods (and peers) on corpora")
    p_eval.add_argument("manifests", nargs="+", help="corpus manifest(s), e.g. ../shared/corpus/c2f.manifest.jsonl")
    p_eval.add_argument("--per-site", action="store_true", help="also print one row per site")
    p_eval.add_argument("--peers", default="", help="peer extractors too: 'all' or a comma list (bench extra)")
    p_eval.add_argument("--json", type=argparse.FileType("w", encoding="utf-8"), help="write the figures as JSON")
    p_eval.add_argument("--plot", metavar="PNG", help="write quality against cost as a PNG (needs matplotlib)")
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
    for page in _pages(source):
        if isinstance(page, str):
            sink.write(json.dumps({"url": None, "error": page}) + "\n")
        else:
            url, body, headers = page
            result = engine.process(url, body, headers=headers)
            sink.write(json.dumps(_output(result, config.renders_markdown), ensure_ascii=False) + "\n")
        sink.flush()
    return 0


def report(config: DetemplateConfig, source: IO[str], directory: str, pages: int | None, title: str) -> int:
    """JSONL pages in (as ``clean`` reads them), a static HTML report written into ``directory``."""
    engine = Detemplater(config)
    try:
        writer = ReportWriter(directory, config.report_pages if pages is None else pages, title=title)
    except ValueError as exc:
        raise SystemExit(f"scrapy-detemplate: {exc}") from exc
    for page in _pages(source):
        if isinstance(page, str):
            continue
        url, body, headers = page
        site = config.site_key(url)
        writer.add(site, engine.process(url, body, headers=headers, mark=writer.wants_sample(site)))
    print(f"scrapy-detemplate: report written to {writer.close()}")
    return 0


def _pages(source: IO[str]) -> Iterator[tuple[str, bytes | str, dict[str, str] | None] | str]:
    """``(url, body, headers)`` per JSONL page, or an error message for a line that is not one."""
    for number, raw in enumerate(source, 1):
        if not raw.strip():
            continue
        try:
            page = json.loads(raw)
            url = str(page["url"])
            body: bytes | str = base64.b64decode(page["html_b64"]) if "html_b64" in page else str(page["html"])
        except (ValueError, KeyError, TypeError, binascii.Error) as exc:
            print(f"scrapy-detemplate: line {number}: not a page ({exc})", file=sys.stderr)
            yield f"line {number}: {exc}"
            continue
        yield url, body, page.get("headers") or None


def _output(result: CleanResult, markdown: bool = False) -> dict[str, object]:
    out: dict[str, object] = {"url": result.url, "text": result.text, "html": result.html}
    if markdown:
        out["markdown"] = result.markdown
    out.update(method=result.method, status=result.status, reason=result.reason)
    return out


def evaluate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Methods and peers over each corpus, in one process: tables, JSON, plot."""
    methods = _names(args.method or DEFAULT_SETTINGS["DETEMPLATE_METHOD"], sorted(RUNNERS))
    peers = _names(args.peers, sorted(PEERS)) if args.peers else []
    report: dict[str, Any] = {}
    points: dict[str, dict[str, tuple[float, float]]] = {}
    for manifest in args.manifests:
        pages = list(read_manifest(manifest))
        corpus = Path(manifest).name.split(".")[0]
        floor = parse_cost(pages)
        runs: list[tuple[str, Summary]] = []
        for method in methods:
            runs.append((method, run_method(_config(method, args.set), pages)))
        for peer in peers:
            runs.append((f"peer:{peer}", run_peer(load_peer(peer), pages)))
        entry: dict[str, Any] = {"pages": len(pages), "sites": len({p.site for p in pages})}
        entry["lxml_parse_ms"] = 1000 * floor
        for name, summary in runs:
            entry[name] = {
                "macro": summary.macro(),
                "micro": summary.micro(),
                "sites": {s: summary.site_means(s) for s in summary.sites},
            }
            points.setdefault(corpus, {})[name] = (summary.macro()["ms_per_page"], summary.macro()["f1"])
            if args.per_site:
                print(f"{name} per site")
                print(format_table((f"  {s}", summary.site_means(s)) for s in summary.sites))
        report[corpus] = entry
        floor_ms = entry["lxml_parse_ms"]
        print(f"{corpus}: {len(pages)} pages, {entry['sites']} sites (site-macro; lxml parse {floor_ms:.2f} ms/page)")
        print(format_table((name, summary.macro()) for name, summary in runs))
    if args.json:
        json.dump(report, args.json, indent=1)
    if args.plot:
        plot(points, args.plot)
    return 0


def _names(value: str, known: list[str]) -> list[str]:
    names = known if value == "all" else [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"scrapy-detemplate: unknown name(s) {unknown}; known: {known}")
    return names


if __name__ == "__main__":  # python -m scrapy_detemplate.cli, like python -m scrapy_detemplate
    raise SystemExit(main())
