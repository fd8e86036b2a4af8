"""A static HTML report of what was removed: results in, HTML files out.

:class:`ReportWriter` takes the engine's results one at a time, in crawl order
(from a crawl, ``DETEMPLATE_REPORT_DIR``, or ``scrapy-detemplate report``):

* ``index.html``: one row per site: pages seen, share of visible text removed,
  methods, status counts, why pages were passed through or left unchanged;
* ``sites/<site>/index.html``: what was removed on the site's pages, line by
  line, with how many pages each line was removed on, in the order the lines
  stand on a page (mean relative position), and links to the sample pages;
* ``sites/<site>/sample-<n>.html``: a sample page shown whole with every
  removed region marked (outline and tint), or as it was, or clean, beside the
  clean text; the toggle is plain CSS (radio buttons), no script.

Samples are written as they come (the page ``1``, ``3``, ``9``... of each site,
``pages`` of them) and never held in memory; the index and the site pages are
written by :meth:`ReportWriter.close`.  Memory is bounded: ``max_sites`` sites
are followed (the others are only counted), ``max_lines`` lines per site.

Safe to open: the pages are shown in iframes sandboxed without scripts, with
scripts, frames, links to other resources and event handlers stripped, under
a Content-Security-Policy that loads nothing from the network; every report
page has one too.  Nothing is loaded from outside the report's directory, so
it works offline, from ``file://``.
"""

from __future__ import annotations

import hashlib
import html as html_lib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from scrapy_detemplate._html import parse_html
from scrapy_detemplate.engine import MARK_ATTRIBUTE, CleanResult

#: Policy of the pages shown in the iframes: inline styles and data: images only.
PAGE_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; media-src data:; "
    "form-action 'none'; base-uri 'none'"
)
#: Policy of the report's own pages: they frame files of the report and nothing else.
REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-src 'self' file:; base-uri 'none'"
#: How removed regions look in the marked view.
MARK_CSS = (
    f"[{MARK_ATTRIBUTE}]{{outline:2px solid #d0312d !important;outline-offset:-1px;"
    "background-color:rgba(208,49,45,.18) !important}"
    f"[{MARK_ATTRIBUTE}] [{MARK_ATTRIBUTE}]{{outline:none !important;background-color:transparent !important}}"
)
VIEWS = ("original", "marked", "clean")

#: Elements that run code, load other documents or resources, or change how the page is read.
_STRIP_TAGS = ("script", "noscript", "base", "link", "iframe", "frame", "frameset", "object", "embed", "applet",
               "portal", "meta", "template")  # fmt: skip
_URL_ATTRIBUTES = ("href", "src", "action", "formaction", "xlink:href", "poster", "background", "data")
_SLUG = re.compile(r"[^a-z0-9.-]+")


def safe_page(document: str, *, marks: bool) -> str:
    """``document`` made safe to show: no scripts, no external loads, a CSP first in ``<head>``.

    With ``marks``, the marked regions are outlined and tinted; without, the
    marks are taken out (wrapping spans unwrapped, attributes dropped), which
    gives the page as it was.
    """
    root = parse_html(document)
    if root is None:
        root = etree.fromstring("<html><body></body></html>", etree.HTMLParser())
    doctype = getattr(root.getroottree().docinfo, "doctype", "")  # not in lxml's stubs
    for el in list(root.iter(*_STRIP_TAGS)):
        _drop(el)
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for name in list(el.attrib):
            lowered = str(name).lower()
            value = str(el.attrib[name]).strip().lower()
            handler = lowered.startswith("on") or lowered in ("ping", "srcdoc", "srcset", "http-equiv")
            if handler or (lowered in _URL_ATTRIBUTES and value.startswith(("javascript:", "vbscript:", "data:text/"))):
                del el.attrib[name]
    if not marks:
        for el in list(root.iter()):
            if not isinstance(el.tag, str) or MARK_ATTRIBUTE not in el.attrib:
                continue
            if el.tag == "span" and el.get(MARK_ATTRIBUTE) == "removed-text":
                _unwrap(el)
            else:
                del el.attrib[MARK_ATTRIBUTE]
    head = root.find("head")
    if head is None:
        head = etree.Element("head")
        root.insert(0, head)
    metas = [
        etree.Element("meta", charset="utf-8"),
        etree.Element("meta", {"http-equiv": "Content-Security-Policy", "content": PAGE_CSP}),
        etree.Element("meta", name="referrer", content="no-referrer"),
        etree.Element("meta", {"http-equiv": "x-dns-prefetch-control", "content": "off"}),
    ]
    for index, meta in enumerate(metas):
        head.insert(index, meta)
    if marks:
        style = etree.SubElement(head, "style")
        style.text = MARK_CSS
    out = etree.tostring(root, method="html", encoding="unicode")
    return f"{doctype}\n{out}" if doctype else out


