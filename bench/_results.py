"""Where the bench scripts write what they print: ``bench/results/<name>``."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def write_result(name: str, text: str) -> Path:
    """Write ``text`` (one trailing newline) to ``bench/results/name`` and return the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    return path
