"""The results of judged open-ended answers, the same for lmms-eval samples and responses files.

:func:`judge_answers` judges the distinct answers of every task through the cache (:mod:`.runner`);
:func:`judged_results` turns the outcomes into ``{task: {metric: value}}`` with the metric names and code of a
judged harness run (:func:`fairlens_tasks.open_scoring.compute_open_metrics`), the judge and corpus provenance,
and the ``fairlens_open`` roll-ups when all three domains are there. ``fairness-evals judge`` calls both,
whatever its input route (:func:`~fairlens_tasks.judging.samples.read_answers`,
:func:`~fairlens_tasks.judging.responses.answers_from_responses`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fairlens_tasks import open_scoring
from fairlens_tasks.judging.config import JudgeSettings
from fairlens_tasks.judging.pipeline import Outcome
from fairlens_tasks.judging.runner import RunStats
from fairlens_tasks.judging.samples import TASK_ORDER, TaskAnswers

__all__ = ["TASK_ORDER", "distinct_texts", "judge_answers", "judged_results"]


def distinct_texts(tasks: Mapping[str, TaskAnswers]) -> dict[str, str]:
    """``response_id -> answer text`` over every task (identical answers are judged once)."""
    texts: dict[str, str] = {}
    answer_id = open_scoring._F["response_id"]
    for answers in tasks.values():
        texts.update((record[answer_id], text) for record, text in zip(answers.records, answers.texts, strict=True))
    return texts


def judge_answers(
    tasks: Mapping[str, TaskAnswers],
    settings: JudgeSettings,
    *,
    retry_unjudged: bool = False,
    progress: Callable[[RunStats], None] | None = None,
) -> tuple[dict[str, Outcome], RunStats]:
    """Outcomes for the distinct answers of ``tasks`` (cache first, then the judge) and what was done."""
    from fairlens_tasks.judging.cache import JudgmentCache
    from fairlens_tasks.judging.runner import judge_texts

    with JudgmentCache(settings.cache) as cache:
        return judge_texts(distinct_texts(tasks), settings, cache, retry_unjudged=retry_unjudged, progress=progress)


def judged_results(
    tasks: Mapping[str, TaskAnswers],
    outcomes: Mapping[str, Outcome],
    settings: JudgeSettings,
    *,
    min_judged: float | None = None,
) -> dict[str, dict[str, Any]]:
    """``{task: {metric: value}}`` for ``tasks`` judged by ``outcomes``, plus the ``fairlens_open`` roll-ups.

    ``min_judged`` is the ``fairlens_min_judged`` setting (share of answers judged below which the bias scores
    are NaN); None takes the one the task's samples recorded, else the default (README, "Coverage and thresholds").
    """
    from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
    from fairlens_tasks.open_scoring import compute_open_metrics, open_rollups
    from fairlens_tasks.scoring import PROVENANCE
    from fairlens_tasks.settings import recorded
    from fairness_evals.aggregation import provenance_value

    results: dict[str, dict[str, Any]] = {}
    for task in sorted(tasks, key=lambda t: TASK_ORDER.index(t) if t in TASK_ORDER else len(TASK_ORDER)):
        answers = tasks[task]
        answer_id = open_scoring._F["response_id"]
        texts = {record[answer_id]: text for record, text in zip(answers.records, answers.texts, strict=True)}
        own = recorded(answers.scoring, "open", task).get("min_judged") if min_judged is None else min_judged
        metrics: dict[str, Any] = dict(
            compute_open_metrics(answers.records, outcomes, texts=texts, task=task, min_judged=own)
        )
        metrics.update(
            judge=settings.name, judge_prompt_version=JUDGE_PROMPT_VERSION, judge_settings=settings.recorded_json()
        )
        for name in PROVENANCE:
            metrics[name] = provenance_value(name, answers.provenance[name], task=task)
        results[task] = metrics
    if all(t in results for t in TASK_ORDER):
        results["fairlens_open"] = open_rollups([results[t] for t in TASK_ORDER])
    return results
