"""Markdown text: page text escaped for CommonMark, emphasis, code spans, line starts.

Helpers of :mod:`scrapy_detemplate.markdown` (see its docstring for why each
rule keeps the words of the text output).  Emphasis and hard breaks are
written as sentinels while a paragraph is built and resolved when it is done.
"""

from __future__ import annotations

import re

# Sentinels (Unicode noncharacters) marking emphasis and hard breaks until a
# paragraph is finished; the same characters in page text become U+FFFD.
STRONG_OPEN, STRONG_CLOSE, EM_OPEN, EM_CLOSE, BR = "\ufdd0", "\ufdd1", "\ufdd2", "\ufdd3", "\ufdd4"
SENTINELS = re.compile("[\ufdd0-\ufdd4]")
_MARKS = {STRONG_OPEN: "**", EM_OPEN: "*"}
# An innermost emphasis pair (same kinds never nest: the inner one is not written).
_PAIR = re.compile("([\ufdd0\ufdd2])([^\ufdd0-\ufdd3]*)[\ufdd1\ufdd3]")
#: What ``str.split()`` splits on (the text output's whitespace), and the hard break sentinel.
EDGE_SPACE = "".join(chr(c) for c in range(0x3001) if chr(c).isspace()) + BR
_NEEDS_ESCAPE = re.compile("[\\\\`*_\\[\\]<|~&#\ufdd0\ufdd1\ufdd2\ufdd3\ufdd4]")
_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~]|$)")
_ALWAYS = re.compile(r"[`*\[\]<|~]")
_UNDERSCORES = re.compile(r"_+")
_AMPERSAND = re.compile(r"&(?=[#A-Za-z0-9]|$)")
_HASH = re.compile(r"(?:^|(?<=\s))#")
LINE_START_CHARS = frozenset("-+=>0123456789")
_LINE_START = re.compile(r"^(?:>|[-+](?=\s|$|-)|=+\s*$|(\d{1,9})[.)](?=\s|$))")
BACKTICKS = re.compile(r"`+")
_BLANK_INDENTED = re.compile(r"(?m)^ +$")


def needs_escape(text: str) -> bool:
    """Whether long ``text`` holds a character :func:`esc` may escape (``in`` tests beat a regex there)."""
    return (
        "_" in text or "*" in text or "\\" in text or "`" in text or "[" in text or "]" in text or "<" in text
        or "|" in text or "~" in text or "&" in text or "#" in text or has_sentinel(text)
    )  # fmt: skip


def has_sentinel(text: str) -> bool:
    return "\ufdd0" in text or "\ufdd1" in text or "\ufdd2" in text or "\ufdd3" in text or "\ufdd4" in text


def esc(text: str) -> str:
    """Page text escaped so that CommonMark reads it back as the same text (see the module doc)."""
    if (_NEEDS_ESCAPE.search(text) is None) if len(text) < 48 else not needs_escape(text):
        return text
    if has_sentinel(text):
        text = SENTINELS.sub("\ufffd", text)
    if "\\" in text:
        text = _BACKSLASH.sub(r"\\\\", text)
    if "`" in text or "*" in text or "[" in text or "]" in text or "<" in text or "|" in text or "~" in text:
        text = _ALWAYS.sub(r"\\\g<0>", text)
    if "_" in text:
        text = _UNDERSCORES.sub(lambda m: _underscores(m, text), text)
    if "&" in text:
        text = _AMPERSAND.sub(r"\\&", text)
    if "#" in text:
        text = _HASH.sub(r"\\#", text)
    return text


def _underscores(match: re.Match[str], text: str) -> str:
    """A run of ``_`` between two letters or digits cannot open or close emphasis; any other is escaped."""
    start, end = match.span()
    if start > 0 and end < len(text) and text[start - 1].isalnum() and text[end].isalnum():
        return match.group()
    return "\\_" * (end - start)


def indent_lines(text: str, indent: str) -> str:
    """Every line of ``text`` but the first indented (blank lines stay empty)."""
    if "\n" not in text:
        return text
    text = text.replace("\n", "\n" + indent)
    return _BLANK_INDENTED.sub("", text) if "\n" + indent + "\n" in text or text.endswith("\n" + indent) else text


def line_start(line: str) -> str:
    """Escape what would start a block at the beginning of a line (list, quote, setext underline)."""
    match = _LINE_START.match(line)
    if match is None:
        return line
    if match.group(1):  # "1." or "1)": an ordered list marker
        return line[: match.end(1)] + "\\" + line[match.end(1) :]
    return "\\" + line


def resolve(text: str) -> str:
    """Turn emphasis sentinels into ``*``/``**`` where CommonMark reads them as emphasis.

    Innermost pairs first.  Whitespace (and hard breaks) at the edges of the
    emphasised text moves outside; a pair around nothing, or touched from
    outside by a word character, is dropped, so markup never splits a word.
    """
    if STRONG_OPEN not in text and EM_OPEN not in text:
        return text
    while True:
        new = _PAIR.sub(_emphasis, text)
        if new == text:
            return SENTINELS.sub(lambda m: BR if m.group() == BR else "", new)
        text = new


def _emphasis(match: re.Match[str]) -> str:
    text, (start, end) = match.string, match.span()
    inner = match.group(2)
    core = inner.strip(EDGE_SPACE)
    if not core:
        return inner
    lead = inner[: len(inner) - len(inner.lstrip(EDGE_SPACE))]
    trail = inner[len(inner.rstrip(EDGE_SPACE)) :]
    before = "" if lead else _neighbour(text, start - 1, -1)
    after = "" if trail else _neighbour(text, end, 1)
    if (before and (before.isalnum() or before == "_")) or (after and (after.isalnum() or after == "_")):
        return inner
    mark = _MARKS[match.group(1)]
    return f"{lead}{mark}{core}{mark}{trail}"


def _neighbour(text: str, index: int, step: int) -> str:
    """The first character from ``index`` on (in direction ``step``) that is not an emphasis sentinel."""
    while 0 <= index < len(text):
        char = text[index]
        if char not in "\ufdd0\ufdd1\ufdd2\ufdd3":
            return char
        index += step
    return ""


def wrap(open_: str, inner: str, close: str) -> str:
    """``open_ inner close`` with ``inner``'s edge whitespace moved outside; ``inner`` alone if empty."""
    core = inner.strip(EDGE_SPACE)
    if not core:
        return inner
    lead = inner[: len(inner) - len(inner.lstrip(EDGE_SPACE))]
    trail = inner[len(inner.rstrip(EDGE_SPACE)) :]
    return f"{lead}{open_}{core}{close}{trail}"


def code_span(raw: str, in_table: bool = False) -> str:
    """A code span for ``raw`` (whitespace collapsed, edges moved outside)."""
    core = " ".join(raw.split())
    if not core:
        return " " if raw else ""
    lead = " " if raw[:1].isspace() else ""
    trail = " " if raw[-1:].isspace() else ""
    if in_table:
        core = core.replace("|", "\\|")  # GFM: a pipe ends a cell even inside code
    ticks = "`" * (1 + max(map(len, BACKTICKS.findall(core)), default=0))
    pad = " " if core[0] == "`" or core[-1] == "`" else ""
    return f"{lead}{ticks}{pad}{core}{pad}{ticks}{trail}"
