"""Page-level evidence per text line: the main content container and line shape.

Not one of the five papers: the page-level half of the combined method.  Two
well-known observations are turned into numbers for each visible line:

* **Content sits in one container.**  Every paragraph-like element with at least
  25 characters gives its parent a vote of ``1 + commas + min(chars // 100, 3)``
  and its grandparent half of it; a container starts from a prior for its tag and
  its class/id words, and its total is scaled by ``1 - link density``.  The best
  container and its siblings scoring at least a fifth of it are "chosen".
* **Boilerplate lines look different**: short, mostly link text, in lists and
  navigation, under class/id words such as ``nav``, ``footer``, ``related``.
  Two kinds of class/id words count on their own: those of a comment thread
  (``comment``, ``disqus``, ``respond``...: readers' text is sentence-like, yet
  never the article) and readability's "unlikely candidate" words (``header``,
  ``sidebar``, ``pager``... unless the same element also says ``article``,
  ``main``, ``column``...), which that extractor drops before it scores.
* **A line is read in its context**: the block it sits in (its nearest
  non-inline element: share of the page's text, link density, how many of the
  page's lines it holds and how sentence-like they are), what lies between it
  and the chosen container (class/id words, depth), and where it stands in the
  page's text (before, inside or after the container).  These are relative to
  the page, so they carry over to sites the model has never seen.

Features are plain floats; :data:`FEATURES` names them.  Site-level evidence
(document frequencies, the Sandwich LCS) is appended by the caller.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from lxml import etree

from scrapy_detemplate import _compiled as _compiled_modules
from scrapy_detemplate._html import SKIP_TAGS, Line, find_body

_BOILER = re.compile(
    r"nav|menu|foot|header|sidebar|side|comment|share|social|related|promo|\bad|ads|advert|sponsor|breadcrumb"
    r"|copyright|widget|banner|toolbar|login|signup|subscribe|newsletter|search|tags|meta|byline|author|date"
    r"|caption|wm-ipp|wayback",
    re.IGNORECASE,
)
# Comment threads: readers' text, sentence-like but never the article.
_COMMENT = re.compile(r"comment|disqus|respond|reply|discuss", re.IGNORECASE)
# Readability's "unlikely candidate" rule: class/id words of page furniture, unless words of a main column.
_UNLIKELY = re.compile(
    r"combx|comment|community|disqus|extra|foot|header|menu|remark|rss|shoutbox|sidebar|sponsor|ad-break"
    r"|agegate|pagination|pager|popup|tweet|twitter",
    re.IGNORECASE,
)
_MAYBE = re.compile(r"and|article|body|column|main|shadow", re.IGNORECASE)
_CONTENT = re.compile(r"article|content|story|body|main|post|entry|text|blog|permalink|hentry|storytext", re.IGNORECASE)
# Container scoring: class/id words and tag priors.
_POSITIVE = re.compile(r"article|body|content|entry|hentry|main|page|post|text|blog|story", re.IGNORECASE)
_NEGATIVE = re.compile(
    r"combx|comment|com-|contact|foot|footer|footnote|masthead|media|meta|outbrain|promo|related|scroll"
    r"|shoutbox|sidebar|sponsor|shopping|tags|tool|widget|nav|menu|share|social|ad-|ads|banner",
    re.IGNORECASE,
)
_TAG_PRIOR = {
    "div": 5, "article": 8, "main": 5, "section": 3, "pre": 3, "td": 3, "blockquote": 3,
    "address": -3, "ol": -3, "ul": -3, "dl": -3, "dd": -3, "dt": -3, "li": -3, "form": -3,
    "h1": -5, "h2": -5, "h3": -5, "h4": -5, "h5": -5, "h6": -5, "th": -5,
    "nav": -25, "aside": -25, "footer": -25, "header": -10,
}  # fmt: skip
_PARAGRAPHS = ("p", "pre", "td", "blockquote", "dd", "li", "div")
_DIV_BLOCKS = frozenset({"p", "div", "table", "ul", "ol", "pre", "blockquote", "section", "article"})
_TOKEN = re.compile(r"\w+")
#: Tags that do not start a block: a line's block is its nearest ancestor-or-self not among them.
_INLINE = frozenset({
    "a", "span", "b", "i", "em", "strong", "font", "small", "big", "u", "s", "sup", "sub", "code", "tt", "abbr",
    "acronym", "cite", "q", "label", "time", "mark", "br", "img",
})  # fmt: skip
#: A line ends like a sentence when its last character is one of these (:data:`_CJK_SENTENCE_END` on a page
#: written in Chinese or Japanese): the Latin stops and closing quotes, and the stops of scripts that have
#: their own, on every page: the danda and double danda (Hindi, Marathi, Nepali, Bengali...), Urdu's full
#: stop and the Arabic question mark, and the full stops of Ethiopic (Amharic), Armenian, Myanmar and Khmer.
#: Measured on the corpus pages with their stops and commas rewritten so: ``bench/quality_punctuation.py``.
_SENTENCE_END = ".!?\"'”" + "\u0964\u0965\u06d4\u061f\u1362\u0589\u104b\u17d4"
_CJK_SENTENCE_END = _SENTENCE_END + "。！？｡"
#: Commas besides ``,`` on every page: the Arabic comma (Arabic, Persian, Urdu) and the Ethiopic one.
_OTHER_COMMAS = "\u060c\u1363"

# Pages written without spaces between words: Chinese and Japanese (ideographs, kana), and Thai, Lao,
# Myanmar and Khmer.  The measures of amount of text (characters, words, commas, sentence ends, the title's
# words) were learned on languages written with spaces, where a word is about six characters with its
# space.  There a whole CJK clause is one ``\w+`` token (a Thai one several pieces: its vowel and tone
# marks are not ``\w``), a paragraph has no ``,`` and no ``.``, and a line looks a third as long as the
# same text in English: the trees would read an article as a menu.  So on a page whose visible text is at
# least a tenth CJK or :data:`_SEA` characters (:func:`written_without_spaces`), a CJK character counts
# :data:`CJK_CHARS` characters and a Thai-like one 1.5 (:func:`text_size`), a run of CJK characters gives
# one word per two characters and a run of Thai-like ones one per :data:`SEA_WORD` (:func:`tokens`;
# Chinese words are 1.5-2 characters, Japanese ones longer, Thai ones about four), the full-width stops and
# commas (``。！？``, ``，、``) count as their ASCII forms do, and a space between two Thai-like characters
# (where Thai and Lao put a comma or a stop) as a comma (:func:`commas`).  Any other page is measured as
# before, CJK words in its menus (a language picker's ``日本語``) included.  Hangul is written with
# spaces and needs none of this.  Measured on the corpus pages rewritten in a CJK-like script
# (``bench/quality_cjk.py``) and in a Thai-like one (``bench/quality_thai.py``).
_CJK = re.compile(
    "[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002ffff]+"
)
#: What a CJK character counts for in :func:`text_size` (about half a word of six characters).
CJK_CHARS = 3
#: Thai, Lao, Myanmar and Khmer: letters, vowel and tone marks, digits (their stops and signs left out).
_SEA = re.compile(
    "[\u0e01-\u0e3a\u0e40-\u0e4e\u0e50-\u0e59\u0e81-\u0edf\u1000-\u1049\u104c-\u109f\u1780-\u17d3\u17e0-\u17e9]+"
)
#: The characters of a word of :data:`_SEA` in :func:`tokens`; each counts 1.5 in :func:`text_size`.
SEA_WORD = 4


def cjk_chars(text: str) -> int:
    """The CJK characters of ``text`` (see :data:`_CJK`)."""
    return 0 if text.isascii() else sum(map(len, _CJK.findall(text)))


def sea_chars(text: str) -> int:
    """The Thai, Lao, Myanmar and Khmer characters of ``text`` (see :data:`_SEA`)."""
    return 0 if text.isascii() else sum(map(len, _SEA.findall(text)))


def written_without_spaces(texts: Sequence[str]) -> bool:
    """Whether at least a tenth of the characters of a page's line ``texts`` are CJK or :data:`_SEA` ones."""
    unspaced = sum(map(cjk_chars, texts)) + sum(map(sea_chars, texts))
    return unspaced > 0 and 10 * unspaced >= sum(map(len, texts))


