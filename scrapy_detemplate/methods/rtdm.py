"""RTDM-TD template detection: learn a site's template subtree from a few pages.

Vieira, da Silva, Pinto, de Moura, Cavalcanti and Freire, "A Fast and Robust
Method for Web Page Template Detection and Removal", CIKM 2006.

A page is a labeled ordered rooted tree (its ``<body>``).  Two pages are
compared with a *restricted top-down mapping* (Definitions 1, 3, 4): mapped
pairs keep order and ancestry, every mapped pair's parents are mapped, and a
pair with different labels has no mapped descendants.  Its cost is
(Definition 2) ``c = |S| p + |I| q + |D| r`` (replacements, insertions,
deletions).  :func:`rtdm_td` finds a minimum-cost mapping with the paper's
dynamic programme (Figure 3) and keeps the backtracking records
``<op, src, cost, next>``; :func:`retrieve_template` (Figure 4) walks them back
and collects the nodes of ``T1`` that are mapped to a node with the same label;
:func:`extract_subtree` (Figure 6) returns the smallest subtree of ``T1`` that
holds them (they are closed under parent, so it is exactly those nodes), and
:class:`FindTemplate` (Figure 5) folds pages into it one at a time, keeping the
current template when :func:`match` finds it in a new page.

Removal, which the paper leaves out "due to its simplicity", is
:func:`find`: a top-down walk that aligns the template's children with the
page's children by label (an LCS per matched node pair, bit-parallel), so it
touches only the page nodes under located nodes; where the page's children are
the template's, it proves so by tag, raw id/class and stripped text against
the template's :class:`Compiled` form, without building labels.  Located text
leaves are template text; located subtrees with nothing unlocated below them
are template elements; everything else, and every ancestor of it, stays.
:func:`_locate_reference` is the same walk written plainly.  On later pages
of a site, a subtree with the same text and shape as one found whole before
under the same template node is taken whole without a walk (:class:`Recall`).

Labels (why): an element is ``tag#id.class`` with digit runs folded to ``0``
(ids such as ``post-1234`` name the same template slot on every page; the
tag alone would let any ``div`` stand for any other).  Text is part of the
tree, as the paper's term-based evaluation needs: each non-blank ``text`` or
``tail`` is a leaf labeled by its white-space-folded text, so identical menu
labels and footer lines map (and are template) while differing article text
is replaced (and is not).  Script, style and other invisible elements are left
out (their tails are kept), exactly like the visible text the metrics score.

Deviations, all to make the figure's pseudo-code exact: line 30 of Figure 3
adds the replacement to ``M[i-1, j-1]`` (the figure overwrites it), a replaced
pair always pays for deleting and inserting both subtrees' descendants (the
figure charges them only when one side is a leaf), costs are Definition 2's,
and ties prefer identical/no-op, then replace, then delete, then insert, so a
tie never drops template nodes.  ``retrieveTemplate`` moves ``i`` on delete and
``j`` on insert (Figure 4 swaps them).  The cost of a pair of subtrees only
depends on their identical-subtree classes, so it is memoised per class pair.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lxml import etree
from rapidfuzz.distance import LCSseq

from scrapy_detemplate import _compiled
from scrapy_detemplate._html import SKIP_TAGS

_DIGITS = re.compile(r"\d+")

#: Label prefix of text leaves (a tag name never starts with it).
TEXT = "\x00"
#: Texts longer than this are labeled by a prefix and a digest of the whole.
MAX_TEXT_LABEL = 120
#: :func:`find` recalls page subtrees found whole with at least this many
#: located nodes (a smaller one is walked as fast as it is fingerprinted) ...
RECALL_MIN_NODES = 8
#: ... and keeps this many fingerprints per template node (the latest).
RECALL_PER_NODE = 4

# Operations of a backtracking record (Figure 3, lines 41-44).
DELETE, INSERT, REPLACE, IDENT, NOOP = 1, 2, 3, 4, 5


class TooLarge(Exception):
    """A tree or a mapping exceeds its bound (nodes or DP cells)."""


# -- labeled trees -------------------------------------------------------------


def text_label(text: str) -> str:
    """The label of a text leaf: folded text, long ones shortened with a digest."""
    if len(text) > MAX_TEXT_LABEL:
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        text = f"{text[:MAX_TEXT_LABEL]}~{digest}"
    return TEXT + text


def element_label(el: etree._Element) -> str:
    """``tag#id.class`` with digit runs folded (ids like ``post-1234`` are one slot)."""
    key = (el.tag, el.get("id"), el.get("class"))
    label = _LABELS.get(key)
    if label is None:
        if len(_LABELS) >= _LABELS_KEPT:
            _LABELS.clear()
        label = _LABELS[key] = _element_label(*key)
    return label


def _element_label(tag: object, ident: str | None, classes: str | None) -> str:
    label = str(tag)
    if ident:
        label += "#" + _DIGITS.sub("0", ident.strip())
    if classes:
        label += "." + ".".join(_DIGITS.sub("0", c) for c in classes.split())
    return label


#: Labels of the raw ``(tag, id, class)`` values seen last: a page repeats a
#: few dozen of them, and folding digits is the costly part of a label.
_LABELS: dict[tuple[object, str | None, str | None], str] = {}
_LABELS_KEPT = 4096


def root_label(el: etree._Element) -> str:
    """The root (``<body>``) is labeled by its tag only: its class often names the page kind."""
    return str(el.tag)


def is_text_label(label: str) -> bool:
    return label.startswith(TEXT)


