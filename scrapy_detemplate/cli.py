"""``scrapy-detemplate``: the engine from the command line.

* ``clean``: JSONL pages in (``{"url", "html_b64"}`` or ``{"url", "html"}``), one
  JSONL line out per input line, in order, flushed as soon as the line is done
  (``--markdown``: with a ``"markdown"`` key too); exit status 1 when a line was
  not a page (``clean --help``).
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
import codecs
import dataclasses
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from scrapy_detemplate._html import scrub_surrogates
from scrapy_detemplate.config import DEFAULT_SETTINGS, DetemplateConfig, InvalidSetting
from scrapy_detemplate.engine import CleanResult, Detemplater
from scrapy_detemplate.evaluation import (
    ManifestError,
    Summary,
    format_table,
    parse_cost,
    plot,
    read_manifest,
    run_methods,
    run_peer,
)
from scrapy_detemplate.peers import PEERS, load_peer
from scrapy_detemplate.report import ReportWriter
from scrapy_detemplate.runners import RUNNERS


def main(argv: Sequence[str] | None = None, *, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> int:
    """Run a command; ``stdin``/``stdout`` replace the process's own streams for ``clean``."""
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
            source = args.input or stdin or sys.stdin.buffer
            sink = args.output or stdout or sys.stdout.buffer
            try:
                return clean(config, source, sink)
            except BrokenPipeError:
                # The reader went away (``| head -1``): stop quietly, as a command killed by SIGPIPE would.
                if sink is sys.stdout.buffer:
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit's flush
                return 141  # 128 + SIGPIPE, the shell's status for it
        if args.command == "report":
            return report(config, args.input, args.output, args.pages, args.title)
        return evaluate(args, parser)
    except InvalidSetting as exc:  # found when the engine is built (e.g. a model file that is not one)
        parser.error(str(exc))
    except ManifestError as exc:
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
    p_clean = sub.add_parser(
        "clean", parents=[common], help="clean JSONL pages, in order (exit status 1 if a line was not a page)",
        description=CLEAN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    p_clean.add_argument("-i", "--input", type=argparse.FileType("rb"), help="JSONL pages (default: stdin)")
    p_clean.add_argument("-o", "--output", type=argparse.FileType("wb"), help="JSONL results (default: stdout)")
    p_clean.add_argument(
        "--markdown", action="store_true",
        help="add the content as Markdown (\"markdown\" key); -s DETEMPLATE_MARKDOWN_LINKS=True keeps link targets",
    )  # fmt: skip
    p_report = sub.add_parser("report", parents=[common], help="JSONL pages in, an HTML report of what was removed")
    p_report.add_argument("-i", "--input", type=argparse.FileType("r", encoding="utf-8"), default=sys.stdin)
    p_report.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write the report into")
    p_report.add_argument(
        "--pages", type=int, default=None, help="sample pages per site (default: DETEMPLATE_REPORT_PAGES, 3)"
    )
    p_report.add_argument("--title", default="scrapy-detemplate report", help="title of the report's index")
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
    # The output lines carry the clean HTML unless told otherwise (-s DETEMPLATE_HTML=False).
    settings.setdefault("DETEMPLATE_HTML", True)
    return DetemplateConfig.from_settings(settings)


def clean(config: DetemplateConfig, source: IO[bytes], sink: IO[bytes]) -> int:
    """The stable protocol: one JSON page per line in, one JSON line out per input line, in order.

    Returns the exit status: 0 when every line was a page (blank lines included),
    1 when any line got an error line.
    """
    engine = Detemplater(config)
    failed = False
    for number, raw in enumerate(source, 1):
        if number == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8) :]
        try:
            out = _clean_line(engine, raw, config.renders_markdown)
        except NotAPage as exc:
            failed = True
            message = f"line {number}: {exc}"
            print(f"scrapy-detemplate: {message}", file=sys.stderr)
            out = _line(exc.url, engine.runner.name, "error", "not_a_page") | {"error": message}
        # Lone surrogates (JSON allows "\ud800") become U+FFFD: the output is always valid UTF-8.
        sink.write(scrub_surrogates(json.dumps(out, ensure_ascii=False)).encode("utf-8") + b"\n")
        sink.flush()
    return 1 if failed else 0