def unspaced_words(texts: Sequence[str]) -> int:
    """The words :func:`tokens` finds in the CJK and :data:`_SEA` characters of ``texts`` beyond one a
    space-separated run: a pair of CJK characters, :data:`SEA_WORD` Thai-like ones."""
    return sum(map(cjk_chars, texts)) // 2 + sum(map(sea_chars, texts)) // SEA_WORD


def text_size(text: str, cjk: bool = False) -> int:
    """``len(text)``; on a page written without spaces (``cjk``), each CJK character counts :data:`CJK_CHARS`
    and each :data:`_SEA` one 1.5 (rounded down over the text)."""
    return len(text) + (CJK_CHARS - 1) * cjk_chars(text) + sea_chars(text) // 2 if cjk else len(text)


def commas(text: str, cjk: bool = False) -> int:
    """The commas of ``text``: ``,`` and :data:`_OTHER_COMMAS`, and on a page written without spaces
    (``cjk``) ``，`` and ``、`` too, and every run of blanks between two :data:`_SEA` characters."""
    count = text.count(",")
    if text.isascii():
        return count
    count += sum(map(text.count, _OTHER_COMMAS))
    if not cjk:
        return count
    count += text.count("\uff0c") + text.count("\u3001")
    end = -1
    for run in _SEA.finditer(text):
        if end >= 0 and text[end : run.start()].isspace():  # runs are maximal: a gap is never empty
            count += 1
        end = run.end()
    return count