#: A child of an element: ``(label, element, is_tail)``; ``is_tail`` is None for
#: an element child, else the text leaf lives in ``element.text``/``.tail``.
Item = tuple[str, etree._Element, bool | None]


#: The label :func:`child_items` gives, when asked to, an item no template child can match.
_NO_MATCH = "\x01"


def child_items(el: etree._Element, tags: frozenset[str] | None = None, texts: bool = True) -> list[Item]:
    """The children of ``el`` as tree nodes: its text, its visible elements and their tails.

    For an alignment against given template children (:func:`find`): with
    ``tags``, an element whose tag is not among them, and with ``texts`` false,
    every text, gets the label :data:`_NO_MATCH` rather than its own.  It could
    not be matched either way, and the alignment, which reads only which labels
    are equal, is the same; the label is just not built.
    """
    items: list[Item] = []
    text = el.text
    if text and not text.isspace():
        items.append((text_label(" ".join(text.split())) if texts else _NO_MATCH, el, False))
    for child in el:
        tag = child.tag
        if isinstance(tag, str) and tag not in SKIP_TAGS:
            items.append((element_label(child) if tags is None or tag in tags else _NO_MATCH, child, None))
        tail = child.tail
        if tail and not tail.isspace():
            items.append((text_label(" ".join(tail.split())) if texts else _NO_MATCH, child, True))
    return items


@dataclass(slots=True)
class LabelTree:
    """A labeled ordered tree in preorder: node 0 is the root.

    ``refs`` (page trees only) tell where each node lives in the lxml tree:
    ``(element, None)`` for an element, ``(element, is_tail)`` for a text leaf.
    """

    labels: list[str]
    parent: list[int]
    children: list[list[int]] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    refs: list[tuple[etree._Element, bool | None]] | None = None
    _compiled: Compiled | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.labels)
        if not self.children:
            self.children = [[] for _ in range(n)]
            for node in range(1, n):
                self.children[self.parent[node]].append(node)
        if not self.size:
            size = [1] * n
            for node in range(n - 1, 0, -1):  # reversed preorder: children before parents
                size[self.parent[node]] += size[node]
            self.size = size

    def __len__(self) -> int:
        return len(self.labels)

    def as_data(self) -> dict[str, list[str] | list[int]]:
        """Plain data for a store: ``{"labels": [...], "parent": [...]}``."""
        return {"labels": list(self.labels), "parent": list(self.parent)}

    @classmethod
    def from_data(cls, data: object) -> LabelTree | None:
        """Rebuild from :meth:`as_data`; ``None`` when the data is not a valid tree."""
        if not isinstance(data, dict):
            return None
        labels, parent = data.get("labels"), data.get("parent")
        if not isinstance(labels, list) or not isinstance(parent, list) or len(labels) != len(parent):
            return None
        if not labels or parent[0] != -1 or not isinstance(labels[0], str):
            return None
        for node in range(1, len(parent)):
            p = parent[node]
            if not isinstance(p, int) or not 0 <= p < node or not isinstance(labels[node], str):
                return None
        return cls([str(x) for x in labels], [int(p) for p in parent])

    def subtree(self, node: int) -> range:
        """Preorder indexes of the subtree rooted at ``node``."""
        return range(node, node + self.size[node])

    def compiled(self) -> Compiled:
        """The tree as the page walk reads it, built on first use and kept
        (a template is not modified once built)."""
        if self._compiled is None:
            self._compiled = Compiled.of(self)
        return self._compiled


def page_tree(body: etree._Element, max_nodes: int | None = None) -> LabelTree:
    """The labeled tree of a page's ``<body>`` (iterative; raises :class:`TooLarge`)."""
    labels = [root_label(body)]
    parent = [-1]
    refs: list[tuple[etree._Element, bool | None]] = [(body, None)]
    stack: list[tuple[int, list[Item], int]] = [(0, child_items(body), 0)]
    while stack:
        node, items, k = stack.pop()
        if k >= len(items):
            continue
        stack.append((node, items, k + 1))
        label, el, is_tail = items[k]
        index = len(labels)
        labels.append(label)
        parent.append(node)
        refs.append((el, is_tail))
        if max_nodes is not None and len(labels) > max_nodes:
            raise TooLarge(f"more than {max_nodes} nodes")
        if is_tail is None:
            stack.append((index, child_items(el), 0))
    return LabelTree(labels, parent, refs=refs)


def subtree_classes(tree: LabelTree, intern: dict[tuple[object, ...], int]) -> list[int]:
    """Classes of identical subtrees (the paper's pre-processing for ``ident``).

    Two subtrees get the same class iff they have the same label and their
    children have the same classes in order; ``intern`` is shared by both
    trees of a comparison.  Linear in the tree.
    """
    n = len(tree)
    cls = [0] * n
    for node in range(n - 1, -1, -1):
        key = (tree.labels[node], *(cls[c] for c in tree.children[node]))
        cls[node] = intern.setdefault(key, len(intern))
    return cls


# -- RTDM-TD (Figure 3) ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Costs:
    """Definition 2: replacement ``p``, insertion ``q``, removal ``r``."""

    replace: float = 1.0
    insert: float = 1.0
    delete: float = 1.0


@dataclass(slots=True)
class Record:
    """The backtracking matrix ``B`` of one pair of mapped nodes.

    ``op[i * (n + 1) + j]`` is the operation of cell ``(i, j)``; ``src`` is the
    ``i``-th child of the ``T1`` node, ``cost`` is ``M[i, j]`` and ``next`` is
    the record of the child pair (looked up by class pair) for ``NOOP``.
    """

    m: int
    n: int
    op: bytearray
    cost: list[float]

    @property
    def total(self) -> float:
        return self.cost[-1]


