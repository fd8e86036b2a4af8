"""Quality figures exactly as ``METRICS.md`` defines them.

Tokens are ``re.findall(r"\\w+", text.lower())``; bags are multisets.  Per page:
precision, recall and F1 of the extracted text against the gold text, and
template removal TR = 1 - |leaked| / |non-gold visible text|.  Pages are
averaged per site, then sites are averaged ("site-macro", the headline);
the plain mean over pages is "micro".
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean

from scrapy_detemplate._html import decode_html, parse_html, visible_text

_TOKEN = re.compile(r"\w+")


def bag(text: str) -> Counter[str]:
    return Counter(_TOKEN.findall(text.lower()))


@dataclass(frozen=True, slots=True)
class PageScore:
    precision: float
    recall: float
    f1: float
    removal: float
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.f1 < 0.5


def score_page(extracted: str, gold: str, visible: str, seconds: float = 0.0) -> PageScore:
    """Score one page: E = extracted, G = gold, V = visible page text."""
    e, g, v = bag(extracted), bag(gold), bag(visible)
    e_total, g_total = e.total(), g.total()
    if e_total == 0 and g_total == 0:
        p = r = f1 = 1.0
    elif e_total == 0 or g_total == 0:
        p = r = f1 = 0.0
    else:
        hit = (e & g).total()
        p, r = hit / e_total, hit / g_total
        f1 = 2 * p * r / (p + r) if p + r else 0.0
    template = v - g
    leaked = (e - g) & template
    t_total = template.total()
    removal = 1.0 - leaked.total() / t_total if t_total else 1.0
    return PageScore(p, r, f1, removal, seconds)


@dataclass(slots=True)
class Summary:
    """Site-macro and micro means of page scores."""

    sites: dict[str, list[PageScore]] = field(default_factory=dict)

    def add(self, site: str, score: PageScore) -> None:
        self.sites.setdefault(site, []).append(score)

    def site_means(self, site: str) -> dict[str, float]:
        return _means(self.sites[site])

    def macro(self) -> dict[str, float]:
        per_site = [self.site_means(s) for s in self.sites]
        if not per_site:
            return {}
        return {k: mean(m[k] for m in per_site) for k in per_site[0]}

    def micro(self) -> dict[str, float]:
        return _means([s for scores in self.sites.values() for s in scores])

    @property
    def pages(self) -> int:
        return sum(len(v) for v in self.sites.values())


def _means(scores: list[PageScore]) -> dict[str, float]:
    return {
        "precision": mean(s.precision for s in scores),
        "recall": mean(s.recall for s in scores),
        "f1": mean(s.f1 for s in scores),
        "removal": mean(s.removal for s in scores),
        "failures": mean(1.0 if s.failed else 0.0 for s in scores),
        "ms_per_page": 1000 * mean(s.seconds for s in scores),
    }


@dataclass(frozen=True, slots=True)
class CorpusPage:
    site: str
    url: str
    body: bytes
    gold: str

    def visible_text(self) -> str:
        _, html = decode_html(self.body)
        return visible_text(parse_html(html))


def read_manifest(path: str | Path) -> Iterator[CorpusPage]:
    """Pages of a corpus manifest (``../shared/corpus/*.manifest.jsonl``), in order."""
    path = Path(path)
    with path.open(encoding="utf-8") as lines:
        for raw in lines:
            if not raw.strip():
                continue
            entry = json.loads(raw)
            body = (path.parent / entry["html"]).read_bytes()
            gold = (path.parent / entry["gold"]).read_text(encoding="utf-8")
            yield CorpusPage(entry["site"], entry["url"], body, gold)


def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def format_table(rows: Iterable[tuple[str, dict[str, float]]]) -> str:
    """A plain-text table of P/R/F1/TR/failures/ms rows."""
    header = f"{'':<34} {'P':>6} {'R':>6} {'F1':>6} {'TR':>6} {'fail':>6} {'ms/pg':>7}"
    out = [header]
    for name, m in rows:
        out.append(
            f"{name[:34]:<34} {m['precision']:6.3f} {m['recall']:6.3f} {m['f1']:6.3f} "
            f"{m['removal']:6.3f} {m['failures']:6.3f} {m['ms_per_page']:7.2f}"
        )
    return "\n".join(out)