def _cjk_tokens(text: str, out: list[str]) -> None:
    """``_TOKEN.findall(text)`` into ``out``, every run of CJK characters in a token cut into pairs (its
    last one alone when odd)."""
    for token in _TOKEN.findall(text):
        at = 0
        for run in _CJK.finditer(token):
            if run.start() > at:
                out.append(token[at : run.start()])
            out.extend(token[k : k + 2] for k in range(run.start(), run.end(), 2))
            at = run.end()
        if at < len(token):
            out.append(token[at:])


def tokens(text: str, cjk: bool = False) -> list[str]:
    """``_TOKEN.findall(text)``; on a page written without spaces (``cjk``), every run of CJK characters
    in a token cut into pairs (its last one alone when odd), and every run of :data:`_SEA` characters
    (vowel and tone marks included, which ``\\w`` leaves out) into words of :data:`SEA_WORD`."""
    if not cjk or text.isascii():
        return _TOKEN.findall(text)
    out: list[str] = []
    at = 0
    for run in _SEA.finditer(text):
        _cjk_tokens(text[at : run.start()], out)
        out.extend(run[0][k : k + SEA_WORD] for k in range(0, len(run[0]), SEA_WORD))
        at = run.end()
    _cjk_tokens(text[at:], out)
    return out


#: Tags whose presence among a line's ancestors (and as its own element) are features.
TAGS = (
    "a", "li", "h1", "h2", "h3", "h4", "p", "td", "th", "nav", "footer", "header", "aside", "form",
    "option", "button", "label", "span", "div", "ul", "ol", "table", "pre", "code", "blockquote", "strong",
    "em", "b", "i", "small", "font", "center", "article", "main", "section", "figure", "figcaption", "dd",
    "dt", "select", "time", "cite", "sup",
)  # fmt: skip
_TAG_INDEX = {tag: i for i, tag in enumerate(TAGS)}
#: WAI-ARIA landmark roles and the tag each stands for: an element with ``role="navigation"`` is
#: read as a ``<nav>`` (Sphinx's prev/next bar and sidebar, many themes' menus are ``<div>`` elements that
#: say so only there).  The value is compared whole, ASCII blanks stripped, lower case.
LANDMARKS = {
    "navigation": "nav", "menubar": "nav", "complementary": "aside", "contentinfo": "footer",
    "banner": "header", "main": "main",
}  # fmt: skip
_BLANKS = " \t\n\r\f"