@dataclass(slots=True)
class Mapping:
    """What :func:`rtdm_td` returns: the cost and the records to backtrack."""

    t1: LabelTree
    t2: LabelTree
    cost: float
    root_op: int  # NOOP, REPLACE or 0 (roots unmapped)
    records: dict[tuple[int, int], Record]
    cls1: list[int]
    cls2: list[int]
    cells: int
    work: int = 0  # cells + RECORD_WORK per matrix: what max_cells bounds


def rtdm_td(t1: LabelTree, t2: LabelTree, costs: Costs = Costs(), max_cells: int | None = None) -> Mapping:
    """Minimum-cost restricted top-down mapping between ``t1`` and ``t2``.

    For the children ``A_1..A_m`` of a mapped pair and ``B_1..B_n`` of its
    partner (string edit distance over subtrees)::

        M[i, 0] = M[i-1, 0] + r |A_i|                       (line 7)
        M[0, j] = M[0, j-1] + q |B_j|                       (line 11)
        D = M[i-1, j] + r |A_i|                             (lines 18-19)
        I = M[i, j-1] + q |B_j|                             (lines 20-21)
        S = M[i-1, j-1] + 0            if ident(A_i, B_j)   (line 25)
          = M[i-1, j-1] + RTDM-TD(A_i, B_j)  if same label  (lines 27-28, "no_op")
          = M[i-1, j-1] + p + r(|A_i|-1) + q(|B_j|-1)       (lines 30-34, "update")
        M[i, j] = min(D, I, S)                              (line 37)

    The recursion runs on an explicit stack (pages can be 250 deep); the
    result for a pair depends only on the pair's identical-subtree classes, so
    it is computed once per class pair.  Raises :class:`TooLarge`, before any
    matrix is filled, when the work (DP cells plus :data:`RECORD_WORK` per
    matrix) would exceed ``max_cells``.
    """
    p, q, r = costs.replace, costs.insert, costs.delete
    intern: dict[tuple[object, ...], int] = {}
    cls1, cls2 = subtree_classes(t1, intern), subtree_classes(t2, intern)
    lab1, lab2 = t1.labels, t2.labels
    ch1, ch2, size1, size2 = t1.children, t2.children, t1.size, t2.size
    records: dict[tuple[int, int], Record] = {}
    n1, n2 = len(t1), len(t2)
    if not n1 or not n2:
        return Mapping(t1, t2, r * n1 + q * n2, 0, records, cls1, cls2, 0)
    if lab1[0] != lab2[0]:
        replaced = p + r * (n1 - 1) + q * (n2 - 1)
        unmapped = r * n1 + q * n2
        op = REPLACE if replaced <= unmapped else 0
        return Mapping(t1, t2, min(replaced, unmapped), op, records, cls1, cls2, 0)
    if cls1[0] == cls2[0]:
        return Mapping(t1, t2, 0.0, IDENT, records, cls1, cls2, 0)

    # First the class pairs the DP needs, children before parents, and their work,
    # so that a pair over the bound is refused before a single matrix is filled.
    # A pair's work is counted when it is first pushed, so a refusal comes as soon
    # as the pairs found so far pass the bound, and costs no more than the bound.
    cells = (len(ch1[0]) + 1) * (len(ch2[0]) + 1)
    work = cells + RECORD_WORK
    if max_cells is not None and work > max_cells:
        raise TooLarge(f"more than {max_cells} DP cells (a matrix counting {RECORD_WORK} more)")
    counted: set[tuple[int, int]] = {(cls1[0], cls2[0])}
    expanded: set[tuple[int, int]] = set()
    order: list[tuple[int, int]] = []
    stack: list[tuple[int, int, bool]] = [(0, 0, False)]
    while stack:
        x, y, done = stack.pop()
        if done:
            order.append((x, y))
            continue
        key = (cls1[x], cls2[y])
        if key in expanded:
            continue
        expanded.add(key)
        stack.append((x, y, True))  # filled after every pair pushed below (a pair's subtrees are smaller)
        by_label: dict[str, list[int]] = {}
        for b in ch2[y]:
            by_label.setdefault(lab2[b], []).append(b)
        for a in ch1[x]:
            ca = cls1[a]
            for b in by_label.get(lab1[a], ()):
                pair = (ca, cls2[b])
                if ca == pair[1] or pair in expanded:
                    continue
                if pair not in counted:
                    counted.add(pair)
                    size = (len(ch1[a]) + 1) * (len(ch2[b]) + 1)
                    cells += size
                    work += size + RECORD_WORK
                    if max_cells is not None and work > max_cells:
                        raise TooLarge(f"more than {max_cells} DP cells (a matrix counting {RECORD_WORK} more)")
                stack.append((a, b, False))  # again if queued but not expanded: it must be filled before x, y
    for x, y in order:
        records[(cls1[x], cls2[y])] = _fill(ch1[x], ch2[y], lab1, lab2, cls1, cls2, size1, size2, records, p, q, r)
    return Mapping(t1, t2, records[(cls1[0], cls2[0])].total, NOOP, records, cls1, cls2, cells, work)


#: Weight of one DP matrix (one class pair) against one cell, in the work that
#: ``max_cells`` bounds: exploring, allocating and filling a matrix of a few cells
#: costs about as much as filling this many cells of a large one (measured with
#: pages of many small subtrees, ``bench/bench_rtdm.py --long-pages``).
RECORD_WORK = 16


