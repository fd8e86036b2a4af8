"""Incremental text segment table at crawl time: one table per site in the store."""

from __future__ import annotations

import dataclasses
from typing import Any

from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.methods.segments import (
    LogisticExpiry,
    Segmentation,
    SegmentTable,
    outermost_template_elements,
    segment_keys,
    segment_lines,
    template_blocks,
    template_lines,
)
from scrapy_detemplate.runners.base import ParsedPage, Runner, Verdict
from scrapy_detemplate.store import StateStore, Value

NAMESPACE = "segments"
STATE_VERSION = 1


class SegmentsRunner:
    """Wang et al. (2008): segmentation, table expansion, detection, shrinkage, per page.

    A site's state is ``{"v": 1, "clock": <pages seen>, "table": {hex key: packed
    entry}}``.  The table dict is updated in place and stored again after every
    page, so the in-memory store costs no copy and other stores stay correct.

    While a page has no template segment at all (the first ``df_threshold - 1``
    pages of a site always), the ``first_pages`` method runs instead, if one is set.
    """

    name = "segments"

    def __init__(self, config: DetemplateConfig, store: StateStore) -> None:
        self._store = store
        self._df_threshold = config.segments_df_threshold
        self._block_ratio = config.segments_block_ratio
        self._expiry = LogisticExpiry(config.segments_tb, config.segments_n, config.segments_r)
        self._sweep_every = config.segments_sweep_every
        self._known = segment_keys()  # keys of segments already seen: not hashed again
        self._fallback: Runner | None = None
        if config.segments_first_pages != "none":
            from scrapy_detemplate.runners import RUNNERS  # the registry imports this module

            # Its own fallback, if any, must not come back here: no first pages for us there.
            inner = dataclasses.replace(config, segments_first_pages="none")
            self._fallback = RUNNERS[config.segments_first_pages](inner, store)

    def observe(self, page: ParsedPage, elements: bool = True) -> tuple[Segmentation, dict[str, int], int]:
        """Steps 1, 2 and 4 for one page: its segmentation, each segment's DF
        (this page included) and the site's clock (pages seen)."""
        state, table, seg = self._segment(page, elements)
        dfs = table.expand(seg.keys)  # 2. table expansion
        return seg, dfs, self._shrink(page, state, table)

    def observe_each(self, page: ParsedPage) -> tuple[Segmentation, list[int], int]:
        """:meth:`observe` with the DF of each segment in a list beside ``seg.keys``, and no
        ``elements``: how the combined method reads DFs, without a verdict."""
        state, table, seg = self._segment(page, False)
        each = table.expand_each(seg.keys)  # 2. table expansion
        return seg, each, self._shrink(page, state, table)

    def _segment(self, page: ParsedPage, elements: bool) -> tuple[dict[str, Any], SegmentTable, Segmentation]:
        """The site's state and table, and step 1, page segmentation."""
        state = _state(self._store.get(NAMESPACE, page.site))
        table = SegmentTable(state["table"], state["clock"], sweep_every=self._sweep_every, expiry=self._expiry)
        return state, table, segment_lines(page.lines, elements, self._known)

    def _shrink(self, page: ParsedPage, state: dict[str, Any], table: SegmentTable) -> int:
        """Step 4, table shrinkage (3, detection, only reads the DFs), and the state stored; the clock."""
        table.shrink()
        state["clock"] = table.clock
        self._store.set(NAMESPACE, page.site, state)
        return table.clock

    def run(self, page: ParsedPage) -> Verdict:
        seg, dfs, _ = self.observe(page)
        # 3. template detection
        blocks = template_blocks(seg, dfs, self._df_threshold, self._block_ratio)
        warm = any(df >= self._df_threshold for df in dfs.values())
        if not warm:
            if self._fallback is not None:
                verdict = self._fallback.run(page)
                return dataclasses.replace(verdict, method=verdict.method or self._fallback.name)
            return Verdict(detail="warming_up")
        lines = template_lines(seg, blocks)
        if not lines:
            return Verdict(detail="no_template_block")
        if len(lines) == len(page.lines):
            # Every block is template: a duplicate or an empty page, not a template.
            return Verdict(detail="all_template")
        return Verdict(
            template_lines=frozenset(lines),
            template_elements=tuple(outermost_template_elements(seg, blocks)),
        )


def valid_state(value: Value) -> bool:
    """Whether ``value`` is a site's state as :class:`SegmentsRunner` writes it: a
    clock and a table of segment keys to packed ``last_seen << 24 | df`` counts
    (checked when state is loaded: a bad value is a cold start, not a failing page)."""
    if not (isinstance(value, dict) and value.get("v") == STATE_VERSION):
        return False
    clock, table = value.get("clock"), value.get("table")
    if type(clock) is not int or clock < 0 or not isinstance(table, dict):
        return False
    return all(isinstance(k, str) and type(c) is int and c >= 0 for k, c in table.items())


def _state(raw: Value) -> dict[str, Any]:
    """The stored state, or a fresh one when it is missing or not ours (a cold start)."""
    if (
        isinstance(raw, dict)
        and raw.get("v") == STATE_VERSION
        and isinstance(raw.get("clock"), int)
        and isinstance(raw.get("table"), dict)
    ):
        return raw
    return {"v": STATE_VERSION, "clock": 0, "table": {}}