def _drop(el: etree._Element) -> None:
    """Remove ``el`` and its content, keep its tail."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        previous = el.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def _unwrap(el: etree._Element) -> None:
    """Replace ``el`` by its content (the wrapping spans hold text only)."""
    parent = el.getparent()
    if parent is None:
        return
    text = (el.text or "") + (el.tail or "")
    previous = el.getprevious()
    if previous is not None:
        previous.tail = (previous.tail or "") + text
    else:
        parent.text = (parent.text or "") + text
    parent.remove(el)


@dataclass(slots=True)
class _LineSeen:
    pages: int = 0
    position: float = 0.0  # sum of the line's relative positions on those pages


@dataclass(slots=True)
class SiteReport:
    """What the report keeps about one site (bounded)."""

    site: str
    slug: str
    pages: int = 0
    chars_total: int = 0
    chars_removed: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    methods: Counter[str] = field(default_factory=Counter)
    lines: dict[str, _LineSeen] = field(default_factory=dict)
    lines_dropped: bool = False
    samples: list[tuple[str, str, str, float]] = field(default_factory=list)  # file, url, status, share
    next_sample: int = 1

    @property
    def removed_share(self) -> float:
        return self.chars_removed / self.chars_total if self.chars_total else 0.0


class ReportWriter:
    """Writes the report into ``directory`` as results arrive (see the module docstring).

    ``wants_sample(site)`` says whether the next page of ``site`` will be a
    sample: process it with ``mark=True`` then, so that its result holds the
    marked page.  ``add(site, result)`` takes every result, sample or not.
    """

    def __init__(
        self,
        directory: str | Path,
        pages: int = 3,
        *,
        title: str = "scrapy-detemplate report",
        max_sites: int = 1000,
        max_lines: int = 200,
    ) -> None:
        if isinstance(pages, bool) or not isinstance(pages, int) or pages < 0:
            raise ValueError(f"pages={pages!r}: expected an integer >= 0 (sample pages per site)")
        self.directory = Path(directory)
        self.pages = pages
        self.title = title
        self.max_sites = max_sites
        self.max_lines = max_lines
        self.sites: dict[str, SiteReport] = {}
        self.other = SiteReport(f"(pages of sites after the first {max_sites}: only counted)", "")
        (self.directory / "sites").mkdir(parents=True, exist_ok=True)

    def wants_sample(self, site: str) -> bool:
        entry = self.sites.get(site)
        if entry is None:
            return self.pages > 0 and len(self.sites) < self.max_sites
        return len(entry.samples) < self.pages and entry.pages + 1 >= entry.next_sample

    def add(self, site: str, result: CleanResult) -> None:
        entry = self._site(site)
        entry.pages += 1
        entry.statuses[result.status] += 1
        if result.reason and result.status != "cleaned":
            entry.reasons[f"{result.status}: {result.reason}"] += 1
        if result.status == "passthrough":
            return
        entry.methods[result.method] += 1
        entry.chars_total += result.chars_total
        entry.chars_removed += result.chars_removed
        if entry is not self.other:
            self._count_lines(entry, result)
            if result.marked_html and len(entry.samples) < self.pages and entry.pages >= entry.next_sample:
                self._write_sample(entry, result)
                entry.next_sample *= 3

    def close(self) -> Path:
        """Write the site pages and the index; returns the index's path."""
        for entry in self.sites.values():
            _write(self.directory / "sites" / entry.slug / "index.html", self._site_page(entry))
        index = self.directory / "index.html"
        _write(index, self._index_page())
        return index

    # -- bookkeeping --------------------------------------------------------

    def _site(self, site: str) -> SiteReport:
        entry = self.sites.get(site)
        if entry is not None:
            return entry
        if len(self.sites) >= self.max_sites:
            return self.other
        slug = _SLUG.sub("_", site.lower()).strip("_.")[:60] or "site"
        slug = f"{slug}-{hashlib.sha1(site.encode('utf-8')).hexdigest()[:6]}"
        entry = self.sites[site] = SiteReport(site, slug)
        (self.directory / "sites" / slug).mkdir(parents=True, exist_ok=True)
        return entry

    def _count_lines(self, entry: SiteReport, result: CleanResult) -> None:
        if not result.template_lines:
            return
        # Where a line stands: its rank among the page's removed lines (they are
        # in page order), 0 first, 1 last; the mean over pages orders the table.
        removed = list(dict.fromkeys(result.template_lines))
        for rank, line in enumerate(removed):
            seen = entry.lines.get(line)
            if seen is None:
                seen = entry.lines[line] = _LineSeen()
            seen.pages += 1
            seen.position += (rank + 0.5) / len(removed)
        if len(entry.lines) > 2 * self.max_lines:
            keep = sorted(entry.lines.items(), key=lambda kv: -kv[1].pages)[: self.max_lines]
            entry.lines = dict(keep)
            entry.lines_dropped = True

    def _write_sample(self, entry: SiteReport, result: CleanResult) -> None:
        number = len(entry.samples) + 1
        base = f"sample-{number}"
        folder = self.directory / "sites" / entry.slug
        _write(folder / f"{base}-original.html", safe_page(result.marked_html, marks=False))
        _write(folder / f"{base}-marked.html", safe_page(result.marked_html, marks=True))
        _write(folder / f"{base}-clean.html", safe_page(result.html, marks=False))
        _write(folder / f"{base}.html", self._sample_page(entry, number, result))
        entry.samples.append((f"{base}.html", result.url, result.status, result.removed_share))

    # -- pages --------------------------------------------------------------

    def _sample_page(self, entry: SiteReport, number: int, result: CleanResult) -> str:
        base = f"sample-{number}"
        radios = "".join(
            f'<input type="radio" name="view" id="v-{v}"{" checked" if v == "marked" else ""}>'
            f'<label for="v-{v}">{v}</label>'
            for v in VIEWS
        )
        frames = "".join(
            f'<iframe class="f-{v}" src="{base}-{v}.html" sandbox="" referrerpolicy="no-referrer" '
            f'title="{v} page"></iframe>'
            for v in VIEWS
        )
        show = "".join(f"#v-{v}:checked~.panes .f-{v}{{display:block}}" for v in VIEWS)
        facts = (
            f"{_e(result.status)}{' (' + _e(result.reason) + ')' if result.reason else ''} by {_e(result.method)}; "
            f"{100 * result.removed_share:.1f}% of the visible text removed "
            f"({len(result.template_lines)} lines)"
        )
        body = f"""<nav class="crumbs"><a href="../../index.html">all sites</a> &rsaquo;
<a href="index.html">{_e(entry.site)}</a> &rsaquo; sample {number} (page {entry.pages} of the site)</nav>
<header><h1 class="url">{_e(result.url)}</h1><p>{facts}</p></header>
<div class="viewer">{radios}<span class="legend"><span class="swatch"></span> removed</span>
<div class="panes"><div class="page">{frames}</div>
<div class="text"><h2>Clean text</h2><div id="clean-text">{_lines(result.text.splitlines())}</div>
<details><summary>Removed lines ({len(result.template_lines)})</summary>
<div id="removed-text">{_lines(result.template_lines)}</div></details></div></div></div>"""
        return _document(f"{entry.site}: sample {number}", body, extra_css=show)

    def _site_page(self, entry: SiteReport) -> str:
        seen = max(1, entry.statuses["cleaned"] + entry.statuses["unchanged"])
        ordered = sorted(entry.lines.items(), key=lambda kv: kv[1].position / kv[1].pages)
        repeated = [(line, s) for line, s in ordered if s.pages > 1]
        once = [(line, s) for line, s in ordered if s.pages == 1]

        def rows(items: list[tuple[str, _LineSeen]]) -> str:
            return "".join(
                f'<tr><td class="num">{s.pages}</td><td class="bar"><span style="width:{100 * s.pages / seen:.0f}%">'
                f"</span></td><td>{_e(line)}</td></tr>"
                for line, s in items
            )

        samples = "".join(
            f'<li><a href="{_e(file)}">{_e(url)}</a> <span class="dim">{_e(status)}, '
            f"{100 * share:.1f}% removed</span></li>"
            for file, url, status, share in entry.samples
        )
        note = " (the least frequent lines were dropped to bound memory)" if entry.lines_dropped else ""
        body = f"""<nav class="crumbs"><a href="../../index.html">all sites</a> &rsaquo; {_e(entry.site)}</nav>
<h1>{_e(entry.site)}</h1>
<p>{entry.pages} pages seen; {100 * entry.removed_share:.1f}% of the visible text removed;
methods: {_e(_counts(entry.methods)) or "-"}; {_e(_counts(entry.statuses))}.
{("Not removed or passed through: " + _e(_counts(entry.reasons)) + ".") if entry.reasons else ""}</p>
<h2>Sample pages</h2><ul class="samples">{samples or "<li>none</li>"}</ul>
<h2>What was removed, in page order</h2>
<p class="dim">Each line removed on more than one of the {seen} pages cleaned or left unchanged, with the number of
pages it was removed on{note}; ordered by where it stands on a page (mean position).</p>
<table class="lines" id="learned"><thead><tr><th>pages</th><th></th><th>line</th></tr></thead>
<tbody>{rows(repeated) or '<tr><td colspan="3">none</td></tr>'}</tbody></table>
<details><summary>Removed on one page only ({len(once)})</summary>
<table class="lines"><tbody>{rows(once)}</tbody></table></details>"""
        return _document(entry.site, body)

    def _index_page(self) -> str:
        entries = sorted(self.sites.values(), key=lambda e: -e.pages)
        if self.other.pages:
            entries.append(self.other)
        rows = "".join(
            "<tr>"
            + (f'<td><a href="sites/{e.slug}/index.html">{_e(e.site)}</a></td>' if e.slug else f"<td>{_e(e.site)}</td>")
            + f'<td class="num">{e.pages}</td><td class="num">{100 * e.removed_share:.1f}%</td>'
            + f"<td>{_e(_counts(e.methods))}</td>"
            + "".join(f'<td class="num">{e.statuses[s]}</td>' for s in ("cleaned", "unchanged", "passthrough"))
            + f"<td>{_e(_counts(e.reasons))}</td><td>{_sample_links(e)}</td></tr>"
            for e in entries
        )
        total = sum(e.pages for e in entries)
        chars = sum(e.chars_total for e in entries)
        removed = sum(e.chars_removed for e in entries)
        others = " (and more, only counted: the last row)" if self.other.pages else ""
        body = f"""<h1>{_e(self.title)}</h1>
<p>{len(self.sites)} sites{others}, {total} pages;
{100 * removed / chars if chars else 0:.1f}% of the visible text removed as template.</p>
<table class="sites" id="sites"><thead><tr><th>site</th><th>pages</th><th>removed</th><th>method</th>
<th>cleaned</th><th>unchanged</th><th>passed through</th><th>why not cleaned</th><th>samples</th></tr></thead>
<tbody>{rows}</tbody></table>"""
        return _document(self.title, body)


