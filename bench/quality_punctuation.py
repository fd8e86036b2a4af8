"""The default on pages whose scripts end sentences and separate clauses with marks of their own.

The development corpus is English, where a sentence ends in ``.``, ``!`` or ``?`` and a clause in ``,``.
Hindi, Marathi, Nepali and Bengali end a sentence with the danda ``।``; Urdu with ``۔``, and Arabic,
Persian and Urdu write ``،`` for a comma and ``؟`` for a question mark; Amharic, Armenian, Burmese and
Khmer have stops of their own (``።``, ``։``, ``။``, ``។``).  The line measures the trees read count
sentence ends and commas.  To see what such marks do, every page is rewritten, its words left as they
are: in a **danda** version every full stop that ends a sentence (after a letter or digit, before a
space, a quote or the end of the text) becomes ``।``; in an **arabic** version it becomes ``۔``, a
comma before a space ``،`` and every ``?`` ``؟``.  The markup, the links and the class names stay as
they were.  One default engine cleans the original pages (a control, parsed and serialised the same
way: ``quality_cjk.versions``) and one each version, in crawl order; the words are the same, so every
version is scored against the same gold (METRICS.md) and differs only by what the marks do to the method.

The shipped model has seen these corpora, so the figures are in-corpus: the drop from the control is
the point, not the level.  Usage (from the repository root)::

    .venv/bin/python bench/quality_punctuation.py [--corpus ../shared/corpus] [c2f dragnet10 wcxb-dev]

Figures also go to ``bench/results/quality_punctuation.txt``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from quality_cjk import CONTROLS, main_for, measure_versions

#: A full stop that ends a sentence: after a letter or a digit, before a space, a closing quote or the end.
STOP = re.compile(r"(?<=\w)\.(?=[\s\"'\u201d)]|$)")
COMMA = re.compile(r",(?=\s)")


def danda(text: str) -> str:
    """``text`` with the danda for the full stops that end a sentence (Hindi, Marathi, Nepali, Bengali)."""
    return CONTROLS.sub("", STOP.sub("\u0964", text))  # lxml takes no control character back


def arabic(text: str) -> str:
    """``text`` with Urdu's full stop, the Arabic comma and the Arabic question mark."""
    return CONTROLS.sub("", COMMA.sub("\u060c", STOP.sub("\u06d4", text)).replace("?", "\u061f"))


VERSIONS = {"danda": danda, "arabic": arabic}


def measure(manifest: Path) -> dict[str, list[tuple[str, float, float]]]:
    """Per version (control, danda, arabic): (site, F1, F1 of keeping every line) of every page."""
    return measure_versions(manifest, {name: (rewrite, str) for name, rewrite in VERSIONS.items()})


TITLE = (
    "The default (combined, shipped model) on each corpus's pages and on the same pages with the sentence",
    "ends and commas of other scripts (bench/quality_punctuation.py); in-corpus figures.",
)


def main(argv: list[str] | None = None) -> int:
    return main_for(__doc__, "quality_punctuation.txt", measure, TITLE, argv)


if __name__ == "__main__":
    sys.exit(main())