def _fill(
    xs: Sequence[int],
    ys: Sequence[int],
    lab1: list[str],
    lab2: list[str],
    cls1: list[int],
    cls2: list[int],
    size1: list[int],
    size2: list[int],
    records: dict[tuple[int, int], Record],
    p: float,
    q: float,
    r: float,
) -> Record:
    """One matrix of Figure 3 (lines 5-47) for children ``xs`` of T1 and ``ys`` of T2."""
    m, n = len(xs), len(ys)
    w = n + 1
    cost = [0.0] * ((m + 1) * w)
    op = bytearray((m + 1) * w)
    for j in range(1, n + 1):  # M[0, j] = M[0, j-1] + q |B_j|
        cost[j] = cost[j - 1] + q * size2[ys[j - 1]]
        op[j] = INSERT
    ins = [q * size2[b] for b in ys]
    for i in range(1, m + 1):
        a = xs[i - 1]
        la, ca, sa = lab1[a], cls1[a], size1[a]
        dele = r * sa
        row, prev = i * w, (i - 1) * w
        cost[row] = cost[prev] + dele  # M[i, 0] = M[i-1, 0] + r |A_i|
        op[row] = DELETE
        for j in range(1, n + 1):
            b = ys[j - 1]
            diag = cost[prev + j - 1]
            if ca == cls2[b]:
                s, sop = diag, IDENT
            elif la == lab2[b]:
                s, sop = diag + records[(ca, cls2[b])].total, NOOP
            else:
                s, sop = diag + p + r * (sa - 1) + q * (size2[b] - 1), REPLACE
            d = cost[prev + j] + dele
            ii = cost[row + j - 1] + ins[j - 1]
            if s <= d and s <= ii:
                cost[row + j], op[row + j] = s, sop
            elif d <= ii:
                cost[row + j], op[row + j] = d, DELETE
            else:
                cost[row + j], op[row + j] = ii, INSERT
    return Record(m, n, op, cost)


# -- retrieveTemplate (Figure 4) -------------------------------------------------


def backtrack(mapping: Mapping) -> tuple[list[tuple[int, int]], list[int]]:
    """Walk the records back from ``B[m, n]``: the mapped pairs and the template nodes.

    Template nodes (``retrieveTemplate``) are the nodes of ``T1`` mapped to a
    node with the same label: an ``ident`` pair brings its whole subtree
    (Figure 4, lines 12-17), a ``no_op`` pair its node and, recursively, what
    its record maps (lines 18-22).  Replaced pairs are mapped but not template.
    """
    t1, t2 = mapping.t1, mapping.t2
    pairs: list[tuple[int, int]] = []
    template: list[int] = []
    if mapping.root_op == REPLACE:
        return [(0, 0)], []
    if mapping.root_op == IDENT:
        pairs.extend(zip(t1.subtree(0), t2.subtree(0), strict=True))
        return pairs, list(t1.subtree(0))
    if mapping.root_op != NOOP:
        return [], []
    stack = [(0, 0)]
    while stack:
        x, y = stack.pop()
        pairs.append((x, y))
        template.append(x)
        rec = mapping.records[(mapping.cls1[x], mapping.cls2[y])]
        xs, ys = t1.children[x], t2.children[y]
        w = rec.n + 1
        i, j = rec.m, rec.n
        while i > 0 and j > 0:
            o = rec.op[i * w + j]
            if o == DELETE:
                i -= 1
            elif o == INSERT:
                j -= 1
            else:
                a, b = xs[i - 1], ys[j - 1]
                if o == IDENT:
                    pairs.extend(zip(t1.subtree(a), t2.subtree(b), strict=True))
                    template.extend(t1.subtree(a))
                elif o == NOOP:
                    stack.append((a, b))
                else:
                    pairs.append((a, b))
                i -= 1
                j -= 1
    return pairs, template


def retrieve_template(mapping: Mapping) -> list[int]:
    """``retrieveTemplate(B)``: nodes of ``T1`` that belong to the template, sorted."""
    return sorted(backtrack(mapping)[1])


def induced_tree(tree: LabelTree, nodes: Iterable[int]) -> LabelTree | None:
    """The subtree of ``tree`` made of ``nodes`` (closed under parent), in preorder."""
    keep = sorted(set(nodes))
    if not keep or keep[0] != 0:
        return None
    new = {old: k for k, old in enumerate(keep)}
    parent = [-1] + [new[tree.parent[old]] for old in keep[1:]]
    refs = [tree.refs[old] for old in keep] if tree.refs is not None else None
    return LabelTree([tree.labels[old] for old in keep], parent, refs=refs)


def extract_subtree(
    tx: LabelTree, ty: LabelTree, costs: Costs = Costs(), max_cells: int | None = None
) -> LabelTree | None:
    """``ExtractSubTree(T_x, T_y)`` (Figure 6): the smallest subtree of ``T_x``
    holding every template node; ``None`` when the roots differ."""
    template = induced_tree(tx, retrieve_template(rtdm_td(tx, ty, costs, max_cells)))
    if template is not None:
        template.refs = None  # plain labels: the sample pages can go
    return template


