"""scrapy-detemplate: template-free pages for Scrapy crawls."""

from scrapy_detemplate.addon import Addon
from scrapy_detemplate.config import DEFAULT_SETTINGS, DetemplateConfig, InvalidSetting
from scrapy_detemplate.engine import PASSTHROUGH_REASONS, CleanResult, Detemplater
from scrapy_detemplate.store import MemoryStore, StateStore

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_SETTINGS",
    "PASSTHROUGH_REASONS",
    "Addon",
    "CleanResult",
    "DetemplateConfig",
    "Detemplater",
    "InvalidSetting",
    "MemoryStore",
    "StateStore",
    "__version__",
]
