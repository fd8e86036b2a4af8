"""Settings: every ``DETEMPLATE_*`` default in one place, validated once.

Scrapy components and the CLI turn settings into one frozen
:class:`DetemplateConfig`; nothing below the edge reads settings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import urlsplit

#: Every setting with its default, the enabling flag first.
DEFAULT_SETTINGS: dict[str, Any] = {
    "DETEMPLATE_ENABLED": True,
    "DETEMPLATE_METHOD": "combined",
    "DETEMPLATE_REPLACE_BODY": False,
    "DETEMPLATE_TEXT_FIELD": "content",
    "DETEMPLATE_HTML": False,
    "DETEMPLATE_HTML_FIELD": "",
    "DETEMPLATE_METHOD_FIELD": "",
    "DETEMPLATE_MARKDOWN": False,
    "DETEMPLATE_MARKDOWN_FIELD": "",
    "DETEMPLATE_MARKDOWN_LINKS": False,
    "DETEMPLATE_OVERWRITE_FIELDS": False,
    "DETEMPLATE_SOURCE_FIELD": "",
    "DETEMPLATE_URL_FIELD": "url",
    "DETEMPLATE_SITE_KEY": "",
    "DETEMPLATE_MAX_BYTES": 8 * 1024 * 1024,
    "DETEMPLATE_MAX_NODES": 50_000,
    "DETEMPLATE_MAX_DEPTH": 250,
    "DETEMPLATE_MAX_LINES": 20_000,
    "DETEMPLATE_MAX_DIRECTORIES": 10_000,
    "DETEMPLATE_MAX_SITES": 10_000,
    "DETEMPLATE_STATE_FRESH": False,
    "DETEMPLATE_REDIS_URL": "",
    "DETEMPLATE_REDIS_KEY": "%(spider)s:detemplate",
    "DETEMPLATE_REDIS_TTL": 0,
    "DETEMPLATE_REDIS_LOCK_WAIT": 10.0,
    "DETEMPLATE_SANDWICH_UNIT": "text",
    "DETEMPLATE_SANDWICH_PEER": "last",
    "DETEMPLATE_SANDWICH_CANDIDATES": 16,
    "DETEMPLATE_SEGMENTS_DF_THRESHOLD": 5,
    "DETEMPLATE_SEGMENTS_BLOCK_RATIO": 0.7,
    "DETEMPLATE_SEGMENTS_TB": 20,
    "DETEMPLATE_SEGMENTS_N": 50.0,
    "DETEMPLATE_SEGMENTS_R": 0.5,
    "DETEMPLATE_SEGMENTS_SWEEP_EVERY": 16,
    "DETEMPLATE_SEGMENTS_FIRST_PAGES": "sandwich",
    "DETEMPLATE_TPS_MARGIN": 0.20,
    "DETEMPLATE_TPS_TWO_SIDED": True,
    "DETEMPLATE_TPS_COMPLEMENT": True,
    "DETEMPLATE_TPS_MAX_NODES": 50_000,
    "DETEMPLATE_TPS_SELECT": "segments",
    "DETEMPLATE_TPS_MIN_SHARE": 0.05,
    "DETEMPLATE_RTDM_MAX_PAGES": 24,
    "DETEMPLATE_RTDM_MAX_NODES": 5_000,
    "DETEMPLATE_RTDM_MAX_CELLS": 400_000,
    "DETEMPLATE_RTDM_MEANWHILE": "sandwich",
    "DETEMPLATE_RTDM_TEMPLATES": 3,
    "DETEMPLATE_RTDM_MATCH": 0.5,
    "DETEMPLATE_RTDM_HOLD": 0,
    "DETEMPLATE_RTDM_HOLD_SECONDS": 30.0,
    "DETEMPLATE_ISOTONIC_MODEL": "",
    "DETEMPLATE_ISOTONIC_SMOOTH": True,
    "DETEMPLATE_ISOTONIC_THRESHOLD": 0.25,
    "DETEMPLATE_ISOTONIC_PENALTY": 0.0003,
    "DETEMPLATE_ISOTONIC_MIN_CHARS": 20,
    "DETEMPLATE_ISOTONIC_LEVELS": 20,
    "DETEMPLATE_COMBINED_MODEL": "",
    "DETEMPLATE_COMBINED_THRESHOLD": 0.5,
    "DETEMPLATE_COMBINED_SITE_DF": 0.9,
    "DETEMPLATE_FIRST_PAGE_WAIT": 30.0,
    "DETEMPLATE_FIRST_PAGE_PEERS": 3,
    "DETEMPLATE_REPORT_DIR": "",
    "DETEMPLATE_REPORT_PAGES": 3,
}

SANDWICH_UNITS = ("text", "source")
SANDWICH_PEERS = ("last", "closest")
TPS_SELECT = ("size", "text", "segments")


class InvalidSetting(ValueError):
    """A ``DETEMPLATE_*`` setting has a value that cannot work."""

    def __init__(self, name: str, value: object, expected: str) -> None:
        super().__init__(f"Invalid setting {name}={value!r}: expected {expected}.")
        self.name = name
        self.value = value


def default_site_key(url: str) -> str:
    """Site key: the URL's host, lowercased, without port."""
    return (urlsplit(url).hostname or "").lower()


