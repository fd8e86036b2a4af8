"""Tag path sequence (TPS): the main region of a single page.

R. P. Velloso and C. F. Dorneles, "Automatic Web Page Segmentation and Noise
Removal for Structured Extraction using Tag Path Sequences", Journal of
Information and Data Management 4(1), 2013 (``shared/papers/velloso2013-tag-path-sequence.txt``).

The page's ``<body>`` is turned into a *tag path sequence*: one symbol per
element in depth-first order, equal symbols for equal tag paths (tags plus the
``class`` and ``style`` attributes, Definition 3.3).  ``searchRegion`` then looks
for a position where the sequence splits into two parts with disjoint alphabets
(Definition 3.7), ignoring low-frequency symbols (``filterAlphabet``: structural
dividers such as ``body/div`` occur all along the page), keeps the larger part if
it is larger by a margin, and recurses into it.  What survives is the main region
(assumption 2: the main region is the largest one); ``pruneDOMTree`` lists the
subtrees that hold none of it.  Algorithm 6 keeps the complement when the region
turns out not to be the content; the paper leaves that test open, and
:func:`isContent` is the page-level rule used here.

Two readings and one extension, each switchable by the caller:

* the margin test of Algorithm 3, line 30, reads ``(n - 2i)/n > 0.20``, which
  only ever accepts a short prefix (so lines 40-43 never keep ``TPS[1..i]``);
  ``two_sided`` uses ``|n - 2i|/n``, as the text ("at least 20% larger than the
  rest") and lines 40-43 suggest;
* ``weights`` makes each split keep the part that carries more prose instead of
  the longer part (the content test applied at every split, not in the paper);
* :func:`segmentRegions` splits both parts until no part splits, and
  :func:`isContentRegion` picks the content regions: the paper's proposal
  (Section 6.3) for content spread over several regions, with our rule.

Positions are 0-based (the paper's ``TPS[1..n]`` is ``symbols[0:n]``); symbol
codes start at 1 as in the paper's Figure 2.  Everything is iterative: pages can
be hundreds of elements deep.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from lxml import etree

#: The paper's margin: a region is reported only if it is 20% larger than the rest.
DEFAULT_MARGIN = 0.20


@dataclass(slots=True)
class TagPathSequence:
    """The TPS of one ``<body>`` and where each element sits in it.

    ``symbols[i]`` is the tag path code of ``nodes[i]``; ``ends[i]`` is one past
    the last position of ``nodes[i]``'s subtree (a subtree is a contiguous run of
    positions in depth-first order); ``parents[i]`` is the parent's position (-1
    for the body).  ``labels[c - 1]`` and ``code_parents[c - 1]`` describe code
    ``c``: the last step of its tag path and the code of the path above it
    (0 for none), so :meth:`tag_path` can spell any path without storing them all.
    """

    symbols: list[int] = field(default_factory=list)
    nodes: list[etree._Element] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    anchored: list[bool] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    code_parents: list[int] = field(default_factory=list)
    # Element -> its position; any node (comments too) -> last position at or before its end.
    index: dict[etree._Element, int] = field(default_factory=dict)
    last_before_tail: dict[etree._Element, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.symbols)

    def tag_path(self, code: int) -> str:
        """The tag path a code stands for, e.g. ``"body/table/tr/td"``."""
        steps: list[str] = []
        while code:
            steps.append(self.labels[code - 1])
            code = self.code_parents[code - 1]
        return "/".join(reversed(steps))

    def locate(self, el: etree._Element, is_tail: bool) -> tuple[int, bool] | None:
        """Where a piece of text (``el.text`` or ``el.tail``) sits in the sequence.

        Returns the position of the element that precedes the text in document
        order (the text belongs with it) and whether the text is link text, or
        ``None`` when the text is not inside the body's sequence.
        """
        if is_tail:
            position = self.last_before_tail.get(el)
            parent = el.getparent()
            owner = self.index.get(parent) if parent is not None else None
        else:
            position = owner = self.index.get(el)
        if position is None or position < 0:
            return None
        return position, bool(owner is not None and self.anchored[owner])


def style_of(el: etree._Element) -> str:
    """One step of a tag path: the tag and its style, i.e. the ``class`` and
    ``style`` attributes (white space folded), e.g. ``td.a.b{color:red}``."""
    out = el.tag if isinstance(el.tag, str) else "?"
    cls = el.get("class")
    if cls and not cls.isspace():
        out += "." + ".".join(cls.split())
    style = el.get("style")
    if style and not style.isspace():
        out += "{" + "".join(style.split()) + "}"
    return out


def convertTreeToSequence(body: etree._Element, max_nodes: int | None = None) -> TagPathSequence | None:
    """Algorithm 2: the tag path sequence of ``body``, depth first.

    ``tagPath <- concatenate(tagPath, "/", node.tag, node.style)``; a new path
    gets the next code (``tagPathMap.size``).  A path is keyed by (code of the
    parent's path, this step), which is the same equality as comparing the full
    strings but costs O(1) per node.  Comments and processing instructions are
    not elements and get no symbol.  Returns ``None`` when the body has more than
    ``max_nodes`` elements.
    """
    tps = TagPathSequence()
    tag_path_map: dict[tuple[int, str], int] = {}
    symbols, nodes, ends, parents, anchored = tps.symbols, tps.nodes, tps.ends, tps.parents, tps.anchored
    index, last_before_tail = tps.index, tps.last_before_tail
    # The path from the body down to the current element: positions and codes.
    open_positions: list[int] = []
    open_codes: list[int] = [0]
    # lxml's own walk (start/end events) in C: no Python recursion, no generators.
    for event, el in etree.iterwalk(body, events=("start", "end", "comment", "pi")):
        if event == "start":
            if max_nodes is not None and len(symbols) >= max_nodes:
                return None
            # tagPath <- concatenate(tagPath, "/", node.tag, node.style)
            step = style_of(el)
            key = (open_codes[-1], step)
            code = tag_path_map.get(key)
            if code is None:
                code = len(tag_path_map) + 1  # tagPathMap.size
                tag_path_map[key] = code
                tps.labels.append(step)
                tps.code_parents.append(key[0])
            position = len(symbols)
            index[el] = position
            symbols.append(code)
            nodes.append(el)
            ends.append(position + 1)
            parents.append(open_positions[-1] if open_positions else -1)
            anchored.append(el.tag == "a" or bool(open_positions and anchored[open_positions[-1]]))
            open_positions.append(position)
            open_codes.append(code)
        elif event == "end":
            position = open_positions.pop()
            open_codes.pop()
            ends[position] = len(symbols)
            last_before_tail[el] = len(symbols) - 1
        else:
            # Comment or processing instruction: no symbol, only its tail matters.
            last_before_tail[el] = len(symbols) - 1
    return tps


def filterAlphabet(alphabet: Sequence[int], symbolCount: dict[int, int], threshold: int) -> set[int]:
    """Algorithm 4: the symbols whose frequency is at least ``threshold``."""
    return {symbol for symbol in alphabet if symbolCount[symbol] >= threshold}


@dataclass(slots=True)
class _Window:
    """``sequence[start:end]`` with its tag path frequency set kept up to date.

    ``count`` is FS (Definition 3.5), ``last`` the last position of each symbol,
    ``hist`` how many symbols have each frequency (its keys are FT, Definition
    3.6).  Dropping a part of the window costs the part's length, so splitting
    one element off at a time does not recount the whole sequence.
    """

    sequence: Sequence[int]
    start: int
    end: int
    count: dict[int, int]
    last: dict[int, int]
    hist: dict[int, int]

    @classmethod
    def of(cls, sequence: Sequence[int], start: int, end: int) -> _Window:
        window = sequence[start:end]
        count = dict(Counter(window))
        last = dict(zip(window, range(start, end), strict=True))  # dict() keeps a repeated key's last value
        return cls(sequence, start, end, count, last, dict(Counter(count.values())))

    def drop(self, lo: int, hi: int) -> set[int]:
        """Forget positions ``[lo, hi)``; returns the symbols removed that still occur."""
        count, hist, seq = self.count, self.hist, self.sequence
        seen: set[int] = set()
        for p in range(lo, hi):
            symbol = seq[p]
            c = count[symbol]
            hist[c] -= 1
            if not hist[c]:
                del hist[c]
            if c == 1:
                del count[symbol]
                del self.last[symbol]
                seen.discard(symbol)
            else:
                count[symbol] = c - 1
                hist[c - 1] = hist.get(c - 1, 0) + 1
                seen.add(symbol)
        return seen

    def keep_suffix(self, i: int) -> None:
        self.drop(self.start, self.start + i)
        self.start += i  # last occurrences of the remaining symbols are unchanged

    def keep_prefix(self, i: int) -> None:
        stale = self.drop(self.start + i, self.end)
        self.end = self.start + i
        p = self.end - 1
        while stale:  # each stale symbol still occurs in the prefix: find its new last position
            symbol = self.sequence[p]
            if symbol in stale:
                self.last[symbol] = p
                stale.discard(symbol)
            p -= 1


def findSplit(
    sequence: Sequence[int], start: int, end: int, margin: float = DEFAULT_MARGIN, two_sided: bool = True
) -> int | None:
    """One pass of Algorithm 3 over ``sequence[start:end]``: the length ``i`` of the
    prefix to split off, or ``None`` when no region is found.

    For each frequency threshold (Definition 3.6, ascending) the filtered
    sequence is scanned for the first position where every symbol seen so far
    has had its last occurrence: there ``Σ_prefix ∩ Σ_suffix = ∅`` (Definition
    3.7).  That first split is reported if ``(n - 2i) / n > margin`` (the paper's
    line 30; with ``two_sided`` the absolute value, so that a large prefix can be
    kept too, as lines 40-43 intend), else the next threshold is tried.
    """
    return _find_split(_Window.of(sequence, start, end), margin, two_sided, None)[0]


def _find_split(w: _Window, margin: float, two_sided: bool, budget: int | None) -> tuple[int | None, int]:
    """:func:`findSplit` on a window, also returning the work done (positions
    visited); gives up (``None``) once more than ``budget`` positions were visited."""
    seq, start, end, count, last = w.sequence, w.start, w.end, w.count, w.last
    n = end - start
    if n < 2:
        return None, 0
    work = 0
    # |filterAlphabet(alphabet, symbolCount, threshold)|, from the frequency histogram.
    size = len(count)
    for threshold in sorted(w.hist):
        if size < 2:
            break
        # The last filtered position: past it currentAlphabet is empty.
        final = end - 1
        while count[seq[final]] < threshold:
            final -= 1
        work += end - final
        reach = -1  # the furthest last occurrence among the filtered symbols seen so far
        for j in range(start, end):
            symbol = seq[j]
            if count[symbol] < threshold:
                continue
            if last[symbol] > reach:
                reach = last[symbol]
            if reach == j:
                work += j + 1 - start
                # Every symbol of the prefix is exhausted: currentAlphabet ∩ regionAlphabet = ∅.
                if j != final:  # currentAlphabet ≠ ∅
                    i = j + 1 - start
                    share = (n - 2 * i) / n
                    if (abs(share) if two_sided else share) > margin:
                        return i, work
                break
        size -= w.hist[threshold]
        if budget is not None and work > budget:
            return None, work
    return None, work


def searchRegion(
    sequence: Sequence[int],
    margin: float = DEFAULT_MARGIN,
    two_sided: bool = True,
    weights: Sequence[float] | None = None,
    max_work: int | None = None,
) -> tuple[int, int]:
    """Algorithm 3: the main region of the TPS, as positions ``[start, end)``.

    The last of :func:`searchRegions`.
    """
    return searchRegions(sequence, margin, two_sided, weights, max_work)[-1]


def searchRegions(
    sequence: Sequence[int],
    margin: float = DEFAULT_MARGIN,
    two_sided: bool = True,
    weights: Sequence[float] | None = None,
    max_work: int | None = None,
) -> list[tuple[int, int]]:
    """Algorithm 3 with its recursion unrolled: every region it passes through,
    from the whole sequence ``(0, n)`` to the main region, as ``[start, end)``.

    Split, keep the larger part (``i < n/2``: keep ``TPS[i+1..n]``, else
    ``TPS[1..i]``), and search again inside it until no split is found.  The
    paper's tail recursion is a loop here.

    With ``weights`` (one number per position, e.g. the characters of prose the
    element carries) the part kept at each split is the heavier one instead of
    the longer one: the content test of Algorithm 6 applied at every split
    rather than once at the end (an extension, not in the paper).

    The paper's worst case is ``O(n² f)``.  ``max_work`` bounds the positions
    scanned over all passes (default ``64 n + 50,000``); when it runs out, the
    region found so far is returned.
    """
    w = _Window.of(sequence, 0, len(sequence))
    regions = [(0, len(sequence))]
    prefix = [0.0, *accumulate(weights)] if weights is not None else None
    budget = 64 * len(sequence) + 50_000 if max_work is None else max_work
    while True:
        i, work = _find_split(w, margin, two_sided, budget)
        budget -= work
        if i is None:
            break
        n = w.end - w.start
        if prefix is None:
            keep_suffix = i < n / 2
        else:
            head = prefix[w.start + i] - prefix[w.start]
            tail = prefix[w.end] - prefix[w.start + i]
            keep_suffix = tail > head or (tail == head and i < n / 2)
        if keep_suffix:
            w.keep_suffix(i)
        else:
            w.keep_prefix(i)
        regions.append((w.start, w.end))
        if budget <= 0:
            break
    return regions


def segmentRegions(sequence: Sequence[int], max_work: int | None = None) -> list[tuple[int, int]]:
    """The page split into all its regions (Section 6.3's proposal for pages whose
    content is spread over several regions), as ``[start, end)`` in order.

    Algorithm 3's split applied to *both* parts, until no part can be split.
    Both sides are kept, so the margin that decides which one is the main region
    has no role: every cut with disjoint alphabets is taken (first threshold that
    has one).  The larger part shrinks in place; only the smaller one is counted
    afresh, so the total work stays near ``n log n`` for balanced cuts and
    ``max_work`` (default ``64 n + 50,000``) bounds the rest.
    """
    leaves: list[tuple[int, int]] = []
    budget = 64 * len(sequence) + 50_000 if max_work is None else max_work
    stack = [_Window.of(sequence, 0, len(sequence))]
    while stack:
        w = stack.pop()
        i, work = _find_split(w, -1.0, True, budget) if budget > 0 else (None, 0)
        budget -= work
        if i is None:
            leaves.append((w.start, w.end))
            continue
        if i < (w.end - w.start) / 2:
            small = _Window.of(sequence, w.start, w.start + i)
            w.keep_suffix(i)
            stack += [w, small]  # the prefix is popped first: leaves come out in order
        else:
            small = _Window.of(sequence, w.start + i, w.end)
            w.keep_prefix(i)
            stack += [small, w]
    return leaves


def isContentRegion(prose: int, link_text: int, page_prose: int, min_share: float) -> bool:
    """Which regions of :func:`segmentRegions` are content ("a semantic approach
    used to combine the regions", Section 6.3; the rule is ours): those with at
    least as much prose as link text, and at least ``min_share`` of the page's
    prose (characters not inside an ``<a>``)."""
    return prose > 0 and prose >= link_text and prose >= min_share * page_prose


def retained_positions(length: int, region: tuple[int, int], complement: bool = False) -> list[bool]:
    """Which positions stay: the region, or with ``complement`` everything else (Algorithm 6, line 7)."""
    start, end = region
    inside = [start <= i < end for i in range(length)]
    return [not x for x in inside] if complement else inside


def pruneDOMTree(tps: TagPathSequence, retained: Sequence[bool]) -> list[etree._Element]:
    """Algorithm 5, as a list instead of in-place removal: the maximal subtrees
    that hold no retained element.

    The paper removes a node when it is not in the sequence and (after pruning)
    has no children; that removes exactly the subtrees without a retained node
    and keeps every ancestor of one, so the region's structure stays.
    """
    # prefix[i] = retained positions before i; a subtree [p, ends[p]) holds one iff the sum grows.
    prefix = [0, *accumulate(int(x) for x in retained)]
    out: list[etree._Element] = []
    for p, e in enumerate(tps.ends):
        if prefix[e] - prefix[p]:
            continue
        parent = tps.parents[p]
        if parent >= 0 and prefix[tps.ends[parent]] - prefix[parent]:
            out.append(tps.nodes[p])
    return out


def isContent(region_text: int, region_link_text: int, rest_text: int, rest_link_text: int) -> bool:
    """Algorithm 6, line 6: is the retained region the content?

    The paper leaves the test open ("a semantic technique").  This rule uses only
    the page: content is where the prose is, so the region is the content unless
    the rest of the page holds more text outside links (characters not inside an
    ``<a>``) than the region does.  Menus and link lists are all link text, so a
    region made of them loses to an article, however many nodes it has.
    """
    return region_text - region_link_text >= rest_text - rest_link_text
