"""Settings: every ``DETEMPLATE_*`` default in one place, validated once.

Scrapy components and the CLI turn settings into one frozen
:class:`DetemplateConfig`; nothing below the edge reads settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import urlsplit

#: Every setting with its default, the enabling flag first.
DEFAULT_SETTINGS: dict[str, Any] = {
    "DETEMPLATE_ENABLED": True,
    "DETEMPLATE_METHOD": "sandwich",
    "DETEMPLATE_REPLACE_BODY": False,
    "DETEMPLATE_TEXT_FIELD": "content",
    "DETEMPLATE_HTML_FIELD": "",
    "DETEMPLATE_METHOD_FIELD": "",
    "DETEMPLATE_OVERWRITE_FIELDS": False,
    "DETEMPLATE_SOURCE_FIELD": "",
    "DETEMPLATE_URL_FIELD": "url",
    "DETEMPLATE_SITE_KEY": "",
    "DETEMPLATE_MAX_BYTES": 8 * 1024 * 1024,
    "DETEMPLATE_MAX_NODES": 50_000,
    "DETEMPLATE_MAX_DEPTH": 250,
    "DETEMPLATE_MAX_LINES": 20_000,
    "DETEMPLATE_MAX_DIRECTORIES": 10_000,
    "DETEMPLATE_SANDWICH_UNIT": "text",
    "DETEMPLATE_SANDWICH_PEER": "last",
    "DETEMPLATE_SANDWICH_CANDIDATES": 16,
}

SANDWICH_UNITS = ("text", "source")
SANDWICH_PEERS = ("last", "closest")


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

    method: str = "sandwich"
    replace_body: bool = False
    text_field: str = "content"
    html_field: str = ""
    method_field: str = ""
    overwrite_fields: bool = False
    source_field: str = ""
    url_field: str = "url"
    site_key: Callable[[str], str] = default_site_key
    max_bytes: int = 8 * 1024 * 1024
    max_nodes: int = 50_000
    max_depth: int = 250
    max_lines: int = 20_000
    max_directories: int = 10_000
    sandwich_unit: str = "text"
    sandwich_peer: str = "last"
    sandwich_candidates: int = 16

    def __post_init__(self) -> None:
        from scrapy_detemplate.runners import RUNNERS  # the registry knows the methods

        if self.method not in RUNNERS:
            raise InvalidSetting("DETEMPLATE_METHOD", self.method, f"one of {sorted(RUNNERS)}")
        for name in ("max_bytes", "max_nodes", "max_depth", "max_lines", "max_directories",
                     "sandwich_candidates"):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidSetting(_setting_name(name), value, "a positive integer")
        if self.sandwich_unit not in SANDWICH_UNITS:
            raise InvalidSetting("DETEMPLATE_SANDWICH_UNIT", self.sandwich_unit, f"one of {SANDWICH_UNITS}")
        if self.sandwich_peer not in SANDWICH_PEERS:
            raise InvalidSetting("DETEMPLATE_SANDWICH_PEER", self.sandwich_peer, f"one of {SANDWICH_PEERS}")
        for name in ("text_field", "html_field", "method_field", "source_field", "url_field"):
            if not isinstance(getattr(self, name), str):
                raise InvalidSetting(_setting_name(name), getattr(self, name), "a field name (str)")
        if not callable(self.site_key):
            raise InvalidSetting("DETEMPLATE_SITE_KEY", self.site_key, "a callable url -> site key")

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
            raise InvalidSetting(name, raw, "a number")
        try:
            return float(raw)
        except (TypeError, ValueError) as exc:
            raise InvalidSetting(name, raw, "a number") from exc
    if isinstance(default, int):
        if isinstance(raw, bool):
            raise InvalidSetting(name, raw, "a positive integer")
        try:
            return int(raw)
        except (TypeError, ValueError) as exc:
            raise InvalidSetting(name, raw, "a positive integer") from exc
    if isinstance(default, str) and not isinstance(raw, str):
        raise InvalidSetting(name, raw, "a string")
    return raw
