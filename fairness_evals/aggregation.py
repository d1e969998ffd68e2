"""Harness aggregation glue shared by every task: one computation per task run, one function per metric.

lm-eval and lmms-eval call a task's aggregation once per metric, each with that metric's list of items. Our
``process_results`` put one per-document *record* under every metric name of a task, so every metric of one
task run receives an equal list. :data:`MEMO` computes all the task's metrics once per distinct list
(compared by content; bounded; thread-safe) and :func:`define_aggregations` writes one ``agg_<metric>``
function per metric into the task module, under the names its YAMLs give as ``!function``. Provenance
metrics (seed, data version, classifier) get ``[value]`` items and report the value every document shares.

Imported by task modules only when a harness runs them; no harness, numpy or torch import here.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger("fairness_evals")

__all__ = ["MEMO", "ContentMemo", "define_aggregations", "provenance_value"]


class ContentMemo:
    """``compute(items)`` once per distinct (tag, items) pair, items compared by content; the ``size`` most
    recent results are kept."""

    def __init__(self, size: int = 12) -> None:
        self.size = size
        self._entries: list[tuple[str, list[Any], dict[str, Any]]] = []
        self._lock = threading.Lock()

    def get(self, tag: str, items: Sequence[Any], compute: Callable[[list[Any]], dict[str, Any]]) -> dict[str, Any]:
        items = list(items)
        with self._lock:
            for cached_tag, cached_items, values in self._entries:
                if cached_tag == tag and len(cached_items) == len(items) and cached_items == items:
                    return values
        values = compute(items)
        with self._lock:
            self._entries.append((tag, items, values))
            del self._entries[: -self.size]
        return values

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


#: The process-wide memo of every task's aggregations.
MEMO = ContentMemo()


def provenance_value(name: str, items: Sequence[Any], *, task: str) -> Any:
    """One provenance metric from its items (``[value]`` per document; all equal in one run). Documents that
    disagree give NaN with a warning naming the task and the first few values."""
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
    compute: Callable[[list[Any]], dict[str, Any]],
    *,
    provenance: Sequence[str] = (),
    harness: str = "lmms-eval",
) -> None:
    """Put ``agg_<metric>`` into ``namespace`` for every name of ``record_metrics`` (its value from
    ``compute(items)``, memoised in :data:`MEMO` under ``task``) and of ``provenance`` (:func:`provenance_value`)."""

    def make(name: str) -> Callable[[list[Any]], Any]:
        if name in provenance:

            def aggregate(items: list[Any]) -> Any:
                return provenance_value(name, items, task=task)

        else:

            def aggregate(items: list[Any]) -> Any:
                return MEMO.get(task, items, compute)[name]

        aggregate.__name__ = aggregate.__qualname__ = f"agg_{name}"
        aggregate.__doc__ = f"{harness} aggregation of ``{name}`` of ``{task}`` (all its metrics computed once)."
        return aggregate

    for name in (*record_metrics, *provenance):
        namespace[f"agg_{name}"] = make(name)

