"""The Sandwich algorithm: template lines are the LCS with a peer page.

Rowlands, Thomas and Wan, "Web Indexing on a Diet: Template Removal with the
Sandwich Algorithm" (CSIRO).  A page is compared line by line with a *peer*, a
sibling page in the same URL directory; the lines in the longest common
subsequence (LCS) of the two are template and discarded, the rest is kept.

Lines are compared through 64-bit keys (a stable hash), so peers can be kept
compactly and shared between processes.  The LCS itself is RapidFuzz's
bit-parallel ``LCSseq``, not a quadratic Python loop.

Two kinds of line are offered:

* ``source``: lines of the HTML source, exactly as in the paper (no parsing
  needed to find the template);
* ``text``: lines of the visible text keyed by (tag path, text), the paper's
  footnote idea of tokenising the markup first.  It survives minified HTML (one
  source line per page) and keeps a headline that a listing page shows as a link.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence

from rapidfuzz.distance import LCSseq, Levenshtein

from scrapy_detemplate._compiled import load
from scrapy_detemplate._html import Line

_WS = re.compile(r"\s+")
#: The compiled keys of text lines (``_site.pyx``), or ``None``: the Python ones run.
_compiled = load("scrapy_detemplate.methods._site")


def line_key(text: str) -> int:
    """A stable 64-bit key for one line (the same in every process)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def text_line_keys(lines: Sequence[Line]) -> list[int]:
    """Keys of visible lines (the ``text`` unit): ``line_key`` of tag path NUL text; compiled when built."""
    if _compiled is not None:
        keys: list[int] = _compiled.text_line_keys(lines, line_key)
        return keys
    return _text_line_keys_py(lines)


def _text_line_keys_py(lines: Sequence[Line]) -> list[int]:
    """The reference :func:`text_line_keys`."""
    return [line_key(f"{line.path}\x00{line.text}") for line in lines]


def source_lines(html: str) -> list[str]:
    """The lines of an HTML source, as the paper compares them."""
    return html.splitlines()


def source_line_keys(lines: Iterable[str]) -> list[int]:
    """Keys of source lines; white space is folded so re-indentation still matches."""
    return [line_key(_WS.sub(" ", line).strip()) for line in lines]


def pack_keys(keys: Sequence[int]) -> bytes:
    """Keys as compact bytes (8 per line) for a store."""
    return array("q", keys).tobytes()


def unpack_keys(data: bytes) -> list[int]:
    keys = array("q")
    keys.frombytes(data)
    return keys.tolist()


#: Above this many cells (len(page) * len(peer)) the exact LCS would need too
#: much memory and time (RapidFuzz's editops keeps an n*m bit matrix), so the
#: pages are first cut at anchors (see :func:`lcs_indexes`).
EXACT_CELLS = 4_000_000


def lcs_indexes(page: Sequence[int], peer: Sequence[int], exact_cells: int = EXACT_CELLS) -> list[int]:
    """Indexes of ``page`` lines in a longest common subsequence with ``peer``.

    These are the template lines.  Up to ``exact_cells`` the LCS is exact
    (RapidFuzz, bit-parallel).  Larger inputs are cut at *anchors*, lines that
    occur exactly once in each page, kept in a longest increasing chain (as in
    patience diff, O(n log n)); the gaps between anchors are solved exactly when
    they fit the budget, recursively anchored otherwise, and left unmatched
    (kept as content) when neither works.  The result is always a common
    subsequence; for large inputs it can be shorter than the longest one.
    """
    if not page or not peer:
        return []
    if len(page) * len(peer) <= exact_cells:
        return _exact(page, peer)
    matched: list[int] = []
    i0 = j0 = 0
    for i, j in [*_anchors(page, peer), (len(page), len(peer))]:
        if i > i0 and j > j0:
            gap = page[i0:i], peer[j0:j]
            if len(gap[0]) < len(page) or len(gap[1]) < len(peer):  # progress, so recursion ends
                matched.extend(i0 + k for k in lcs_indexes(*gap, exact_cells=exact_cells))
        if i < len(page):
            matched.append(i)
        i0, j0 = i + 1, j + 1
    return matched


def _exact(page: Sequence[int], peer: Sequence[int]) -> list[int]:
    matched: list[int] = []
    for block in LCSseq.editops(page, peer).as_matching_blocks():
        matched.extend(range(block.a, block.a + block.size))
    return matched


def _anchors(page: Sequence[int], peer: Sequence[int]) -> list[tuple[int, int]]:
    """Lines unique in both sequences, as the longest chain increasing in both."""
    count_page = Counter(page)
    count_peer = Counter(peer)
    where = {key: j for j, key in enumerate(peer) if count_peer[key] == 1}
    pairs = [(i, where[key]) for i, key in enumerate(page) if count_page[key] == 1 and key in where]
    # Longest increasing subsequence of the peer positions (patience sorting).
    tails: list[int] = []  # tails[k]: peer position ending the best chain of length k+1
    tail_at: list[int] = []  # index into pairs of that chain's end
    back: list[int] = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(n)
        else:
            tails[k] = j
            tail_at[k] = n
        back[n] = tail_at[k - 1] if k else -1
    chain: list[tuple[int, int]] = []
    n = tail_at[-1] if tail_at else -1
    while n >= 0:
        chain.append(pairs[n])
        n = back[n]
    return chain[::-1]


def closest_name(name: str, candidates: Sequence[str]) -> int | None:
    """Index of the candidate name closest to ``name`` by edit distance.

    The paper's choice of peer for a stored crawl; ties go to the most recent
    candidate (the last one in ``candidates``).
    """
    best: int | None = None
    best_distance = 0
    for index, candidate in enumerate(candidates):
        distance = Levenshtein.distance(name, candidate)
        if best is None or distance <= best_distance:
            best, best_distance = index, distance
    return best
