"""How each Inspect task of ours turns its scores into statistics: the benchmark's own functions, named once.

:func:`plan` gives the :class:`~fairness_evals.inspect.headline.Plan` of a declared task or group: which leaf task an
item (a score's readable record) belongs to, the benchmark's ``compute_metrics``, its group roll-up, how a reply
becomes an item (the same parsing the harness tasks and ``fairness-evals score`` use) and the benchmark's loggers.
The Inspect metric (:mod:`fairness_evals.inspect.metric`) and the log reader (:mod:`fairness_evals.inspect.logs`)
both call it, so a log and its reading give the same numbers. No Inspect import here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from fairness_evals import statistics
from fairness_evals.inspect.headline import Plan, leaves
from fairness_evals.notes import Notes

Item = Mapping[str, Any]


def plan(task: str, settings: Mapping[str, Any] | None = None) -> Plan:
    """The plan of ``task`` (a declared task or group of Fact-or-Fair or FairLens) under its task-metadata
    ``settings`` (FairLens reads ``fairlens_min_coverage`` and ``fairlens_min_judged`` from them; Fact-or-Fair's
    records carry theirs)."""
    return _plan(task, json.dumps(dict(settings or {}), sort_keys=True))


@functools.lru_cache(maxsize=64)
def _plan(task: str, settings: str) -> Plan:
    declared = statistics.task(task)
    if declared.benchmark == "fact_or_fair":
        return _fact_or_fair(task)
    if declared.benchmark == "fairlens" and task.startswith("fairlens_open"):
        return _fairlens_open(task, json.loads(settings))
    if declared.benchmark == "fairlens":
        return _fairlens(task, json.loads(settings))
    if declared.benchmark == "iris" and not task.startswith("iris_gen"):
        return _iris(task)
    raise ValueError(f"{task}: {declared.benchmark} has no Inspect task")


def records(items: list[Item]) -> list[Any]:
    return [item["record"] for item in items]


# --------------------------------------------------------------------------- Fact-or-Fair
def fact_or_fair_kind(leaf: str) -> str:
    """The document kind of a Fact-or-Fair leaf task: ``objective`` or its context."""
    if leaf == "fact_or_fair_objective":
        return "objective"
    return leaf.removeprefix("fact_or_fair_subjective_").removesuffix("_lite")


def _fact_or_fair(task: str) -> Plan:
    from fact_fair_tasks import scoring

    by_kind = {fact_or_fair_kind(leaf): leaf for leaf in leaves(task)}

    def leaf_of(item: Item) -> str:
        kind = scoring.KINDS[int(item["record"][0])]
        return by_kind.get(kind, scoring.task_name(kind))

    def compute(leaf: str, items: list[Item], notes: Notes) -> dict[str, float]:
        return scoring.compute_metrics(records(items), task=leaf, notes=notes)

    def rollup(name: str, members: list[Mapping[str, float]]) -> float:
        return scoring.group_mean([member[name] for member in members])

    def item_of(doc: Item, reply: str, logged: Item | None) -> dict[str, Any]:
        return scoring.readable_record(dict(doc), scoring.parse_reply(dict(doc), reply))

    return Plan(task, leaf_of, compute, rollup, (scoring.log.name,), item_of)


# --------------------------------------------------------------------------- FairLens
def _closed_domains() -> list[str]:
    from fairlens_tasks.questions import closed_questions

    return [question.domain for question in closed_questions()]


def _fairlens(task: str, settings: dict[str, Any]) -> Plan:
    from fairlens_tasks import scoring
    from fairlens_tasks.normalise import normalise

    min_coverage = settings.get(scoring.MIN_COVERAGE_KEY)
    position_nulls = settings.get("fairlens_position_nulls", True)  # Inspect runs read no environment variable
    domains = _closed_domains()

    def leaf_of(item: Item) -> str:
        return f"fairlens_{domains[int(item['record'][0])]}"

    def compute(leaf: str, items: list[Item], notes: Notes) -> dict[str, float]:
        return scoring.compute_metrics(
            records(items), task=leaf, min_coverage=min_coverage, notes=notes, position_nulls=position_nulls
        )

    def rollup(name: str, members: list[Mapping[str, float]]) -> float:
        return scoring.model_level_mean([member[name] for member in members], [0] * len(members), False)

    def item_of(doc: Item, reply: str, logged: Item | None) -> dict[str, Any]:
        return scoring.readable_record(doc, normalise(reply, doc.get("options") or []))

    return Plan(task, leaf_of, compute, rollup, (scoring.log.name,), item_of)


def _fairlens_open(task: str, settings: dict[str, Any]) -> Plan:
    from fairlens_tasks import open_scoring
    from fairlens_tasks.judging.pipeline import Outcome
    from fairlens_tasks.questions import open_questions

    min_judged = settings.get("fairlens_min_judged")
    domains = [question.domain for question in open_questions()]

    def leaf_of(item: Item) -> str:
        return f"fairlens_open_{domains[int(item['record'][0])]}"

    def compute(leaf: str, items: list[Item], notes: Notes) -> dict[str, float]:
        outcomes = {
            str(item["record"][5]): Outcome.from_json(item["judgement"])
            for item in items
            if isinstance(item.get("judgement"), Mapping)
        }
        texts = {str(item["record"][5]): str(item.get("response") or "") for item in items}
        return open_scoring.compute_open_metrics(
            records(items), outcomes, texts=texts, task=leaf, min_judged=min_judged, notes=notes
        )

    def rollup(name: str, members: list[Mapping[str, float]]) -> float:
        return open_scoring.pooled_over_domains([m[name] for m in members], [int(m["answers"]) for m in members])

    def item_of(doc: Item, reply: str, logged: Item | None) -> dict[str, Any]:
        item = open_scoring.readable_record(doc, reply)
        same_answer = logged is not None and list(logged.get("record") or [])[5:] == item["record"][5:]
        if same_answer and isinstance(logged.get("judgement"), Mapping):
            item["judgement"] = dict(logged["judgement"])
        return item

    return Plan(task, leaf_of, compute, rollup, (open_scoring.log.name,), item_of)


# --------------------------------------------------------------------------- IRIS understanding
def _iris(task: str) -> Plan:
    from iris_tasks import scoring

    def leaf_of(item: Item) -> str:
        return str(item["task"])

    def compute(leaf: str, items: list[Item], notes: Notes) -> dict[str, float]:
        design = scoring.design_of(item.get("provenance") for item in items)  # an Inspect --limit answers fewer
        return scoring.MODULES[leaf].compute_metrics(records(items), notes=notes, design_size=design)

    def rollup(name: str, members: list[Mapping[str, float]]) -> float:
        raise ValueError(f"{task} has no roll-up ({name})")  # the group prints its members' metrics only

    def item_of(doc: Item, reply: str, logged: Item | None) -> dict[str, Any]:
        doc = dict(doc)
        carried = scoring.process_results(doc, [reply])[scoring.CARRIERS[doc["task"]]]
        return {**carried, "task": doc["task"]}

    return Plan(task, leaf_of, compute, rollup, (scoring.log.name,), item_of)
