"""Templateness of DOM nodes: features, SITELEVEL(theta) labels, logistic scores.

Chakrabarti, Kumar and Punera, "Page-level Template Detection via Isotonic
Smoothing", WWW 2007, Sections 3 and 5.1-5.3.  Everything here works on the
lxml tree alone (no browser), so the paper's rendering features are replaced
by proxies computed from the text:

* closeness to the margins (the paper's most useful feature) -> where the
  node's text starts and ends in the page's text, in document order
  (``start``, ``end``, ``margin = min(start, 1 - end)``, ``center``);
* area -> the node's share of the page's visible characters (``text_share``)
  and of its elements (``node_share``); size buckets use ``text_share``;
* links per word, fraction of text inside anchors, mean anchor text size,
  fraction of intra-site links, visible characters over HTML characters (the
  HTML size is estimated from tags, attributes and text, not re-serialised),
  overlap with the page title, the tag, and id/class tokens, as the paper
  lists them, plus depth and sentence punctuation per word.

Small nodes (fewer than ``min_chars`` visible characters, the paper's
2000 px^2) are *hidden*: not scored, rolled into their nearest scored ancestor,
which then counts as ``k + 1`` nodes for its ``k`` hidden children.

Trees come out as :class:`NodeTable`: scored nodes in pre-order with a parent
array, ready for :func:`scrapy_detemplate.methods.isotonic.smooth`.  All walks
are iterative.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree

from scrapy_detemplate._html import SKIP_TAGS, find_body

_TOKEN = re.compile(r"\w+")
_PUNCT = re.compile(r"[.,;:!?]")

#: id/class words that mark boilerplate and content (substring match on the tokens).
TEMPLATE_WORDS = (
    "nav", "menu", "foot", "head", "side", "comment", "related", "share", "social", "banner", "copyright",
    "breadcrumb", "widget", "promo", "login", "search", "subscribe", "sponsor", "toolbar", "advert", "popular",
    "more", "tags", "util", "masthead", "rail", "sitemap",
)  # fmt: skip
CONTENT_WORDS = ("article", "content", "story", "body", "post", "entry", "main", "text", "byline", "caption")
# Substrings of id/class values; "ad", "ads", "adv" only as whole words.
_TEMPLATE_RE = re.compile("|".join(TEMPLATE_WORDS) + r"|(?<![a-z])adv?s?(?![a-z])")
_CONTENT_RE = re.compile("|".join(CONTENT_WORDS))

#: Tags with a one-hot feature; every other tag is ``tag_other``.
TAG_GROUPS = {
    "a": "a", "div": "div", "td": "cell", "th": "cell", "tr": "row", "table": "table", "tbody": "table",
    "ul": "list", "ol": "list", "dl": "list", "li": "item", "dd": "item", "dt": "item", "p": "p",
    "span": "inline", "font": "inline", "b": "inline", "strong": "inline", "em": "inline", "i": "inline",
    "small": "inline", "center": "div", "form": "form", "select": "form", "option": "form", "label": "form",
    "h1": "h", "h2": "h", "h3": "h", "h4": "h", "h5": "h", "h6": "h", "nav": "semantic_tpl",
    "header": "semantic_tpl", "footer": "semantic_tpl", "aside": "semantic_tpl", "article": "semantic_main",
    "main": "semantic_main", "section": "section", "body": "body", "blockquote": "p", "pre": "p",
}  # fmt: skip
_TAG_FEATURES = sorted(set(TAG_GROUPS.values()) | {"other"})

_STOP = frozenset(
    {
        "the", "and", "for", "with", "that", "this", "from", "are", "was", "were", "you", "your", "our", "has",
        "have", "had", "not", "but", "its", "his", "her", "they", "their", "will", "would", "can", "all", "who",
        "what", "when", "where", "which", "about", "into", "more", "than", "com", "www", "html", "news",
    }
)  # fmt: skip

FEATURES: tuple[str, ...] = (
    "log_chars", "text_share", "node_share", "log_nodes", "depth", "depth_rel", "start", "end", "margin",
    "center", "links_per_word", "anchor_frac", "anchor_size", "has_links", "intra_frac", "visible_per_html",
    "title_hits", "title_cover", "words_per_piece", "p_frac", "punct_per_word", "log_children",
    "cls_template", "cls_content", "anc_template", "anc_content",
    *(f"tag_{t}" for t in _TAG_FEATURES),
)  # fmt: skip


@dataclass(slots=True)
class NodeTable:
    """The scored nodes of one page (pre-order; ``parent[0] == -1`` is the body).

    ``features[i]`` follows :data:`FEATURES`; ``weight[i]`` is ``k + 1`` for
    ``k`` hidden children; ``chars[i]`` is the visible characters in the
    subtree; ``owner`` maps every element of the body (hidden ones included)
    to the index of its nearest scored ancestor-or-self.
    """

    elements: list[etree._Element] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    features: list[list[float]] = field(default_factory=list)
    weight: list[float] = field(default_factory=list)
    chars: list[int] = field(default_factory=list)
    owner: dict[etree._Element, int] = field(default_factory=dict)
    page_chars: int = 0


def _visible_len(text: str | None) -> int:
    return len("".join(text.split())) if text else 0


def _plain_text(el: etree._Element) -> str:
    """Visible text of a subtree, for elements beyond the node bound."""
    parts = [el.text or ""]
    for e in el.iterdescendants():
        if isinstance(e.tag, str) and e.tag not in SKIP_TAGS:
            parts.append(e.text or "")
        parts.append(e.tail or "")
    return " ".join(parts)


def _title_words(root: etree._Element) -> frozenset[str]:
    title = root.find(".//title")
    text = " ".join(str(t) for t in title.itertext()) if title is not None else ""
    return frozenset(t for t in _TOKEN.findall(text.lower()) if len(t) > 2 and t not in _STOP)


def _attr_flags(el: etree._Element) -> tuple[bool, bool]:
    attrib = el.attrib
    if "id" not in attrib and "class" not in attrib:
        return False, False
    raw = f"{attrib.get('id', '')} {attrib.get('class', '')}".lower()
    return _TEMPLATE_RE.search(raw) is not None, _CONTENT_RE.search(raw) is not None


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def _is_intra(href: str, host: str) -> bool:
    href = href.strip()
    if not href or href.startswith(("#", "/", "?", ".")) or "://" not in href[:12]:
        return not href.lower().startswith(("mailto:", "javascript:"))
    other = _host(href)
    return bool(host) and (other == host or other.endswith("." + host) or host.endswith("." + other))


def build_table(root: etree._Element, url: str = "", min_chars: int = 20, max_nodes: int = 50_000) -> NodeTable:
    """Features of every scored element of ``root``'s body (see the module docstring).

    At most ``max_nodes`` body elements are looked at; deeper/later ones are
    rolled into their ancestors.
    """
    table = NodeTable()
    body = find_body(root)
    if body is None:
        return table
    host = _host(url)
    title = _title_words(root)
    # Pass 1, pre-order with enter/leave events: per-element own counts and text offsets.
    els: list[etree._Element] = []
    par: list[int] = []
    depth: list[int] = []
    start: list[int] = []
    chars: list[int] = []  # own, then subtree
    words: list[int] = []
    pieces: list[int] = []
    punct: list[int] = []
    hits: list[int] = []
    html: list[int] = []
    links: list[int] = []
    intra: list[int] = []
    nchild: list[int] = []
    offset = 0
    stack: list[tuple[etree._Element, int, bool]] = [(body, -1, False)]

    def add_text(i: int, text: str | None) -> None:
        nonlocal offset
        if not text:
            return
        html[i] += len(text)
        n = _visible_len(text)
        if not n:
            return
        toks = _TOKEN.findall(text.lower())
        chars[i] += n
        words[i] += len(toks)
        pieces[i] += 1
        punct[i] += len(_PUNCT.findall(text))
        if title:
            hits[i] += sum(1 for t in toks if t in title)
        offset += n

    while stack:
        el, p, leaving = stack.pop()
        if leaving:
            if el is not body and p >= 0:
                add_text(p, el.tail)
            continue
        tag = el.tag
        if not isinstance(tag, str) or tag in SKIP_TAGS:
            if p >= 0:
                html[p] += 2 * len(str(tag)) + 5 + len(el.text or "")
                add_text(p, el.tail)
            continue
        if len(els) >= max_nodes:  # over the bound: its text counts for its ancestor
            add_text(p, _plain_text(el))
            add_text(p, el.tail)
            continue
        i = len(els)
        els.append(el)
        par.append(p)
        depth.append(depth[p] + 1 if p >= 0 else 0)
        start.append(offset)
        for lst in (chars, words, pieces, punct, hits, links, intra, nchild):
            lst.append(0)
        html.append(2 * len(tag) + 5 + sum(len(k) + len(v) + 4 for k, v in el.attrib.items()))
        if p >= 0:
            nchild[p] += 1
        if tag == "a" and el.get("href") is not None:
            links[i] = 1
            intra[i] = 1 if _is_intra(el.get("href", ""), host) else 0
        add_text(i, el.text)
        stack.append((el, p, True))
        stack.extend((child, i, False) for child in reversed(el))
    n = len(els)
    # Pass 2, post-order (reversed pre-order): subtree sums.
    nodes = [1] * n
    anchor = [0] * n
    pchars = [0] * n
    for i in range(n - 1, -1, -1):
        tag = els[i].tag
        if tag == "a":
            anchor[i] = chars[i]
        if tag == "p":
            pchars[i] = chars[i]
        p = par[i]
        if p >= 0:
            chars[p] += chars[i]
            words[p] += words[i]
            pieces[p] += pieces[i]
            punct[p] += punct[i]
            hits[p] += hits[i]
            html[p] += html[i]
            links[p] += links[i]
            intra[p] += intra[i]
            nodes[p] += nodes[i]
            anchor[p] += anchor[i]
            pchars[p] += pchars[i]
    page_chars = max(chars[0], 1)
    page_nodes = max(nodes[0], 1)
    max_depth = max(max(depth), 1)
    # Pass 3, pre-order: scored nodes, ancestors' class flags, features.
    own_index = [0] * n  # element -> index of its nearest scored ancestor-or-self
    anc_flags = [(False, False)] * n
    own_flags = [_attr_flags(el) for el in els]
    title_size = max(len(title), 1)
    tag_slot = {t: k for k, t in enumerate(_TAG_FEATURES)}
    base = len(FEATURES) - len(_TAG_FEATURES)
    for i in range(n):
        p = par[i]
        if p >= 0:
            ap = anc_flags[p]
            op = own_flags[p]
            anc_flags[i] = (ap[0] or op[0], ap[1] or op[1])
        scored = i == 0 or chars[i] >= min_chars
        if not scored:
            # Hidden: rolled into the nearest scored ancestor (its owner).
            owner = own_index[p]
            own_index[i] = owner
            table.owner[els[i]] = owner
            if els[p] is table.elements[owner] and chars[i] > 0:
                table.weight[owner] += 1.0  # a direct hidden child with text: (k + 1) nodes
            continue
        k = len(table.elements)
        own_index[i] = k
        table.owner[els[i]] = k
        table.elements.append(els[i])
        table.parent.append(own_index[p] if p >= 0 else -1)
        table.weight.append(1.0)
        table.chars.append(chars[i])
        c, w, lk = chars[i], words[i], links[i]
        s = start[i] / page_chars
        e = (start[i] + c) / page_chars
        tag = els[i].tag
        row = [
            math.log1p(c),
            c / page_chars,
            nodes[i] / page_nodes,
            math.log1p(nodes[i]),
            math.log1p(depth[i]),
            depth[i] / max_depth,
            s,
            e,
            min(s, 1.0 - e),
            abs((s + e) / 2 - 0.5),
            lk / (w + 1),
            anchor[i] / (c + 1),
            math.log1p(anchor[i] / lk) if lk else 0.0,
            1.0 if lk else 0.0,
            intra[i] / lk if lk else 0.0,
            min(1.0, c / max(html[i], 1)),
            hits[i] / (w + 1),
            min(1.0, hits[i] / title_size),
            math.log1p(w / max(pieces[i], 1)),
            pchars[i] / (c + 1),
            punct[i] / (w + 1),
            math.log1p(nchild[i]),
            1.0 if own_flags[i][0] else 0.0,
            1.0 if own_flags[i][1] else 0.0,
            1.0 if anc_flags[i][0] else 0.0,
            1.0 if anc_flags[i][1] else 0.0,
        ]
        row.extend([0.0] * len(_TAG_FEATURES))
        row[base + tag_slot[TAG_GROUPS.get(tag, "other")]] = 1.0
        table.features.append(row)
    table.page_chars = chars[0]
    return table


# -- the classifier ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BucketModel:
    """One logistic regression: ``x = sigmoid(b + sum_k coef_k * (f_k - mean_k) / scale_k)``."""

    intercept: float
    coef: tuple[float, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class TemplatenessModel:
    """Four (or more) logistic models by node size, as in Section 5.2.

    ``buckets`` are upper bounds of ``text_share`` (the area proxy); a node
    goes to the first bucket whose bound exceeds its share, the last bucket
    takes the rest.
    """

    features: tuple[str, ...]
    buckets: tuple[float, ...]
    models: tuple[BucketModel, ...]
    meta: dict[str, object] = field(default_factory=dict)

    def bucket(self, text_share: float) -> int:
        for b, bound in enumerate(self.buckets):
            if text_share < bound:
                return b
        return len(self.buckets)

    def score(self, rows: Iterable[Sequence[float]]) -> list[float]:
        """Templateness ``x(i)`` in [0, 1] of every feature row."""
        share = FEATURES.index("text_share")
        # Fold the standardisation into the coefficients once per call.
        folded = []
        for m in self.models:
            w = [c / s for c, s in zip(m.coef, m.scale, strict=True)]
            folded.append((m.intercept - sum(wk * mk for wk, mk in zip(w, m.mean, strict=True)), w))
        out = []
        for row in rows:
            b0, w = folded[self.bucket(row[share])]
            z = b0 + sum(wk * fk for wk, fk in zip(w, row, strict=True))
            out.append(1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0)
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "version": 1,
            "features": list(self.features),
            "buckets": list(self.buckets),
            "models": [
                {"intercept": m.intercept, "coef": list(m.coef), "mean": list(m.mean), "scale": list(m.scale)}
                for m in self.models
            ],
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, data: object) -> TemplatenessModel:
        """Rebuild from :meth:`to_json` data; ``ValueError`` names what is wrong."""
        try:
            assert isinstance(data, dict)
            features = tuple(str(f) for f in data["features"])
            if features != FEATURES:
                raise ValueError(f"model features {features} do not match this version's {FEATURES}")
            buckets = tuple(float(b) for b in data["buckets"])
            models = tuple(
                BucketModel(
                    float(m["intercept"]),
                    tuple(float(v) for v in m["coef"]),
                    tuple(float(v) for v in m["mean"]),
                    tuple(float(v) or 1.0 for v in m["scale"]),
                )
                for m in data["models"]
            )
        except (AssertionError, KeyError, TypeError) as exc:
            raise ValueError(f"not a templateness model: {exc!r}") from exc
        if len(models) != len(buckets) + 1 or any(
            len(m.coef) != len(features) or len(m.mean) != len(features) or len(m.scale) != len(features)
            for m in models
        ):
            raise ValueError("templateness model: wrong number of buckets or coefficients")
        return cls(features, buckets, models, dict(data.get("meta", {})))


def load_model(path: str | Path | None = None) -> TemplatenessModel:
    """The model at ``path``, or the default shipped in ``scrapy_detemplate/data``."""
    if path:
        text = Path(path).read_text(encoding="utf-8")
    else:
        text = resources.files("scrapy_detemplate").joinpath("data/templateness_model.json").read_text("utf-8")
    return TemplatenessModel.from_json(json.loads(text))


# -- SITELEVEL(theta): training labels without people ------------------------------


def node_hashes(root: etree._Element) -> dict[etree._Element, bytes]:
    """A content hash ``h(i)`` of every body element: tag, text and children, bottom-up.

    Attributes are left out (archived pages rewrite every URL), white space is folded.
    """
    body = find_body(root)
    if body is None:
        return {}
    order = [el for el in body.iter() if isinstance(el.tag, str) and el.tag not in SKIP_TAGS]
    inside = set(order)
    out: dict[etree._Element, bytes] = {}
    for el in reversed(order):
        h = hashlib.blake2b(digest_size=12)
        h.update(str(el.tag).encode())
        h.update(b"\x00" + " ".join((el.text or "").split()).encode("utf-8", "surrogatepass"))
        for child in el:
            if child in inside:
                h.update(b"\x01" + out[child])
            h.update(b"\x02" + " ".join((child.tail or "").split()).encode("utf-8", "surrogatepass"))
        out[el] = h.digest()
    return out


def sitelevel_templates(pages_hashes: Sequence[Iterable[bytes]], theta: float = 0.1) -> set[bytes]:
    """SITELEVEL(theta): hashes found on at least ``theta`` of a site's pages (and on two at least)."""
    counts: dict[bytes, int] = {}
    for hashes in pages_hashes:
        for h in set(hashes):
            counts[h] = counts.get(h, 0) + 1
    need = max(2, math.ceil(theta * len(pages_hashes)))
    return {h for h, c in counts.items() if c >= need}


def label_nodes(table: NodeTable, hashes: dict[etree._Element, bytes], templates: set[bytes],
                share: float = 0.85) -> list[int]:  # fmt: skip
    """Labels of the scored nodes: 1 if site-level template, or if more than ``share``
    of its HTML lies inside site-level templates (Section 5.1); else 0.

    The HTML size is the same estimate as the ``visible_per_html`` feature,
    counted over all elements (hidden ones too).
    """
    body = table.elements[0] if table.elements else None
    if body is None:
        return []
    order = [el for el in body.iter() if el in table.owner]
    size: dict[etree._Element, int] = {}
    inside: dict[etree._Element, int] = {}
    for el in reversed(order):
        own = 2 * len(el.tag) + 5 + len(el.text or "") + sum(len(c.tail or "") for c in el)
        total = own + sum(size.get(c, 0) for c in el)
        size[el] = total
        inside[el] = total if hashes.get(el) in templates else sum(inside.get(c, 0) for c in el)
    return [1 if hashes.get(el) in templates or inside[el] > share * size[el] else 0 for el in table.elements]
