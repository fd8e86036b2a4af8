"""Loading the optional compiled modules (``scrapy_detemplate/**/_*.pyx``, built by ``setup.py``).

Each compiled module does what a Python function of the package does, with the
same results (the tests hold the two equal); it is used when it was built and
was built against the lxml that runs, else the Python function is.  Whether each
one is in use, and why not, is kept here for the crawl's log and stats.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from lxml import etree

#: module name -> why it is not in use ("" when it is).
_STATUS: dict[str, str] = {}


def load(name: str) -> ModuleType | None:
    """The compiled module ``name`` (``"scrapy_detemplate._tree"``), or ``None`` when it
    was not built, does not load, or was built against another lxml (the reason is kept)."""
    try:
        module = importlib.import_module(name)
    except Exception as exc:  # not built, or built against an lxml whose C API differs
        _STATUS[name] = f"{name} is not built or does not load ({type(exc).__name__}: {exc})"
        return None
    built = tuple(getattr(module, "LXML_VERSION", ()))[:2]
    if built != etree.LXML_VERSION[:2]:
        built_text, running = (".".join(map(str, v)) for v in (built, etree.LXML_VERSION[:2]))
        _STATUS[name] = f"{name} was built against lxml {built_text}, lxml {running} runs (reinstall to rebuild)"
        return None
    _STATUS[name] = ""
    return module


def status() -> dict[str, str]:
    """Every compiled module asked for so far: its name -> why it is not in use (``""``: in use)."""
    return dict(_STATUS)
