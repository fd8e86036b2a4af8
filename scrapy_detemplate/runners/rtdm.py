"""RTDM-TD at crawl time: learn each site's template(s), then strip them in one pass.

A site's life: *learning* (FindTemplate folds the site's pages into a template,
``rtdm_max_pages`` samples) then *applying* (each page is cleaned by locating
the learned template in it).  While a site learns, its pages are cleaned by
another registered method (``rtdm_meanwhile``, default ``sandwich``; ``none``
keeps them whole), so nothing waits and nothing is lost.

Or, in a crawl with ``DETEMPLATE_RTDM_HOLD``, they are held: the downloader
middleware calls :meth:`RtdmRunner.hold_learning_pages`, after which a sample
comes back with detail :data:`HOLD` and nothing removed; the middleware keeps
the response and runs the page again under :meth:`RtdmRunner.replay` once the
site has learned (or :meth:`RtdmRunner.learn_now` made it learn from the
samples it has).  The engine itself still takes one page at a time.

Beyond the paper (its future work): a site keeps up to ``rtdm_templates``
templates.  Each page is cleaned with the template that locates the largest
share of its nodes; when no template reaches ``rtdm_match`` of its nodes, the
page is a sample for a new template (learned like the first one, over the
next ``rtdm_max_pages`` such pages).  A site that changes its layout mid-crawl
(drift) thus learns its new template, and the least used one is forgotten.

State, in namespace ``rtdm`` under ``page.site``, is plain data::

    {"v": 1, "gen": int,
     "templates": [{"labels": [...], "parent": [...], "uses": int}, ...],
     "learner": {"labels": [...], "parent": [...], "seen": int} | None,
     "refused": int, "too_large": bool}

``refused`` counts the pages in a row that the mapping refused (``rtdm_max_cells``); at
:data:`GIVE_UP_AFTER` the site is ``too_large``: it learns no more, and pages
that no template fits are cleaned by the meanwhile method at once (detail
:data:`TOO_LARGE_TO_LEARN`), so a site of pages too long for the mapping pays
for the attempt a few times, not on every page.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from lxml import etree

from scrapy_detemplate._html import find_body
from scrapy_detemplate.config import DetemplateConfig
from scrapy_detemplate.methods.rtdm import (
    Costs,
    FindTemplate,
    LabelTree,
    TooLarge,
    find,
    located_share,
    page_tree,
    template_parts,
    text_leaves,
)
from scrapy_detemplate.runners.base import NoRemoval, ParsedPage, Runner, Verdict
from scrapy_detemplate.store import SiteLocking, StateStore, Value

NAMESPACE = "rtdm"
_VERSION = 1
_CACHE = 256
#: Seed check: S_0 must keep this share of the smaller sample's text leaves.
SEED_SHARE = 0.1
#: Verdict detail of a sample page the crawl holds until its site has learned.
HOLD = "hold"
#: A site stops learning after this many pages in a row too large for the mapping
#: (``rtdm_max_cells``): its pages then go straight to the meanwhile method, with
#: this detail, instead of paying for the attempt each time.
GIVE_UP_AFTER = 3
TOO_LARGE_TO_LEARN = "too_large_to_learn"

logger = logging.getLogger("scrapy_detemplate")


def apply_templates(
    templates: Sequence[LabelTree],
    body: etree._Element,
    slots: Sequence[Sequence[tuple[etree._Element, bool]]],
    threshold: float,
) -> tuple[int, frozenset[int], tuple[etree._Element, ...]] | None:
    """The removal step for one page: the template that locates the most of its
    text leaves, among those that locate at least ``threshold`` of them, with the
    page's template lines and elements (:func:`template_parts`); ``None`` when
    no template fits.  One walk of the page per template."""
    best: tuple[float, int, frozenset[int], tuple[etree._Element, ...]] | None = None
    for index, template in enumerate(templates):
        lines, elements, share = template_parts(template, body, slots)
        if share < threshold:
            continue
        located = share * max(1, text_leaves(template))
        if best is None or located > best[0]:
            best = (located, index, lines, elements)
    return None if best is None else best[1:]


class RtdmRunner:
    """Learns per site with :class:`FindTemplate`, removes with :func:`apply_templates`.

    ``counts`` tells how many pages were learned from, applied, passed to the
    meanwhile method, held, or skipped as too large (for stats and the bench).
    """

    name = "rtdm"

    def __init__(self, config: DetemplateConfig, store: StateStore) -> None:
        self._store = store
        self._max_pages = config.rtdm_max_pages
        self._max_nodes = config.rtdm_max_nodes
        self._max_cells = config.rtdm_max_cells
        self._max_templates = config.rtdm_templates
        self._threshold = config.rtdm_match
        self._costs = Costs()
        self._meanwhile: Runner = _meanwhile(config, store)
        # Decoded templates by (site, gen): the store holds plain data only.
        self._cache: OrderedDict[tuple[str, int], list[LabelTree]] = OrderedDict()
        self._hold = False
        self._replaying = False
        self.counts = {
            "learning": 0, "applied": 0, "learned": 0, "too_large": 0, "extractions": 0, "restarts": 0, "held": 0,
            "given_up": 0,
        }  # fmt: skip

    def run(self, page: ParsedPage) -> Verdict:
        body = find_body(page.root)
        if body is None:
            return Verdict(detail="no_body")
        state = self._load(page.site)
        templates = self._templates(page.site, state)
        best = apply_templates(templates, body, [line.slots for line in page.lines], self._threshold)
        if best is not None:
            index, lines, elements = best
            entries: list[dict[str, Any]] = state["templates"]
            entries[index]["uses"] = int(entries[index].get("uses", 0)) + 1
            self._store.set(NAMESPACE, page.site, state)
            self.counts["applied"] += 1
            return Verdict(template_lines=lines, template_elements=elements, detail="applied")
        if self._replaying:  # folded in when it first came: not a sample twice
            return self._clean_meanwhile(page)
        if state.get("too_large") is True:
            return self._clean_meanwhile(page, TOO_LARGE_TO_LEARN)
        return self._learn(page, body, state)

    # -- holding pages (DETEMPLATE_RTDM_HOLD) --------------------------------

    def hold_learning_pages(self) -> None:
        """From now on a sample of a learning site comes back with detail :data:`HOLD`
        and nothing removed: the caller holds it and runs it again under
        :meth:`replay` (the crawl's downloader middleware does, with ``DETEMPLATE_RTDM_HOLD``)."""
        self._hold = True

    @contextmanager
    def replay(self) -> Iterator[None]:
        """Pages run inside were sampled when they first came: they are cleaned with
        the best template that fits, else by the meanwhile method, never sampled again."""
        self._replaying = True
        try:
            yield
        finally:
            self._replaying = False

    def learning(self, site: str) -> bool:
        """Whether ``site`` has a template being learned (its pages are samples)."""
        return isinstance(self._load(site).get("learner"), dict)

    def learn_now(self, site: str) -> bool:
        """Finish the site's learning with the samples it has (at least two, so that
        there is an S_0); ``False`` when there is nothing to learn from."""
        with self._locked(site):
            state = self._load(site)
            learner = state.get("learner")
            if not isinstance(learner, dict):
                return False
            current, seen = LabelTree.from_data(learner), learner.get("seen")
            if current is None or not isinstance(seen, int) or seen < 2:
                return False
            self._keep(site, state, current, seen)
            return True

    def _locked(self, site: str) -> AbstractContextManager[object]:
        """The site's lock in a shared store (as :class:`~scrapy_detemplate.state.LockedRunner` takes it for run)."""
        return self._store.locked(site) if isinstance(self._store, SiteLocking) else nullcontext()

    # -- learning ----------------------------------------------------------

    def _learn(self, page: ParsedPage, body: Any, state: dict[str, Any]) -> Verdict:
        try:
            sample = page_tree(body, self._max_nodes)
        except TooLarge:  # cheap to find out (the count stops at the bound): no reason to give up on the site
            self.counts["too_large"] += 1
            return self._clean_meanwhile(page)
        learner = state.get("learner")
        finder = FindTemplate(self._max_pages, costs=self._costs, max_cells=self._max_cells)
        if isinstance(learner, dict):
            current = LabelTree.from_data(learner)
            seen = learner.get("seen")
            if current is not None and isinstance(seen, int) and seen > 0:
                finder.current, finder.seen = current, seen
        located = None  # the page walked for the current template: once, for the share and Match
        if finder.seen >= 2 and finder.current is not None:
            located = find(finder.current, body)
            if located_share(finder.current, located) < self._threshold:
                # The page does not carry what the samples so far share: they mix
                # templates (a layout change while learning).  Start over from it.
                finder.current, finder.seen = None, 0
                self.counts["restarts"] += 1
        seed = finder.current if finder.seen == 1 else None
        try:
            finder.add(sample, body, located)
        except TooLarge:
            if finder.seen == 1 and finder.current is not None and len(sample) < len(finder.current):
                # P_x is too large to map against this page: the smaller page takes its
                # place, or one long first page would keep the site from ever learning.
                finder.current = sample
                self.counts["restarts"] += 1
            else:
                return self._refuse(page, state)
        # Seed check: two pages of one template share a sizeable part of their
        # text leaves; a first sample from another layout would leave almost
        # nothing, and every later page would match that nothing.
        if (
            seed is not None
            and finder.current is not None
            and text_leaves(finder.current) < SEED_SHARE * min(text_leaves(seed), text_leaves(sample))
        ):
            finder.current, finder.seen = sample, 1
            self.counts["restarts"] += 1
        self.counts["extractions"] += finder.extractions
        assert finder.current is not None
        state["refused"] = 0
        if not finder.done:
            state["learner"] = {**finder.current.as_data(), "seen": finder.seen}
            self._store.set(NAMESPACE, page.site, state)
            if self._hold:
                self.counts["held"] += 1
                return Verdict(detail=HOLD)
            return self._clean_meanwhile(page)
        # Learned: keep it, apply it now.
        template = finder.current
        self._keep(page.site, state, template, finder.seen)
        self.counts["applied"] += 1
        lines, elements, _ = template_parts(template, body, [line.slots for line in page.lines])
        return Verdict(template_lines=lines, template_elements=elements, detail="applied")

    def _keep(self, site: str, state: dict[str, Any], template: LabelTree, seen: int) -> None:
        """Store a learned template (forgetting the least used beyond the bound); end the learner."""
        entries = state["templates"]
        entries.append({**template.as_data(), "uses": 0})
        if len(entries) > self._max_templates:
            entries.remove(min(entries[:-1], key=lambda e: int(e.get("uses", 0))))
        state["learner"] = None
        state["gen"] = _fingerprint(entries)
        self._store.set(NAMESPACE, site, state)
        self.counts["learned"] += 1
        logger.info(
            "detemplate: rtdm learned a template of %s from %d pages (%d nodes, %d templates kept)",
            site, seen, len(template), len(entries),
        )  # fmt: skip

    def _refuse(self, page: ParsedPage, state: dict[str, Any]) -> Verdict:
        """A page the mapping refused: cleaned meanwhile; the site gives up learning
        after :data:`GIVE_UP_AFTER` such pages in a row (pages over the node bound
        are not counted: finding that out costs little)."""
        self.counts["too_large"] += 1
        refused = state.get("refused")
        state["refused"] = refused = (refused if type(refused) is int and refused >= 0 else 0) + 1
        if refused >= GIVE_UP_AFTER:
            state["too_large"] = True
            state["learner"] = None
            self.counts["given_up"] += 1
            logger.info(
                "detemplate: rtdm stops learning %s: %d pages in a row too large to map (DETEMPLATE_RTDM_MAX_CELLS); "
                "its pages go to the meanwhile method (reason %r)",
                page.site, refused, TOO_LARGE_TO_LEARN,
            )  # fmt: skip
        self._store.set(NAMESPACE, page.site, state)
        return self._clean_meanwhile(page)

    def _clean_meanwhile(self, page: ParsedPage, detail: str = "learning") -> Verdict:
        self.counts["learning"] += 1
        verdict = self._meanwhile.run(page)
        return Verdict(
            template_lines=verdict.template_lines,
            template_elements=verdict.template_elements,
            clean_source=verdict.clean_source,
            detail=detail,
            method=verdict.method or self._meanwhile.name,
        )

    # -- state -------------------------------------------------------------

    def _load(self, site: str) -> dict[str, Any]:
        state = self._store.get(NAMESPACE, site)
        if isinstance(state, dict) and state.get("v") == _VERSION and isinstance(state.get("templates"), list):
            return state
        return {"v": _VERSION, "gen": 0, "templates": [], "learner": None}

    def _templates(self, site: str, state: dict[str, Any]) -> list[LabelTree]:
        key = (site, int(state.get("gen", 0)))
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        trees = [t for t in (LabelTree.from_data(e) for e in state["templates"]) if t is not None]
        if len(trees) != len(state["templates"]):  # corrupt entries: a cold start for them
            state["templates"] = [e for e in state["templates"] if LabelTree.from_data(e) is not None]
        self._cache[key] = trees
        while len(self._cache) > _CACHE:
            self._cache.popitem(last=False)
        return trees


def valid_state(value: Value) -> bool:
    """Whether ``value`` is a site's state as :class:`RtdmRunner` writes it (checked
    when state is loaded: a bad value is a cold start, not a failing page)."""
    if not (isinstance(value, dict) and value.get("v") == _VERSION and type(value.get("gen")) is int):
        return False
    templates, learner = value.get("templates"), value.get("learner")
    if not isinstance(templates, list) or not all(
        isinstance(t, dict) and type(t.get("uses", 0)) is int and LabelTree.from_data(t) is not None for t in templates
    ):
        return False
    if learner is not None:
        seen = learner.get("seen") if isinstance(learner, dict) else None
        if not (isinstance(seen, int) and not isinstance(seen, bool) and seen >= 1):
            return False
        if LabelTree.from_data(learner) is None:
            return False
    refused = value.get("refused", 0)
    if not isinstance(refused, int) or isinstance(refused, bool) or refused < 0:
        return False
    return isinstance(value.get("too_large", False), bool)


def _fingerprint(entries: list[dict[str, Any]]) -> int:
    """A content key for decoded templates: equal state, equal key, in any process."""
    digest = hashlib.blake2b(digest_size=8)
    for entry in entries:
        digest.update(json.dumps([entry.get("labels"), entry.get("parent")]).encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest(), "little") >> 1


def _meanwhile(config: DetemplateConfig, store: StateStore) -> Runner:
    from scrapy_detemplate.runners import RUNNERS

    if config.rtdm_meanwhile == "none" or config.rtdm_meanwhile not in RUNNERS:
        return NoRemoval(config, store)
    return RUNNERS[config.rtdm_meanwhile](config, store)