# -- Match and removal -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Compiled:
    """A template's children lists, in the form the page walk compares against.

    For each node: its children (``kids``), their labels (``labels``, for the
    LCS), their kinds (``kinds``: :data:`_ELEMENT`, :data:`_TEXT` for a text
    label that is the folded text itself, :data:`_DIGEST` for any other text
    label), the folded text of text children (``texts``) and, for element
    children, the ``(tag, id, class)`` attribute values that give the label
    (``attrs``; ``None`` when the label cannot be read back that way).  A page
    child is then compared by tag and raw attributes, or by its stripped text,
    without building its label.  Built once per template (:meth:`LabelTree.compiled`).

    ``recall`` is what earlier walks located under template nodes (:func:`find`).
    """

    kids: list[tuple[int, ...]]
    labels: list[tuple[str, ...]]
    kinds: list[bytes]
    texts: list[tuple[str, ...]]
    attrs: list[tuple[tuple[str, str | None, str | None] | None, ...]]
    tags: list[frozenset[str]]
    text_leaves: int
    specs: list[tuple[tuple[bytes, bytes | None, bytes | None] | None, ...]]
    recall: Recall = field(default_factory=lambda: Recall())

    @classmethod
    def of(cls, tree: LabelTree) -> Compiled:
        labels = tree.labels
        kids = [tuple(c) for c in tree.children]
        kinds = [bytes(_kind(labels[c]) for c in cs) for cs in kids]
        attrs = [tuple(None if labels[c].startswith(TEXT) else _attrs(labels[c]) for c in cs) for cs in kids]
        return cls(
            kids,
            [tuple(labels[c] for c in cs) for cs in kids],
            kinds,
            [tuple(labels[c][1:] for c in cs) for cs in kids],
            attrs,
            [frozenset(_tag(labels[c]) for c in cs if not labels[c].startswith(TEXT)) for cs in kids],
            sum(1 for label in labels if label.startswith(TEXT)),
            [tuple(None if spec is None else tuple(_utf8(v) for v in spec) for spec in specs) for specs in attrs],  # type: ignore[misc]
        )


_ELEMENT, _TEXT, _DIGEST = 0, 1, 2


def _utf8(value: str | None) -> bytes | None:
    return None if value is None else value.encode("utf-8", "surrogatepass")


@dataclass(slots=True)
class Recall:
    """Page subtrees that earlier walks of one template found whole, by template node.

    A page subtree under a template node is *whole* when the walk located
    everything in it: a menu, a footer, a block of links.  When a later page
    has, under the same template node, a subtree with the same
    :func:`fingerprint` (the same number of elements and the same text),
    :func:`find` takes it whole without walking it: two C calls instead of a
    walk in Python.  This is what makes removal cheap on a site whose header,
    menus and footer repeat from page to page.

    Recall is a rule of its own, not a cache of the walk: it looks at text
    and shape, not at tags, ids and classes.  A repeated block whose every
    text is the template's is template even when, say, its current menu entry
    now carries ``class="active"`` (the walk, which compares labels, would
    keep that entry).  Where recall does not apply, the walk decides.

    Only the outermost whole subtrees of a walk are fingerprinted (after the
    walk), and during a walk only under template nodes kept here, so a walk
    reads each page node at most a few times in C.  A node whose subtree is
    found not whole is dropped.  Bounded: :data:`RECALL_PER_NODE`
    fingerprints per template node, each with its located node and text-leaf
    counts; a template is bounded in nodes.
    """

    whole: dict[int, dict[tuple[int, int], tuple[int, int]]] = field(default_factory=dict)

    def remember(
        self,
        walked: dict[int, tuple[int, int]],
        recalled: set[int],
        outer: Sequence[int],
        covered: Sequence[int],
        tnodes: Sequence[int],
        nodes: Sequence[int],
        texts: Sequence[int],
        element: Callable[[int], etree._Element],
    ) -> None:
        """After a walk (visits numbered, with their template node and subtree
        counts): forget the template nodes fingerprinted (``walked``, with their
        fingerprints) whose subtree was not whole after all, and fingerprint the
        ``outer``most whole subtrees of :data:`RECALL_MIN_NODES` or more, not
        recalled, keeping :data:`RECALL_PER_NODE` per template node (the latest).
        ``element`` gives a visit's page element.  Both walks of :func:`find` end here."""
        known = self.whole
        for visit in walked:
            if not covered[visit]:
                known.pop(tnodes[visit], None)
        for visit in outer:
            if nodes[visit] < RECALL_MIN_NODES or visit in recalled:
                continue
            key = walked.get(visit) or fingerprint(element(visit))
            seen = known.setdefault(tnodes[visit], {})
            if len(seen) >= RECALL_PER_NODE:
                del seen[next(iter(seen))]
            seen[key] = (nodes[visit], texts[visit])


def _tag(label: str) -> str:
    """The tag of an element label."""
    return label[: min((i for i in (label.find("#"), label.find(".")) if i >= 0), default=len(label))]


def _kind(label: str) -> int:
    if not label.startswith(TEXT):
        return _ELEMENT
    text = label[1:]
    return _TEXT if len(text) <= MAX_TEXT_LABEL and " ".join(text.split()) == text else _DIGEST


def _attrs(label: str) -> tuple[str, str | None, str | None] | None:
    """``(tag, id, class)`` such that an element with exactly that tag and those
    attribute values has ``label`` (:func:`element_label`), or ``None``."""
    tag = _tag(label)
    rest = label[len(tag) :]
    ident: str | None = None
    classes: str | None = None
    if rest.startswith("#"):
        dot = rest.find(".")
        ident, rest = (rest[1:], "") if dot < 0 else (rest[1:dot], rest[dot:])
    if rest:
        classes = " ".join(rest[1:].split("."))
    # Read back only what rebuilds the label exactly (digit runs already folded).
    tokens = classes.split(" ") if classes is not None else []
    if (
        not tag
        or (ident is not None and (not ident or ident != ident.strip() or _DIGITS.sub("0", ident) != ident))
        or any(not t or t.split() != [t] or _DIGITS.sub("0", t) != t for t in tokens)
    ):
        return None
    rebuilt = tag + (f"#{ident}" if ident else "") + (f".{'.'.join(tokens)}" if tokens else "")
    return (tag, ident, classes) if rebuilt == label else None


