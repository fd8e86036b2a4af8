"""The main job: serve the demo site on 127.0.0.1, crawl it, write a clean feed.

The crawl also writes a report of what was removed (``DETEMPLATE_REPORT_DIR``)
beside the feed, in ``output/report/``.

    python example_project/run_demo.py [--output example_project/output/items.jsonl]

Runs the real ``scrapy crawl site`` in this project, then prints a summary:
pages crawled, and how much of the template and of the article text the
feed's ``content`` fields hold.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import demosite  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=str(HERE / "output" / "items.jsonl"))
    parser.add_argument("--method", default=None, help="DETEMPLATE_METHOD for this run")
    args = parser.parse_args()
    pages = demosite.build_site()
    server, base = demosite.serve(pages)
    output = Path(args.output).resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start_url={base}/", "-O", str(output)]
    report_dir = output.parent / "report"  # what was removed, to look at in a browser
    command += ["-s", f"DETEMPLATE_REPORT_DIR={report_dir}"]
    if args.method:
        command += ["-s", f"DETEMPLATE_METHOD={args.method}"]
    print("$", " ".join(command))
    try:
        subprocess.run(command, cwd=HERE, check=True, env={**os.environ, "PYTHONPATH": str(HERE)})
    finally:
        server.shutdown()
    print(report(pages, output))
    print(f"what was removed, page by page: open {report_dir / 'index.html'} in a browser")
    return 0


def report(pages: dict[str, demosite.Page], feed: Path) -> str:
    items = [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()]
    template_total = template_left = article_total = article_kept = related_total = related_left = 0
    for item in items:
        page = pages.get(urlsplit(item["url"]).path)
        content = item.get("content", "")
        if page is None or not page.article:
            continue
        template_total += len(demosite.TEMPLATE_LINES)
        template_left += sum(1 for line in demosite.TEMPLATE_LINES if line in content)
        article_total += len(page.article)
        article_kept += sum(1 for line in page.article if line in content)
        related_total += len(page.related)
        related_left += sum(1 for line in page.related if line in content)
    articles = sum(1 for p in pages.values() if p.article)
    return (
        f"feed: {feed}\n"
        f"pages crawled: {len({item['url'] for item in items})} of {len(pages)} (a start URL is fetched again "
        f"when a page links back to it: {len(items)} items); article pages checked: {article_total and articles}\n"
        f"template lines removed from articles: {template_total - template_left} of {template_total} "
        f"({100 * (1 - template_left / max(1, template_total)):.1f}%)\n"
        f"per-page related-link lines removed: {related_total - related_left} of {related_total}\n"
        f"article lines kept: {article_kept} of {article_total} ({100 * article_kept / max(1, article_total):.1f}%)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