def _sample_links(entry: SiteReport) -> str:
    return " ".join(
        f'<a href="sites/{entry.slug}/{_e(file)}" title="{_e(url)}">{n}</a>'
        for n, (file, url, _, _) in enumerate(entry.samples, 1)
    )


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counter.most_common())


def _lines(lines: Sequence[str]) -> str:
    return "".join(f"<p>{_e(line)}</p>" for line in lines)


def _e(text: str) -> str:
    return html_lib.escape(text, quote=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


_CSS = """
:root{color-scheme:light;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f}
body{margin:0;padding:14px 22px}
h1{font-size:1.35rem;margin:.2rem 0 .4rem}h2{font-size:1.05rem;margin:1rem 0 .4rem}
a{color:#0b57d0}.dim{color:#666}.crumbs{font-size:.9rem;color:#555}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e3e3e3;vertical-align:top}
th{background:#f4f4f6;position:sticky;top:0}td.num{text-align:right;font-variant-numeric:tabular-nums;width:4em}
td.bar{width:90px}td.bar span{display:block;height:10px;background:#d0312d;opacity:.7;border-radius:2px}
h1.url{font-size:1rem;font-weight:600;word-break:break-all;margin:.3rem 0 .1rem}
header p{margin:0 0 .4rem;color:#444}
.viewer>input{position:absolute;opacity:0}
.viewer>label{display:inline-block;padding:4px 14px;border:1px solid #bbb;margin-right:-1px;cursor:pointer;
 background:#f7f7f7;text-transform:capitalize}
.viewer>input:checked+label{background:#1d1d1f;color:#fff;border-color:#1d1d1f}
.viewer>input:focus-visible+label{outline:2px solid #0b57d0}
.legend{margin-left:14px;font-size:.9rem;color:#444}
.swatch{display:inline-block;width:14px;height:12px;vertical-align:-1px;outline:2px solid #d0312d;
 background:rgba(208,49,45,.18)}
.panes{display:flex;gap:14px;margin-top:8px;height:calc(100vh - 150px);min-height:420px}
.page{flex:3;min-width:0;border:1px solid #ccc}.page iframe{display:none;width:100%;height:100%;border:0}
.text{flex:2;min-width:0;overflow:auto;border:1px solid #ccc;padding:0 12px;background:#fbfbfb}
.text p{margin:0 0 .55em;font-size:.88rem;overflow-wrap:anywhere}#removed-text p{color:#8a1f1c}
"""


def _document(title: str, body: str, extra_css: str = "") -> str:
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{REPORT_CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><style>{_CSS}{extra_css}</style></head>
<body>
{body}
</body></html>
"""