#: A line's repeated records (:func:`_records`): the nearest element on its path (itself or an
#: ancestor, not inline, below ``<body>``) with at least RECORD_SIBLINGS siblings of its signature (tag
#: and first class name, itself counted), and of all such on the path the group holding the most text.
#: Per record group: its records (``log1p``), how far up it is, its share of the page's visible
#: characters, the mean characters of a record (``log1p``), its link density, and whether it stands in
#: the main container.  A listing's items, a ranking's rows, a table's data rows and a menu's entries are
#: groups; their share, size and links tell them apart where the container does not hold them.
RECORD_FEATURES = (
    "record_count", "record_up", "record_share", "record_log_chars", "record_link_density",
    "record_in_container", "big_record_share", "big_record_link_density", "big_record_count",
)  # fmt: skip
RECORD_SIBLINGS = 3

#: Names of the page-level features, in order.
FEATURES = (
    "log_chars", "log_words", "link_density", "ends_sentence", "commas_per_word", "position",
    "boiler_words", "content_words", "depth", "in_container", "container_score", "link_in_container",
    *(f"under_{t}" for t in TAGS), *(f"own_{t}" for t in TAGS),
    "title_share", "title_cover", "lines_before_container", "lines_after_container",
    "just_before_container", "near_before_container", "window_log_chars", "window_link_density",
    "boiler_below_container", "content_below_container", "depth_below_container", "block_share",
    "block_link_density", "block_lines", "block_sentence_share", "block_mean_log_chars", "rel_log_chars",
    "chars_before_share", "container_share", "after_container_share", "block_in_container",
    "comment_words", "unlikely", *RECORD_FEATURES,
)  # fmt: skip


def container_scores(root: etree._Element) -> tuple[dict[etree._Element, float], set[etree._Element]]:
    """Score candidate containers; return the scores and the chosen containers."""
    body = find_body(root)
    if body is None:
        return {}, set()
    scores, chosen, _, _ = _containers(body)
    return scores, chosen


