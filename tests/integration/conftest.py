from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import demosite
import pytest

RUNNER = Path(__file__).with_name("crawl_runner.py")


@dataclass
class Crawl:
    items: list[dict[str, Any]]
    stats: dict[str, Any]
    log: str


def run_crawl(tmp_path: Path, timeout: float = 240, **job: Any) -> Crawl:
    """Run a real crawl in a fresh process and read back its feed and stats."""
    job["out"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, str(RUNNER), json.dumps(job)], capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    feed = tmp_path / "items.jsonl"
    items = [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()]
    stats = json.loads((tmp_path / "stats.json").read_text())
    return Crawl(items, stats, proc.stderr)


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[dict[str, demosite.Page], str]]:
    pages = demosite.build_site()
    server, base = demosite.serve(pages)
    yield pages, base
    server.shutdown()
