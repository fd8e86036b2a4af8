"""Incremental template detection with a text segment table.

Wang, Fang, Wang, Liu, Wang and Sun (2008), "An Incremental Framework for
Template Detection" (WWW 2008 poster): every page is processed the moment it
arrives and no page is cached.  A per-site *text segment table* keeps, for each
text segment seen, its document frequency (DF) and the number of the page on
which it was last seen.  Each page goes through the paper's four steps:

1. **page segmentation** (:func:`segment_lines`): the page is divided into
   blocks at layout elements (:data:`LAYOUT_TAGS`), and every block into text
   segments, the text nodes between tags, comments and processing instructions.
   Two segments are the same only when their text is literally equal (after
   collapsing white space) and their DOM path (tag names from ``<body>``) is the
   same; a segment is stored as a 64-bit hash of ``path NUL text``.
2. **table expansion** (:meth:`SegmentTable.expand`): DF += 1 for a segment
   already in the table, otherwise it is inserted with DF = 1.  A segment counts
   once per page, however often it occurs on it.
3. **template detection** (:func:`template_blocks`): a segment is template when
   ``DF >= df_threshold`` (5); a block's template ratio is
   ``sum(len(template segments)) / sum(len(all segments))`` over its own
   segments, and blocks with a ratio above ``block_ratio`` (0.7) are template.
4. **table shrinkage** (:meth:`SegmentTable.shrink`): a segment not seen for its
   maximum living time is deleted.  Our copy of the paper has the formula
   garbled; what survives says that ``Tb`` is the living time of a segment seen
   once, that ``Tb*N`` bounds it whatever the DF and that it grows with DF along
   a logistic curve.  We use (:func:`living_time`)::

       t(df) = Tb*N / (1 + (N - 1) * exp(-r * (df - 1)))      so t(1) = Tb, t -> Tb*N

Time is the per-site page number (1 for the first page of a site), never a
wall clock.  A segment last seen on page ``L`` with DF ``df`` *lives* on page
``c`` while ``c - L < T(df)`` with ``T(df) = ceil(t(df))``: it can still be
re-seen (and counted) up to page ``L + T(df)``, and is deleted in the
shrinkage step of page ``L + T(df)`` if it was not seen there.

Shrinkage must not scan the whole table on every page.  Deletion is therefore
lazy: an expired entry that is still physically present is treated exactly as
absent by :meth:`SegmentTable.expand` (its DF restarts at 1), and a sweep every
``sweep_every`` pages deletes all expired entries.  The observable behaviour
is exactly that of deleting at ``T(df)``; the table physically holds at most
the entries that lived at the last sweep plus those inserted since.

Table entries are plain data (``dict[str, int]``: hex key -> packed
``last_seen << 24 | min(df, 2**24 - 1)``) so a JSON or Redis store can hold the
same table; :func:`pack_table` gives the compact 16-bytes-an-entry form that the
memory figures count.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from scrapy_detemplate._compiled import load
from scrapy_detemplate._html import Line, visible_lines

#: The compiled segmentation and table expansion (``_site.pyx``), or ``None``: the Python ones run.
_compiled = load("scrapy_detemplate.methods._site")

#: Elements whose boundaries split a page into blocks.  The paper names
#: ``<TABLE>``, ``<DIV>``, etc.; today's layout also lives in sectioning elements,
#: lists (menus) and table cells (the layout grid of older sites).
LAYOUT_TAGS = frozenset(
    {
        "body", "div", "table", "td", "th", "section", "nav", "header", "footer", "aside", "article",
        "main", "ul", "ol", "dl", "menu", "form", "fieldset", "center", "address", "figure", "details",
        "dialog",
    }
)  # fmt: skip

_blake2b = hashlib.blake2b
_DF_BITS = 24
_DF_MAX = (1 << _DF_BITS) - 1


def segment_key(path: str, text: str) -> str:
    """The table key of a segment: a stable 64-bit hash of (DOM path, text), as hex."""
    return _blake2b((path + "\x00" + text).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


@dataclass(frozen=True, slots=True)
class Segmentation:
    """One page cut into blocks and text segments (step 1).

    Segment ``i`` has table key ``keys[i]``, text length ``lengths[i]``, lies
    in block ``blocks[i]`` (an index into ``block_elements``) and in visible line
    ``lines[i]`` (an index into the lines it was built from).
    ``block_parents[b]`` is the enclosing block of block ``b`` (-1 for the top).
    ``block_elements`` is empty when :func:`segment_lines` was asked for no elements.
    """

    keys: list[str]
    lengths: list[int]
    blocks: list[int]
    lines: list[int]
    block_elements: list[etree._Element]
    block_parents: list[int]


def segment_lines(lines: Sequence[Line], elements: bool = True, known: Any = None) -> Segmentation:
    """Page segmentation on the page's visible lines (:func:`~scrapy_detemplate._html.visible_lines`).

    Without ``elements``, ``block_elements`` is left empty: a caller that reads
    only the keys, lengths and lines (the combined method) does not pay for an
    element per block.  Compiled (``_site.pyx``) when it is built, with the same
    result; a page it hands back (a namespaced element on a path, text that is
    not UTF-8) and an install without it run :func:`_segment_lines_py`.
    ``known`` (:func:`segment_keys`) holds keys made for earlier pages: a
    template's segments are not hashed again on every page (the same keys).
    """
    if _compiled is not None:
        seg: Segmentation | None = _compiled.segment_lines(lines, Segmentation, elements, known)
        if seg is not None:
            return seg
    return _segment_lines_py(lines, elements)


def segment_keys() -> Any:
    """A bounded table of segment keys by the bytes they hash, for :func:`segment_lines`'
    ``known`` (``_site.SegmentKeys``), or ``None`` without the compiled module."""
    return _compiled.SegmentKeys() if _compiled is not None else None


def _segment_lines_py(lines: Sequence[Line], elements: bool = True) -> Segmentation:
    """The reference :func:`segment_lines`.

    Every slot of a line is one text node (``el.text`` or ``el.tail``), i.e. one
    text segment.  Its owner is the element the text is in (the parent, for a
    tail); its path and block are found by walking up from the owner, memoised,
    so the cost is linear in the elements that hold text, whatever the depth.
    """
    # element -> (path, block index); filled top-down after walking up.
    info: dict[etree._Element, tuple[str, int]] = {}
    block_elements: list[etree._Element] = []
    block_parents: list[int] = []
    keys: list[str] = []
    lengths: list[int] = []
    blocks: list[int] = []
    line_of: list[int] = []
    for line_index, line in enumerate(lines):
        for el, is_tail in line.slots:
            raw = el.tail if is_tail else el.text
            if not raw:
                continue
            text = " ".join(raw.split())
            if not text:
                continue
            owner = el.getparent() if is_tail else el
            if owner is None:
                continue
            known = info.get(owner)
            if known is None:
                # Usually the parent is known already: one step down, no climb.
                tag = owner.tag
                parent = owner.getparent() if tag != "body" else None
                above = info.get(parent) if parent is not None else None
                if above is not None and isinstance(tag, str):
                    block = above[1]
                    if tag in LAYOUT_TAGS:
                        block_elements.append(owner)
                        block_parents.append(block)
                        block = len(block_elements) - 1
                    known = info[owner] = (f"{above[0]}/{tag}", block)
                else:
                    known = _locate(owner, info, block_elements, block_parents)
            path, block = known
            keys.append(segment_key(path, text))
            lengths.append(len(text))
            blocks.append(block)
            line_of.append(line_index)
    return Segmentation(keys, lengths, blocks, line_of, block_elements if elements else [], block_parents)


def _locate(
    owner: etree._Element,
    info: dict[etree._Element, tuple[str, int]],
    block_elements: list[etree._Element],
    block_parents: list[int],
) -> tuple[str, int]:
    """Path and block of ``owner``: climb to a known ancestor (or the top), then fill down."""
    chain: list[etree._Element] = []
    el: etree._Element | None = owner
    while el is not None and el not in info:
        chain.append(el)
        if el.tag == "body":
            break
        el = el.getparent()
    path, block = info[el] if el is not None and el in info else ("", -1)
    for node in reversed(chain):
        tag = node.tag if isinstance(node.tag, str) else ""
        path = f"{path}/{tag}" if path else tag
        if tag in LAYOUT_TAGS or block < 0:
            block_elements.append(node)
            block_parents.append(block)
            block = len(block_elements) - 1
        info[node] = (path, block)
    return info[owner]


def segment(root: etree._Element | None) -> tuple[list[Line], Segmentation]:
    """Visible lines and segmentation of a parsed page."""
    lines = visible_lines(root)
    return lines, segment_lines(lines)


def living_time(df: int, tb: float, n: float, r: float) -> float:
    """Maximum living time of a segment with DF ``df`` (our reconstruction of the paper).

    t(df) = Tb*N / (1 + (N - 1) * exp(-r * (df - 1))); t(1) = Tb and t -> Tb*N.
    """
    return tb * n / (1.0 + (n - 1.0) * math.exp(-r * (df - 1)))


class LogisticExpiry:
    """T(df) = ceil(t(df)) pages, cached: built once per runner, shared by its tables.

    t(df) grows with DF towards its limit (Tb*N, or Tb when r = 0 or N = 1), so
    the spans are cached up to the DF where the ceiling reaches the limit's (at
    most ``cache`` of them; beyond that they are computed on demand).
    """

    def __init__(self, tb: int, n: float, r: float, cache: int = 100_000) -> None:
        if tb < 0 or n < 1 or r < 0:
            raise ValueError(f"bad expiry parameters tb={tb!r} n={n!r} r={r!r}")
        self.tb, self.n, self.r = tb, n, r
        self._cache = cache
        limit = tb * n if r > 0 else tb
        self._top = max(1, math.ceil(limit - 1e-9))
        self._spans: list[int] = [0]  # _spans[df] = T(df)
        self._saturated = False

    def span(self, df: int) -> int:
        """T(df) = ceil(t(df)): last seen on page L, deleted at the end of page L + T(df) unless seen there."""
        spans = self._spans
        if df < len(spans):
            return spans[df]
        if self._saturated:
            return self._top
        while len(spans) <= min(df, self._cache):
            # Guard ceil against float noise (t(1) must be Tb exactly).
            spans.append(max(1, math.ceil(living_time(len(spans), self.tb, self.n, self.r) - 1e-9)))
            if spans[-1] >= self._top:
                self._saturated = True
                return self._top
        if df < len(spans):
            return spans[df]
        return max(1, math.ceil(living_time(df, self.tb, self.n, self.r) - 1e-9))


class SegmentTable:
    """The text segment table of one site (steps 2 and 4), over a plain dict.

    ``entries`` maps a segment key to ``last_seen << 24 | min(df, 2**24 - 1)``
    and is updated in place, so the caller may keep it in a store as is.
    ``clock`` is the number of the last page processed (0 before the first).
    ``tb = 0`` turns expiry off: the table then grows without bound.  Pass a
    shared ``expiry`` to avoid recomputing T(df) for every table.
    """

    def __init__(
        self,
        entries: dict[str, int] | None = None,
        clock: int = 0,
        *,
        tb: int = 20,
        n: float = 50.0,
        r: float = 0.5,
        sweep_every: int = 16,
        expiry: LogisticExpiry | None = None,
    ) -> None:
        if sweep_every < 1:
            raise ValueError(f"bad sweep_every={sweep_every!r}")
        self.expiry = expiry if expiry is not None else LogisticExpiry(tb, n, r)
        self.entries: dict[str, int] = {} if entries is None else entries
        self.clock = clock
        self.sweep_every = sweep_every
        self.span = self.expiry.span

    @property
    def expires(self) -> bool:
        return self.expiry.tb > 0

    def alive(self, value: int, clock: int) -> bool:
        """Whether an entry lives on page ``clock`` (not yet past its living time)."""
        if not self.expires:
            return True
        return clock - (value >> _DF_BITS) <= self.span(value & _DF_MAX)

    def df(self, key: str) -> int:
        """DF of ``key`` as of the current clock (0 when absent or expired)."""
        value = self.entries.get(key)
        if value is None:
            return 0
        if self.expires and self.clock - (value >> _DF_BITS) >= self.span(value & _DF_MAX):
            return 0
        return value & _DF_MAX

    def expand(self, keys: Iterable[str]) -> dict[str, int]:
        """Step 2 for the next page: advance the clock, count each distinct key once.

        Returns the DF of every key of the page after counting it.  An entry that
        has outlived T(df) but not been swept yet counts as absent.
        """
        self.clock += 1
        if _compiled is not None and type(keys) is list and isinstance(self.entries, dict):
            dfs_: dict[str, int] = _compiled.expand(self.entries, keys, self.clock, self.expires, self.span)
            return dfs_
        return self._expand_py(keys)

    def expand_each(self, keys: list[str]) -> list[int]:
        """:meth:`expand`, the DF of each of ``keys`` in a list beside them (a key repeated on the
        page has the same DF each time): what the combined method reads, without a dict."""
        if _compiled is not None and type(keys) is list and isinstance(self.entries, dict):
            self.clock += 1
            each: list[int] = _compiled.expand_each(self.entries, keys, self.clock, self.expires, self.span)
            return each
        dfs = self.expand(keys)
        return [dfs[key] for key in keys]

    def _expand_py(self, keys: Iterable[str]) -> dict[str, int]:
        """The reference :meth:`expand`, after the clock is advanced."""
        clock = self.clock
        stamp = clock << _DF_BITS
        entries = self.entries
        expires = self.expires
        span = self.span
        dfs: dict[str, int] = {}
        for key in keys:
            if key in dfs:
                continue
            value = entries.get(key)
            df = 1
            if value is not None:
                old = value & _DF_MAX
                # Still in the table on page c iff c - L <= T(df): deletion happens at
                # the end of page L + T(df), after that page's expansion.
                if not expires or clock - (value >> _DF_BITS) <= span(old):
                    df = min(old + 1, _DF_MAX)
            entries[key] = stamp | df
            dfs[key] = df
        return dfs

    def shrink(self) -> int:
        """Step 4: every ``sweep_every`` pages delete the entries with c - L >= T(df).

        Returns the number of entries deleted.  Between sweeps expired entries stay
        in memory but :meth:`expand` and :meth:`df` treat them as absent.
        """
        if not self.expires or self.clock % self.sweep_every:
            return 0
        return self.sweep()

    def sweep(self) -> int:
        """Delete every entry past its living time at the current clock (compiled when built:
        a sweep of a documentation site's table costs several parses in Python)."""
        if _compiled is not None and type(self.entries) is dict:
            swept: int = _compiled.sweep(self.entries, self.clock, self.span)
            return swept
        return self._sweep_py()

    def _sweep_py(self) -> int:
        """The reference :meth:`sweep`."""
        clock = self.clock
        span = self.span
        dead = [k for k, v in self.entries.items() if clock - (v >> _DF_BITS) >= span(v & _DF_MAX)]
        for key in dead:
            del self.entries[key]
        return len(dead)

    def live_entries(self) -> dict[str, tuple[int, int]]:
        """The table as the paper defines it: key -> (DF, last seen), expired entries left out."""
        out: dict[str, tuple[int, int]] = {}
        for key, value in self.entries.items():
            last, df = value >> _DF_BITS, value & _DF_MAX
            if not self.expires or self.clock - last < self.span(df):
                out[key] = (df, last)
        return out


def template_blocks(
    seg: Segmentation, dfs: dict[str, int], df_threshold: int = 5, block_ratio: float = 0.7
) -> list[bool]:
    """Step 3: which blocks are template.

    template ratio(block) = sum(len(s) for template s) / sum(len(s) for all s),
    over the block's own segments; a segment is template when DF >= df_threshold;
    a block is template when its ratio > block_ratio.
    """
    total = [0] * len(seg.block_elements)
    templ = [0] * len(seg.block_elements)
    for key, length, block in zip(seg.keys, seg.lengths, seg.blocks, strict=True):
        total[block] += length
        if dfs.get(key, 0) >= df_threshold:
            templ[block] += length
    return [t > 0 and tm / t > block_ratio for t, tm in zip(total, templ, strict=True)]


def template_lines(seg: Segmentation, is_template: Sequence[bool]) -> set[int]:
    """Indexes of the lines whose every segment lies in a template block."""
    bad: set[int] = set()
    good: set[int] = set()
    for block, line in zip(seg.blocks, seg.lines, strict=True):
        (bad if is_template[block] else good).add(line)
    return bad - good


def outermost_template_elements(seg: Segmentation, is_template: Sequence[bool]) -> list[etree._Element]:
    """Template blocks whose every text-bearing sub-block is template too, outermost only.

    These can be dropped whole (with their images and empty markup); the body
    is never one of them.
    """
    count = len(seg.block_elements)
    parents = seg.block_parents
    has_text = [False] * count
    for block in seg.blocks:
        has_text[block] = True
    # A non-template block with text spoils every enclosing block.
    spoiled = [False] * count
    for block in range(count):
        if has_text[block] and not is_template[block]:
            parent = parents[block]
            while parent >= 0 and not spoiled[parent]:
                spoiled[parent] = True
                parent = parents[parent]
    pure = [t and not s for t, s in zip(is_template, spoiled, strict=True)]
    # Blocks are numbered top-down (a parent before its children), so one pass
    # finds the blocks inside a pure block.
    covered = [False] * count
    out: list[etree._Element] = []
    for block in range(count):
        parent = parents[block]
        covered[block] = parent >= 0 and (covered[parent] or (pure[parent] and parents[parent] >= 0))
        if pure[block] and parent >= 0 and not covered[block]:
            out.append(seg.block_elements[block])
    return out


def pack_table(entries: dict[str, int]) -> bytes:
    """The table as compact bytes: 8-byte keys, then 4-byte DFs, then 4-byte last-seen pages.

    This is what a store would need to hold (16 bytes an entry); the memory figures
    count it.
    """
    keys = array("Q", (int(k, 16) for k in entries))
    dfs = array("I", (min(v & _DF_MAX, 0xFFFFFFFF) for v in entries.values()))
    last = array("I", ((v >> _DF_BITS) & 0xFFFFFFFF for v in entries.values()))
    return keys.tobytes() + dfs.tobytes() + last.tobytes()


def unpack_table(data: bytes) -> dict[str, int]:
    """Inverse of :func:`pack_table`."""
    count = len(data) // 16
    keys, dfs, last = array("Q"), array("I"), array("I")
    keys.frombytes(data[: 8 * count])
    dfs.frombytes(data[8 * count : 12 * count])
    last.frombytes(data[12 * count : 16 * count])
    return {f"{k:016x}": (l_ << _DF_BITS) | d for k, d, l_ in zip(keys, dfs, last, strict=True)}
