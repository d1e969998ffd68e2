"""How an Inspect task of IRIS understanding turns its scores into statistics (:func:`plan`, the benchmark's
``inspect`` hook) and the provenance of its documents (:func:`provenance`). No Inspect import here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fairness_evals.inspect.headline import Plan
from fairness_evals.inspect.plans import Item, records
from fairness_evals.notes import Notes


def plan(task: str, settings: Mapping[str, Any]) -> Plan:
    """The plan of an understanding task or group (the generation tasks have no Inspect form)."""
    del settings
    if task.startswith("iris_gen"):
        raise ValueError(f"{task}: iris has no Inspect task")
    return _iris(task)


def provenance(documents: list[Mapping[str, Any]], answers: int, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The corpus provenance of an Inspect task's answered documents and the answers counted."""
    from iris_tasks import scoring

    del settings
    return {**scoring.provenance(documents), "answers": answers}


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
