"""Memory of the ``segments`` method: size of the text segment tables over long streams.

The paper's own question (Wang et al. 2008, Table 1): how much does the text
segment table hold, compared with caching pages for a batch method?  We report,
for each stream, with logistic expiry on (the defaults: Tb=20, N=50, r=0.5,
sweep every 16 pages) and off (Tb=0):

* average and peak number of table entries, summed over all sites, where the
  average is the paper's AverageSize = sum(s_i) / #pages with s_i the size when
  the i-th page is inserted; "held" counts what is in memory, "live" the entries
  not yet past their living time (the paper's table; the difference is what
  waits for the next sweep);
* bytes: 16 per entry in the packed form (8-byte key, 4-byte DF, 4-byte last
  page; :func:`~scrapy_detemplate.methods.segments.pack_table`), and the bytes
  the in-process dicts take (measured once, at the end, with ``sys.getsizeof``);
* the bytes that caching pages would take: a batch of 24 pages per site (the
  paper's average batch), at the mean HTML size of the corpus pages.

Streams:

* ``corpus``: the real corpus pages (c2f, dragnet10) through ``SegmentsRunner``
  in manifest order (short: 10-28 pages a site);
* ``wide``: a generated stream of ``--pages`` pages (default 100,000) over
  ``--sites`` sites (default 1,000), sites interleaved at random;
* ``long``: ``--pages`` pages over 20 sites (5,000 pages a site), longer than
  the bound Tb*N = 1,000 pages, to show that a table stops growing.

A generated site has template segments (mostly shown on every page, slowly
replaced), a "latest headlines" box (a sliding window of 10 headlines), 10
related links drawn from its last 200 headlines and 60-140 segments of its own
per page, close to the corpus (about 200-270 segments a page, of which about a
fifth recur).  Generated streams drive :class:`SegmentTable` directly (the
table only sees segment keys).  With expiry off the table holds every key ever
seen; the generator mints each key on the page that first shows it, so that
size is the number of keys minted; a real table checks this on a prefix.

    .venv/bin/python bench/memory_segments.py [--pages 100000] [--sites 1000] [--no-corpus]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from _results import CORPUS, write_result  # bench/, the script's folder

from scrapy_detemplate.methods.segments import LogisticExpiry, SegmentTable, pack_table

HERE = Path(__file__).resolve().parent
MANIFESTS = [CORPUS / "c2f.manifest.jsonl", CORPUS / "dragnet10.manifest.jsonl"]
BATCH = 24  # pages a batch method caches per site (the paper's average batch)
EXPIRY = {"tb": 20, "n": 50.0, "r": 0.5, "sweep_every": 16}


def _key(rng: random.Random) -> str:
    return f"{rng.getrandbits(64):016x}"


@dataclass
class GeneratedSite:
    """One generated site; every key is minted on the page that first shows it."""

    rng: random.Random
    template: list[str] = field(default_factory=list)
    headlines: deque[str] = field(default_factory=lambda: deque(maxlen=200))
    minted: int = 0
    pages: int = 0

    def page(self) -> list[str]:
        rng = self.rng
        keys: list[str] = []
        if not self.template:
            self.template = [self._mint() for _ in range(rng.randint(40, 120))]
            keys.extend(self.template)
        else:
            if rng.random() < 0.02:  # a template segment is replaced now and then
                i = rng.randrange(len(self.template))
                self.template[i] = self._mint()
                keys.append(self.template[i])
            keys.extend(k for k in self.template if rng.random() < 0.95)
        if rng.random() < 0.5 or not self.headlines:
            self.headlines.append(self._mint())
            keys.append(self.headlines[-1])
        keys.extend(list(self.headlines)[-10:])
        keys.extend(rng.sample(list(self.headlines), min(10, len(self.headlines))))
        keys.extend(self._mint() for _ in range(rng.randint(60, 140)))
        self.pages += 1
        return keys

    def _mint(self) -> str:
        self.minted += 1
        return _key(self.rng)


@dataclass
class Tally:
    """Average (the paper's sum(s_i) / #pages) and peak of a size sampled at every page."""

    total: float = 0.0
    peak: int = 0
    count: int = 0

    def add(self, size: int) -> None:
        self.total += size
        self.count += 1
        self.peak = max(self.peak, size)

    @property
    def average(self) -> float:
        return self.total / self.count if self.count else 0.0


def python_bytes(tables: list[dict[str, int]]) -> int:
    """Bytes the dicts, their keys and values take in this process."""
    total = 0
    for entries in tables:
        total += sys.getsizeof(entries)
        for key, value in entries.items():
            total += sys.getsizeof(key) + sys.getsizeof(value)
    return total


def mean_page_bytes() -> float:
    sizes = []
    for manifest in MANIFESTS:
        if not manifest.exists():
            continue
        for raw in manifest.read_text(encoding="utf-8").splitlines():
            if raw.strip():
                sizes.append((manifest.parent / json.loads(raw)["html"]).stat().st_size)
    return sum(sizes) / len(sizes) if sizes else 60_000.0


def generated_stream(name: str, pages: int, sites: int, page_bytes: float, seed: int) -> list[str]:
    rng = random.Random(seed)
    gens = [GeneratedSite(random.Random(rng.getrandbits(64))) for _ in range(sites)]
    expiry = LogisticExpiry(EXPIRY["tb"], EXPIRY["n"], EXPIRY["r"])  # type: ignore[arg-type]
    tables = [SegmentTable(sweep_every=EXPIRY["sweep_every"], expiry=expiry) for _ in range(sites)]  # type: ignore[arg-type]
    # The no-expiry table, checked for real on a prefix of the stream.
    verify_pages = min(pages, 5_000)
    unbounded = [SegmentTable(tb=0) for _ in range(sites)]
    on, off, cache = Tally(), Tally(), Tally()
    size_on = minted = cached = 0
    checkpoints: list[tuple[int, int, int, int]] = []
    start = time.perf_counter()
    for i in range(1, pages + 1):
        s = rng.randrange(sites) if name == "wide" else (i - 1) % sites
        table = tables[s]
        before_minted, before = gens[s].minted, len(table.entries)
        keys = gens[s].page()
        table.expand(keys)
        table.shrink()
        size_on += len(table.entries) - before
        minted += gens[s].minted - before_minted
        # A batch method caches pages until a batch of BATCH is full, then runs and drops them.
        cached += 1 - BATCH if gens[s].pages % BATCH == 0 else 1
        on.add(size_on)
        off.add(minted)
        cache.add(cached)
        if i <= verify_pages:
            unbounded[s].expand(keys)
            if i == verify_pages:
                real = sum(len(t.entries) for t in unbounded)
                assert real == minted, (real, minted)
                unbounded = []
        if i % (pages // 10 or 1) == 0:
            live = sum(len(t.live_entries()) for t in tables)
            checkpoints.append((i, size_on, live, minted))
    seconds = time.perf_counter() - start
    packed = sum(len(pack_table(t.entries)) for t in tables)
    assert packed == 16 * size_on
    py_bytes = python_bytes([t.entries for t in tables])
    out = [
        f"{name}: {pages:,} generated pages over {sites:,} sites ({pages // sites:,} a site), "
        f"{seconds:.0f} s; no-expiry size checked against a real table on the first {verify_pages:,} pages",
        _row("expiry on", on, size_on),
        _row("expiry off", off, minted),
        f"  {'page cache':<11} avg {cache.average * page_bytes / 1e6:10.1f} MB  peak "
        f"{cache.peak * page_bytes / 1e6:10.1f} MB  ({BATCH} pages a site at {page_bytes / 1e3:.0f} kB a page; "
        f"all pages: {pages * page_bytes / 1e6:,.0f} MB)",
        f"  expiry on, in-process dicts at the end: {py_bytes / 1e6:.1f} MB ({py_bytes / max(size_on, 1):.0f} B/entry)",
        "  growth (pages: entries held with expiry on, of which live / entries with expiry off): "
        + ", ".join(f"{p:,}: {a:,}, {b:,} / {c:,}" for p, a, b, c in checkpoints),
    ]
    return out


def _row(label: str, tally: Tally, final: int) -> str:
    return (
        f"  {label:<11} avg {tally.average:12,.0f} entries ({tally.average * 16 / 1e6:7.1f} MB packed)  "
        f"peak {tally.peak:12,} ({tally.peak * 16 / 1e6:7.1f} MB)  final {final:,}"
    )


def corpus_stream(page_bytes: float) -> list[str]:
    from scrapy_detemplate.config import DetemplateConfig
    from scrapy_detemplate.engine import Detemplater
    from scrapy_detemplate.evaluation import read_manifest
    from scrapy_detemplate.store import MemoryStore

    out = []
    for label, tb in (("expiry on", 20), ("expiry off", 0)):
        store = MemoryStore()
        config = DetemplateConfig(method="segments", segments_tb=tb, segments_first_pages="none")
        engine = Detemplater(config, store)
        tally, size, pages, sites = Tally(), 0, 0, set()
        for manifest in MANIFESTS:
            for page in read_manifest(manifest):
                site = config.site_key(page.url)
                sites.add(site)
                state = store.get("segments", site)
                before = len(state["table"]) if isinstance(state, dict) else 0  # type: ignore[arg-type]
                engine.process(page.url, page.body)
                state = store.get("segments", site)
                after = len(state["table"]) if isinstance(state, dict) else 0  # type: ignore[arg-type]
                size += after - before
                pages += 1
                tally.add(size)
        out.append(_row(label, tally, size))
    out.insert(0, f"corpus: {pages:,} real pages over {len(sites)} sites (c2f + dragnet10, manifest order)")
    out.append(
        f"  {'page cache':<11} all pages {pages * page_bytes / 1e6:.1f} MB; a full batch of {BATCH} a site "
        f"(or all its pages) {min(BATCH, pages / len(sites)) * len(sites) * page_bytes / 1e6:.1f} MB"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--sites", type=int, default=1_000)
    parser.add_argument("--long-sites", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2008)
    parser.add_argument("--no-corpus", action="store_true")
    args = parser.parse_args(argv)
    page_bytes = mean_page_bytes()
    out = [f"segments table memory (expiry {EXPIRY}; packed 16 B/entry)"]
    if not args.no_corpus:
        out += corpus_stream(page_bytes)
    out += generated_stream("wide", args.pages, args.sites, page_bytes, args.seed)
    out += generated_stream("long", args.pages, args.long_sites, page_bytes, args.seed + 1)
    text = "\n".join(out)
    print(text)
    write_result("memory_segments.txt", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