def _containers(
    body: etree._Element, cjk: bool = False
) -> tuple[dict[etree._Element, float], set[etree._Element], dict[etree._Element, int], dict[etree._Element, int]]:
    """The container scores, the chosen containers, and per element the visible
    and the link characters they came from.

    One bottom-up pass first measures every element's visible characters,
    commas and link characters (text of script, style and the like excluded;
    ``cjk``: as on a page written without spaces, :func:`text_size`).
    """
    chars: dict[etree._Element, int] = {}
    counted: dict[etree._Element, int] = {}
    links: dict[etree._Element, int] = {}
    order = list(body.iter())
    for el in reversed(order):  # descendants before ancestors
        tag = el.tag
        visible = isinstance(tag, str) and tag not in SKIP_TAGS
        text = " ".join(el.text.split()) if visible and el.text else ""
        c, k, a = text_size(text, cjk), commas(text, cjk), 0
        for child in el:
            tail = " ".join(child.tail.split()) if child.tail else ""
            c += chars.get(child, 0) + text_size(tail, cjk)
            k += counted.get(child, 0) + commas(tail, cjk)
            a += links.get(child, 0)
        chars[el], counted[el] = c, k
        links[el] = c if tag == "a" else a
    raw: dict[etree._Element, float] = {}
    for el in order:
        tag = el.tag
        if tag not in _PARAGRAPHS or chars[el] < 25:
            continue
        if tag == "div" and any(isinstance(c.tag, str) and c.tag in _DIV_BLOCKS for c in el):
            continue  # only a div without block children acts as a paragraph
        vote = 1 + counted[el] + min(chars[el] // 100, 3)
        parent = el.getparent()
        for ancestor, share in ((parent, 1.0), (parent.getparent() if parent is not None else None, 0.5)):
            if ancestor is None or not isinstance(ancestor.tag, str):
                continue
            if ancestor not in raw:
                raw[ancestor] = _TAG_PRIOR.get(ancestor.tag, 0) + _class_weight(ancestor)
            raw[ancestor] += vote * share
    scores: dict[etree._Element, float] = {}
    for el, score in raw.items():
        total = chars.get(el, 0)
        scores[el] = score * (1 - links.get(el, 0) / total) if total else 0.0
    if not scores:
        return scores, set(), chars, links
    best = max(scores, key=scores.__getitem__)
    chosen = {best}
    parent = best.getparent()
    if parent is not None:
        floor = max(10.0, scores[best] * 0.2)
        chosen.update(s for s in parent if s is not best and scores.get(s, -1e9) >= floor)
    return scores, chosen, chars, links


def _class_weight(el: etree._Element) -> int:
    weight = 0
    for attr in ("class", "id"):
        value = el.get(attr)
        if value:
            weight += 25 if _POSITIVE.search(value) else 0
            weight -= 25 if _NEGATIVE.search(value) else 0
    return weight


_Info = tuple[frozenset[str], int, int, bool, float, int, int, int, int, "etree._Element | None", int, bool]
_NO_INFO: _Info = (frozenset(), 0, 0, False, 0.0, 0, 0, 0, 0, None, 0, False)


class _Ancestry:
    """Per element, what its ancestors say (memoised top-down, no recursion).

    For an element: the tags on its path, class/id boilerplate and content words,
    whether it is inside a chosen container, the best container score above it,
    its depth, the boilerplate words, content words and depth counted below the
    chosen container only, its block (nearest non-inline ancestor-or-self), the
    comment-thread words above it and whether an ancestor is an unlikely candidate.
    """

    __slots__ = ("chosen", "info", "scores", "words")

    def __init__(self, scores: dict[etree._Element, float], chosen: set[etree._Element]) -> None:
        self.scores, self.chosen = scores, chosen
        self.info: dict[etree._Element, _Info] = {}
        # class/id text -> (boilerplate, content, comment, unlikely): class strings repeat within a page.
        self.words: dict[str, tuple[int, int, int, bool]] = {" ": (0, 0, 0, False)}

    def of(self, el: etree._Element) -> _Info:
        known = self.info.get(el)
        if known is not None:
            return known
        chain = []
        node: etree._Element | None = el
        while node is not None and node not in self.info:
            chain.append(node)
            node = node.getparent() if node.tag != "body" else None
        above = self.info[node] if node is not None else _NO_INFO
        for node in reversed(chain):
            (tags, boiler, content, inside, near, depth, boiler_below, content_below, depth_below, block, comments,
             unlikely) = above  # fmt: skip
            tag = node.tag if isinstance(node.tag, str) else ""
            words = f"{node.get('class') or ''} {node.get('id') or ''}"
            kinds = self.words.get(words)
            if kinds is None:
                kinds = self.words[words] = (
                    1 if _BOILER.search(words) else 0,
                    1 if _CONTENT.search(words) else 0,
                    1 if _COMMENT.search(words) else 0,
                    _UNLIKELY.search(words) is not None and _MAYBE.search(words) is None,
                )
            is_boiler, is_content, is_comment, is_unlikely = kinds
            comments += is_comment
            unlikely = unlikely or (is_unlikely and tag not in ("html", "body"))
            if node in self.chosen:
                boiler_below = content_below = depth_below = 0
            elif inside:
                boiler_below, content_below, depth_below = (
                    boiler_below + is_boiler, content_below + is_content, depth_below + 1
                )  # fmt: skip
            landmark = LANDMARKS.get((node.get("role") or "").strip(_BLANKS).lower())
            above = (
                tags | ({tag, landmark} if landmark else {tag}),
                boiler + is_boiler,
                content + is_content,
                inside or node in self.chosen,
                max(near, self.scores.get(node, 0.0)),
                depth + 1,
                boiler_below,
                content_below,
                depth_below,
                block if tag in _INLINE and block is not None else node,
                comments,
                unlikely,
            )
            self.info[node] = above
        return above


def line_features(root: etree._Element, lines: Sequence[Line], title: str = "") -> list[list[float]]:
    """One feature vector per line (see :data:`FEATURES`).

    Compiled (``methods/_density.pyx``, the same numbers) when it was built;
    the compiled function hands the rare pages it does not handle back here.
    """
    if _compiled is not None:
        rows = _compiled.line_features(root, lines, title)
        if rows is not None:
            return rows  # type: ignore[no-any-return]
    return _line_features_py(root, lines, title)


def _line_features_py(root: etree._Element, lines: Sequence[Line], title: str = "") -> list[list[float]]:
    """:func:`line_features` in Python: the reference, and the fallback when the extension is not built."""
    body = find_body(root)
    cjk = written_without_spaces([line.text for line in lines])
    scores, chosen, chars_of, links_of = _containers(body, cjk) if body is not None else ({}, set(), {}, {})
    best = max((scores[c] for c in chosen), default=0.0)
    ancestry = _Ancestry(scores, chosen)
    title_tokens = set(tokens(title.lower(), cjk))
    ends = _CJK_SENTENCE_END if cjk else _SENTENCE_END
    per_line: list[tuple[_Info, str, float]] = []
    records = _Records(body, ancestry, chars_of, links_of)
    record_columns: list[tuple[float, ...]] = []
    for line in lines:
        link = 0
        total = 0
        owner_info = None
        own_tag = ""
        record = _NO_RECORD
        for el, is_tail in line.slots:
            owner = el.getparent() if is_tail else el
            if owner is None:
                continue
            info = ancestry.of(owner)
            if owner_info is None:
                owner_info, own_tag = info, owner.tag if isinstance(owner.tag, str) else ""
                record = records.of(owner)
            piece = text_size(" ".join(((el.tail if is_tail else el.text) or "").split()), cjk)
            total += piece
            if "a" in info[0]:
                link += piece
        per_line.append((owner_info or _NO_INFO, own_tag, link / total if total else 0.0))
        record_columns.append(record)
    n = len(lines)
    inside_at = [i for i, (info, _, _) in enumerate(per_line) if info[3]]
    first_in, last_in = (inside_at[0], inside_at[-1]) if inside_at else (n, -1)
    line_chars = [text_size(line.text, cjk) for line in lines]
    log_chars = [math.log1p(size) for size in line_chars]
    max_log_chars = max(log_chars, default=0.0)
    links = [p[2] for p in per_line]
    # Lines per block: count, sentence-like ones, summed log length.
    blocks: dict[etree._Element | None, list[float]] = {}
    for line, (info, _, _), size in zip(lines, per_line, log_chars, strict=True):
        stat = blocks.setdefault(info[9], [0, 0, 0.0])
        stat[0] += 1
        stat[1] += 1 if line.text[-1:] in ends else 0
        stat[2] += size
    body_chars = max(1, chars_of.get(body, 0)) if body is not None else 1
    container_share = sum(chars_of.get(c, 0) for c in chosen) / body_chars
    page_chars = sum(line_chars) or 1
    cumulative = [0] * (n + 1)
    for i, size in enumerate(line_chars):
        cumulative[i + 1] = cumulative[i] + size
    features = []
    for i, (line, (info, own_tag, link_density)) in enumerate(zip(lines, per_line, strict=True)):
        (tags, boiler, content, inside, near, depth, boiler_below, content_below, depth_below, block, comments,
         unlikely) = info  # fmt: skip
        text = line.text
        found = tokens(text.lower(), cjk)
        words = len(found)
        under = [0.0] * len(TAGS)
        for tag in tags:
            j = _TAG_INDEX.get(tag)
            if j is not None:
                under[j] = 1.0
        own = [0.0] * len(TAGS)
        if own_tag in _TAG_INDEX:
            own[_TAG_INDEX[own_tag]] = 1.0
        token_set = set(found)
        shared = len(token_set & title_tokens)
        before = first_in - i if i < first_in else 0
        after = i - last_in if i > last_in else 0
        lo, hi = max(0, i - 3), min(n, i + 4)
        block_count, block_sentences, block_log_chars = blocks[block]
        block_chars = chars_of.get(block, 0) if block is not None else 0
        parent = block.getparent() if block is not None else None
        features.append(
            [
                log_chars[i],
                math.log1p(words),
                link_density,
                1.0 if text[-1:] in ends else 0.0,
                commas(text, cjk) / max(1, words),
                i / max(1, n - 1),
                min(boiler, 3) / 3,
                min(content, 3) / 3,
                depth / 30,
                1.0 if inside else 0.0,
                max(-1.0, min(near / best, 1.0)) if best > 0 else 0.0,
                link_density if inside else 0.0,
                *under,
                *own,
                shared / len(token_set) if token_set else 0.0,
                shared / len(title_tokens) if title_tokens else 0.0,
                min(before, 20) / 20,
                min(after, 20) / 20,
                1.0 if before == 1 else 0.0,
                1.0 if 0 < before <= 3 else 0.0,
                sum(log_chars[lo:hi]) / (hi - lo),
                sum(links[lo:hi]) / (hi - lo),
                min(boiler_below, 3) / 3 if inside else -1.0,
                min(content_below, 3) / 3 if inside else -1.0,
                min(depth_below, 15) / 15 if inside else -1.0,
                block_chars / body_chars,
                links_of.get(block, 0) / block_chars if block is not None and block_chars else 0.0,
                math.log1p(block_count),
                block_sentences / block_count,
                block_log_chars / block_count,
                log_chars[i] - max_log_chars,
                cumulative[i] / page_chars,
                container_share,
                (cumulative[i] - cumulative[last_in + 1]) / page_chars if i > last_in >= 0 else 0.0,
                1.0 if block is not None and (block in chosen or parent in chosen) else 0.0,
                min(comments, 3) / 3,
                1.0 if unlikely else 0.0,
                *record_columns[i],
            ]
        )
    return features


_NO_RECORD = (0.0,) * len(RECORD_FEATURES)


class _Records:
    """:data:`RECORD_FEATURES` per element (memoised; see there).  A record's signature is its tag and
    the first name of its ``class``; its group is its parent's children of that signature."""

    __slots__ = ("ancestry", "body", "chars", "groups", "links", "memo", "page")

    def __init__(
        self,
        body: etree._Element | None,
        ancestry: _Ancestry,
        chars: dict[etree._Element, int],
        links: dict[etree._Element, int],
    ) -> None:
        self.body, self.ancestry, self.chars, self.links = body, ancestry, chars, links
        self.page = max(1, chars.get(body, 0)) if body is not None else 1
        self.groups: dict[etree._Element, dict[tuple[str, str], list[int]]] = {}
        self.memo: dict[etree._Element, tuple[float, ...]] = {}

    def of(self, owner: etree._Element) -> tuple[float, ...]:
        known = self.memo.get(owner)
        if known is not None:
            return known
        near = big = None
        up = 0
        node = owner
        while node is not self.body:
            parent = node.getparent()
            if parent is None:
                break
            tag = node.tag
            if isinstance(tag, str) and tag not in _INLINE:
                count, chars, links = self.groups_of(parent)[_signature(node)]
                if count >= RECORD_SIBLINGS:
                    record = (count, up, chars, links, self.ancestry.of(node)[3])  # in a chosen container
                    if near is None:
                        near = record
                    if big is None or chars > big[2]:
                        big = record
            node = parent
            up += 1
        columns = [0.0] * len(RECORD_FEATURES)
        if near is not None:
            count, up, chars, links, inside = near
            columns[:6] = (
                math.log1p(count), min(up, 10) / 10, chars / self.page, math.log1p(chars / count),
                links / chars if chars else 0.0, 1.0 if inside else 0.0,
            )  # fmt: skip
        if big is not None:
            count, up, chars, links, inside = big
            columns[6:] = (chars / self.page, links / chars if chars else 0.0, math.log1p(count))
        self.memo[owner] = known = tuple(columns)
        return known

    def groups_of(self, parent: etree._Element) -> dict[tuple[str, str], list[int]]:
        """Per signature of ``parent``'s children: their records, visible characters and link characters."""
        groups = self.groups.get(parent)
        if groups is None:
            groups = self.groups[parent] = {}
            for child in parent:
                if isinstance(child.tag, str):
                    group = groups.setdefault(_signature(child), [0, 0, 0])
                    group[0] += 1
                    group[1] += self.chars.get(child, 0)
                    group[2] += self.links.get(child, 0)
        return groups


def _signature(el: etree._Element) -> tuple[str, str]:
    """A record's signature: its tag and the first name of its ``class`` (split on ASCII blanks)."""
    value = (el.get("class") or "").lstrip(_BLANKS)
    end = 0
    while end < len(value) and value[end] not in _BLANKS:
        end += 1
    return el.tag, value[:end]


#: The compiled line features (``methods/_density.pyx``), or None when not built (see ``_compiled.status()``).
_compiled = _compiled_modules.load("scrapy_detemplate.methods._density")
