"""Fact-or-Fair through the real ``inspect eval``: the documents, prompts and numbers of the harness tasks.

A loopback OpenAI-compatible server answers (mostly valid answers, some refusals and some replies naming no option:
``tests/inspect/runs.py``); Inspect reaches it through ``--model openai-api/local/<name>``. The replies are not a
model's: these tests prove the plumbing, never a fairness result.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path

import pytest

from fact_fair_tasks import scoring
from fact_fair_tasks.commands import export_meta
from fact_fair_tasks.documents import documents_for
from fairness_evals import statistics
from fairness_evals.inspect.headline import headline_names, interval_names
from fairness_evals.inspect.logs import read_logs
from fairness_evals.jsonio import loads_strict
from tests.inspect.conftest import Finished, Served
from tests.inspect.runs import fairness_evals, inspect_eval, mixed_reply, score_replies, served

pytestmark = pytest.mark.harness

#: How far a number of the log may be from the same number of ``fairness-evals score``.
TOLERANCE = 1e-9
#: The tasks of the shared run, with the ``score`` options of their documents.
LEAVES = {
    "fact_or_fair_objective": ["--tasks", "objective"],
    "fact_or_fair_subjective_base_lite": ["--tasks", "base", "--draws", "10"],
}


def same(a: float | None, b: float | None) -> bool:
    """Equal within :data:`TOLERANCE`, or both null (NaN in a log reading, null in score's JSON)."""
    a_null = a is None or math.isnan(a)
    b_null = b is None or math.isnan(b)
    return a_null == b_null and (a_null or abs(a - b) <= TOLERANCE)


def export(tmp: Path, *args: str) -> list[dict]:
    out = tmp / "export.jsonl"
    proc = fairness_evals("export", "fact_or_fair", *args, "--out", str(out), cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_the_runs_are_whole_and_their_samples_are_the_exported_documents(fact_or_fair_run: Served) -> None:
    runs, tmp = fact_or_fair_run.tasks, fact_or_fair_run.folder
    assert sorted(runs) == sorted(LEAVES)
    exported = {line["id"]: line for args in LEAVES.values() for line in export(tmp, *args)}
    for name, entry in runs.items():
        assert entry.failures() == [] and entry.limited == "" and entry.status == "success"
        assert len(entry.samples) == entry.documents == (198 if name.endswith("objective") else 1140)
        for s in entry.samples:  # sample id = export id; the metadata is the document, whose meta export writes
            assert export_meta(s.document) == exported[s.id]["meta"]
            assert s.record is not None and s.record["record"] == scoring.record_for(
                s.document, scoring.parse_reply(s.document, s.reply)
            )
    assert {s.id for e in runs.values() for s in e.samples} == set(exported)
    assert sorted(fact_or_fair_run.prompts) == sorted(line["prompt"] for line in exported.values())
    statuses = {s.record["status"] for e in runs.values() for s in e.samples}
    assert statuses == {"parsed", "unparsed", "refused"}  # every way of counting an answer was exercised


@pytest.mark.parametrize("task", sorted(LEAVES))
def test_the_log_metrics_equal_score_of_the_same_completions(fact_or_fair_run: Served, task: str) -> None:
    entry = fact_or_fair_run.tasks[task]
    scored = score_replies(fact_or_fair_run.folder, entry, *LEAVES[task])
    names = headline_names(task)
    assert set(entry.metrics) == set(names) and len(names) > 10
    for name in names:
        assert same(entry.metrics[name], scored.get(name)), (name, entry.metrics[name], scored.get(name))
    present = [name for name in names if not math.isnan(entry.metrics[name])]
    assert len(present) >= 10  # the run is a real one: most headline values exist
    values, reasons = entry.statistics()
    for name, value in values.items():  # and every statistic, detail included, as score writes it
        assert same(value, scored.get(name)), (name, value, scored.get(name))
    assert all(math.isnan(values[name]) for name in reasons)
    withheld = [name for name in names if math.isnan(entry.metrics[name])]
    assert withheld and all(name in reasons for name in withheld)  # each value the log leaves out has its reason


def test_the_log_is_strict_json(fact_or_fair_run: Served) -> None:
    """Withheld values are left out: no bare NaN in any file of the log archives."""
    paths = {entry.path for entry in fact_or_fair_run.tasks.values()}
    assert len(paths) == 2 and all(p.suffix == ".eval" for p in paths)
    for path in paths:
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                if name.endswith(".json"):
                    loads_strict(archive.read(name).decode("utf-8"))


def test_the_task_metadata_records_the_settings_and_the_rule_for_nulls(fact_or_fair_run: Served) -> None:
    entry = fact_or_fair_run.tasks["fact_or_fair_subjective_base_lite"]
    assert entry.settings == {
        "fact_or_fair_seed": 0,
        "fact_or_fair_draws": 10,
        "fact_or_fair_conventions": "corrected",
        "fact_or_fair_min_coverage": 0.5,
    }
    assert entry.task_args == {"seed": 0, "draws": 10, "conventions": "corrected", "min_coverage": 0.5}
    assert entry.benchmark == "fact_or_fair" and entry.model == "openai-api/local/loopback"


def test_two_epochs_pool_their_answers_and_withhold_the_intervals(tmp_path: Path) -> None:
    """Two epochs of the 66 objective documents of round 0 (seed 3), logged as ``.json``: every point value is the
    value of the 132 answers pooled (with one reply per prompt, those of one epoch), no interval or standard error is
    in the log, and each has its reason; ``compare`` refuses the log."""
    args = ["--epochs", "2", "--limit", "66", "--log-format", "json", "-T", "seed=3"]
    run = served(tmp_path, ["fact_or_fair_objective"], mixed_reply, *args)
    (entry,) = read_logs([run.logs])
    assert entry.path.suffix == ".json" and entry.epochs == 2 and entry.limited.startswith("--limit 66")
    loads_strict(entry.path.read_text(encoding="utf-8"))
    assert len(entry.samples) == 132 and {s.epoch for s in entry.samples} == {1, 2}
    assert len({s.id for s in entry.samples}) == 66
    ours = {doc["id"]: doc for doc in documents_for("objective", seed=3)}
    assert all(s.document == ours[s.id] for s in entry.samples)  # -T seed=3 built the seed-3 documents
    pairs = entry.records()
    epochs = [s.epoch for s in entry.samples if s.error is None]
    pooled = scoring.compute_metrics([r for _, r in pairs], task="fact_or_fair_objective")
    first = [r for (_, r), epoch in zip(pairs, epochs, strict=True) if epoch == 1]
    one_epoch = scoring.compute_metrics(first, task="fact_or_fair_objective")
    intervals = set(interval_names("fact_or_fair_objective"))
    values, reasons = entry.statistics()
    for name in headline_names("fact_or_fair_objective"):
        if name in intervals:
            assert math.isnan(entry.metrics[name]) and name in reasons, name
        elif name.endswith(("_counted", "_inputs")):  # a score's counts: the pooled answers, twice one epoch's
            assert same(entry.metrics[name], pooled[name]) and pooled[name] == 2 * one_epoch[name], name
        else:
            assert same(entry.metrics[name], pooled[name]) and same(pooled[name], one_epoch[name]), name
            assert same(values[name], pooled[name])
    # without the epochs rule the pooled answers would have given S_fact an interval (one epoch has too few answers
    # for one): the rule withheld it
    assert math.isnan(one_epoch["s_fact_gender_ci_low"]) and not math.isnan(pooled["s_fact_gender_ci_low"])
    # compare pairs one answer per document: a log of several epochs is refused, in one line saying so
    proc = fairness_evals("compare", str(entry.path), str(entry.path), cwd=tmp_path)
    assert proc.returncode != 0
    assert "ran 2 epochs; compare pairs one answer per document" in proc.stderr, proc.stderr[-2000:]
    assert "several epochs" in reasons["s_fact_gender_ci_low"]
    warned = [line for line in run.output.splitlines() if "WARNING" in line and "fact_or_fair_objective:" in line]
    assert warned and all("metric.py" in line for line in warned), run.output[-3000:]  # one short line a problem


def test_a_failed_run_exits_0_and_its_log_says_it_failed(failed_objective_run: Finished) -> None:
    """Every request refused (HTTP 400, not retried): ``inspect eval`` still exits 0; the log's status is error and
    the reader names it (``fairness-evals check`` is the gate)."""
    proc = failed_objective_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    (entry,) = read_logs([proc.logs])
    assert entry.status == "error"
    failures = entry.failures()
    assert failures and failures[0].startswith("the Inspect run did not finish (status error")
    assert all(math.isnan(value) for value in entry.metrics.values())


def test_a_bad_task_argument_is_refused_naming_it(tmp_path: Path) -> None:
    nowhere = {"LOCAL_BASE_URL": "http://127.0.0.1:9/v1", "LOCAL_API_KEY": "-"}
    args = ["--model", "openai-api/local/x", "-T", "min_coverage=2"]
    proc = inspect_eval(tmp_path, ["fact_or_fair_objective"], *args, env=nowhere)
    assert proc.returncode != 0
    assert "-T min_coverage must be a number in [0, 1]" in proc.stdout + proc.stderr


def test_every_declared_task_but_the_log_likelihood_ones_has_an_inspect_form() -> None:
    from fact_fair_tasks import inspect_tasks as fact_or_fair

    declared = {t.name for t in statistics.tables()["fact_or_fair"] if t.harness == "lm-eval"}
    assert set(fact_or_fair.TASKS) == {name for name in declared if not name.endswith("_mc")}
    assert "fact_or_fair_lite" in fact_or_fair.TASKS and "fact_or_fair_subjective_ingroup_lite" in fact_or_fair.TASKS
