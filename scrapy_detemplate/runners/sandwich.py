"""Sandwich at crawl time: per-directory peers kept in the store."""

from __future__ import annotations

from urllib.parse import urlsplit

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.methods.sandwich import (
    closest_name,
    lcs_indexes,
    pack_keys,
    source_line_keys,
    source_lines,
    text_line_keys,
    unpack_keys,
)
from scrapy_detemplate.runners.base import ParsedPage, Verdict
from scrapy_detemplate.store import StateStore, Value

NAMESPACE = "sandwich"


class SandwichRunner:
    """The peer is the last page seen in the page's URL directory, or with
    ``peer="closest"`` the one (of the last ``candidates``) whose name is
    closest by edit distance.  A directory's state is
    ``{"names": [...], "keys": [packed line keys, ...]}``, oldest first.
    """

    name = "sandwich"

    def __init__(self, config: DetemplateConfig, store: StateStore) -> None:
        self._store = store
        self._unit = config.sandwich_unit
        self._closest = config.sandwich_peer == "closest"
        # "last" keeps two so a re-crawled URL never becomes its own peer.
        self._keep = config.sandwich_candidates if self._closest else 2

    def observe(self, page: ParsedPage) -> tuple[list[str] | None, int, list[int] | None]:
        """Record the page as its directory's newest peer; compare it with the old one.

        Returns the source lines (``source`` unit, else ``None``), the number of
        lines compared, and the indexes of the lines in the LCS with the peer
        (``None`` when there is no peer).
        """
        lines: list[str] | None = None
        if self._unit == "source":
            lines = source_lines(page.html)
            keys = source_line_keys(lines)
        else:
            keys = text_line_keys(page.lines)
        name = _page_name(page.url)
        state = self._store.get(NAMESPACE, page.directory)
        names: list[str] = []
        packed: list[bytes] = []
        if isinstance(state, dict):
            names = [n for n in state.get("names", []) if isinstance(n, str)]  # type: ignore[union-attr]
            packed = [k for k in state.get("keys", []) if isinstance(k, bytes)]  # type: ignore[union-attr]
            if len(names) != len(packed):
                names, packed = [], []
        peer = self._choose_peer(name, names)
        kept = [i for i, n in enumerate(names) if n != name]
        kept_names = [*[names[i] for i in kept][-(self._keep - 1) :], name]
        kept_keys = [*[packed[i] for i in kept][-(self._keep - 1) :], pack_keys(keys)]
        self._store.set(NAMESPACE, page.directory, {"names": kept_names, "keys": kept_keys})  # type: ignore[dict-item]
        if peer is None:
            return lines, len(keys), None
        return lines, len(keys), lcs_indexes(keys, unpack_keys(packed[peer]))

    def run(self, page: ParsedPage) -> Verdict:
        lines, count, matched = self.observe(page)
        if matched is None:
            return Verdict(detail="no_peer")
        if not matched:
            return Verdict(detail="nothing_shared")
        if len(matched) == count:
            # Every line is shared: a duplicate of its peer, not a template.
            return Verdict(detail="duplicate")
        if lines is not None:
            template = set(matched)
            return Verdict(clean_source="\n".join(t for i, t in enumerate(lines) if i not in template))
        return Verdict(template_lines=frozenset(matched))

    def _choose_peer(self, name: str, names: list[str]) -> int | None:
        others = [i for i, n in enumerate(names) if n != name]
        if not others:
            return None
        if not self._closest:
            return others[-1]
        best = closest_name(name, [names[i] for i in others])
        return None if best is None else others[best]


def valid_state(value: Value) -> bool:
    """Whether ``value`` is a directory's state as :class:`SandwichRunner` writes it
    (checked when state is loaded: a bad value is a cold start, not a failing page)."""
    if not isinstance(value, dict):
        return False
    names, keys = value.get("names"), value.get("keys")
    return (
        isinstance(names, list)
        and isinstance(keys, list)
        and len(names) == len(keys)
        and all(isinstance(n, str) for n in names)
        and all(isinstance(k, bytes) and len(k) % 8 == 0 for k in keys)  # packed 8-byte line keys
    )


def _page_name(url: str) -> str:
    """The page's name within its directory (last path segment and query)."""
    parts = urlsplit(url)
    path = parts.path or "/"
    name = path[path.rfind("/") + 1 :]
    return f"{name}?{parts.query}" if parts.query else name
