"""Learned state across a pause: saved to ``JOBDIR`` at close, loaded at start.

The file is versioned JSON (:func:`~scrapy_detemplate.store.to_json`: bytes as
tagged base64, never pickle)::

    {"format": "scrapy-detemplate-state", "version": 1, "method": "sandwich",
     "namespaces": {"sandwich": [[key, value], ...], ...}}

Keys are listed least recently used first, so a reload keeps the LRU order and
the bounds evict the same keys as before the pause.  It is written to a
temporary file in the same directory and moved into place with
:func:`os.replace`, so a crash while saving leaves the previous file whole.
A missing file is a cold start; an unreadable, corrupt or foreign one is a
cold start too, reported to the caller (logged and counted, never raised);
so is each entry whose value the runners would not have written (checked on
load, see :data:`~scrapy_detemplate.runners.STATE_CHECKS`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scrapy_detemplate.store import MemoryStore, Value, from_json, to_json

STATE_FILE = "detemplate-state.json"
FORMAT = "scrapy-detemplate-state"
VERSION = 1


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What :func:`load_state` found: ``keys`` loaded, or ``error`` (why it started cold)."""

    keys: int = 0
    error: str = ""
    missing: bool = False
    invalid: int = 0  # entries ``check`` refused (not loaded)
    first_invalid: str = ""  # which one, for the log


def state_path(jobdir: str | os.PathLike[str]) -> Path:
    """Where the state of a crawl with this ``JOBDIR`` lives."""
    return Path(jobdir) / STATE_FILE


def save_state(store: MemoryStore, path: str | os.PathLike[str], method: str = "") -> int:
    """Write every key of ``store`` to ``path`` atomically; returns the number of keys."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    fd, tmp = tempfile.mkstemp(prefix=".detemplate-state-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            # One namespace, one key at a time: no second copy of the whole state in memory.
            out.write(f'{{"format":{json.dumps(FORMAT)},"version":{VERSION},"method":{json.dumps(method)},')
            out.write('"namespaces":{')
            for n, namespace in enumerate(store.namespaces()):
                out.write(("," if n else "") + json.dumps(namespace) + ":[")
                for k, (key, value) in enumerate(store.items(namespace)):
                    out.write(("," if k else "") + json.dumps([key, to_json(value)], separators=(",", ":")))
                    count += 1
                out.write("]")
            out.write("}}\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def load_state(
    store: MemoryStore, path: str | os.PathLike[str], check: Callable[[str, Value], bool] | None = None
) -> LoadResult:
    """Fill ``store`` from ``path``; a file that is not a state file leaves ``store``
    empty and says why.  With ``check(namespace, value)``, entries it refuses (a
    valid layout with bad values) are left out and counted: those keys start cold."""
    source = Path(path)
    if not source.exists():
        return LoadResult(missing=True)
    try:
        with source.open("r", encoding="utf-8") as fh:
            data = json.load(fh)
        entries = _entries(data)
    except (OSError, UnicodeDecodeError, ValueError, TypeError, RecursionError) as exc:
        return LoadResult(error=f"{type(exc).__name__}: {exc}"[:300])
    loaded = invalid = 0
    first = ""
    for namespace, key, value in entries:
        if check is not None and not check(namespace, value):
            invalid += 1
            first = first or f"namespace {namespace!r}, key {key!r}"[:200]
            continue
        store.set(namespace, key, value)
        loaded += 1
    return LoadResult(keys=loaded, invalid=invalid, first_invalid=first)


def _entries(data: object) -> list[tuple[str, str, Value]]:
    """All ``(namespace, key, value)`` of a state file, or ``ValueError`` if it is not one."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError("not a scrapy-detemplate state file")
    if data.get("version") != VERSION:
        raise ValueError(f"unsupported state version {data.get('version')!r}")
    namespaces = data.get("namespaces")
    if not isinstance(namespaces, dict):
        raise ValueError("no namespaces")
    entries: list[tuple[str, str, Value]] = []
    for namespace, pairs in namespaces.items():
        if not isinstance(pairs, list):
            raise ValueError(f"namespace {namespace!r} is not a list")
        for pair in pairs:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                raise ValueError(f"bad entry in namespace {namespace!r}")
            entries.append((namespace, pair[0], from_json(pair[1])))
    return entries