def directory_key(url: str, site: str) -> str:
    """Directory key: the site plus the URL path up to its last ``/``."""
    path = urlsplit(url).path or "/"
    return site + path[: path.rfind("/") + 1]


@dataclass(frozen=True, slots=True)
class DetemplateConfig:
    """Validated configuration of the engine and the Scrapy components."""

    method: str = "combined"
    replace_body: bool = False
    text_field: str = "content"
    html: bool = False
    html_field: str = ""
    method_field: str = ""
    markdown: bool = False
    markdown_field: str = ""
    markdown_links: bool = False
    overwrite_fields: bool = False
    source_field: str = ""
    url_field: str = "url"
    site_key: Callable[[str], str] = default_site_key
    max_bytes: int = 8 * 1024 * 1024
    max_nodes: int = 50_000
    max_depth: int = 250
    max_lines: int = 20_000
    max_directories: int = 10_000
    max_sites: int = 10_000
    state_fresh: bool = False
    redis_url: str = ""
    redis_key: str = "%(spider)s:detemplate"
    redis_ttl: int = 0
    redis_lock_wait: float = 10.0
    sandwich_unit: str = "text"
    sandwich_peer: str = "last"
    sandwich_candidates: int = 16
    combined_model: str = ""
    combined_threshold: float = 0.5
    combined_site_df: float = 0.9
    first_page_wait: float = 30.0
    first_page_peers: int = 3
    segments_df_threshold: int = 5
    segments_block_ratio: float = 0.7
    segments_tb: int = 20
    segments_n: float = 50.0
    segments_r: float = 0.5
    segments_sweep_every: int = 16
    segments_first_pages: str = "sandwich"
    tps_margin: float = 0.20
    tps_two_sided: bool = True
    tps_complement: bool = True
    tps_max_nodes: int = 50_000
    tps_select: str = "segments"
    tps_min_share: float = 0.05
    rtdm_max_pages: int = 24
    rtdm_max_nodes: int = 5_000
    rtdm_max_cells: int = 400_000
    rtdm_meanwhile: str = "sandwich"
    rtdm_templates: int = 3
    rtdm_match: float = 0.5
    rtdm_hold: int = 0
    rtdm_hold_seconds: float = 30.0
    isotonic_model: str = ""
    isotonic_smooth: bool = True
    isotonic_threshold: float = 0.25
    isotonic_penalty: float = 0.0003
    isotonic_min_chars: int = 20
    isotonic_levels: int = 20
    report_dir: str = ""
    report_pages: int = 3

    def __post_init__(self) -> None:
        from scrapy_detemplate.runners import RUNNERS  # the registry knows the methods

        if self.method not in RUNNERS:
            raise InvalidSetting("DETEMPLATE_METHOD", self.method, f"one of {sorted(RUNNERS)}")
        _check_types(self)
        for name in ("max_bytes", "max_nodes", "max_depth", "max_lines", "max_directories",
                     "sandwich_candidates"):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidSetting(_setting_name(name), value, "a positive integer")
        if self.sandwich_unit not in SANDWICH_UNITS:
            raise InvalidSetting("DETEMPLATE_SANDWICH_UNIT", self.sandwich_unit, f"one of {SANDWICH_UNITS}")
        if not isinstance(self.combined_model, str):
            raise InvalidSetting("DETEMPLATE_COMBINED_MODEL", self.combined_model, "a path to a model (str)")
        threshold = self.combined_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold < 1:
            raise InvalidSetting("DETEMPLATE_COMBINED_THRESHOLD", threshold, "a number between 0 and 1")
        site_df = self.combined_site_df
        if isinstance(site_df, bool) or not isinstance(site_df, (int, float)) or site_df <= 0:
            raise InvalidSetting("DETEMPLATE_COMBINED_SITE_DF", site_df, "a number > 0 (above 1: off)")
        wait = self.first_page_wait
        if not 0 <= wait <= 3600:  # a number (checked above)
            raise InvalidSetting("DETEMPLATE_FIRST_PAGE_WAIT", wait, "a number of seconds in [0, 3600] (0: off)")
        if not 0 <= self.first_page_peers <= 20:  # an integer (checked above)
            raise InvalidSetting("DETEMPLATE_FIRST_PAGE_PEERS", self.first_page_peers, "an integer in [0, 20] (0: off)")
        if self.sandwich_peer not in SANDWICH_PEERS:
            raise InvalidSetting("DETEMPLATE_SANDWICH_PEER", self.sandwich_peer, f"one of {SANDWICH_PEERS}")
        for name in ("text_field", "html_field", "method_field", "markdown_field", "source_field", "url_field"):
            if not isinstance(getattr(self, name), str):
                raise InvalidSetting(_setting_name(name), getattr(self, name), "a field name (str)")
        if (
            isinstance(self.tps_margin, bool)
            or not isinstance(self.tps_margin, (int, float))
            or not (0.0 <= self.tps_margin < 1.0)
        ):
            raise InvalidSetting("DETEMPLATE_TPS_MARGIN", self.tps_margin, "a number in [0, 1)")
        if self.tps_select not in TPS_SELECT:
            raise InvalidSetting("DETEMPLATE_TPS_SELECT", self.tps_select, f"one of {TPS_SELECT}")
        if (
            isinstance(self.tps_min_share, bool)
            or not isinstance(self.tps_min_share, (int, float))
            or not (0.0 <= self.tps_min_share <= 1.0)
        ):
            raise InvalidSetting("DETEMPLATE_TPS_MIN_SHARE", self.tps_min_share, "a number in [0, 1]")
        for name in ("tps_two_sided", "tps_complement", "markdown", "markdown_links", "html"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidSetting(_setting_name(name), getattr(self, name), "a boolean")
        if isinstance(self.tps_max_nodes, bool) or not isinstance(self.tps_max_nodes, int) or self.tps_max_nodes < 1:
            raise InvalidSetting("DETEMPLATE_TPS_MAX_NODES", self.tps_max_nodes, "a positive integer")
        _check_segments(self, RUNNERS)
        _check_state(self)
        for name in ("rtdm_max_pages", "rtdm_max_nodes", "rtdm_max_cells", "rtdm_templates"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidSetting(_setting_name(name), value, "a positive integer")
        if self.rtdm_max_pages < 2:
            raise InvalidSetting("DETEMPLATE_RTDM_MAX_PAGES", self.rtdm_max_pages, "an integer >= 2")
        if self.rtdm_meanwhile == "rtdm" or self.rtdm_meanwhile not in RUNNERS:
            raise InvalidSetting(
                "DETEMPLATE_RTDM_MEANWHILE", self.rtdm_meanwhile, f"one of {sorted(set(RUNNERS) - {'rtdm'})}"
            )
        if (
            isinstance(self.rtdm_match, bool)
            or not isinstance(self.rtdm_match, (int, float))
            or not (0.0 <= self.rtdm_match <= 1.0)
        ):
            raise InvalidSetting("DETEMPLATE_RTDM_MATCH", self.rtdm_match, "a number in [0, 1]")
        if isinstance(self.rtdm_hold, bool) or not isinstance(self.rtdm_hold, int) or self.rtdm_hold < 0:
            raise InvalidSetting("DETEMPLATE_RTDM_HOLD", self.rtdm_hold, "an integer >= 0 (pages held; 0: off)")
        wait = self.rtdm_hold_seconds
        if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not 0 < wait <= 3600:
            raise InvalidSetting("DETEMPLATE_RTDM_HOLD_SECONDS", wait, "a number of seconds in (0, 3600]")
        if not isinstance(self.isotonic_model, str) or not isinstance(self.isotonic_smooth, bool):
            bad = "isotonic_model" if not isinstance(self.isotonic_model, str) else "isotonic_smooth"
            raise InvalidSetting(
                _setting_name(bad), getattr(self, bad), "a path (str)" if "model" in bad else "a boolean"
            )
        for name, low, high in (("isotonic_threshold", 0.0, 1.0), ("isotonic_penalty", 0.0, 1e6)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (low <= value <= high):
                raise InvalidSetting(_setting_name(name), value, f"a number in [{low}, {high}]")
        for name in ("isotonic_min_chars", "isotonic_levels"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not (1 <= value <= 1000):
                raise InvalidSetting(_setting_name(name), value, "an integer in [1, 1000]")
        if not callable(self.site_key):
            raise InvalidSetting("DETEMPLATE_SITE_KEY", self.site_key, "a callable url -> site key")
        if not isinstance(self.report_dir, str):
            raise InvalidSetting("DETEMPLATE_REPORT_DIR", self.report_dir, "'' or a directory (str)")
        pages = self.report_pages
        if isinstance(pages, bool) or not isinstance(pages, int) or not 0 <= pages <= 1000:
            raise InvalidSetting("DETEMPLATE_REPORT_PAGES", pages, "an integer in [0, 1000] (sample pages per site)")

    @property
    def renders_html(self) -> bool:
        """Whether results carry the clean HTML: asked for (``DETEMPLATE_HTML``), or an item field
        or the replaced body needs it.  Rendering costs about half a parse per page: a crawl
        that only wants text does not pay it."""
        return self.html or bool(self.html_field) or self.replace_body

    @property
    def cleans_first_pages_again(self) -> bool:
        """Whether a site's first page is cleaned again beside its next pages (``DETEMPLATE_FIRST_PAGE_WAIT``):
        the default method only, both settings above 0, and not when the body is replaced (the spider
        has had it by then).  The pipeline must be on too, which only the crawl knows."""
        return (
            self.method == "combined"
            and self.first_page_wait > 0
            and self.first_page_peers > 0
            and not self.replace_body
        )

    @property
    def renders_markdown(self) -> bool:
        """Whether results carry Markdown: asked for (``DETEMPLATE_MARKDOWN``) or an item field wants it."""
        return self.markdown or bool(self.markdown_field)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | Any) -> DetemplateConfig:
        """Build from Scrapy ``Settings`` (or any mapping of ``DETEMPLATE_*`` names)."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = _setting_name(f.name)
            raw = settings.get(name) if hasattr(settings, "get") else None
            if raw is None or (f.name == "site_key" and raw == ""):
                continue
            values[f.name] = _coerce(name, raw, DEFAULT_SETTINGS[name])
        return cls(**values)


def _check_types(cfg: DetemplateConfig) -> None:
    """Every boolean, integer and number setting has its type; numbers are finite
    (``inf`` and ``nan`` pass ``>=`` and ``<`` checks in surprising ways)."""
    for f in fields(cfg):
        value, default = getattr(cfg, f.name), f.default
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise InvalidSetting(_setting_name(f.name), value, "a boolean")
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidSetting(_setting_name(f.name), value, "an integer")
        elif isinstance(default, float) and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
        ):
            raise InvalidSetting(_setting_name(f.name), value, "a finite number")


def _check_segments(cfg: DetemplateConfig, runners: Mapping[str, Any]) -> None:
    for name in ("segments_df_threshold", "segments_sweep_every"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidSetting(_setting_name(name), value, "a positive integer")
    if isinstance(cfg.segments_tb, bool) or not isinstance(cfg.segments_tb, int) or cfg.segments_tb < 0:
        raise InvalidSetting("DETEMPLATE_SEGMENTS_TB", cfg.segments_tb, "an integer >= 0 (0: no expiry)")
    checks = (("segments_block_ratio", 0.0, 1.0, "a number in [0, 1)"), ("segments_n", 1.0, None, "a number >= 1"),
              ("segments_r", 0.0, None, "a number >= 0"))  # fmt: skip
    for name, low, high, expected in checks:
        value = getattr(cfg, name)
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= low
                or (high is not None and not value < high)):  # fmt: skip
            raise InvalidSetting(_setting_name(name), value, expected)
    first = cfg.segments_first_pages
    if first != "none" and (first not in runners or first == "segments"):
        choices = sorted(n for n in runners if n != "segments")
        raise InvalidSetting("DETEMPLATE_SEGMENTS_FIRST_PAGES", first, f"one of {choices}")


def _check_state(cfg: DetemplateConfig) -> None:
    if isinstance(cfg.max_sites, bool) or not isinstance(cfg.max_sites, int) or cfg.max_sites < 1:
        raise InvalidSetting("DETEMPLATE_MAX_SITES", cfg.max_sites, "a positive integer")
    if not isinstance(cfg.state_fresh, bool):
        raise InvalidSetting("DETEMPLATE_STATE_FRESH", cfg.state_fresh, "a boolean")
    if not isinstance(cfg.redis_url, str) or (
        cfg.redis_url and not cfg.redis_url.startswith(("redis://", "rediss://", "unix://"))
    ):
        raise InvalidSetting("DETEMPLATE_REDIS_URL", cfg.redis_url, "'' or a redis://, rediss:// or unix:// URL")
    try:
        ok = isinstance(cfg.redis_key, str) and bool(cfg.redis_key % {"spider": "s"})
    except (KeyError, ValueError, TypeError):
        ok = False
    if not ok:
        raise InvalidSetting("DETEMPLATE_REDIS_KEY", cfg.redis_key, "a key prefix such as '%(spider)s:detemplate'")
    if isinstance(cfg.redis_ttl, bool) or not isinstance(cfg.redis_ttl, int) or cfg.redis_ttl < 0:
        raise InvalidSetting("DETEMPLATE_REDIS_TTL", cfg.redis_ttl, "an integer >= 0 (seconds; 0: no expiry)")
    wait = cfg.redis_lock_wait
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not 0 <= wait <= 3600:
        raise InvalidSetting("DETEMPLATE_REDIS_LOCK_WAIT", wait, "a number of seconds in [0, 3600]")


def _setting_name(field_name: str) -> str:
    return "DETEMPLATE_" + field_name.upper()


def _coerce(name: str, raw: Any, default: Any) -> Any:
    """Turn a setting given as text (``-s NAME=VALUE``) into its type, or fail naming it."""
    if name == "DETEMPLATE_SITE_KEY":
        if callable(raw):
            return raw
        from scrapy.utils.misc import load_object

        try:
            return load_object(raw)
        except (ImportError, NameError, ValueError, AttributeError) as exc:
            raise InvalidSetting(name, raw, "an import path of a function url -> site key") from exc
    if isinstance(default, bool):
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off", ""):
            return False
        raise InvalidSetting(name, raw, "a boolean")
    if isinstance(default, float):
        if isinstance(raw, bool):
            raise InvalidSetting(name, raw, "a finite number")
        try:
            number = float(raw)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InvalidSetting(name, raw, "a finite number") from exc
        if not math.isfinite(number):
            raise InvalidSetting(name, raw, "a finite number")
        return number
    if isinstance(default, int):
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lstrip("+-").isdigit():
            return int(raw)
        whole: float | None = raw if isinstance(raw, float) else None  # 12.0 and "1e3" are whole; 1.9 is not 1
        if isinstance(raw, str):
            try:
                whole = float(raw)
            except ValueError:
                whole = None
        if whole is not None and math.isfinite(whole) and whole.is_integer():
            return int(whole)
        raise InvalidSetting(name, raw, "an integer")
    if isinstance(default, str) and not isinstance(raw, str):
        raise InvalidSetting(name, raw, "a string")
    return raw
