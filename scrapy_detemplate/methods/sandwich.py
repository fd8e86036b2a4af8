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
from collections.abc import Iterable, Sequence

from rapidfuzz.distance import LCSseq, Levenshtein

_WS = re.compile(r"\s+")


def line_key(text: str) -> int:
    """A stable 64-bit key for one line (the same in every process)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


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


def lcs_indexes(page: Sequence[int], peer: Sequence[int]) -> list[int]:
    """Indexes of ``page`` lines in one longest common subsequence with ``peer``.

    These are the template lines.  Lines that are blank in the source (key of the
    empty string) are included when matched; they carry no content either way.
    """
    if not page or not peer:
        return []
    blocks = LCSseq.editops(page, peer).as_matching_blocks()
    matched: list[int] = []
    for block in blocks:
        matched.extend(range(block.a, block.a + block.size))
    return matched


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
