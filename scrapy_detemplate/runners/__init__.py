"""The methods the engine can run, by the name used in ``DETEMPLATE_METHOD``."""

from __future__ import annotations

from scrapy_detemplate.runners.base import NoRemoval, ParsedPage, Runner, RunnerFactory, Verdict
from scrapy_detemplate.runners.combined import CombinedRunner
from scrapy_detemplate.runners.isotonic import IsotonicRunner
from scrapy_detemplate.runners.rtdm import RtdmRunner
from scrapy_detemplate.runners.sandwich import SandwichRunner
from scrapy_detemplate.runners.segments import SegmentsRunner
from scrapy_detemplate.runners.tps import TpsRunner

RUNNERS: dict[str, RunnerFactory] = {
    "sandwich": SandwichRunner,
    "segments": SegmentsRunner,
    "none": NoRemoval,
    "isotonic": IsotonicRunner,
    "rtdm": RtdmRunner,
    "tps": TpsRunner,
    "combined": CombinedRunner,
}

__all__ = ["RUNNERS", "NoRemoval", "ParsedPage", "Runner", "RunnerFactory", "SandwichRunner", "Verdict"]