@dataclass(frozen=True, slots=True)
class Located:
    """Where a template was found in a page (:func:`find`).

    ``nodes`` and ``texts`` count the located template nodes and text leaves;
    ``text_of``/``tail_of`` hold the page elements whose ``text``/``tail`` is a
    located text leaf; ``outermost`` are the outermost page elements whose whole
    subtree (as :func:`child_items` sees it) was located, in walk order.
    """

    nodes: int
    texts: int
    text_of: set[etree._Element]
    tail_of: set[etree._Element]
    outermost: tuple[etree._Element, ...]


def find(template: LabelTree, body: etree._Element) -> Located | None:
    """Find the template in a page, top-down, in one pass; ``None`` when the roots differ.

    The roots are matched when their labels agree; then the children of each
    matched pair are aligned by label and matched element pairs are walked in
    turn.  The alignment is a longest common subsequence (:func:`_lcs_pairs`),
    but first the page's children are compared one by one with the template's
    (tag, then raw id and class, or stripped text): when they are the same
    list, as on most nodes of a page that uses the template, that is the LCS
    and no label is built.  Only the children of matched page nodes are looked
    at: linear in the page for templates whose fan-out fits a machine word
    (bit-parallel LCS).  :func:`_locate_reference` is the same walk written
    plainly (labels of every child, then the LCS); the tests hold them equal.

    Under a template node where an earlier page had a whole subtree, the page
    subtree is first fingerprinted; with that subtree's fingerprint, it is
    taken whole, unwalked (:class:`Recall`).  Where the page's children are
    not the template's, those with a tag no template child has are not
    labeled (:func:`child_items`).

    The walk runs in C when the optional extension was built
    (:mod:`scrapy_detemplate.methods._walk`, the same steps on libxml2's nodes),
    else in Python (:func:`_find_in_python`); the tests hold both to the reference.
    """
    if _compiled_walk is not None:
        return _compiled_walk.find(template, body)  # type: ignore[no-any-return]
    return _find_in_python(template, body)


def _find_in_python(template: LabelTree, body: etree._Element) -> Located | None:
    """:func:`find`'s walk, in Python."""
    if not len(template) or template.labels[0] != root_label(body):
        return None
    compiled = template.compiled()
    kids_of, labels_of, kinds_of = compiled.kids, compiled.labels, compiled.kinds
    texts_of, attrs_of, tags_of = compiled.texts, compiled.attrs, compiled.tags
    known = compiled.recall.whole
    skip = SKIP_TAGS
    get = etree._Element.get  # unbound: cheaper than the bound method lookup
    text_of: set[etree._Element] = set()
    tail_of: set[etree._Element] = set()
    # One visit per matched element pair, numbered as they are walked (parents first).
    elements: list[etree._Element] = []
    parents: list[int] = []
    full = bytearray()  # every child item of the page element was matched
    # Per visit: its template node, the nodes and text leaves it located (then
    # its subtree's); the visits whose subtree was fingerprinted and walked, and
    # those fingerprinted and recalled.
    tnodes: list[int] = []
    own_nodes: list[int] = []
    own_texts: list[int] = []
    walked: dict[int, tuple[int, int]] = {}
    recalled: set[int] = set()
    new_element, new_parent, new_full = elements.append, parents.append, full.append
    new_tnode, new_nodes, new_texts = tnodes.append, own_nodes.append, own_texts.append
    stack: list[tuple[int, etree._Element, int]] = [(0, body, -1)]
    pop, push = stack.pop, stack.append
    while stack:
        t, el, parent = pop()
        visit = len(parents)
        new_parent(parent)
        new_element(el)
        new_tnode(t)
        kids = kids_of[t]
        if t in known:
            key = fingerprint(el)
            counts = known[t].get(key)
            if counts is not None:
                new_nodes(counts[0])
                new_texts(counts[1])
                # Every text below is located (and blank ones are never asked about).
                text_of.update(el.iter())
                tail_of.update(el.iterdescendants())
                recalled.add(visit)
                new_full(1)
                continue
            walked[visit] = key
        text = el.text
        if not kids:  # a template leaf: the page element is whole if it has no child items
            whole = 0 if text and not text.isspace() else 1
            if whole and len(el):
                for child in el:
                    tag = child.tag
                    tail = child.tail
                    if (isinstance(tag, str) and tag not in skip) or (tail and not tail.isspace()):
                        whole = 0
                        break
            new_nodes(0)
            new_texts(0)
            new_full(whole)
            continue
        kinds, keys, attrs, n = kinds_of[t], texts_of[t], attrs_of[t], len(kids)
        mark = len(stack)
        k = added = 0
        same = True
        own = bool(text) and not text.isspace()  # type: ignore[union-attr]
        if own:
            kind = kinds[0]
            if kind == _TEXT:
                stripped = text.strip()  # type: ignore[union-attr]
                same = stripped == keys[0] or " ".join(stripped.split()) == keys[0]
            else:
                same = kind == _DIGEST and text_label(" ".join(text.split()))[1:] == keys[0]  # type: ignore[union-attr]
            k = 1
        if same and len(el):
            for child in el:
                tag = child.tag
                if isinstance(tag, str) and tag not in skip:
                    if k == n or kinds[k]:
                        same = False
                        break
                    spec = attrs[k]
                    if spec is not None and tag == spec[0]:
                        if (get(child, "id") or None) != spec[1] or (get(child, "class") or None) != spec[2]:
                            same = element_label(child) == labels_of[t][k]  # e.g. digits to fold
                    else:
                        same = labels_of[t][k].startswith(tag) and element_label(child) == labels_of[t][k]
                    if not same:
                        break
                    push((kids[k], child, visit))
                    k += 1
                tail = child.tail
                if tail and not tail.isspace():
                    if k == n:
                        same = False
                        break
                    kind = kinds[k]
                    if kind == _TEXT:
                        stripped = tail.strip()
                        same = stripped == keys[k] or " ".join(stripped.split()) == keys[k]
                    else:
                        same = kind == _DIGEST and text_label(" ".join(tail.split()))[1:] == keys[k]
                    if not same:
                        break
                    tail_of.add(child)
                    added += 1
                    k += 1
        if same and k == n:
            # The page's children are the template's: that is the alignment.
            if own:
                text_of.add(el)
                added += 1
            new_nodes(n)
            new_texts(added)
            new_full(1)
            continue
        # Otherwise align by labels; undo what the comparison recorded first
        # (only this visit records the tails of el's children).
        del stack[mark:]
        if added:
            tail_of.difference_update(el)
        items = child_items(el, tags_of[t], any(kinds))
        matched = _lcs_pairs(labels_of[t], [item[0] for item in items]) if items else []
        added = 0
        for k, h in matched:
            _, page_el, is_tail = items[h]
            if is_tail is None:
                push((kids[k], page_el, visit))
            else:
                added += 1
                (tail_of if is_tail else text_of).add(page_el)
        new_nodes(len(matched))
        new_texts(added)
        new_full(len(matched) == len(items))
    # Children are numbered after their parents: backwards, they come first.
    count = len(parents)
    uncovered = [0] * count  # located element children that are not whole
    covered = bytearray(count)
    for visit in range(count - 1, 0, -1):
        parent = parents[visit]
        own_nodes[parent] += own_nodes[visit]  # now the subtree's counts
        own_texts[parent] += own_texts[visit]
        if full[visit] and not uncovered[visit]:
            covered[visit] = 1
        else:
            uncovered[parent] += 1
    outer = [v for v in range(1, count) if covered[v] and not covered[parents[v]]]
    compiled.recall.remember(walked, recalled, outer, covered, tnodes, own_nodes, own_texts, elements.__getitem__)
    # The root's subtree counts are the page's (the root itself is located).
    return Located(1 + own_nodes[0], own_texts[0], text_of, tail_of, tuple(elements[v] for v in outer))


