"""What a method runner sees (a parsed page) and returns (a verdict).

A runner adapts one pure algorithm from :mod:`scrapy_detemplate.methods` to the
engine: it reads and writes the method's per-site or per-directory state in the
store and says which parts of the page are template.  Rendering the clean page
is the engine's job, the same for every method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from lxml import etree

from scrapy_detemplate._html import Line, visible_lines
from scrapy_detemplate.config import InvalidSetting, directory_key
from scrapy_detemplate.methods.kinds import declared_names

if TYPE_CHECKING:
    from scrapy_detemplate.config import DetemplateConfig
    from scrapy_detemplate.store import StateStore


@dataclass(slots=True)
class ParsedPage:
    """One page, decoded and parsed once, as every runner receives it."""

    url: str
    site: str
    directory: str
    html: str
    root: etree._Element
    _lines: list[Line] | None = field(default=None, repr=False)
    _declared_names: list[str] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, url: str, html: str, root: etree._Element, config: DetemplateConfig) -> ParsedPage:
        """The page with its site and directory keys derived as the settings say."""
        site = config.site_key(url)
        return cls(url, site, directory_key(url, site), html, root)

    @property
    def lines(self) -> list[Line]:
        """Visible text lines of the page (computed once, on first use)."""
        if self._lines is None:
            self._lines = visible_lines(self.root)
        return self._lines

    @property
    def declared_names(self) -> list[str]:
        """The names of the kinds the page declares for search engines, in the order of its source
        (:func:`~scrapy_detemplate.methods.kinds.declared_names`; read once, on first use)."""
        if self._declared_names is None:
            self._declared_names = declared_names(self.html)
        return self._declared_names


@dataclass(frozen=True, slots=True)
class Verdict:
    """A runner's answer for one page.

    ``template_lines`` index :attr:`ParsedPage.lines`; ``template_elements``
    are whole subtrees; ``clean_source`` is set by methods that cut the HTML
    source itself (Sandwich on source lines).  ``detail`` says why nothing was
    removed (``"no_peer"``, ``"duplicate"``...) or in which phase the method
    was (``"learning"``, ``"applied"``), for results and stats.  ``method`` names
    the method that decided when a runner handed the page to another one (a
    fallback while a site is learning); empty means the runner itself.
    """

    template_lines: frozenset[int] = frozenset()
    template_elements: tuple[etree._Element, ...] = ()
    clean_source: str | None = None
    detail: str = ""
    method: str = ""

    @property
    def removes_something(self) -> bool:
        return bool(self.template_lines or self.template_elements or self.clean_source is not None)


class Runner(Protocol):
    """One method, wired to the store.  Built once per engine."""

    name: str

    def run(self, page: ParsedPage) -> Verdict: ...


class RunnerFactory(Protocol):
    def __call__(self, config: DetemplateConfig, store: StateStore) -> Runner: ...


class NoRemoval:
    """The floor: keep all visible text."""

    name = "none"

    def __init__(self, config: DetemplateConfig, store: StateStore) -> None:
        del config, store

    def run(self, page: ParsedPage) -> Verdict:
        return Verdict(detail="no_removal")


def unusable_model(setting: str, path: str, command: str, exc: Exception) -> InvalidSetting:
    """The start-up error for a model file that is missing, unreadable or not a model."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    expected = f"a JSON model file from scrapy-detemplate {command} ({type(exc).__name__}: {reason[:200]})"
    return InvalidSetting(setting, path, expected)
