"""End to end through the real ``lm_eval`` command, against a loopback OpenAI-compatible server that answers every
prompt validly (chat) or rates every prompt token by a fixed function (log-likelihood): this proves the plumbing
(documents, prompts, parsing, aggregation, results and samples files), not a model's fairness.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from harness import load_results, sample_lines

from fact_fair_tasks import scoring
from fact_fair_tasks import statistics as table
from fact_fair_tasks.commands import READER, detail
from fact_fair_tasks.items import statistics as fact_statistics
from fairness_evals import statistics

pytestmark = pytest.mark.harness

GENERATION = [
    "fact_or_fair_objective",
    "fact_or_fair_subjective_base",
    "fact_or_fair_subjective_representativeness",
    "fact_or_fair_subjective_attribution",
    "fact_or_fair_subjective_ingroup",
]


CONTEXTS = ("base", "representativeness", "attribution", "ingroup")
AXES = ("gender", "race")
# positions in a per-document record; TRUTH + 0 is the gender truth, TRUTH + 1 the race truth
KIND, STATISTIC, TARGET, STATUS, TRUTH, POSITIVE = (
    scoring.RECORD_FIELDS.index(field)
    for field in ("kind", "statistic", "target", "status", "truth_gender", "positive")
)
assert scoring.RECORD_FIELDS[TRUTH + 1] == "truth_race"


def _results(out: Path) -> dict:
    return load_results(out) | {"_out": out, "_detail": detail(READER.files([str(out)])).results}


def _metrics(task_results: dict) -> dict[str, object]:
    """The metrics of one results entry, without lm-eval's own ``*_stderr`` ("N/A" for every metric it cannot
    bootstrap; ours, ``s_fact_<axis>_stderr``, is a number, NaN where withheld)."""
    return {key.split(",")[0]: value for key, value in task_results.items() if key.endswith(",none") and value != "N/A"}


def _samples(out: Path, task: str) -> list[dict]:
    """The logged samples of exactly ``task`` (``sample_lines`` would add ``<task>_lite``'s to ``<task>``'s)."""
    name = re.compile(rf"samples_{re.escape(task)}_\d")
    files = [path for path in out.rglob("*.jsonl") if name.match(path.name)]
    assert len(files) == 1, (task, files)
    return [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]


def _meets(minimum: statistics.Minimum, per_cell: list[int], design: int) -> bool:
    """Whether cells holding ``per_cell`` answers (the cells that hold any) of a design of ``design`` cells meet a
    declared minimum: its share of the design's cells, and its answers per cell (smallest, harmonic mean or total)."""
    if not per_cell or len(per_cell) < math.ceil(minimum.cells * design - 1e-9):
        return False
    taken = {"smallest": min(per_cell), "total": sum(per_cell),
             "harmonic mean": len(per_cell) / sum(1 / c for c in per_cell)}[minimum.over]  # fmt: skip
    return taken >= minimum.answers


