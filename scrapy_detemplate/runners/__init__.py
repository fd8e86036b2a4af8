"""The methods the engine can run, by the name used in ``DETEMPLATE_METHOD``."""

from __future__ import annotations

from collections.abc import Callable

from scrapy_detemplate.runners import combined, rtdm, sandwich, segments
from scrapy_detemplate.runners.base import NoRemoval, ParsedPage, Runner, RunnerFactory, Verdict
from scrapy_detemplate.runners.combined import CombinedRunner
from scrapy_detemplate.runners.isotonic import IsotonicRunner
from scrapy_detemplate.runners.rtdm import RtdmRunner
from scrapy_detemplate.runners.sandwich import SandwichRunner
from scrapy_detemplate.runners.segments import SegmentsRunner
from scrapy_detemplate.runners.tps import TpsRunner
from scrapy_detemplate.store import Value

RUNNERS: dict[str, RunnerFactory] = {
    "sandwich": SandwichRunner,
    "segments": SegmentsRunner,
    "none": NoRemoval,
    "isotonic": IsotonicRunner,
    "rtdm": RtdmRunner,
    "tps": TpsRunner,
    "combined": CombinedRunner,
}

#: The state namespaces the runners keep, each with the check of its values.
STATE_CHECKS: dict[str, Callable[[Value], bool]] = {
    sandwich.NAMESPACE: sandwich.valid_state,
    segments.NAMESPACE: segments.valid_state,
    rtdm.NAMESPACE: rtdm.valid_state,
    combined.NAMESPACE: combined.valid_state,
}


def valid_state(namespace: str, value: Value) -> bool:
    """Whether ``value`` is what the runners keep under ``namespace`` (a foreign namespace is not)."""
    check = STATE_CHECKS.get(namespace)
    return check is not None and check(value)


__all__ = [
    "RUNNERS",
    "STATE_CHECKS",
    "NoRemoval",
    "ParsedPage",
    "Runner",
    "RunnerFactory",
    "SandwichRunner",
    "Verdict",
    "valid_state",
]
