"""The default on pages written without spaces (Chinese, Japanese), simulated from the corpus's pages.

The development corpus is English.  To see what the line measures do with a script written without
spaces between words, every page is rewritten: each word of its visible text becomes two CJK
ideographs (the same word, the same two, on every page: a hash of the word in lower case), the spaces
between words go, and ``, . ! ? : ; ( )`` become their full-width forms (a space is kept beside digits
and Latin words that are left as they were).  The markup, the links and the class names stay as they
were.  One default engine cleans the original pages (a control, parsed and serialised the same way)
and another the rewritten ones, in crawl order; the rewritten output is mapped back to its words
(pair by pair) and both are scored against the original gold (METRICS.md), so the two figures differ
only by what the script does to the method, not to the metric.

The shipped model has seen these corpora, so the figures are in-corpus: the drop from control to
CJK is the point, not the level.  Usage (from the repository root)::

    .venv/bin/python bench/quality_cjk.py [--corpus ../shared/corpus] [c2f dragnet10 wcxb-dev]

Figures also go to ``bench/results/quality_cjk.txt``.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from statistics import mean

import lxml.html
from _results import CORPUS, write_result  # bench/, the script's folder
from lxml import etree

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import CorpusPage, read_manifest, score_page

FULL_WIDTH = {",": "，", ".": "。", "!": "！", "?": "？", ":": "：", ";": "；", "(": "（", ")": "）"}
HALF_WIDTH = {v: k for k, v in FULL_WIDTH.items()}
LETTERS = re.compile(r"[^\W\d_]+")
#: The ideographs words become: U+4E00 and the 19,999 after it.
FIRST, COUNT = 0x4E00, 20_000
PAIRS = re.compile(f"[{chr(FIRST)}-{chr(FIRST + COUNT - 1)}]+")
CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
INVISIBLE = frozenset({"script", "style", "noscript", "textarea"})
HEADERS = [("Content-Type", "text/html")]


def ideographs(word: str) -> str:
    """The two ideographs that stand for ``word`` (case folded) on every page."""
    n = int.from_bytes(hashlib.blake2b(word.lower().encode(), digest_size=4).digest(), "little")
    return chr(FIRST + n % COUNT) + chr(FIRST + (n // COUNT) % COUNT)


def _cjk(ch: str) -> bool:
    return FIRST <= ord(ch) < FIRST + COUNT or ch in HALF_WIDTH


def rewrite(text: str) -> str:
    """``text`` as if written in a CJK script: words as ideographs, no spaces between them."""
    out: list[str] = []
    for token in text.split():
        token = LETTERS.sub(lambda m: ideographs(m.group()), token)
        token = "".join(FULL_WIDTH.get(ch, ch) for ch in token)
        if out and not (_cjk(out[-1][-1]) and _cjk(token[0])):
            out.append(" ")
        out.append(token)
    return CONTROLS.sub("", "".join(out))


def read_back(text: str, words: dict[str, str]) -> str:
    """A rewritten text in its words again (pairs of ideographs -> words, full-width marks -> ASCII)."""
    text = PAIRS.sub(lambda m: " ".join(words.get(m[0][k : k + 2], "?") for k in range(0, len(m[0]), 2)), text)
    return "".join(HALF_WIDTH[ch] + " " if ch in HALF_WIDTH else ch for ch in text)


def versions(page: CorpusPage, rewrite: Callable[[str], str] = rewrite) -> tuple[str, str]:
    """The page parsed and serialised, declared UTF-8 (the control), and the same with ``rewrite`` applied to
    every text of its body and head but scripts, styles and text areas."""
    root = lxml.html.document_fromstring(page.html)
    for meta in root.xpath("//meta[@charset or translate(@http-equiv, 'CONTENTYP', 'contentyp')='content-type']"):
        meta.getparent().remove(meta)
    head = root.find("head")
    if head is None:
        head = etree.Element("head")
        root.insert(0, head)
    head.insert(0, etree.Element("meta", charset="utf-8"))
    control = lxml.html.tostring(root, encoding="unicode")
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag not in INVISIBLE and el.text:
            el.text = rewrite(el.text)
        if el.tail:
            el.tail = rewrite(el.tail)
    return control, lxml.html.tostring(root, encoding="unicode")


def measure(manifest: Path) -> dict[str, list[tuple[str, float, float]]]:
    """Per version (control, cjk): (site, F1, F1 of keeping every line) of every page, in the original words."""
    engines = {"control": Detemplater(DetemplateConfig()), "cjk": Detemplater(DetemplateConfig())}
    out: dict[str, list[tuple[str, float, float]]] = {"control": [], "cjk": []}
    for page in read_manifest(manifest):
        try:
            control, rewritten = versions(page)
        except (etree.ParserError, ValueError):  # an empty or unparsable page: left out of both
            continue
        visible = CorpusPage(page.site, page.url, control.encode(), page.gold).visible_text()
        words = {ideographs(w): w.lower() for w in LETTERS.findall(visible + "\n" + page.gold)}
        out["control"].append(scored(engines["control"], page, control, visible))
        out["cjk"].append(scored(engines["cjk"], page, rewritten, visible, partial(read_back, words=words)))
    return out


def scored(
    engine: Detemplater, page: CorpusPage, html: str, visible: str, read: Callable[[str], str] = str
) -> tuple[str, float, float]:
    """(site, F1, F1 of keeping every line) of ``html``, a version of ``page``, cleaned by ``engine``; both
    texts read with ``read`` first (back to the page's own words) and scored against its gold and ``visible``."""
    result = engine.process(page.url, html, headers=HEADERS)
    whole = CorpusPage(page.site, page.url, html.encode(), "").visible_text()
    text = read(result.text if result.status != "passthrough" else whole)
    return page.site, score_page(text, page.gold, visible).f1, score_page(read(whole), page.gold, visible).f1


TITLE = (
    "The default (combined, shipped model) on each corpus's pages and on the same pages rewritten in a",
    "CJK-like script (bench/quality_cjk.py), scored in the original words; in-corpus figures.",
)


def report(
    corpus: Path,
    names: list[str],
    measure: Callable[[Path], dict[str, list[tuple[str, float, float]]]] = measure,
    title: tuple[str, ...] = TITLE,
) -> str:
    """Per corpus and version, the pages, keeping every line's micro F1, site-macro F1 and micro F1."""
    lines = [
        *title,
        "",
        f"{'corpus':<10} {'version':<8} {'pages':>6} {'keep-all micro':>15} {'site-macro F1':>14} {'micro F1':>9}",
    ]
    for name in names:
        scores = measure(corpus / f"{name}.manifest.jsonl")
        for version, rows in scores.items():
            sites: dict[str, list[float]] = defaultdict(list)
            for site, f1, _ in rows:
                sites[site].append(f1)
            macro = mean(mean(v) for v in sites.values())
            keep = mean(r[2] for r in rows)
            micro = mean(r[1] for r in rows)
            lines.append(f"{name:<10} {version:<8} {len(rows):>6} {keep:>15.4f} {macro:>14.4f} {micro:>9.4f}")
            print(lines[-1], flush=True)
    return "\n".join(lines)


#: A rewritten version of the pages: (how a text is rewritten, how a rewritten text is read back).
Rewriting = tuple[Callable[[str], str], Callable[[str], str]]


def measure_versions(manifest: Path, rewritings: dict[str, Rewriting]) -> dict[str, list[tuple[str, float, float]]]:
    """Per version (control, then each of ``rewritings``): (site, F1, F1 of keeping every line) of every page,
    each version cleaned by an engine of its own in crawl order and read back before it is scored."""
    names = ("control", *rewritings)
    engines = {name: Detemplater(DetemplateConfig()) for name in names}
    out: dict[str, list[tuple[str, float, float]]] = {name: [] for name in names}
    for page in read_manifest(manifest):
        try:
            pages = {"control": (versions(page)[0], str)}
            pages.update((name, (versions(page, rewrite)[1], read)) for name, (rewrite, read) in rewritings.items())
        except (etree.ParserError, ValueError):  # an empty or unparsable page: left out of every version
            continue
        visible = CorpusPage(page.site, page.url, pages["control"][0].encode(), page.gold).visible_text()
        for name, (html, read) in pages.items():
            out[name].append(scored(engines[name], page, html, visible, read))
    return out


def main_for(
    doc: str,
    result: str,
    measure: Callable[[Path], dict[str, list[tuple[str, float, float]]]],
    title: tuple[str, ...],
    argv: list[str] | None = None,
) -> int:
    """A quality script's command line: the corpora to measure, the report printed and written to ``result``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("corpora", nargs="*", default=["c2f", "dragnet10", "wcxb-dev"])
    args = parser.parse_args(argv)
    text = report(args.corpus, args.corpora, measure, title)
    print(f"written to {write_result(result, text)}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    return main_for(__doc__, "quality_cjk.txt", measure, TITLE, argv)


if __name__ == "__main__":
    sys.exit(main())
