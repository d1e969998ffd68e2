"""What the ``inspect_ai`` entry point of fairness-evals loads: every registered benchmark's Inspect tasks, the metric
and the hook.

Inspect imports this module when it resolves a ``fairness_evals/<task>`` name. Each benchmark declares its Inspect
tasks (its :class:`~fairness_evals.benchmarks.Benchmark`'s ``inspect_tasks``: ``{name: make}``, the module that holds
them also ends in literal ``@task`` functions for Inspect's file scan); each is registered here under its name, with
its ``make``'s ``-T`` arguments, so it is ``fairness_evals/<name>`` (the registry prefixes a task with the top-level
package of the module that defines it).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task

from fairness_evals import benchmarks, statistics
from fairness_evals.inspect.metric import TaskEndWarnings, headline

__all__ = ["TaskEndWarnings", "headline"]


def _registered(name: str, make: Callable[..., Task]) -> Callable[..., Task]:
    def run(**arguments: Any) -> Task:
        return make(**arguments)

    run.__name__ = run.__qualname__ = name
    run.__module__ = __name__
    try:
        run.__doc__ = statistics.task(name).description  # as the literal @task functions: Inspect shows it
    except KeyError:
        run.__doc__ = make.__doc__
    run.__signature__ = inspect.signature(make)  # type: ignore[attr-defined]
    return task(run)


for _benchmark, _tasks in benchmarks.hooks("inspect_tasks"):
    for _name, _make in _tasks.items():
        globals()[_name] = _registered(_name, _make)
        __all__.append(_name)