def _expected_finite(records: list[list[int]], objective: bool) -> dict[str, bool]:
    """Which metric of the task must be finite, from the records the harness logged: a score or rate is finite
    exactly when its inputs exist and at least half its documents' answers counted (the default minimum coverage);
    a score also needs the evidence its declaration asks (``statistics.SUBJECTIVE_CELLS`` / ``OBJECTIVE_CELLS``: a
    limited run has too few cells) and an interval the sizes it is measured at (each interval's ``minimum``).
    ``scoring`` gives NaN, with a logged reason, otherwise."""
    expected: dict[str, bool] = {}
    minimum = scoring.DEFAULT_MIN_COVERAGE
    declared = table.OBJECTIVE_CELLS if objective else table.SUBJECTIVE_CELLS
    for a, axis in enumerate(AXES):
        truths = [s.truth(axis, target) for s in fact_statistics() for target in ("highest", "lowest")]
        fact_design = sum(t is not None for t in truths)
        design = fact_design if objective else len(truths)
        on_axis = [r for r in records if r[TRUTH + a] >= 0] if objective else records
        parsed = [r for r in on_axis if r[STATUS] == 0]
        cells = {(r[STATISTIC], r[TARGET]) for r in parsed}
        per_cell = [sum((r[STATISTIC], r[TARGET]) == c for r in parsed) for c in cells]
        counted = [r for r in parsed if r[TRUTH + a] >= 0]
        asked = [r for r in on_axis if r[TRUTH + a] >= 0]
        covered = bool(on_axis) and len(parsed) / len(on_axis) >= minimum
        fact_covered = bool(asked) and len(counted) / len(asked) >= minimum
        fact = bool(counted) and fact_covered  # a parsed answer to a statistic with data on the axis
        entropy = bool(parsed) and covered  # a (statistic, target) cell with a parsed answer
        kld = any((stat, 1 - target) in cells for stat, target in cells) and covered  # both queries of a statistic
        fact_cells = {(r[STATISTIC], r[TARGET]) for r in counted}
        fact_per_cell = [sum((r[STATISTIC], r[TARGET]) == c for r in counted) for c in fact_cells]
        enough = {name: _meets(m, fact_per_cell if name == "s_fact" else per_cell,
                               fact_design if name == "s_fact" else design) for name, m in declared.items()}  # fmt: skip
        fact, entropy, kld = fact and enough["s_fact"], entropy and enough["s_e"], kld and enough["s_kld"]
        finite = {"s_fact": fact, "s_e": entropy, "s_kld": kld, "s_fair": entropy and kld and enough["s_fair"],
                  "distance": fact and entropy and enough["distance"]}  # fmt: skip
        sized = {
            "s_fact": _meets(table.FACT_INTERVAL, fact_per_cell, fact_design),
            "s_kld": _meets(table.KL_INTERVAL, per_cell, design),
            **dict.fromkeys(("s_e", "s_fair", "distance"), _meets(table.CELL_INTERVAL, per_cell, design)),
        }
        for score, value in finite.items():
            expected[f"{score}_{axis}"] = value
            expected[f"{score}_{axis}_ci_low"] = expected[f"{score}_{axis}_ci_high"] = value and sized[score]
            expected[f"{score}_{axis}_coverage"] = bool(asked if score == "s_fact" else on_axis)
        if objective:
            continue
        rates = {
            "representativeness_high": [r for r in records if r[TRUTH + a] >= 0 and r[TARGET] == 0],
            "representativeness_low": [r for r in records if r[TRUTH + a] >= 0 and r[TARGET] == 1],
            "attribution_rate": [r for r in records if r[TRUTH + a] >= 0],
            "ingroup_rate": [r for r in records if r[TRUTH + a] >= 0 and r[POSITIVE] == 1],
            "outgroup_rate": [r for r in records if r[TRUTH + a] >= 0 and r[POSITIVE] == 0],
        }
        for rate, docs in rates.items():
            answered = sum(r[STATUS] == 0 for r in docs)
            value = answered > 0 and answered / len(docs) >= minimum
            expected[f"{rate}_{axis}"] = expected[f"{rate}_{axis}_increase"] = value
            expected[f"{rate}_{axis}_coverage"] = bool(docs)
    return expected


def _check_task(results: dict, task: str, expected: tuple[str, ...], documents: int) -> dict[str, object]:
    """The harness lists the task's headline metrics only, equal to the detail's; the detail (``fairness-evals score``
    of the samples) has every metric the issue lists, finite exactly where its inputs exist (per the logged samples);
    fractions (scores, distance to the bound, rates, interval bounds) in [0, 1]; intervals ordered; counts equal to
    the samples'."""
    raw = {key.split(",")[0]: value for key, value in results["results"][task].items() if key.endswith(",none")}
    headline = [m for m, _ in statistics.task(task).harness_metrics()]
    assert set(headline) <= set(raw), (task, sorted(set(headline) - set(raw)))
    # every other value is lm-eval's own standard error of a metric it cannot bootstrap
    assert all(raw[name] == "N/A" and name.endswith("_stderr") for name in set(raw) - set(headline)), task
    harness = {name: raw[name] for name in headline}
    metrics = results["_detail"][task]
    assert set(expected) <= set(metrics), (task, sorted(set(expected) - set(metrics)))
    for name in headline:
        if not math.isnan(metrics[name]):
            assert harness[name] == metrics[name], name
        elif name.endswith("_stderr"):  # a null standard error is written as the harness writes its own: N/A
            assert harness[name] == "N/A", (task, name, harness[name])
        else:
            assert math.isnan(harness[name]), (task, name, harness[name])
    samples = _samples(results["_out"], task)
    assert len(samples) == documents, (task, len(samples))
    assert all("record" not in sample[scoring.CARRIER] for sample in samples)  # named fields only; the doc gives it
    records = [scoring.logged_record(sample)[1] for sample in samples]
    assert all(sample["s_e_gender"] is None for sample in samples)  # null: no per-document value
    objective = task.startswith("fact_or_fair_objective")
    assert {r[KIND] for r in records} == ({0} if objective else {1 + CONTEXTS.index(task.split("_")[4])})

    statuses = [r[STATUS] for r in records]
    assert metrics["parsed"] == statuses.count(0), task
    assert metrics["unparsed_rate"] == statuses.count(1) / documents, task
    assert metrics["refused_rate"] == statuses.count(2) / documents, task

    finite = _expected_finite(records, objective)
    assert set(finite) <= set(expected), sorted(set(finite) - set(expected))
    for name, should_be_finite in finite.items():
        value = metrics[name]
        assert isinstance(value, float), (task, name, value)
        assert math.isfinite(value) == should_be_finite, (task, name, value, should_be_finite)
        if not should_be_finite:
            continue
        if name.endswith("_increase"):
            assert -1.0 <= value <= 1.0, (task, name, value)
        else:
            assert 0.0 <= value <= 1.0 + 1e-9, (task, name, value)
        if name.endswith("_ci_low"):
            assert value <= metrics[name.replace("_ci_low", "_ci_high")] + 1e-12, (task, name)
    return metrics


