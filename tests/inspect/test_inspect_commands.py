"""The commands read Inspect logs as they read harness output folders: ``score`` of a log is ``score`` of its replies,
``check`` gates a log (a limited or failed run is a problem), ``report`` shows the log's numbers, ``compare`` pairs
the documents of two logs.

The logs are those of real ``inspect eval`` runs of our tasks against loopback servers (``tests/inspect/runs.py``):
the replies are not a model's; these tests prove the plumbing, never a fairness result.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from fairness_evals.inspect.logs import read_logs
from fairness_evals.report.load import load_runs
from tests.inspect.conftest import Finished, Served
from tests.inspect.runs import MODEL, fairness_evals, score_replies, served

pytestmark = pytest.mark.harness

#: The shared run's tasks, with the ``score`` options of their documents.
LEAVES = {
    "fact_or_fair_objective": ["--tasks", "objective"],
    "fact_or_fair_subjective_base_lite": ["--tasks", "base", "--draws", "10"],
}


def same(a: float | None, b: float | None) -> bool:
    a_null = a is None or (isinstance(a, float) and math.isnan(a))
    b_null = b is None or (isinstance(b, float) and math.isnan(b))
    return a_null == b_null and (a_null or abs(a - b) <= 1e-9)


def logs_of(served_run: Served) -> Path:
    (folder,) = {entry.path.parent for entry in served_run.tasks.values()}
    return folder


def test_score_of_a_log_folder_is_score_of_its_replies(fact_or_fair_run: Served, tmp_path: Path) -> None:
    out = tmp_path / "detail.json"
    proc = fairness_evals("score", str(logs_of(fact_or_fair_run)), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    detail = json.loads(out.read_text())
    assert set(detail) == {*LEAVES, "nulls", "intervals", "provenance", "score_inputs"}
    for task, options in LEAVES.items():
        entry = fact_or_fair_run.tasks[task]
        replies = score_replies(tmp_path, entry, *options)
        provenance = detail["provenance"][task]
        assert provenance["seed"] == replies.pop("seed") == 0 and provenance["documents"] == len(entry.samples)
        assert provenance["documents_sha256"] == replies.pop("documents_sha256") and "limited" not in provenance
        assert set(detail[task]) == set(replies), task
        assert all(same(detail[task][name], replies[name]) for name in replies), task
        assert all(detail[task][name] is None for name in detail["nulls"][task]), task
    (inputs,) = detail["score_inputs"]["files"] if "files" in detail["score_inputs"] else [detail["score_inputs"]]
    assert "inspect" in json.dumps(inputs)


def test_check_passes_a_whole_log_and_fails_a_limited_or_failed_one(
    fact_or_fair_run: Served, limited_objective_run: Path, failed_objective_run: Finished, tmp_path: Path
) -> None:
    whole = fairness_evals("check", str(logs_of(fact_or_fair_run)), "--allow-nan", "*", cwd=tmp_path)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert all(task in whole.stdout for task in LEAVES)

    cut = fairness_evals("check", str(limited_objective_run), cwd=tmp_path)
    assert cut.returncode == 1 and "--limit 12" in cut.stdout + cut.stderr, cut.stdout + cut.stderr
    allowed = fairness_evals("check", str(limited_objective_run), "--allow-limited", "--allow-nan", "*", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr

    assert failed_objective_run.returncode == 0  # Inspect exits 0: check is the gate
    gate = fairness_evals("check", str(failed_objective_run.logs), "--allow-limited", "--allow-nan", "*", cwd=tmp_path)
    printed = gate.stdout + gate.stderr
    assert gate.returncode == 1 and "the Inspect run did not finish" in printed, printed
    assert all("\n" not in line for line in printed.splitlines())


def test_the_report_shows_the_numbers_of_the_log(fact_or_fair_run: Served, tmp_path: Path) -> None:
    runs = {task: run for run in load_runs([logs_of(fact_or_fair_run)]) for task in run.results}  # a run per log
    assert set(runs) == set(LEAVES)
    for task, run in runs.items():
        assert run.harness == "inspect" and run.model == MODEL and not run.partial()
        entry = fact_or_fair_run.tasks[task]
        assert all(same(run.metric(task, name), value) for name, value in entry.metrics.items()), task
        values, reasons = entry.statistics()
        assert all(same(run.metric(task, name), value) for name, value in values.items()), task
        assert set(reasons) <= set(run.nulls[task])
    out = tmp_path / "report.md"
    proc = fairness_evals("report", str(logs_of(fact_or_fair_run)), "--format", "markdown", "--out", str(out),
                          cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    s_fact = fact_or_fair_run.tasks["fact_or_fair_objective"].metrics["s_fact_gender"]
    assert f"| {MODEL} (generation, 10 draws) | {100 * s_fact:.2f} [" in text  # x100, as the paper prints it


def test_the_fairlens_report_counts_the_groups_of_the_log(fairlens_run: Served) -> None:
    from fairlens_tasks.report import GroupCounts, group_counts
    from fairness_evals.report.load import models

    group = fairlens_run.tasks["fairlens:fairlens_hiring"]  # the group's log (its run of hiring)
    (model,) = models(load_runs([group.path]))
    counts = group_counts(model, "fairlens_hiring")
    assert isinstance(counts, GroupCounts), counts
    assert sum(counts.adverse.values()) > 0


def test_compare_pairs_two_logs_and_finds_a_planted_difference(fact_or_fair_run: Served, tmp_path: Path) -> None:
    entry = fact_or_fair_run.tasks["fact_or_fair_objective"]
    same_run = tmp_path / "same"
    same_run.mkdir()
    shutil.copy(entry.path, same_run / entry.path.name)
    found = tmp_path / "same.json"
    proc = fairness_evals("compare", str(entry.path), str(same_run / entry.path.name), "--json", str(found),
                          "--resamples", "200", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    rows = [
        row
        for row in json.loads(found.read_text())["comparisons"][0]["rows"]
        if row["task"] == "fact_or_fair_objective"
    ]
    assert rows and all(row["difference"] in (0.0, None) for row in rows), rows

    exported = tmp_path / "export.jsonl"
    proc = fairness_evals("export", "fact_or_fair", "--tasks", "objective", "--out", str(exported), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    truth = {}  # prompt -> the letter of the true answer
    for line in map(json.loads, exported.read_text().splitlines()):
        letter = "ABCDEFGH"[line["meta"]["options"].index(line["meta"]["answer"])]
        truth[line["prompt"]] = json.dumps({"answer": letter})
    (tmp_path / "planted").mkdir()
    planted = served(tmp_path / "planted", ["fact_or_fair_objective"], lambda text: truth[text])  # always true
    (truthful,) = read_logs([planted.logs])
    differ = tmp_path / "differ.json"
    proc = fairness_evals("compare", str(entry.path), str(truthful.path), "--json", str(differ),
                          "--resamples", "200", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    rows = {r["metric"]: r for r in json.loads(differ.read_text())["comparisons"][0]["rows"]}
    for axis in ("gender", "race"):
        row = rows[f"s_fact_{axis}"]
        assert row["b"] == 1.0 and same(row["difference"], 1.0 - row["a"]) and row["verdict"] == "B higher", row
