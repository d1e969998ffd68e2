"""How an Inspect task of the toy turns its scores into statistics (:func:`plan`, the Benchmark's ``inspect`` hook) and
the provenance of its answered documents (:func:`provenance`). No Inspect import here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fairness_evals.inspect.headline import Plan
from fairness_evals.notes import Notes


def plan(task: str, settings: Mapping[str, Any]) -> Plan:
    """The plan of the toy task under its settings (``toy_min_coverage``)."""
    from toy_tasks import scoring

    minimum = settings.get("toy_min_coverage")

    def compute(leaf: str, items: list[Mapping[str, Any]], notes: Notes) -> dict[str, float]:
        return scoring.compute_metrics([item["record"] for item in items], min_coverage=minimum, notes=notes)

    def rollup(name: str, members: list[Mapping[str, float]]) -> float:  # the toy has no group
        return float(members[0][name])

    def item_of(doc: Mapping[str, Any], reply: str, logged: Mapping[str, Any] | None) -> dict[str, Any]:
        return scoring.readable_record(doc, reply)

    return Plan(task, lambda item: task, compute, rollup, (scoring.log.name,), item_of)


def provenance(documents: list[Mapping[str, Any]], answers: int, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The data's hash, the minimum coverage and the number of documents answered."""
    first = documents[0] if documents else {}
    return {
        "data_sha256": first.get("data_sha256"),
        "min_coverage": settings.get("toy_min_coverage"),
        "documents": len(documents),
        "answers": answers,
    }
