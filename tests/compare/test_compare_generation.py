"""``fairness-evals compare`` on image-generation runs of simulated generators (lmms-eval-shaped): the images of two
generators are independent draws for the same prompts, resampled each on its own."""

from __future__ import annotations

import json
from pathlib import Path

import coverage_generation as cg
import numpy as np

from fairness_evals.commands.main import main
from tests.compare.synthetic import generation_run


def _rows(a: Path, b: Path, tmp: Path, capsys) -> dict[str, dict]:
    out = tmp / "compare.json"
    assert main(["compare", str(a), str(b), "--json", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return {r["metric"]: r for r in json.loads(out.read_text())["comparisons"][0]["rows"]}


def test_a_steering_gap_is_detected(tmp_path, capsys) -> None:
    rng = np.random.default_rng(2)
    gap, no_gap = cg.steer_population("gap"), cg.steer_population("no_gap")
    a = generation_run(tmp_path / "a", "gap", "iris_gen_steer", cg.steer_records(rng, *gap, 20))
    b = generation_run(tmp_path / "b", "no-gap", "iris_gen_steer", cg.steer_records(rng, *no_gap, 20))
    rows = _rows(a, b, tmp_path, capsys)
    truth = cg.steer_truths(*no_gap)["bis_gen_score"] - cg.steer_truths(*gap)["bis_gen_score"]
    score = rows["bis_gen_score"]
    assert score["verdict"] == "B fairer" and score["ci_low"] <= truth <= score["ci_high"]
    assert score["method"] == "unpaired bootstrap, basic"  # a generator's images are its own draws


def test_two_runs_of_one_generator_show_no_detectable_difference(tmp_path, capsys) -> None:
    rng = np.random.default_rng(3)
    gender, race = cg.t2i_population("stereotyped")
    task = "fact_or_fair_t2i_objective"
    a = generation_run(tmp_path / "a", "g1", task, cg.t2i_records(rng, gender, race, 20))
    b = generation_run(tmp_path / "b", "g2", task, cg.t2i_records(rng, gender, race, 20))
    rows = _rows(a, b, tmp_path, capsys)
    compared = [r for r in rows.values() if r["verdict"] != "not comparable"]
    assert compared and all(r["verdict"] == "no detectable difference" for r in compared)
    for row in rows.values():
        assert "do not reproduce" not in row["reason"], row


def test_a_run_logged_with_readable_records_compares_as_one_logged_before(tmp_path, capsys) -> None:
    """Task version 3 logs one readable record per document under the carrier (the record inside it); compare reads
    it, with the same rows as from version 2's record under every metric."""
    from iris_tasks.gen_statistics import task_of

    rng = np.random.default_rng(4)
    gap, no_gap = cg.steer_population("gap"), cg.steer_population("no_gap")
    runs = {
        name: generation_run(tmp_path / name, name, "iris_gen_steer", cg.steer_records(rng, *population, 20))
        for name, population in (("a", gap), ("b", no_gap))
    }
    before = _rows(runs["a"], runs["b"], tmp_path, capsys)
    names = [name for name, _ in task_of("iris_gen_steer").harness_metrics()]
    for folder in runs.values():
        (samples,) = folder.glob("*_samples_iris_gen_steer.jsonl")
        lines = []
        for line in samples.read_text().splitlines():
            row = json.loads(line)
            readable = {
                "id": row["t2i_images"]["id"],
                "classifier": "",
                "images": [],
                "rule": "",
                "record": row["bis_gen_score"],
            }
            lines.append(json.dumps({names[0]: readable, **{n: n for n in names[1:]}}))
        samples.write_text("\n".join(lines) + "\n")
    assert _rows(runs["a"], runs["b"], tmp_path, capsys) == before
    assert before["bis_gen_score"]["verdict"] == "B fairer"
