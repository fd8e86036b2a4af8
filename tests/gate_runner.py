"""The evaluation gate's measuring, in two background processes while the rest of the suite runs.

``tests/conftest.py`` calls :func:`start` once the gate's test is collected and moves that test to the
end of the run: the corpora are measured meanwhile (about 300 s of work for one core) and the
test only waits for what is left.  Each process is this file run as a script on some of the corpora; it
prints ``{corpus: {method: {figure: value}}}`` as JSON.  A process that fails or dies fails the gate's
test with its exit status and the end of its error output; :func:`stop` kills what is still running
when the session ends first (``-x``, Ctrl-C).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
FLOORS: dict[str, dict[str, dict[str, float]]] = json.loads(Path(__file__).with_name("quality_floors.json").read_text())

#: Seconds each corpus's methods took alone (one run, 2026-11-29): the corpora are shared out between the
#: two processes by these, the longest first.  A corpus not listed counts as the longest.
SECONDS = {"wcxb-dev": 139, "c2f": 78, "docs": 49, "dragnet10": 30}


def measure(corpus: str, methods: list[str], settings: dict[str, Any] | None = None) -> dict[str, dict[str, float]]:
    """Each method's gated figures on the corpus: the pages read once for all of them."""
    from scrapy_detemplate.config import DetemplateConfig
    from scrapy_detemplate.evaluation import GATED, read_manifest, run_methods

    configs = [DetemplateConfig(method=method, **(settings or {})) for method in methods]
    summaries = run_methods(configs, read_manifest(CORPUS / f"{corpus}.manifest.jsonl"))
    return {method: {k: s.macro()[k] for k in GATED} for method, s in zip(methods, summaries, strict=True)}


def shares(corpora: list[str], workers: int = 2) -> list[list[str]]:
    """The corpora shared out between ``workers`` processes: each, longest first, to the least loaded."""
    loads = [[0.0, []] for _ in range(workers)]
    for corpus in sorted(corpora, key=lambda c: -SECONDS.get(c, 1e9)):
        least = min(loads, key=lambda load: load[0])
        least[0] += SECONDS.get(corpus, 1e9)
        least[1].append(corpus)
    return [share for _, share in loads if share]


class Measuring:
    """One process for each share of the corpora (this file run as a script), started at once."""

    def __init__(self, corpus_shares: list[list[str]]) -> None:
        self.running: list[tuple[subprocess.Popen[bytes], IO[bytes], IO[bytes]]] = []
        for share in corpus_shares:
            # Files, not pipes: a pipe left unread until the end would block the process once full.
            out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
            proc = subprocess.Popen([sys.executable, __file__, *share], stdout=out, stderr=err)
            self.running.append((proc, out, err))

    def scores(self) -> dict[str, dict[str, dict[str, float]]]:
        """What the processes measured, once all have ended; ``RuntimeError`` naming a failed process's
        corpora, exit status and last error lines."""
        measured: dict[str, dict[str, dict[str, float]]] = {}
        for proc, out, err in self.running:
            code = proc.wait()
            out.seek(0)
            err.seek(0)
            if code != 0:
                tail = err.read().decode("utf-8", "replace")[-3000:]
                corpora = " ".join(map(str, proc.args[2:]))
                raise RuntimeError(f"measuring {corpora} ended with exit status {code}:\n{tail}")
            measured.update(json.loads(out.read()))
        return measured

    def stop(self) -> None:
        """Kill the processes still running and close their files."""
        for proc, out, err in self.running:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            out.close()
            err.close()


_measuring: Measuring | None = None


def start() -> None:
    """Start measuring every corpus of the floors (once a session)."""
    global _measuring
    if _measuring is None:
        _measuring = Measuring(shares(sorted(FLOORS)))


def scores() -> dict[str, dict[str, dict[str, float]]]:
    """Every corpus of the floors measured (started here if nothing runs yet)."""
    start()
    assert _measuring is not None
    return _measuring.scores()


def stop() -> None:
    """Kill what still runs (the session ends)."""
    global _measuring
    if _measuring is not None:
        _measuring.stop()
        _measuring = None


if __name__ == "__main__":
    print(json.dumps({corpus: measure(corpus, list(FLOORS[corpus])) for corpus in sys.argv[1:]}))
