"""Where the bench scripts read the corpus (``../shared/corpus`` beside the checkout) and write what they
print (``bench/results/<name>``)."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
#: The development corpus, kept beside the checkout (never in the repository).
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def write_result(name: str, text: str) -> Path:
    """Write ``text`` (one trailing newline) to ``bench/results/name`` and return the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    return path
