"""How each Inspect task of ours turns its records into statistics: the benchmark's own functions, named once.

:func:`plan` gives the :class:`~fairness_evals.inspect.headline.Plan` of a declared task or group: which leaf task a
record belongs to, the benchmark's ``compute_metrics``, its group roll-up, how a reply becomes a record (the same
parsing the harness tasks and ``fairness-evals score`` use) and the benchmark's loggers. The Inspect metric
(:mod:`fairness_evals.inspect.metric`) and the log reader (:mod:`fairness_evals.inspect.logs`) both call it, so a log
and its reading give the same numbers. No Inspect import here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from fairness_evals import statistics
from fairness_evals.inspect.headline import Plan, leaves
from fairness_evals.notes import Notes


def plan(task: str, settings: Mapping[str, Any] | None = None) -> Plan:
    """The plan of ``task`` (a declared task or group of Fact-or-Fair or FairLens) under its task-metadata
    ``settings`` (FairLens reads ``fairlens_min_coverage`` from them; Fact-or-Fair's records carry theirs)."""
    return _plan(task, json.dumps(dict(settings or {}), sort_keys=True))


@functools.lru_cache(maxsize=64)
def _plan(task: str, settings: str) -> Plan:
    benchmark = statistics.task(task).benchmark
    builders = {"fact_or_fair": _fact_or_fair, "fairlens": _fairlens}
    if benchmark not in builders:
        raise ValueError(f"{task}: {benchmark} has no Inspect task")
    return builders[benchmark](task, json.loads(settings))


# --------------------------------------------------------------------------- Fact-or-Fair
def fact_or_fair_kind(leaf: str) -> str:
    """The document kind of a Fact-or-Fair leaf task: ``objective`` or its context."""
    if leaf == "fact_or_fair_objective":
        return "objective"
    return leaf.removeprefix("fact_or_fair_subjective_").removesuffix("_lite")


def _fact_or_fair(task: str, settings: dict[str, Any]) -> Plan:
    from fact_fair_tasks import scoring

    by_kind = {fact_or_fair_kind(leaf): leaf for leaf in leaves(task)}

    def leaf_of(record: Sequence[int]) -> str:
        kind = scoring.KINDS[record[0]]
        return by_kind.get(kind, scoring.task_name(kind))

    def compute(leaf: str, records: list[Sequence[int]], notes: Notes) -> dict[str, float]:
        return scoring.compute_metrics(records, task=leaf, notes=notes)

    def record_of(doc: Mapping[str, Any], reply: object) -> list[int]:
        return scoring.record_for(dict(doc), scoring.parse_reply(dict(doc), reply))

    return Plan(task, leaf_of, compute, scoring.group_mean, (scoring.log.name,), record_of)


# --------------------------------------------------------------------------- FairLens (closed questions)
def _fairlens(task: str, settings: dict[str, Any]) -> Plan:
    from fairlens_tasks import scoring
    from fairlens_tasks.normalise import normalise
    from fairlens_tasks.questions import closed_questions

    min_coverage = settings.get(scoring.MIN_COVERAGE_KEY)
    domains = [question.domain for question in closed_questions()]

    def leaf_of(record: Sequence[int]) -> str:
        return f"fairlens_{domains[int(record[0])]}"

    def compute(leaf: str, records: list[Sequence[int]], notes: Notes) -> dict[str, float]:
        return scoring.compute_metrics(records, task=leaf, min_coverage=min_coverage, notes=notes)

    def rollup(values: Sequence[float]) -> float:
        return scoring.model_level_mean(values, [0] * len(values), False)

    def record_of(doc: Mapping[str, Any], reply: object) -> list[int]:
        return scoring.record_for(doc, normalise(reply, doc.get("options") or []))

    return Plan(task, leaf_of, compute, rollup, (scoring.log.name,), record_of)
