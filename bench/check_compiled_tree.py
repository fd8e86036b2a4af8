"""Check the compiled tree walks (``scrapy_detemplate/_tree.pyx``) against the Python ones on every corpus page.

For every page of the corpora, on the engine's own path (``decode_html``, ``parse_html``):

* ``visible_lines``: the compiled lines ``==`` the Python ones (text, path, the same elements and flags);
* ``drop_early_ends`` and ``count_controls`` (the text scans before the parse): ``==`` the regexes of
  ``keep_content_after_early_end`` and ``looks_binary``;
* ``tree_size_and_depth``: the node count ``==`` ``count_nodes`` and ``deeper_than`` (the engine's XPath
  checks) true at the compiled depth and false one level deeper, and at the engine's bound as the engine reads it;
* ``furniture_lines``: the compiled lines in furniture the page marks (dialogs, the footer landmark, widgets,
  ``data-nosnippet``) ``==`` the Python walk's (``furniture_pages``: pages with any);
* ``keep_table_rows_whole`` on the combined runner's decisions (each call compared with the Python one);
* removal, on the combined method's real verdicts (pages in crawl order through the default runner): the
  compiled ``_removal`` ``==`` the Python one, and ``lxml.html.tostring`` of the clean tree (``remove_template``
  with and without the compiled removal, on two parses of the page) identical.

Then, on the first pages of the 3 largest sites of each corpus, the same removal checks on RTDM-TD's verdicts
(``template_elements``), and ``mark_template``'s page compiled and not.

Usage: ``nice .venv/bin/python bench/check_compiled_tree.py [corpus ...] [--rtdm-pages N]``
(corpora default to c2f dragnet10 docs wcxb-dev, in ``../shared/corpus`` beside the checkout).  Prints pages checked
and mismatches per function; exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable

import lxml.html
from _results import CORPUS  # bench/, the script's folder

from scrapy_detemplate import _html, engine
from scrapy_detemplate._html import count_nodes, decode_html, deeper_than, parse_html
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.engine import Detemplater
from scrapy_detemplate.evaluation import read_manifest
from scrapy_detemplate.runners import ParsedPage, Verdict
from scrapy_detemplate.runners import combined as combined_module

KEEP_TABLE_ROWS_WHOLE = combined_module.keep_table_rows_whole


class PythonOnly:
    """Inside it, the package runs its Python walks (the compiled module hidden)."""

    def __enter__(self) -> None:
        self.saved = _html._tree, engine._tree, combined_module._tree
        _html._tree = engine._tree = combined_module._tree = None

    def __exit__(self, *exc: object) -> None:
        _html._tree, engine._tree, combined_module._tree = self.saved


def checking_table_rows(checked: Counter, bad: Counter):  # type: ignore[no-untyped-def]
    """``keep_table_rows_whole`` as the combined runner calls it, compared with the Python one on each call."""
    compiled = KEEP_TABLE_ROWS_WHOLE

    def keep_table_rows_whole(lines, template):  # type: ignore[no-untyped-def]
        fast = compiled(lines, template)
        checked["keep_table_rows_whole"] += 1
        if fast != combined_module._keep_table_rows_whole_py(lines, template):
            bad["keep_table_rows_whole"] += 1
            print("MISMATCH keep_table_rows_whole", flush=True)
        return fast

    return keep_table_rows_whole


def parse(body: bytes):  # type: ignore[no-untyped-def]
    _, text = decode_html(body, "text/html")
    return text, parse_html(text)


def check_removal(url: str, text: str, page: ParsedPage, verdict: Verdict, bad: Counter, label: str) -> None:
    """The compiled removal and clean tree against the Python ones, for one verdict on ``page``."""
    fast = engine._removal(page, verdict)
    with PythonOnly():
        slow = engine._removal(page, verdict)
    if fast != slow:
        bad[f"{label}_removal"] += 1
        print(f"MISMATCH {label} _removal {url}", flush=True)
    # The clean tree: the page's own tree (compiled), and a second parse with the verdict's elements mapped.
    twin_root = parse_html(text)
    with PythonOnly():
        twin = ParsedPage.of(url, text, twin_root, DetemplateConfig())
        twin_lines = twin.lines
    if [line.text for line in twin_lines] != [line.text for line in page.lines]:
        bad[f"{label}_reparse"] += 1
        print(f"SKIP {label} reparse differs {url}", flush=True)
        return
    mapping = dict(zip(page.root.iter(), twin_root.iter(), strict=True))
    twin_verdict = Verdict(template_lines=verdict.template_lines,
                           template_elements=tuple(mapping[el] for el in verdict.template_elements))  # fmt: skip
    if label == "rtdm":  # mark_template works on a copy: compare it before removal changes the tree
        marked = engine.mark_template(page, verdict)
        with PythonOnly():
            marked_py = engine.mark_template(twin, twin_verdict)
        if marked != marked_py:
            bad["rtdm_mark_template"] += 1
            print(f"MISMATCH rtdm mark_template {url}", flush=True)
    clean = lxml.html.tostring(engine.remove_template(page, verdict), encoding="unicode")
    with PythonOnly():
        clean_py = lxml.html.tostring(engine.remove_template(twin, twin_verdict), encoding="unicode")
    if clean != clean_py:
        bad[f"{label}_clean_tree"] += 1
        print(f"MISMATCH {label} clean tree {url}", flush=True)


def check_corpus(name: str, rtdm_pages: int, checked: Counter, bad: Counter) -> None:
    combined = Detemplater(DetemplateConfig())
    combined_module.keep_table_rows_whole = checking_table_rows(checked, bad)  # the runner reads the module's
    rtdm = Detemplater(DetemplateConfig(method="rtdm"))
    # RTDM-TD learns from a site's first pages (24 by default): the sites with the most pages.
    sizes = Counter(page.site for page in read_manifest(CORPUS / f"{name}.manifest.jsonl"))
    rtdm_sites = {site: 0 for site, _ in sizes.most_common(3)}
    for corpus_page in read_manifest(CORPUS / f"{name}.manifest.jsonl"):
        url = corpus_page.url
        # The scans of the text before the parse: the regexes they replace.
        decoded = decode_html(corpus_page.body, "text/html")[1]
        checked["drop_early_ends"] += 1
        if _html._tree.drop_early_ends(decoded) != _html._EARLY_END.sub("", decoded):
            bad["drop_early_ends"] += 1
            print(f"MISMATCH drop_early_ends {url}", flush=True)
        checked["count_controls"] += 1
        if _html._tree.count_controls(decoded[:4096]) != len(_html._CONTROL.findall(decoded[:4096])):
            bad["count_controls"] += 1
            print(f"MISMATCH count_controls {url}", flush=True)
        text, root = parse(corpus_page.body)
        if root is None:
            continue
        checked["pages"] += 1
        # The engine's checks.
        nodes, levels, noscripts = _html.tree_size_and_depth(root)
        with PythonOnly():
            reference = _html.tree_size_and_depth(root)
        xpath_ok = nodes == count_nodes(root) and (levels == 0 or deeper_than(root, levels))
        xpath_ok = xpath_ok and not deeper_than(root, levels + 1)
        xpath_ok = xpath_ok and deeper_than(root, 250) == (levels >= 250)
        checked["tree_size_and_depth"] += 1
        if not xpath_ok or reference != (nodes, levels, noscripts):
            bad["tree_size_and_depth"] += 1
            print(f"MISMATCH tree_size_and_depth {url}: {(nodes, levels)} python {reference}", flush=True)
        # The visible lines.
        lines = _html.visible_lines(root)
        with PythonOnly():
            lines_py = _html.visible_lines(root)
        checked["visible_lines"] += 1
        checked["lines"] += len(lines)
        if lines != lines_py:
            bad["visible_lines"] += 1
            print(f"MISMATCH visible_lines {url}", flush=True)
            continue
        # The lines in furniture the page marks.
        checked["furniture_lines"] += 1
        found = combined_module.furniture_lines(lines, root)
        checked["furniture_pages"] += bool(found)
        if found != combined_module._furniture_lines_py(lines, root):
            bad["furniture_lines"] += 1
            print(f"MISMATCH furniture_lines {url}", flush=True)
        # Removal on the default method's real verdicts, pages in crawl order.
        page = ParsedPage.of(url, text, root, combined.config)
        page._lines = lines
        if not lines:
            continue
        verdict = combined.runner.run(page)
        if verdict.removes_something and verdict.clean_source is None:
            checked["combined_removal"] += 1
            check_removal(url, text, page, verdict, bad, "combined")
        # RTDM-TD's template elements on the first pages of a few sites.
        site = corpus_page.site
        if site not in rtdm_sites or rtdm_sites[site] >= rtdm_pages:
            continue
        rtdm_sites[site] += 1
        text2, root2 = parse(corpus_page.body)
        page2 = ParsedPage.of(url, text2, root2, rtdm.config)
        verdict2 = rtdm.runner.run(page2)
        if verdict2.removes_something and verdict2.clean_source is None:
            checked["rtdm_removal"] += 1
            checked["rtdm_elements"] += bool(verdict2.template_elements)
            check_removal(url, text2, page2, verdict2, bad, "rtdm")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpora", nargs="*", default=["c2f", "dragnet10", "docs", "wcxb-dev"])
    parser.add_argument("--rtdm-pages", type=int, default=60, help="pages per site (3 sites per corpus) for RTDM-TD")
    args = parser.parse_args()
    if _html._tree is None or engine._tree is None:
        print("the compiled module scrapy_detemplate._tree is not loaded", file=sys.stderr)
        return 2
    return check_corpora(args.corpora, lambda name, checked, bad: check_corpus(name, args.rtdm_pages, checked, bad))


def check_corpora(corpora: list[str], check: Callable[[str, Counter, Counter], None]) -> int:
    """``check(name, checked, bad)`` on each corpus, its counts printed; 1 when any mismatch."""
    total_bad: Counter = Counter()
    for name in corpora:
        checked: Counter = Counter()
        bad: Counter = Counter()
        start = time.perf_counter()
        check(name, checked, bad)
        print(f"{name}: checked {dict(checked)} mismatches {dict(bad) or 0} ({time.perf_counter() - start:.0f} s)",
              flush=True)  # fmt: skip
        total_bad += bad
    print(f"total mismatches: {dict(total_bad) or 0}")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
