"""Content F1 of a real Scrapy crawl of corpus pages, as issue 14's new user measured it.

    .venv/bin/python bench/crawl_corpus.py [--corpus ../shared/corpus] [--corpora docs,wcxb-dev]
                                           [--sites N] [--follow docs] [--model PATH] [--wait SECONDS]
                                           [--out bench/results/crawl_corpus.txt]

The evaluation harness (``scrapy-detemplate eval``) feeds a corpus's pages to one
engine in manifest order.  A user's crawl differs: Scrapy decides the order
(concurrent requests, links followed as they are found), and the pages come through
Scrapy's downloader and the add-on's components, which put ``content`` into the
spider's items.  This runs that crawl and scores its feed against the same gold.

* The pages of the chosen corpora are served by an HTTP proxy on 127.0.0.1 under
  their manifest URLs (``https`` ones as ``http``: the proxy speaks plain HTTP; a
  host such as ``asciidoctor-2.0`` as ``asciidoctor-2.0.test``: :func:`as_http`),
  ``Content-Type: text/html`` with no charset, as the harness passes them; any
  other URL gets a 404.  So each site keeps its own host (its own template
  state) and relative links resolve as on the real site.
* A new Scrapy project's spider, as in the issue: a ``CrawlSpider`` yielding
  ``{"url": response.url}`` for every page, settings ``ADDONS =
  {"scrapy_detemplate.Addon": 0}`` and nothing of the plugin's else (no
  download delay, Scrapy's default concurrency), run in a fresh process with
  ``http_proxy`` pointing at the proxy.  Every manifest URL is a start URL (most
  documentation pages of the corpus cannot be reached from a site's first page);
  on the corpora of ``--follow`` (``docs``: their pages link to each other) the spider
  also follows every link within the site's host, so
  pages found by links come between the start URLs, as in a real crawl.
* Each item's ``content`` is scored against the page's gold (``METRICS.md``),
  next to keeping every visible line and to the harness's engine in manifest
  order on the same pages.

Reported per corpus: pages crawled of the manifest's; site-macro P / R / F1 /
template removed, the page mean of F1 (micro) and the share of pages below 0.5,
of the crawl, of the harness and of keeping every line; the pages whose content
is not the harness's text; the sites more than 0.03 below keeping every line.
With the shipped model the figures are in-corpus (it was trained on these
pages): they check that a crawl gets what the harness measures.  For sites never
seen, give ``--model`` a model trained without them (``scrapy-detemplate
train-combined`` on the other corpora, ``-o PATH``): the crawl sets
``DETEMPLATE_COMBINED_MODEL`` to it, and so does the harness.  ``--wait 0`` turns
off the second cleaning of each site's first page (``DETEMPLATE_FIRST_PAGE_WAIT``),
which the harness does not do: with it on, a site's first page is cleaned beside
whichever page of its site the crawl cleaned next.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import canonicalize_url

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _results import CORPUS, write_result  # noqa: E402

from scrapy_detemplate.config import DetemplateConfig  # noqa: E402
from scrapy_detemplate.engine import Detemplater  # noqa: E402
from scrapy_detemplate.evaluation import (  # noqa: E402
    CorpusPage,
    Summary,
    below_keep_all,
    first_sites,
    read_manifest,
    score_page,
    scored_text,
)

#: Corpora whose pages link to each other: the spider follows links there (``--follow``).
FOLLOW = "docs"


def as_http(url: str) -> str:
    """The URL the crawl asks for: ``https`` pages are served as ``http`` by the proxy, and a host whose
    last label is a number but which is no IPv4 address (a documentation site named ``asciidoctor-2.0``)
    gets the reserved ``.test`` label after it: URL parsers read such a host as an address and reject it
    (w3lib 2.6 and so Scrapy's requests, after the WHATWG URL standard)."""
    url = "http" + url[5:] if url.startswith("https:") else url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not _ENDS_IN_NUMBER.fullmatch(host.rstrip(".").rsplit(".", 1)[-1]) or _is_ipv4(host):
        return url
    userinfo, at, hostport = parts.netloc.rpartition("@")
    name, colon, port = hostport.partition(":")
    return urlunsplit(parts._replace(netloc=f"{userinfo}{at}{name.rstrip('.')}.test{colon}{port}"))


#: WHATWG's "ends in a number": a last label of digits, or ``0x`` and hex digits.
_ENDS_IN_NUMBER = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")


def _is_ipv4(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).version == 4
    except ValueError:
        return False


def key(url: str) -> str:
    """One page's name on both sides of the proxy (scheme, fragment and query order aside)."""
    return canonicalize_url(as_http(url)).split(":", 1)[1]


def serve(pages: dict[str, bytes]) -> tuple[ThreadingHTTPServer, str]:
    """An HTTP proxy on 127.0.0.1 answering ``GET http://host/path`` from ``pages`` (by :func:`key`)."""

    class Proxy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(key(self.path)) if self.path.startswith("http://") else None
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "text/html")
            body = body if body is not None else b"<html><body>not found</body></html>"
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def crawl(job: dict[str, Any]) -> None:
    """The child process: one Scrapy crawl of ``job["start"]``, the feed to ``job["feed"]``."""
    from scrapy import Request
    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    class CorpusSpider(CrawlSpider):
        name = "corpus"
        # No hosts to follow, no rule (an empty allow_domains would allow every domain).
        hosts = job["follow_hosts"]
        rules = (Rule(LinkExtractor(allow_domains=hosts), callback="parse_item", follow=True),) if hosts else ()

        async def start(self) -> Any:
            for url in job["start"]:  # filtered like found links: each page is fetched once
                yield Request(url)

        def parse_start_url(self, response: Any, **kwargs: Any) -> Any:
            return self.parse_item(response)

        def parse_item(self, response: Any) -> Any:
            yield {"url": response.url}

    process = CrawlerProcess(
        {
            "ADDONS": {"scrapy_detemplate.Addon": 0},
            **({"DETEMPLATE_COMBINED_MODEL": job["model"]} if job["model"] else {}),
            **({"DETEMPLATE_FIRST_PAGE_WAIT": job["wait"]} if job.get("wait") is not None else {}),
            "FEEDS": {job["feed"]: {"format": "jsonlines", "encoding": "utf-8"}},
            "LOG_LEVEL": "INFO",
            "ROBOTSTXT_OBEY": False,
            "TELNETCONSOLE_ENABLED": False,
        }
    )
    process.crawl(CorpusSpider)
    process.start()