_COUNT_ELEMENTS = etree.XPath("count(descendant::*)")


def fingerprint(el: etree._Element) -> tuple[int, int]:
    """A page subtree's number of elements and a hash of its text (its own tail
    left out); both read in C, for :class:`Recall`.  (Counting every node, texts
    and comments too, took twice as long and adds nothing the text does not say.)"""
    if _compiled_walk is not None:  # the same measures in one pass in C (another hash)
        return _compiled_walk.fingerprint(el)  # type: ignore[no-any-return]
    count = _COUNT_ELEMENTS(el)
    assert isinstance(count, float)  # XPath count() is a number
    return int(count), hash(etree.tostring(el, method="text", encoding="utf-8", with_tail=False))


def locate(template: LabelTree, body: etree._Element) -> list[tuple[int, etree._Element, bool | None]]:
    """Every located template node: ``(template node, element, is_tail)``, in walk order.

    The plain form of :func:`find` (which counts instead of listing).
    """
    return _locate_reference(template, body)[0]


def _locate_reference(
    template: LabelTree, body: etree._Element
) -> tuple[list[tuple[int, etree._Element, bool | None]], tuple[etree._Element, ...]]:
    """:func:`find` written plainly: the located nodes and the outermost whole elements."""
    if not len(template) or template.labels[0] != root_label(body):
        return [], ()
    found: list[tuple[int, etree._Element, bool | None]] = [(0, body, None)]
    stack: list[tuple[int, etree._Element]] = [(0, body)]
    tlabels, tchildren = template.labels, template.children
    # (element, every child item located?, located element children), parents first.
    visits: list[tuple[etree._Element, bool, list[etree._Element]]] = []
    while stack:
        t, el = stack.pop()
        tc = tchildren[t]
        if not tc:
            visits.append((el, not _has_items(el), []))
            continue
        items = child_items(el)
        want = [tlabels[c] for c in tc]
        have = [item[0] for item in items]
        if want == have:
            matched: Iterable[tuple[int, int]] = enumerate(range(len(items)))
            full = True
        else:
            matched = _lcs_pairs(want, have) if items else []
            full = len(matched) == len(items)  # type: ignore[arg-type]
        kids: list[etree._Element] = []
        for k, h in matched:
            _, page_el, is_tail = items[h]
            found.append((tc[k], page_el, is_tail))
            if is_tail is None:
                stack.append((tc[k], page_el))
                kids.append(page_el)
        visits.append((el, full, kids))
    # Children are visited after their parents: reversed, they come first.
    covered: set[int] = set()
    children_of: dict[int, list[etree._Element]] = {}
    for el, full, kids in reversed(visits):
        children_of[id(el)] = kids
        if full and all(id(k) in covered for k in kids):
            covered.add(id(el))
    outermost: list[etree._Element] = []
    walk = list(children_of.get(id(body), []))
    while walk:
        el = walk.pop()
        if id(el) in covered:
            outermost.append(el)
        else:
            walk.extend(children_of.get(id(el), []))
    return found, tuple(outermost)


