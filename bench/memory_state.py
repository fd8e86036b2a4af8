"""Peak resident memory of the engine's state over a broad crawl: flat once the bounds are reached.

A generated stream of ``--pages`` pages (default 100,000) over ``--sites``
sites (default 10,000), three directories a site, sites drawn at random
(seeded), goes through the real engine (:class:`Detemplater`, parsing and
rendering included) with the crawl-time store of :mod:`scrapy_detemplate.state`.
Each configuration runs in its own process; every ``--every`` pages it reports
the resident set (``/proc/self/statm``), the peak (``ru_maxrss``), the keys
held and the keys evicted.

Configurations: ``bounded`` (``DETEMPLATE_MAX_DIRECTORIES`` /
``DETEMPLATE_MAX_SITES`` = ``--bound``, default 2,000) and ``unbounded``
(bounds of 10**9, the control: everything the stream touches stays), for the
``sandwich`` method (state per directory) and ``segments`` (per site, with
sandwich on its first pages, so both namespaces).

    .venv/bin/python bench/memory_state.py [--pages 100000] [--sites 10000] [--bound 2000]
        [--methods sandwich,segments] [--configs bounded,unbounded] [--out FILE]

Figures go to ``bench/results/memory_state.txt`` (or ``--out``) as well.  The
default run takes about 2.5 minutes on one core; ``combined`` (the default
method) costs about 1.5 ms a page here, so it is left to an explicit
``--methods combined --configs bounded --out bench/results/memory_state_combined.txt``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORDS = [
    "river", "city", "council", "budget", "harbour", "school", "market", "train", "station", "museum", "garden",
    "festival", "season", "league", "coach", "striker", "goal", "match", "storm", "forecast", "battery", "software",
    "network", "robot", "chip", "laptop", "phone", "theatre", "novel", "painter", "concert", "gallery", "film",
    "director", "actor", "orchestra", "engineer",
]  # fmt: skip


def site_template(site: int) -> tuple[str, str]:
    rng = random.Random(site)
    nav = "".join(f"<li><a href='/{w}/'>{w.title()}</a></li>" for w in rng.sample(WORDS, 6))
    head = (f"<html><head><title>Site {site}</title></head><body><header><h1>Site {site} Daily</h1>"
            f"<p>{' '.join(rng.sample(WORDS, 5))}</p></header><nav><ul>{nav}</ul></nav><main>")  # fmt: skip
    side = "".join(f"<li>{' '.join(rng.sample(WORDS, 4))}</li>" for _ in range(5))
    foot = (f"</main><aside><ul>{side}</ul></aside>"
            f"<footer><p>Copyright Site {site}</p><p>Contact</p></footer></body></html>")  # fmt: skip
    return head, foot


def page(site: int, n: int, rng: random.Random) -> tuple[str, bytes]:
    head, foot = site_template(site)
    paras = "".join(f"<p>{' '.join(rng.choices(WORDS, k=12)).capitalize()}.</p>" for _ in range(rng.randint(4, 10)))
    url = f"http://site{site}.example/d{n % 3}/page-{n}.html"
    return url, f"{head}<h2>Story {n}</h2>{paras}{foot}".encode()


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(method: str, config_name: str, pages: int, sites: int, bound: int, every: int) -> None:
    from scrapy_detemplate.config import DetemplateConfig
    from scrapy_detemplate.engine import Detemplater
    from scrapy_detemplate.state import SITE_NAMESPACES, memory_store

    limit = bound if config_name == "bounded" else 10**9
    config = DetemplateConfig(method=method, max_directories=limit, max_sites=limit)
    store = memory_store(config)
    engine = Detemplater(config, store)
    rng = random.Random(20261121)
    counters = [0] * sites
    statuses: dict[str, int] = {}
    start = time.perf_counter()
    for i in range(1, pages + 1):
        site = rng.randrange(sites)
        counters[site] += 1
        url, body = page(site, counters[site], rng)
        result = engine.process(url, body, headers={"Content-Type": "text/html; charset=utf-8"})
        statuses[result.status] = statuses.get(result.status, 0) + 1
        if i % every == 0:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            keys = {ns: store.size(ns) for ns in ("sandwich", *SITE_NAMESPACES) if store.size(ns)}
            print(json.dumps({"pages": i, "rss": round(rss_mb(), 1), "peak": round(peak, 1), "keys": keys,
                              "evictions": store.evictions, "seconds": round(time.perf_counter() - start, 1),
                              "statuses": statuses}), flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--sites", type=int, default=10_000)
    parser.add_argument("--bound", type=int, default=2_000)
    parser.add_argument("--every", type=int, default=10_000)
    parser.add_argument("--methods", default="sandwich,segments")
    parser.add_argument("--configs", default="bounded,unbounded")
    parser.add_argument("--out", default=str(HERE / "results" / "memory_state.txt"), help="where to write the table")
    parser.add_argument("--child", nargs=2, metavar=("METHOD", "CONFIG"))
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.pages, args.sites, args.bound, args.every)
        return
    out = [f"# bench/memory_state.py --pages {args.pages} --sites {args.sites} --bound {args.bound} "
           f"--methods {args.methods} --configs {args.configs}",
           "# method    config     pages   rss_MB  peak_MB  keys_held                         evicted  s"]  # fmt: skip
    print("\n".join(out), flush=True)
    for method in args.methods.split(","):
        for config_name in args.configs.split(","):
            cmd = [sys.executable, __file__, "--child", method, config_name, "--pages", str(args.pages),
                   "--sites", str(args.sites), "--bound", str(args.bound), "--every", str(args.every)]  # fmt: skip
            proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
            for line in proc.stdout.splitlines():
                row = json.loads(line)
                keys = ",".join(f"{k}={v}" for k, v in row["keys"].items())
                text = (f"{method:<10} {config_name:<9} {row['pages']:>7} {row['rss']:>8} {row['peak']:>8}  "
                        f"{keys:<32} {row['evictions']:>8} {row['seconds']:>5}")  # fmt: skip
                out.append(text)
                print(text, flush=True)
            out.append(f"# {method} {config_name} statuses: {json.dumps(row['statuses'])}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
