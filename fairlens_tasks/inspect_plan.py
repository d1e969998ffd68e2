"""How an Inspect task of FairLens turns its scores into statistics (:func:`plan`, the benchmark's ``inspect`` hook)
and the provenance of its documents (:func:`provenance`). No Inspect import here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fairness_evals.inspect.headline import Plan
from fairness_evals.inspect.plans import Item, records
from fairness_evals.notes import Notes


def plan(task: str, settings: Mapping[str, Any]) -> Plan:
    """The plan of ``task`` under its task-metadata ``settings`` (``fairlens_min_coverage``, ``fairlens_min_judged``,
    ``fairlens_position_nulls``)."""
    if task.startswith("fairlens_open"):
        return _fairlens_open(task, dict(settings))
    return _fairlens(task, dict(settings))


def provenance(documents: list[Mapping[str, Any]], answers: int, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The corpus provenance of an Inspect task's answered documents and the answers counted."""
    from fairlens_tasks import scoring

    del settings
    return {**scoring.provenance(documents), "answers": answers}


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
