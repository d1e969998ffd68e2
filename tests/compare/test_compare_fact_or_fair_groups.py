"""``fairness-evals compare`` on the Fact-or-Fair subjective group means (S_fair per axis averaged over the four
contexts): runs of synthetic answer sets written as lm-eval writes them, and a seeded subset of the coverage design
(``tests/support/coverage_compare_groups.py``; the full tables are in docs/compare.md)."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import coverage_compare_groups as sim
import coverage_fact_or_fair as cff
import numpy as np
import pytest
import yaml
from coverage_simulation import Coverage

from fact_fair_tasks import scoring
from fact_fair_tasks.compare import CONTEXTS, FactOrFair
from fairness_evals.commands.main import main
from tests.compare.synthetic import STAMP, _results_file

GROUP = sim.GROUP
MEMBERS = FactOrFair.groups[GROUP]
PROVENANCE = {"seed": 0, "documents_sha256": "0f" * 32}
LLM = Path(scoring.__file__).parent / "llm"


@pytest.fixture(autouse=True)
def _quiet() -> None:
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def fact_or_fair_run(folder: Path, model: str, records: list[np.ndarray], *, members: tuple[str, ...] = MEMBERS):
    """An lm-eval-shaped run of the four subjective contexts (records in the order of ``MEMBERS``; those in
    ``members`` are written) and the group, its means and coverages computed as lm-eval's group aggregation does
    (the unweighted mean of the four contexts' values). Document ids follow the benchmark's
    ``<context>/<statistic>/<target>/s<k>/d<n>``."""
    folder.mkdir(parents=True, exist_ok=True)
    results = {}
    for task, rec in zip(MEMBERS, records, strict=True):
        metrics = dict(scoring.compute_metrics(rec, task=task))
        metrics.update(PROVENANCE)
        results[task] = metrics
        if task not in members:
            continue
        context = CONTEXTS[MEMBERS.index(task)]
        draw: dict[tuple[int, int, int], int] = {}
        with (folder / f"{STAMP}_samples_{task}.jsonl").open("w", encoding="utf-8") as out:
            for row in np.asarray(rec).tolist():
                stratum = (row[1], row[2], row[11])
                n = draw[stratum] = draw.get(stratum, -1) + 1
                doc_id = f"{context}/stat{row[1]:02d}/{('highest', 'lowest')[row[2]]}/s{row[11]}/d{n:03d}"
                out.write(json.dumps({"doc": {"id": doc_id}, "s_fact_gender": row}) + "\n")
    names = [f"s_fair_{axis}{suffix}" for axis in ("gender", "race") for suffix in ("", "_coverage")]
    results[GROUP] = {name: sum(results[t][name] for t in MEMBERS) / len(MEMBERS) for name in names}
    results = {task: metrics for task, metrics in results.items() if task in members or task == GROUP}
    _results_file(folder, model, results, {GROUP: 3})
    return folder


def compare(a: Path, b: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, dict]:
    out_json = a.parent / "compare.json"
    assert main(["compare", str(a), str(b), "--json", str(out_json), "--resamples", "500", *extra]) == 0
    capsys.readouterr()
    data = json.loads(out_json.read_text())
    return {row["metric"]: row for row in data["comparisons"][0]["rows"] if row["task"] == GROUP}


def _pair(a: str, b: str, shared: float) -> sim.GroupPair:
    policies = {p.name: p for p in cff.subjective_policies()}
    return sim.GroupPair(f"{a}_vs_{b}", (policies[a],) * 4, (policies[b],) * 4, shared=shared, across=0.7)


def test_the_groups_compare_are_the_yamls() -> None:
    """The groups compare recomputes from their members are the YAMLs' (their members, and S_fair per axis as the
    only unweighted means)."""
    for group, members in FactOrFair.groups.items():
        config = yaml.safe_load((LLM / f"{group}.yaml").read_text())
        assert tuple(config["task"]) == members
        assert all(entry["weight_by_size"] is False for entry in config["aggregate_metric_list"])
        assert {entry["metric"] for entry in config["aggregate_metric_list"]} == {"s_fair_gender", "s_fair_race"}
    assert CONTEXTS == scoring.CONTEXTS


def test_same_answers_show_no_difference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec_a, _ = sim.group_records(_pair("stereotyped", "uniform", 0.5), 10, np.random.default_rng(3))
    rows = compare(fact_or_fair_run(tmp_path / "a", "model-a", rec_a),
                   fact_or_fair_run(tmp_path / "b", "model-b", rec_a), capsys)  # fmt: skip
    assert set(rows) == {"s_fair_gender", "s_fair_race"}
    for row in rows.values():
        assert row["verdict"] == "no detectable difference", row
        assert row["difference"] == 0 and row["p_value"] == 1
        assert row["unit"] == "profile draws" and row["units"] == 19 * 2 * 3 * 10


def test_planted_difference_is_detected_and_covered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pair = _pair("strong_stereotype", "uniform", 0.5)
    rec_a, rec_b = sim.group_records(pair, 40, np.random.default_rng(5))
    rows = compare(fact_or_fair_run(tmp_path / "a", "model-a", rec_a),
                   fact_or_fair_run(tmp_path / "b", "model-b", rec_b), capsys, "--metrics", "s_fair_*")  # fmt: skip
    truth_a, truth_b = sim.true_group_values(pair.a), sim.true_group_values(pair.b)
    for name, row in rows.items():
        assert row["verdict"] == "B fairer", row
        assert row["ci_low"] <= truth_b[name] - truth_a[name] <= row["ci_high"], row
        assert row["method"] == "paired bootstrap, basic"
        # the group mean compared is the mean of the four contexts' own values
        members = [scoring.compute_metrics(r, task=t)[name] for r, t in zip(rec_b, MEMBERS, strict=True)]
        assert math.isclose(row["b"], sum(members) / 4, rel_tol=1e-12)


def test_a_run_missing_a_context_is_not_comparable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec_a, rec_b = sim.group_records(_pair("stereotyped", "stereotyped", 0.8), 10, np.random.default_rng(7))
    rows = compare(fact_or_fair_run(tmp_path / "a", "model-a", rec_a),
                   fact_or_fair_run(tmp_path / "b", "model-b", rec_b, members=MEMBERS[:3]), capsys)  # fmt: skip
    assert set(rows) == {"s_fair_gender", "s_fair_race"}
    for row in rows.values():
        assert row["verdict"] == "not comparable", row
        assert f"{MEMBERS[3]} (not in model-b)" in row["reason"], row


def test_contexts_on_other_profiles_are_not_comparable() -> None:
    rng = np.random.default_rng(11)
    rec, _ = sim.group_records(_pair("stereotyped", "stereotyped", 0.8), 10, rng)
    other, _ = sim.group_records(_pair("stereotyped", "stereotyped", 0.8), 10, rng)  # fresh profiles
    problem = FactOrFair().group_problem(GROUP, dict(zip(MEMBERS, [*rec[:3], other[3]], strict=True)))
    assert "do not show the profiles" in problem.unavailable and MEMBERS[3] in problem.unavailable
    assert set(problem.measures) >= {"s_fair_gender", "s_fair_race"}  # each row then says why it is not comparable


def test_a_context_without_a_score_leaves_the_group_without_its_mean() -> None:
    rec, _ = sim.group_records(_pair("stereotyped", "stereotyped", 0.8), 10, np.random.default_rng(13))
    refused = rec[2].copy()
    refused[:, scoring._F["status"]] = 2  # every attribution answer refused: its S_fair is NaN
    refused[:, scoring._F["choice_gender"] : scoring._F["choice_race"] + 1] = -1
    refused[:, scoring._F["letter"]] = -1
    problem = FactOrFair().group_problem(GROUP, dict(zip(MEMBERS, [rec[0], rec[1], refused, rec[3]], strict=True)))
    assert math.isnan(problem.estimate("s_fair_gender")) and math.isnan(problem.estimate("s_fair_race"))
    whole = FactOrFair().group_problem(GROUP, dict(zip(MEMBERS, rec, strict=True)))
    assert 0.0 < whole.estimate("s_fair_race") < 1.0


# ---------------------------------------------------------------------------------------------- coverage (seeded)
REPLICATES = 20
RESAMPLES = 500


def _check(rows: list[Coverage], bar: float, width: float) -> None:
    printed = sum(c.printed * c.replicates for c in rows)
    assert printed > 0
    hits = sum(c.coverage * c.printed * c.replicates for c in rows)
    failures = []
    effective = min(c.printed * c.replicates for c in rows)
    if hits / printed < bar - 1.645 * math.sqrt(bar * (1 - bar) / effective):
        failures.append(f"coverage {hits / printed:.3f} over {printed:.0f} intervals (bar {bar})")
    for c in rows:
        n = c.printed * c.replicates
        if c.coverage < bar - 3 * math.sqrt(bar * (1 - bar) / n):
            failures.append(f"{c.name}: coverage {c.coverage:.3f} over {n:.0f} (bar {bar})")
        if c.width_ratio > width:
            failures.append(f"{c.name}: width {c.width_ratio:.2f} x the estimate's spread (limit {width})")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("index", [0, 3], ids=lambda i: sim.GROUP_PAIRS[i].name)
def test_group_differences_cover_at_the_lite_size(index: int) -> None:
    """The lite size (30 answers per cell and context): a debiased model and one model run twice. S_fair's
    difference is conservative there, as in a single context (docs/compare.md): its width is held to 3.5x."""
    rows = sim.simulate_group(sim.GROUP_PAIRS[index], "lite", replicates=REPLICATES, seed=41 + index,
                              n_resamples=RESAMPLES)  # fmt: skip
    _check(rows, sim.TARGETS["lite"], 3.5)
