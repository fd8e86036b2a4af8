"""The methods the engine can run, by the name used in ``DETEMPLATE_METHOD``."""

from __future__ import annotations

from scrapy_detemplate.runners.base import NoRemoval, ParsedPage, Runner, RunnerFactory, Verdict
from scrapy_detemplate.runners.sandwich import SandwichRunner

RUNNERS: dict[str, RunnerFactory] = {
    "sandwich": SandwichRunner,
    "none": NoRemoval,
}

__all__ = ["RUNNERS", "NoRemoval", "ParsedPage", "Runner", "RunnerFactory", "SandwichRunner", "Verdict"]