def _has_items(el: etree._Element) -> bool:
    """Whether ``el`` has any child node (:func:`child_items`), without labeling them."""
    if el.text and not el.text.isspace():
        return True
    for child in el:
        if isinstance(child.tag, str) and child.tag not in SKIP_TAGS:
            return True
        if child.tail and not child.tail.isspace():
            return True
    return False


def _lcs_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    for block in LCSseq.editops(a, b).as_matching_blocks():
        pairs.extend((block.a + k, block.b + k) for k in range(block.size))
    return pairs


def match(template: LabelTree, body: etree._Element) -> bool:
    """``Match(S, P)``: every node of the template is found in the page."""
    return matched(template, find(template, body))


def matched(template: LabelTree, located: Located | None) -> bool:
    """:func:`match` from a walk already made (:func:`find`)."""
    return (located.nodes if located is not None else 0) == len(template)


def located_share(template: LabelTree, located: Located | None) -> float:
    """Share of the template's text leaves located in the page (of all its nodes
    when it has no text): how much the page looks like it uses this template."""
    if located is None:
        return 0.0
    total = text_leaves(template)
    return located.texts / total if total else located.nodes / len(template)


def text_leaves(tree: LabelTree) -> int:
    """Number of text leaves of a tree."""
    if tree._compiled is not None:
        return tree._compiled.text_leaves
    return sum(1 for label in tree.labels if label.startswith(TEXT))


def template_parts(
    template: LabelTree, body: etree._Element, lines: Sequence[Sequence[tuple[etree._Element, bool]]]
) -> tuple[frozenset[int], tuple[etree._Element, ...], float]:
    """What to remove from a page: template lines, template subtrees, located share.

    ``lines`` are the text slots of the page's visible lines.  A line is
    template when each of its non-blank text pieces is a located text leaf; an
    element is a template subtree when it and everything below it (elements
    and text leaves, as :func:`child_items` sees them) were located, and it is
    the outermost such element.  The share is :func:`located_share`.  One walk
    (:func:`find`), then one look at each line's text pieces.
    """
    located = find(template, body)
    if located is None:
        return frozenset(), (), 0.0
    text_of, tail_of = located.text_of, located.tail_of
    template_lines: list[int] = []
    if located.texts:
        for index, slots in enumerate(lines):
            hit = False
            for el, is_tail in slots:
                if el in (tail_of if is_tail else text_of):
                    hit = True
                    continue
                text = el.tail if is_tail else el.text
                if text and not text.isspace():
                    break
            else:
                if hit:
                    template_lines.append(index)
    return frozenset(template_lines), located.outermost, located_share(template, located)


# -- FindTemplate (Figure 5) -------------------------------------------------------


@dataclass(slots=True)
class FindTemplate:
    """``FindTemplate(W)`` fed one page at a time, in crawl order.

    ``S_0 = ExtractSubTree(P_x, P_y)``; then for each later sample ``P``:
    ``S_i = S_{i-1}`` if ``Match(S_{i-1}, P)`` else ``ExtractSubTree(S_{i-1}, P)``;
    done after ``max_pages`` samples.  ``current`` is ``P_x`` until the second
    page arrives, then ``S_i``.  Pages are taken in arrival order, not at
    random: a crawl delivers them one by one and cannot wait for a pool.
    """

    max_pages: int
    current: LabelTree | None = None
    seen: int = 0
    costs: Costs = field(default_factory=Costs)
    max_cells: int | None = None
    extractions: int = 0
    on_extract: Callable[[LabelTree, LabelTree], None] | None = None

    @property
    def done(self) -> bool:
        return self.seen >= self.max_pages and self.current is not None

    def add(self, page: LabelTree, body: etree._Element | None = None, located: Located | None = None) -> None:
        """Fold one sample page in (raises :class:`TooLarge` past the DP bound; the
        sample is then not counted).  ``Match`` walks ``body``, unless the caller
        gives the walk it made for the current template (``located``)."""
        if self.current is None:
            self.current = page
            self.seen = 1
            return
        if self.seen >= 2 and (
            matched(self.current, located) if located is not None else body is not None and match(self.current, body)
        ):
            self.seen += 1
            return
        template = extract_subtree(self.current, page, self.costs, self.max_cells)
        self.extractions += 1
        self.current = template if template is not None else LabelTree([page.labels[0]], [-1])
        self.seen += 1


#: The compiled walk's module (``_walk.pyx``).
WALK_MODULE = "scrapy_detemplate.methods._walk"


def _load_compiled_walk() -> tuple[Any, str]:
    """The compiled walk, when it was built against the lxml in use (else None), and why not."""
    walk = _compiled.load(WALK_MODULE)
    return walk, _compiled.status()[WALK_MODULE]


_compiled_walk, _why_not_compiled = _load_compiled_walk()


def compiled_walk() -> tuple[bool, str]:
    """Whether :func:`find` runs the compiled walk, and if not, why (for the crawl's log)."""
    if _compiled_walk is not None:
        return True, ""
    return False, _why_not_compiled or "it was turned off in this process"
