"""How an Inspect task of Fact-or-Fair turns its scores into statistics (:func:`plan`, the benchmark's ``inspect``
hook) and the provenance of its documents (:func:`provenance`). No Inspect import here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fairness_evals.inspect.headline import Plan, leaves
from fairness_evals.inspect.plans import Item, records
from fairness_evals.notes import Notes


def plan(task: str, settings: Mapping[str, Any]) -> Plan:
    """The plan of ``task``; Fact-or-Fair's records carry their settings."""
    del settings
    return _fact_or_fair(task)


def provenance(documents: list[Mapping[str, Any]], answers: int, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The seed, data version, conventions, minimum coverage, documents and their hash of an Inspect task's answered
    documents."""
    from fact_fair_tasks import scoring

    del answers
    first = documents[0] if documents else {}
    out: dict[str, Any] = {"seed": settings.get("fact_or_fair_seed", first.get("seed"))}
    out.update({key: first.get(key) for key in ("data_version", "conventions", "min_coverage")})
    out["documents"] = len(documents)
    out["documents_sha256"] = scoring.documents_sha256([doc["doc_sha"] for doc in documents])
    return out


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
