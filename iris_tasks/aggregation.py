"""lmms-eval aggregation glue shared by the three IRIS tasks.

``process_results`` returns one *record* (a short list of numbers) under every metric name of the task;
lmms-eval gives each metric's aggregation the list of its items, so every aggregation of a task receives
an equal list. :func:`cached` computes all metrics of the task once per distinct list (memoised on the
content) and each ``agg_<metric>`` picks its value. Provenance metrics get ``[value]`` items and report the
value all documents share (NaN, with a warning, if they differ).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger("fairness_evals.iris")

_CACHE: list[tuple[str, list[Any], dict[str, Any]]] = []
_LOCK = threading.Lock()
_SIZE = 12


def cached(task: str, items: list[Any], compute: Callable[[list[Any]], dict[str, Any]]) -> dict[str, Any]:
    with _LOCK:
        for cached_task, cached_items, values in _CACHE:
            if cached_task == task and len(cached_items) == len(items) and cached_items == items:
                return values
    values = compute(items)
    with _LOCK:
        _CACHE.append((task, list(items), values))
        del _CACHE[:-_SIZE]
    return values


def provenance_value(name: str, items: Sequence[Any], *, task: str) -> Any:
    """One provenance metric from its items (``[value]`` per document; all equal in one run)."""
    distinct = {item[0] if isinstance(item, (list, tuple)) and item else item for item in items}
    if len(distinct) != 1:
        if distinct:
            shown = ", ".join(sorted(map(str, distinct))[:5])
            log.warning("%s: %s differs between documents (%s); reported as NaN", task, name, shown)
        return math.nan
    value = next(iter(distinct))
    return math.nan if value is None else value


def define_aggregations(
    namespace: dict[str, Any],
    task: str,
    record_metrics: Sequence[str],
    provenance: Sequence[str],
    compute: Callable[[list[Any]], dict[str, Any]],
) -> None:
    """Put ``agg_<metric>`` into ``namespace`` for every metric of ``task``."""

    def make(name: str) -> Callable[[list[Any]], Any]:
        if name in provenance:

            def aggregate(items: list[Any]) -> Any:
                return provenance_value(name, items, task=task)

        else:

            def aggregate(items: list[Any]) -> Any:
                return cached(task, items, compute)[name]

        aggregate.__name__ = aggregate.__qualname__ = f"agg_{name}"
        aggregate.__doc__ = f"lmms-eval aggregation of ``{name}`` of ``{task}``."
        return aggregate

    for name in (*record_metrics, *provenance):
        namespace[f"agg_{name}"] = make(name)


def finite_or_nan(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number if math.isfinite(number) else math.nan
