"""Fact-or-Fair's lm-eval tasks as lm-eval 0.5.0.dev1 drives them (tests/support/lm_eval_05.py, in-process): every
aggregation but ``mean`` is also called on bootstrap resamples of its items, and a multiple-choice target must be
among the choices."""

from __future__ import annotations

import copy
import math

import pytest
from lm_eval_05 import aggregate as aggregate_05
from lm_eval_05 import resolve_target_index

from fact_fair_tasks import scoring
from fact_fair_tasks.documents import objective_documents
from fact_fair_tasks.items import CONTEXTS
from fairness_evals import aggregation

REPLIES = ["A", '{"answer": "B"}', "B", "A", "I would rather not say", "A", "C", "no idea"]


def _payloads(replies: list[str]) -> list[dict]:
    docs = objective_documents()
    return [scoring.process_results(doc, [replies[i % len(replies)]]) for i, doc in enumerate(docs)]


def _as_lm_eval_04(payloads: list[dict]) -> dict[str, object]:
    """Each metric aggregated once, carrier first (lm-eval 0.4, lmms-eval)."""
    aggregation.clear()
    return {name: _aggregation(name)([p[name] for p in payloads]) for name in payloads[0]}


def _aggregation(name: str):
    """What the YAML's ``!function scoring.aggregate_<name>`` resolves to."""
    return getattr(scoring, f"aggregate_{name}")


def _same(a: object, b: object) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("pool", [False, True], ids=["in-process", "pool"])
@pytest.mark.parametrize("replies", [REPLIES, ["no idea"]], ids=["answers", "all-unparsed"])
def test_resampling_keeps_the_printed_values_and_our_standard_errors(
    replies: list[str], pool: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The values 0.5 prints are the real run's (as 0.4 prints them), computed once; the ± column is ours where the
    task declares ``<name>_stderr`` ("N/A" when null) and NaN elsewhere: a resample never overwrites the kept run,
    never recomputes, and never hands the bootstrap a string."""
    payloads = _payloads(replies)
    expected = _as_lm_eval_04(payloads)
    aggregation.clear()
    calls = []
    compute = scoring.compute_metrics
    monkeypatch.setattr(scoring, "compute_metrics", lambda *a, **k: calls.append(1) or compute(*a, **k))
    results = aggregate_05(payloads, _aggregation, pool=pool)
    assert len(calls) == 1
    names = list(payloads[0])
    for name in names:
        assert _same(results[f"{name},none"], expected[name]), name
        if name.endswith("_stderr"):
            continue
        companion = f"{name}_stderr"
        shown = results[f"{companion},none"]
        assert _same(shown, expected[companion]) if companion in names else math.isnan(shown), name
    if replies == ["no idea"]:
        assert results["s_fact_gender_stderr,none"] == "N/A"
    else:
        assert 0 < results["s_fact_gender_stderr,none"] < 0.2


def test_a_resample_of_the_records_leaves_the_kept_run() -> None:
    """A list that repeats a record is a resample (NaN); the kept run's records in another order give its value; a
    metric reported once is a resample when asked again (NaN); a new run of equal records computes again."""
    payloads = _payloads(REPLIES)
    records = [p[scoring.CARRIER] for p in payloads]
    expected = _as_lm_eval_04(payloads)
    aggregation.clear()
    carrier, s_fact = scoring.aggregate_unparsed_rate, scoring.aggregate_s_fact_gender
    assert carrier(records) == expected[scoring.CARRIER]
    assert math.isnan(carrier(records[:-1] + records[:1]))
    assert carrier(records[::-1]) == expected[scoring.CARRIER]
    nothing = [None] * len(records)
    assert s_fact(nothing) == expected["s_fact_gender"]
    assert math.isnan(s_fact(list(nothing)))
    assert carrier([copy.copy(r) for r in records]) == expected[scoring.CARRIER]  # equal records, a new run
    assert s_fact(nothing) == expected["s_fact_gender"]


def test_every_mc_target_is_a_choice_and_the_subjective_ones_name_no_group() -> None:
    """The ``_mc`` tasks as lm-eval loads them from their YAMLs: every document's target resolves among its choices
    as 0.5 resolves it (else 0.5 skips the document); a subjective target is every option, whatever the document's
    groups."""
    from lm_eval.tasks import TaskManager

    manager = TaskManager(
        include_path=[str(scoring.__file__).rsplit("/", 1)[0] + "/llm"], include_defaults=False,
        metadata={"fact_or_fair_draws": 2},
    )  # fmt: skip
    names = ["fact_or_fair_objective_mc", *(f"fact_or_fair_subjective_{c}_mc" for c in CONTEXTS)]
    tasks = manager.load(names)["tasks"]
    assert sorted(str(t) for t in tasks) == sorted(names)
    for name, task in tasks.items():
        docs = list(task.test_docs())
        assert docs, name
        for doc in docs:
            choices = task.doc_to_choice(doc)
            index = resolve_target_index(task.doc_to_target(doc), choices)
            if doc.get("context") is None:
                assert index == doc["answer_index"], (name, doc["id"])
            else:
                assert index == list(range(len(choices))) == list(range(len(doc["options"]))), (name, doc["id"])