CLEAN_HELP = """\
Input: JSON lines {"url": ..., "html": "<html>..."} or {"url": ..., "html_b64": "..."},
optionally with "headers": {"Content-Type": ...}, UTF-8, in crawl order.
Output: one JSON line per input line, in order, flushed as soon as it is done:
{"url", "text", "html", "method", "status", "reason"}. A blank input line gives
status "blank"; a line that is not a page (not UTF-8, not JSON, a field of the
wrong type, invalid base64) gives status "error" with an "error" message, and the
lines after it are still cleaned.
Exit status 0 when every line was a page or blank; exit status 1 when any line
got an error line; 2 for bad arguments; 141 when the output was closed early."""


class NotAPage(ValueError):
    """An input line that is not a page; ``url`` when the line had one."""

    def __init__(self, message: str, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


def _clean_line(engine: Detemplater, raw: bytes, markdown: bool = False) -> dict[str, object]:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotAPage(f"not UTF-8 (byte {raw[exc.start]:#04x} at offset {exc.start}); JSON lines are UTF-8") from exc
    if not line.strip():
        return _line(None, engine.runner.name, "blank", "")
    try:
        page = json.loads(line)
    except RecursionError as exc:
        raise NotAPage("not a page (JSON nested too deep)") from exc
    except ValueError as exc:
        raise NotAPage(f"not JSON ({exc})") from exc
    if not isinstance(page, dict):
        raise NotAPage(f"not a page (a JSON {type(page).__name__}, expected an object with url and html)")
    url = page.get("url")
    if not isinstance(url, str):
        raise NotAPage(f'"url" must be a string, not {_json_type(url)}')
    headers = page.get("headers")
    if headers is not None and not (
        isinstance(headers, dict) and all(isinstance(v, (str, list)) for v in headers.values())
    ):
        raise NotAPage('"headers" must be an object of strings', url)
    body: bytes | str
    if "html_b64" in page:
        encoded = page["html_b64"]
        if not isinstance(encoded, str):
            raise NotAPage(f'"html_b64" must be a string, not {_json_type(encoded)}', url)
        try:
            body = base64.b64decode("".join(encoded.split()), validate=True)
        except (ValueError, binascii.Error) as exc:
            raise NotAPage(f'"html_b64" is not valid base64 ({exc})', url) from exc
    elif "html" in page:
        body = page["html"]
        if not isinstance(body, str):
            raise NotAPage(f'"html" must be a string, not {_json_type(body)}', url)
    else:
        raise NotAPage('no "html" or "html_b64"', url)
    return _output(engine.process(url, body, headers=headers), markdown)


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
        except (ValueError, KeyError, TypeError, RecursionError, binascii.Error) as exc:
            print(f"scrapy-detemplate: line {number}: not a page ({exc})", file=sys.stderr)
            yield f"line {number}: {exc}"
            continue
        yield url, body, page.get("headers") or None


def _line(url: str | None, method: str, status: str, reason: str) -> dict[str, object]:
    """An output line for an input line that was not a page."""
    return {"url": url, "text": "", "html": "", "method": method, "status": status, "reason": reason}


def _json_type(value: object) -> str:
    names = {
        type(None): "null",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "an object",
    }
    return names.get(type(value), type(value).__name__)


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
        summaries = run_methods([_config(method, args.set) for method in methods], pages)
        runs: list[tuple[str, Summary]] = list(zip(methods, summaries, strict=True))
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
            if summary.kinds:
                entry[name]["page_types"] = {k: summary.kind_means(k) for k in sorted(summary.kinds)}
            if args.per_site:
                print(f"{name} per site")
                print(format_table((f"  {s}", summary.site_means(s)) for s in summary.sites))
        report[corpus] = entry
        floor_ms = entry["lxml_parse_ms"]
        print(f"{corpus}: {len(pages)} pages, {entry['sites']} sites (site-macro; lxml parse {floor_ms:.2f} ms/page)")
        print(format_table((name, summary.macro()) for name, summary in runs))
        if any(summary.kinds for _, summary in runs):
            print(f"{corpus} by page type (micro: mean over the pages of each type)")
            kinds = sorted({k for _, summary in runs for k in summary.kinds})
            print(format_table((f"{kind} {name}", summary.kind_means(kind)) for kind in kinds
                               for name, summary in runs if kind in summary.kinds))  # fmt: skip
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
