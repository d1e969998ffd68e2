"""End to end through the real ``lm_eval`` command with the embedded SmolLM2-135M-Instruct model.

SmolLM2 answers at chance: this proves the plumbing (documents, prompts, parsing, aggregation, results
and samples files), not the model's fairness.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from harness import load_results, sample_lines

from fact_fair_tasks import scoring

pytestmark = pytest.mark.harness

GENERATION = [
    "fact_or_fair_objective",
    "fact_or_fair_subjective_base",
    "fact_or_fair_subjective_representativeness",
    "fact_or_fair_subjective_attribution",
    "fact_or_fair_subjective_ingroup",
]


def _results(out: Path) -> dict:
    return load_results(out) | {"_out": out}


def _metrics(task_results: dict) -> dict[str, object]:
    return {key.split(",")[0]: value for key, value in task_results.items() if key.endswith(",none")}


def _check_task(results: dict, task: str, expected: tuple[str, ...]) -> None:
    metrics = _metrics(results["results"][task])
    assert set(expected) <= set(metrics), sorted(set(expected) - set(metrics))
    parsed = metrics["parsed"]
    assert parsed >= 0 and 0 <= metrics["unparsed_rate"] <= 1 and 0 <= metrics["refused_rate"] <= 1
    if parsed:  # a parsed answer gives a finite entropy and interval on every axis it touches
        for axis in ("gender", "race") if task != "fact_or_fair_objective" else ():
            for suffix in ("", "_ci_low", "_ci_high"):
                assert math.isfinite(metrics[f"s_e_{axis}{suffix}"]), (task, axis, suffix)
    for name, value in metrics.items():
        if (
            isinstance(value, float)
            and math.isfinite(value)
            and name not in ("parsed", "seed")
            and "increase" not in name
        ):
            assert 0.0 <= value <= 1.0 + 1e-9, (task, name, value)


def test_generation_group_with_smollm2(fact_or_fair_generation_run: Path) -> None:
    results = _results(fact_or_fair_generation_run)
    _check_task(results, "fact_or_fair_objective", scoring.OBJECTIVE_METRICS)
    for task in [*GENERATION[1:], "fact_or_fair_subjective_base_lite"]:
        _check_task(results, task, scoring.SUBJECTIVE_METRICS)
    assert {"s_fair_gender,none", "s_fair_race,none"} <= set(results["groups"]["fact_or_fair_subjective"])
    # every reply reaches the samples file, with the record the aggregation used
    samples = sample_lines(results["_out"], "fact_or_fair_subjective_attribution")
    assert len(samples) == 4
    for sample in samples:
        assert sample["resps"][0][0] == sample["filtered_resps"][0]
        doc = sample["doc"]
        assert sample["s_fact_gender"] == scoring.record_for(doc, scoring.parse_reply(doc, sample["filtered_resps"][0]))
    # the score command reproduces the harness's numbers from the samples
    from fact_fair_tasks.cli import _from_samples

    rescored = _from_samples(results["_out"])
    for task in GENERATION:
        harness = _metrics(results["results"][task])
        for name, value in rescored[task].items():
            if isinstance(value, float) and math.isnan(value):
                assert math.isnan(harness[name]), (task, name)
            else:
                assert harness[name] == value, (task, name)


def test_loglikelihood_group_with_smollm2(fact_or_fair_loglikelihood_run: Path) -> None:
    results = _results(fact_or_fair_loglikelihood_run)
    _check_task(results, "fact_or_fair_objective_mc", scoring.OBJECTIVE_METRICS)
    for context in ("base", "representativeness", "attribution", "ingroup"):
        task = f"fact_or_fair_subjective_{context}_mc"
        _check_task(results, task, scoring.SUBJECTIVE_METRICS)
        assert _metrics(results["results"][task])["parsed"] == 8  # a log-likelihood answer always parses
        assert math.isfinite(_metrics(results["results"][task])["s_kld_gender"])
