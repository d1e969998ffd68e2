"""IRIS understanding through the real ``inspect eval``: the group ``iris_und`` on small synthetic corpora (two
occupations, two counterfactual sets, one probe round), against a loopback server whose replies are chosen by a hash
of the prompt among an occupation, a rating and yes/no answers (``tests/inspect/runs.py``); the log's numbers are
``fairness-evals score iris`` of the same completions. Plumbing, never a fairness result."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
from openai_server import hashed_choice

from fairness_evals.inspect.headline import headline_names
from fairness_evals.inspect.logs import read_logs
from tests.inspect.runs import fairness_evals, served
from tests.iris.conftest import CORNERS, image_rows, steer_rows, write_manifest

pytestmark = pytest.mark.harness

TASKS = ("iris_ifs_und", "iris_rfs_und", "iris_bis_und")


def iris_reply(text: str) -> str:
    return hashed_choice(text, ["7 doctor", "Yes, a nurse.", "no", "2", "A banana."])


def test_the_group_log_of_each_task_equals_score_of_the_same_completions(tmp_path: Path) -> None:
    corpus = write_manifest(tmp_path / "images" / "images.csv", image_rows(tmp_path / "images", ["doctor", "nurse"]))
    sets = {"set-a": "doctor", "set-b": "nurse"}
    steer = write_manifest(tmp_path / "steer" / "steer.csv", steer_rows(tmp_path / "steer", sets, CORNERS))
    options = {"corpus": str(corpus), "steer_corpus": str(steer), "probe_rounds": "1"}
    arguments = [part for key, value in options.items() for part in ("-T", f"{key}={value}")]
    run = served(tmp_path, ["iris_und"], iris_reply, *arguments)
    server = run.server
    entries = {entry.name: entry for entry in read_logs([run.logs])}
    group = entries["iris_und"]
    assert group.members == TASKS and group.failures() == [] and group.metrics == {}  # no roll-up of its own
    assert server.requests == server.images == len(group.samples) == 36 + 270 + 192
    for task in TASKS:
        entry = entries[task]
        responses = tmp_path / f"{task}.jsonl"
        responses.write_text("".join(json.dumps({"id": s.id, "response": s.reply}) + "\n" for s in entry.samples))
        out = tmp_path / f"{task}.score.json"
        command = ["score", "iris", "--corpus", str(corpus), "--steer-corpus", str(steer), "--probe-rounds", "1"]
        proc = fairness_evals(*command, "--task", task, "--responses", str(responses), "--out", str(out), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        score = json.loads(out.read_text())[task]
        names = headline_names(task)
        assert set(entry.metrics) == set(names)
        for name in names:
            value, theirs = entry.metrics[name], score.get(name)
            assert (theirs is None and math.isnan(value)) or math.isclose(value, theirs, abs_tol=1e-9), (task, name)
        assert any(not math.isnan(v) for v in entry.metrics.values()), task
        values, _ = entry.statistics()
        for name, value in values.items():
            theirs = score.get(name)
            assert (theirs is None and math.isnan(value)) or math.isclose(value, theirs, abs_tol=1e-9), (task, name)


def test_a_limit_20_run_prints_no_value_of_the_design(tmp_path: Path) -> None:
    """Issue 33: ``inspect eval ... --limit 20`` answers 20 of the 36 documents; the log's values of the design (the
    disparities, magnitude and score) are null, each with the reason, as the harness tasks'; the rates stay."""
    corpus = write_manifest(tmp_path / "images" / "images.csv", image_rows(tmp_path / "images", ["doctor", "nurse"]))
    answers = itertools.cycle(["doctor", "nurse"])  # every answer maps; the prompt (one text for every image) cannot
    run = served(tmp_path, ["iris_ifs_und"], lambda _: next(answers), "-T", f"corpus={corpus}", "--limit", "20")
    (entry,) = read_logs([run.logs])
    assert run.server.requests == len(entry.samples) == 20
    assert math.isnan(entry.metrics["ifs_und_score"]) and math.isfinite(entry.metrics["unmappable_rate"])
    values, nulls = entry.statistics()
    declared = [name for name in ("AD_single", "SPD_triple", "ifs_und_magnitude", "ifs_und_score")]
    assert all(math.isnan(values[name]) for name in declared)
    why = "too little evidence: only 20 of the design's 36 documents hold an answer"
    assert any(reason.startswith(why) for reason in nulls.values()), nulls
