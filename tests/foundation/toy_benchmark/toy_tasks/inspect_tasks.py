"""The toy as an Inspect task, ``inspect eval fairness_evals/toy``: the same documents and prompts as the lm-eval
task, one user message each; the scorer puts the readable record in the score's metadata, and the shared
``headline`` metric (:func:`fairness_evals.inspect.metric.benchmark_task`) gives the records to
:func:`toy_tasks.scoring.compute_metrics` through the plan (:mod:`toy_tasks.inspect_plan`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import TaskState

from fairness_evals.inspect.metric import benchmark_task
from toy_tasks import documents, scoring

VERSION = 1


@scorer(metrics=[])
def toy_answer() -> Any:
    """The letter the reply names; the score's metadata is the readable record."""

    async def score(state: TaskState, target: Target) -> Score:
        record = scoring.readable_record(state.metadata, state.output.completion)
        return Score(value=record["answer"] or "none", answer=record["answer"], metadata=record)

    return score


def make(min_coverage: float = 0.5) -> Task:
    """The toy task; ``-T min_coverage`` is the task metadata's ``toy_min_coverage``."""
    settings = documents.settings({"toy_min_coverage": min_coverage})
    samples = [
        Sample(input=scoring.doc_to_text(doc), target=scoring.doc_to_target(doc), id=doc["id"], metadata=doc)
        for doc in documents.rows(settings)
    ]
    config = GenerateConfig(temperature=0.0, max_tokens=16)
    return benchmark_task("toy", "toy", samples, toy_answer(), settings, config, VERSION)


#: The toy's Inspect tasks, by name (registered as ``fairness_evals/<name>``).
TASKS: dict[str, Callable[..., Task]] = {"toy": make}


# --------------------------------------------------------------------------- generated: do not edit
# `python -m fairness_evals.inspect.task_files` writes one literal @task per entry of TASKS, for Inspect's file scan.


@task
def toy(
    min_coverage: float = 0.5,
) -> Task:
    """24 questions about who holds a job: does the model pick the stereotyped person?"""
    return TASKS["toy"](**locals())


# --------------------------------------------------------------------------- end of the generated tasks