def crawl_pages(
    by_corpus: dict[str, list[CorpusPage]],
    model: Path | None = None,
    follow: Sequence[str] = (FOLLOW,),
    wait: float | None = None,
) -> tuple[list[dict[str, Any]], str, float]:
    """Serve the pages, crawl them in a fresh process: (the feed's items, the crawl's log, seconds)."""
    served = {key(page.url): page.body for pages in by_corpus.values() for page in pages}
    follow_hosts = sorted(
        {urlsplit(as_http(page.url)).hostname or "" for name in follow for page in by_corpus.get(name, [])} - {""}
    )
    server, proxy = serve(served)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            feed = Path(tmp) / "items.jsonl"
            job = {
                "start": [as_http(page.url) for pages in by_corpus.values() for page in pages],
                "follow_hosts": follow_hosts,
                "feed": str(feed),
                "model": str(model.resolve()) if model else "",
                "wait": wait,
            }
            (Path(tmp) / "job.json").write_text(json.dumps(job), encoding="utf-8")
            env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "https_proxy")}
            env["http_proxy"] = proxy
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, __file__, "--child", str(Path(tmp) / "job.json")],
                env=env, capture_output=True, text=True, timeout=3600,
            )  # fmt: skip
            seconds = time.perf_counter() - start
            if proc.returncode != 0:
                raise RuntimeError(f"the crawl failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
            items = [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()]
    finally:
        server.shutdown()
    return items, proc.stderr, seconds


@dataclass
class Figures:
    """One corpus's pages as the crawl, the harness and keeping every line score them."""

    crawl: Summary
    harness: Summary
    keep_all: Summary
    #: Pages whose crawled content differs from the harness's text, and those of them on sites of one page
    #: (where the order of pages cannot matter: the same bytes must give the same text).
    differ: int
    differ_alone: int


def figures(pages: list[CorpusPage], contents: dict[str, str], config: DetemplateConfig) -> Figures:
    """Score the crawled pages; the harness (one engine, manifest order) cleans the same pages."""
    crawled = [page for page in pages if key(page.url) in contents]
    per_site = Counter(page.site for page in crawled)
    engine = Detemplater(config)
    out = Figures(Summary(), Summary(), Summary(), 0, 0)
    for page in crawled:
        visible = page.visible_text()
        harness = scored_text(engine.process(page.url, page.body), page)
        crawl = contents[key(page.url)]
        out.crawl.add(page.site, score_page(crawl, page.gold, visible), page.kind)
        out.harness.add(page.site, score_page(harness, page.gold, visible), page.kind)
        out.keep_all.add(page.site, score_page(visible, page.gold, visible), page.kind)
        if crawl != harness and (crawl or harness != visible):  # no content: passed through, as the harness
            out.differ += 1
            out.differ_alone += per_site[page.site] == 1
    return out


def row(label: str, summary: Summary) -> str:
    m, micro = summary.macro(), summary.micro()
    return (
        f"  {label:<22} {m['precision']:.3f} / {m['recall']:.3f} / {m['f1']:.3f} / {m['removal']:.3f}"
        f"   micro F1 {micro['f1']:.3f}, pages with F1 < 0.5 {micro['failures']:.1%}"
    )


def first_page_stats(log: str) -> str:
    """The crawl's ``detemplate/first_page/*`` stats, from its stats dump: how many first pages
    waited, were cleaned again, and why the others were let go."""
    found = dict(re.findall(r"'detemplate/first_page/([\w/]+)': (\d+)", log))
    return ", ".join(f"{name} {count}" for name, count in sorted(found.items())) or "none (the wait is off)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--corpora", default="docs,wcxb-dev", help="comma-separated corpus names")
    parser.add_argument("--follow", default=FOLLOW, help="comma-separated corpora whose links are followed")
    parser.add_argument("--sites", type=int, default=0, help="the first N sites of each corpus (0: all)")
    parser.add_argument("--out", type=Path, default=None, help="default: bench/results/crawl_corpus.txt")
    parser.add_argument(
        "--model", type=Path, default=None,
        help="DETEMPLATE_COMBINED_MODEL for the crawl and the harness (a model trained without these sites)",
    )  # fmt: skip
    parser.add_argument(
        "--wait", type=float, default=None,
        help="DETEMPLATE_FIRST_PAGE_WAIT for the crawl (default: the setting's default; 0: first pages keep "
        "their first cleaning)",
    )  # fmt: skip
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        crawl(json.loads(Path(args.child).read_text(encoding="utf-8")))
        return 0

    by_corpus: dict[str, list[CorpusPage]] = {}
    for name in args.corpora.split(","):
        by_corpus[name] = first_sites(read_manifest(args.corpus / f"{name}.manifest.jsonl"), args.sites)
    follow = [name for name in args.follow.split(",") if name]
    items, log, seconds = crawl_pages(by_corpus, args.model, follow, args.wait)
    contents = {key(item["url"]): item.get("content", "") for item in items}
    lacking = sum(1 for item in items if "content" not in item)
    summary_line = next((match.group(1) for match in re.finditer(r"detemplate: (\d+ pages, .*)", log)), "")
    config = DetemplateConfig(combined_model=str(args.model.resolve())) if args.model else DetemplateConfig()
    model = (
        f"the model {args.model.name} (the crawl's DETEMPLATE_COMBINED_MODEL; the harness uses it too)"
        if args.model
        else "the shipped model, which has seen these sites (in-corpus): this checks the crawl against the harness"
    )
    lines = [
        "A CrawlSpider yielding {'url': response.url}, ADDONS = {'scrapy_detemplate.Addon': 0} and nothing else,",
        f"over the corpus pages served on 127.0.0.1 ({len(items)} items in {seconds:.0f} s; {lacking} without content:",
        "pages passed through with no text to give leave the item as it is; they score as empty).",
        f"Links followed on {', '.join(follow) or 'none'}; DETEMPLATE_FIRST_PAGE_WAIT "
        f"{'default' if args.wait is None else args.wait}. Site-macro P / R / F1 / template removed, with",
        f"{model}.",
        f"The crawl's log: {summary_line}",
        f"Sites' first pages (stats detemplate/first_page/...): {first_page_stats(log)}",
    ]
    for name, pages in by_corpus.items():
        got = figures(pages, contents, config)
        below = below_keep_all(got.crawl, got.keep_all)
        lines += [
            "",
            f"{name}: {got.crawl.pages} of {len(pages)} pages crawled, {len(got.crawl.sites)} sites; content not the"
            f" harness's text on {got.differ} pages ({got.differ_alone} on sites of one page)",
            row("crawl (Scrapy's order)", got.crawl),
            row("harness (manifest order)", got.harness),
            row("keeping every line", got.keep_all),
            f"  sites more than 0.03 below keeping every line in the crawl: {len(below)}"
            + "".join(f"; {site} {f1:.3f} / {kept:.3f}" for site, f1, kept in below[:5]),
        ]
    text = "\n".join(lines)
    print(text)
    if args.out is None:
        out = write_result("crawl_corpus.txt", text)
    else:
        out = args.out
        out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