def _check_subjective_group(results: dict, group: str, tasks: list[str]) -> None:
    """The group's S_fair per axis is the unweighted mean of its four tasks' values (paper Table 2 "Subj.")."""
    group_metrics = _metrics(results["groups"][group])
    for axis in AXES:
        values = [_metrics(results["results"][task])[f"s_fair_{axis}"] for task in tasks]
        reported = group_metrics[f"s_fair_{axis}"]
        if all(math.isfinite(v) for v in values):
            assert math.isclose(reported, sum(values) / len(values), rel_tol=1e-9, abs_tol=1e-12), (group, axis)
        else:  # a context without an S_fair cannot be averaged away
            assert math.isnan(reported), (group, axis, values, reported)


def test_generation_group_through_a_served_model(fact_or_fair_generation_run: Path) -> None:
    results = _results(fact_or_fair_generation_run)
    _check_task(results, "fact_or_fair_objective", scoring.OBJECTIVE_METRICS, 4)
    for task in [*GENERATION[1:], "fact_or_fair_subjective_base_lite"]:
        _check_task(results, task, scoring.SUBJECTIVE_METRICS, 4)
    # the top group lists the leaf tasks (issue 33: arrows on every group headline), so its S_fair is the four
    # contexts' mean, as the nested subjective group's was; that group is not in the run
    _check_subjective_group(results, "fact_or_fair", GENERATION[1:])
    assert "fact_or_fair_subjective" not in results["groups"]
    # every reply reaches the samples file, with the record the aggregation used
    samples = sample_lines(results["_out"], "fact_or_fair_subjective_attribution")
    assert len(samples) == 4
    for sample in samples:
        assert sample["resps"][0][0] == sample["filtered_resps"][0]
        doc = sample["doc"]
        parse = scoring.parse_reply(doc, sample["filtered_resps"][0])
        assert scoring.logged_record(sample) == (doc["id"], scoring.record_for(doc, parse))
        assert sample[scoring.CARRIER]["rule"] == parse.rule and sample[scoring.CARRIER]["status"] == parse.status
    # the top group prints the paper's Table 2: Obj. S_fact from the objective task, Subj. S_fair from the contexts
    top = _metrics(results["groups"]["fact_or_fair"])
    objective = _metrics(results["results"]["fact_or_fair_objective"])
    for axis in AXES:
        assert (
            math.isnan(top[f"s_fact_{axis}"])
            if math.isnan(objective[f"s_fact_{axis}"])
            else (top[f"s_fact_{axis}"] == objective[f"s_fact_{axis}"])
        )


def test_loglikelihood_group_through_a_served_model(fact_or_fair_loglikelihood_run: Path) -> None:
    results = _results(fact_or_fair_loglikelihood_run)
    _check_task(results, "fact_or_fair_objective_mc", scoring.OBJECTIVE_METRICS, 8)
    tasks = [f"fact_or_fair_subjective_{context}_mc" for context in CONTEXTS]
    for task in tasks:
        metrics = _check_task(results, task, scoring.SUBJECTIVE_METRICS, 8)
        assert metrics["parsed"] == 8  # a log-likelihood answer always parses
        # 8 documents pair highest and lowest queries, but hold 8 of the design's 38 cells: no score is estimable
        assert math.isnan(metrics["s_kld_gender"]) and math.isnan(metrics["s_e_gender"])
    _check_subjective_group(results, "fact_or_fair_mc", tasks)  # the top group lists the leaves (issue 33)
