"""The Inspect objects shared by every task of ours: the task itself (:func:`benchmark_task`), its ``headline``
metric and the hook that says a task's warning.

What the metric computes, and its rules for null values and epochs: :mod:`fairness_evals.inspect.headline`.
"""

from __future__ import annotations

import logging
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Scorer, Value, metric
from inspect_ai.solver import generate

from fairness_evals import __version__
from fairness_evals.inspect.headline import LATEST, WITHHELD_RULE, leaves, score_items
from fairness_evals.inspect.plans import plan

log = logging.getLogger("fairness_evals")

#: Inspect's registry prefix of our tasks (the top-level package of the modules that define them).
REGISTRY_PREFIX = "fairness_evals/"
#: The tasks of ours built in this process (the hook is on only when there is one).
BUILT: set[str] = set()


@metric(scores="unreduced")
def headline(task: str, settings: dict[str, Any]) -> Metric:
    """Every headline statistic of ``task`` over all its samples and epochs (:mod:`fairness_evals.inspect.headline`)
    under its task-metadata ``settings``: the values ``fairness-evals score`` computes from the same answers; null
    values are left out."""
    BUILT.add(task)

    def compute(scores: list[SampleScore]) -> Value:
        return dict(LATEST.get(plan(task, settings), score_items(scores)).values)

    return compute


def benchmark_task(
    task: str,
    benchmark: str,
    samples: list[Sample],
    scorer: Scorer,
    settings: dict[str, Any],
    config: GenerateConfig,
    version: int,
    **recorded: Any,
) -> Task:
    """The Inspect task of one declared task or group of ours: the model answers each sample once (``generate``),
    ``scorer`` scores it, and the :func:`headline` metric computes the statistics under the task-metadata
    ``settings``. ``metadata["fairness_evals"]`` records the package version, the benchmark, the task and its
    leaves, the settings, what ``recorded`` adds (the corpus arguments and provenance, the judge's settings) and
    the rule for absent metrics (:data:`~fairness_evals.inspect.headline.WITHHELD_RULE`)."""
    ours = {
        "version": __version__,
        "benchmark": benchmark,
        "task": task,
        "leaves": leaves(task),
        "settings": settings,
        **recorded,
        "withheld": WITHHELD_RULE,
    }
    return Task(
        dataset=MemoryDataset(samples, name=task),
        solver=generate(),
        scorer=scorer,
        metrics=[headline(task, settings)],
        config=config,
        version=version,
        metadata={"fairness_evals": ours},
    )


@hooks(name="fairness_evals_warnings", description="Logs the fairness-evals warning of a task (its null metrics).")
class TaskEndWarnings(Hooks):
    """At the end of each of our tasks, its benchmark's one warning (why metrics are null; answers that follow the
    option letters), from the final computation of its metric. Inspect recomputes metrics while a task runs, so the
    warnings of those computations are held back (:func:`fairness_evals.inspect.headline.captured_warnings`)."""

    def enabled(self) -> bool:
        """On once one of our tasks has been built in this process (not in other packages' evals)."""
        return bool(BUILT)

    async def on_task_end(self, data: TaskEnd) -> None:
        name = _task_name(data.log)
        if name is not None:
            for message in LATEST.warnings(name):
                log.warning("%s", message)


def _task_name(log_: Any) -> str | None:
    registry = getattr(log_.eval, "task_registry_name", None) or ""
    return registry[len(REGISTRY_PREFIX) :] if registry.startswith(REGISTRY_PREFIX) else None
