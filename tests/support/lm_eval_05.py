"""What lm-eval 0.5.0.dev1 does with a task's per-document values and targets, copied small (no lm-eval 0.5 import).

Sources (the 0.5.0.dev1 wheel): ``api/_utils.py`` ``normalize_to_list`` (a value that is not a list is wrapped in
one); ``scorers/_base.py`` ``Scorer.reduce`` (a one-element list is unwrapped) and ``Scorer.aggregate`` (metric by
metric in ``process_results`` order: the aggregation of the values, then the standard error of every aggregation but
``mean`` by ``bootstrap_stderr``, ``"N/A"`` for one value); ``api/metrics/stderr.py`` ``bootstrap_stderr``
(``iters // chunk`` chunks of ``chunk`` resamples ``rnd.choices(xs, k=len(xs))``, chunk ``i`` seeded ``i``, in a
``multiprocessing`` pool or in-process, then the sample standard deviation); ``config/templates.py``
``_coerce_target`` and ``_resolve_target_index`` (a multiple-choice target is an index below the number of choices
or one of the choices, a list of them for several; otherwise the document is skipped).
"""

from __future__ import annotations

import math
import multiprocessing
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def normalize_to_list(x: Mapping[str, Any]) -> dict[str, list[Any]]:
    return {k: v if isinstance(v, list) else [v] for k, v in x.items()}


def reduce(scores: Mapping[str, list[Any]]) -> dict[str, Any]:
    out = {}
    for name, values in scores.items():
        if len(values) != 1:
            raise ValueError(f"{name}: {len(values)} values per document and no reduction")
        out[name] = values[0]
    return out


def sample_stddev(arr: Sequence[float]) -> float:
    mu = sum(arr) / len(arr)
    return math.sqrt(sum((x - mu) ** 2 for x in arr) / (len(arr) - 1))


class Bootstrap:
    """The pool worker: ``(i, xs)`` -> ``n`` values of ``f`` on resamples of ``xs`` drawn with ``Random(i)``."""

    def __init__(self, f: Callable[[Sequence[Any]], Any], n: int) -> None:
        self.f, self.n = f, n

    def __call__(self, v: tuple[int, Sequence[Any]]) -> list[Any]:
        i, xs = v
        rnd = random.Random()
        rnd.seed(i)
        return [self.f(rnd.choices(xs, k=len(xs))) for _ in range(self.n)]


def bootstrap_stderr(f: Callable[[Sequence[Any]], Any], xs: Sequence[Any], iters: int, chunk: int, pool: bool) -> float:
    tasks = [(i, xs) for i in range(iters // chunk)]
    if pool:
        with multiprocessing.get_context("fork").Pool(2) as workers:
            res = [value for values in workers.imap(Bootstrap(f, chunk), tasks) for value in values]
    else:
        res = [value for task in tasks for value in Bootstrap(f, chunk)(task)]
    return sample_stddev(res)


def aggregate(
    payloads: Sequence[Mapping[str, Any]],
    aggregation: Callable[[str], Callable[[Sequence[Any]], Any]],
    *,
    iters: int = 200,
    chunk: int = 100,
    pool: bool = False,
) -> dict[str, Any]:
    """The results of one task whose ``process_results`` returned ``payloads`` (one per document) and whose every
    metric ``name`` names ``aggregation(name)``: ``{"<metric>,none": value, "<metric>_stderr,none": standard error}``."""
    reduced = [reduce(normalize_to_list(payload)) for payload in payloads]
    by_metric: dict[str, list[Any]] = {}
    for doc in reduced:
        for name, value in doc.items():
            by_metric.setdefault(name, []).append(value)
    out: dict[str, Any] = {}
    for name, values in by_metric.items():
        function = aggregation(name)
        out[f"{name},none"] = function(values)
        out[f"{name}_stderr,none"] = (
            bootstrap_stderr(function, values, iters, chunk, pool) if len(values) > 1 else "N/A"
        )
    return out


def resolve_target_index(target: Any, choices: Sequence[str]) -> int | list[int] | None:
    """The index (or indices) of a multiple-choice target among the choices, None when the document is skipped."""
    if isinstance(target, str) and target.isdigit():
        target = int(target)
    if isinstance(target, list):
        found = [i for t in target if (i := resolve_target_index(t, choices)) is not None]
        return found or None
    if isinstance(target, (int, float)):
        return int(target) if int(target) < len(choices) else None
    if isinstance(target, str) and target in choices:
        return list(choices).index(target)
    return None


def toy_compute(records: Sequence[Any]) -> dict[str, Any]:
    """A toy task's metrics (for pools that pickle the aggregation): the number of records, a score and its error."""
    return {"carrier": float(len(records)), "s": 0.5, "s_stderr": None}
