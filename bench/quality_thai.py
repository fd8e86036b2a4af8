"""The default on pages written in Thai's way: no space between words, a space between clauses, no stops.

The development corpus is English.  Thai (and Lao, Khmer, Burmese) writes a sentence's words without
spaces between them, puts a space where English puts a comma or a full stop, and has vowel and tone
marks that combine with the consonant before them (``\\w`` does not match them: a Thai word is several
``\\w+`` tokens).  To see what that does to the line measures, every page is rewritten: each word of its
visible text becomes two Thai syllables of two characters each, a consonant and a vowel or tone mark
(the same word, in lower case, the same four characters on every page: each new word the next unused pair), the spaces
between words go, and a ``,`` ``.`` ``!`` ``?`` ``;`` that ends a word becomes a space (digits and words
with no letter are left as they were, a space beside them).  The markup, the links and the class names
stay as they were.  One default engine cleans the original pages (a control, parsed and serialised the
same way: ``quality_cjk.versions``) and another the rewritten ones, in crawl order; the rewritten output
is read back into its words (four characters at a time) and both are scored against the original gold
(METRICS.md), so the two figures differ only by what the script does to the method.

The shipped model has seen these corpora, so the figures are in-corpus: the drop from the control is
the point, not the level.  Usage (from the repository root)::

    .venv/bin/python bench/quality_thai.py [--corpus ../shared/corpus] [c2f dragnet10 wcxb-dev]

Figures also go to ``bench/results/quality_thai.txt``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from quality_cjk import CONTROLS, LETTERS, main_for, measure_versions

#: Thai's consonants (ก-ฮ) and what follows one in a syllable here: vowels that are letters (ะ า) and
#: vowel and tone marks that combine with it (ั ิ ี ึ ุ ู ่ ้), as in real Thai text.
CONSONANTS = [chr(c) for c in range(0x0E01, 0x0E2F)]
AFTER = ["\u0e30", "\u0e32", "\u0e31", "\u0e34", "\u0e35", "\u0e36", "\u0e38", "\u0e39", "\u0e48", "\u0e49"]
SYLLABLES = [c + v for c in CONSONANTS for v in AFTER]
WORD = 4  # characters a word becomes
THAI = re.compile("[\u0e01-\u0e5b]+")
#: Marks that end a clause or a sentence in English: a space in Thai.
BREAKS = ",.!?;"


#: word (case folded) -> its two syllables, and back: each new word takes the next pair, so no two words
#: share one (a hash of 211,600 pairs would give the same pair to about one word in a hundred on a page).
#: Which pair a word gets depends on the corpora measured before it: the figures are those of the default run.
CODES: dict[str, str] = {}
WORDS: dict[str, str] = {}


def thai_word(word: str) -> str:
    """The two syllables that stand for ``word`` (case folded) on every page."""
    word = word.lower()
    code = CODES.get(word)
    if code is None:
        n = len(CODES)
        if n >= len(SYLLABLES) ** 2:
            raise ValueError("more distinct words than pairs of syllables")
        code = CODES[word] = SYLLABLES[n % len(SYLLABLES)] + SYLLABLES[n // len(SYLLABLES)]
        WORDS[code] = word
    return code


def rewrite(text: str) -> str:
    """``text`` as if written in Thai: words as syllables, no space between them, a space for a break."""
    out: list[str] = []
    for token in text.split():
        stripped = token.rstrip(BREAKS)
        breaks = stripped != token and LETTERS.search(stripped) is not None
        if not breaks:
            stripped = token
        piece = LETTERS.sub(lambda m: thai_word(m.group()), stripped)
        joined = out and THAI.fullmatch(out[-1][-1]) and piece and THAI.fullmatch(piece[0])  # two Thai words
        if out and out[-1] != " " and not joined:
            out.append(" ")
        out.append(piece)
        if breaks:
            out.append(" ")
    return CONTROLS.sub("", "".join(out).strip())


def read_back(text: str) -> str:
    """A rewritten text in its words again (four characters at a time)."""
    return THAI.sub(
        lambda m: " " + " ".join(WORDS.get(m[0][k : k + WORD], "?") for k in range(0, len(m[0]), WORD)) + " ", text
    )


def measure(manifest: Path) -> dict[str, list[tuple[str, float, float]]]:
    """Per version (control, thai): (site, F1, F1 of keeping every line) of every page, in the original words."""
    return measure_versions(manifest, {"thai": (rewrite, read_back)})


TITLE = (
    "The default (combined, shipped model) on each corpus's pages and on the same pages rewritten as Thai is",
    "written (bench/quality_thai.py), scored in the original words; in-corpus figures.",
)


def main(argv: list[str] | None = None) -> int:
    return main_for(__doc__, "quality_thai.txt", measure, TITLE, argv)


if __name__ == "__main__":
    sys.exit(main())
