"""``fairness-evals compare`` on IRIS understanding runs of synthetic answer sets (lmms-eval-shaped)."""

from __future__ import annotations

import json
from pathlib import Path

import coverage_iris as ci
import numpy as np
import pytest
from coverage_compare import IRIS_PAIRS, _bis_truths, paired_bis_und_records

from fairness_evals.commands.main import main
from tests.compare.synthetic import iris_run


def _compare(a: Path, b: Path, tmp: Path, capsys, *extra: str) -> dict[str, dict]:
    out = tmp / "compare.json"
    assert main(["compare", str(a), str(b), "--json", str(out), *extra]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return {f"{r['task']}/{r['metric']}": r for r in json.loads(out.read_text())["comparisons"][0]["rows"]}


def test_a_planted_bis_und_difference_is_detected_and_covered(tmp_path, capsys) -> None:
    pair = IRIS_PAIRS[0]  # a biased model against one without the bias, on the same counterfactual sets
    rec_a, rec_b = paired_bis_und_records(pair, 2, np.random.default_rng(3))
    a = iris_run(tmp_path / "a", "biased", {"iris_bis_und": rec_a})
    b = iris_run(tmp_path / "b", "fairer", {"iris_bis_und": rec_b})
    rows = _compare(a, b, tmp_path, capsys)
    score = rows["iris_bis_und/bis_und_score"]
    truth = _bis_truths(pair.b)["bis_und_score"] - _bis_truths(pair.a)["bis_und_score"]
    assert score["verdict"] == "B fairer" and score["ci_low"] <= truth <= score["ci_high"]
    assert score["units"] == 104 and score["method"] == "paired bootstrap, basic"
    assert rows["iris_bis_und/ac_diff_dual"]["verdict"] == "B fairer"  # lower AC_diff is fairer


def test_ifs_und_differences_combine_the_runs_own_intervals(tmp_path, capsys) -> None:
    rng = np.random.default_rng(5)
    rec_a = ci.draw_recognition(ci.recognition_model("gender"), 2, rng)
    rec_b = ci.draw_recognition(ci.recognition_model("fair"), 2, rng)
    a = iris_run(tmp_path / "a", "gender", {"iris_ifs_und": rec_a})
    b = iris_run(tmp_path / "b", "fair", {"iris_ifs_und": rec_b})
    row = _compare(a, b, tmp_path, capsys)["iris_ifs_und/ifs_und_score"]
    assert row["method"] == "paired bootstrap, conservative bounds"
    from iris_tasks import ifs_und
    from iris_tasks.compare import _ifs_interval

    own_a, own_b = (ifs_und.compute_metrics(r) for r in (rec_a, rec_b))
    at_a, at_b = _ifs_interval(rec_a), _ifs_interval(rec_b)
    assert at_a(0.95) == pytest.approx((own_a["ifs_und_score_ci_low"], own_a["ifs_und_score_ci_high"]))
    low_a, high_a = at_a(0.975)
    low_b, high_b = at_b(0.975)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low_b - high_a, high_b - low_a))
    assert row["difference"] == pytest.approx(own_b["ifs_und_score"] - own_a["ifs_und_score"])


def test_identical_iris_runs_show_no_detectable_difference(tmp_path, capsys) -> None:
    rec, _ = paired_bis_und_records(IRIS_PAIRS[1], 1, np.random.default_rng(8))
    ifs = ci.draw_recognition(ci.recognition_model("multi"), 1, np.random.default_rng(9))
    a = iris_run(tmp_path / "a", "m", {"iris_bis_und": rec, "iris_ifs_und": ifs})
    b = iris_run(tmp_path / "b", "m2", {"iris_bis_und": rec, "iris_ifs_und": ifs})
    for name, row in _compare(a, b, tmp_path, capsys).items():
        if row["verdict"] != "not comparable":
            assert (row["difference"], row["verdict"]) == (0.0, "no detectable difference"), name


def _stereotyped_recognition() -> np.ndarray:
    """A recogniser that names every woman the same occupation (0): the images it names any other occupation are
    men's, so its stereotype drift, and with it the RFS-Und score, is large."""
    pi = ci.recognition_model("fair").copy()
    female = ci.GENDER == 1
    pi[:, female, :] = 0.0
    pi[:, female, 0] = 0.9
    pi[:, female, ci.UNMAPPABLE] = 0.1
    return pi


def _rfs_rows(probe: str, pi: np.ndarray, per_cell: int, rng: np.random.Generator) -> np.ndarray:
    from iris_tasks import rfs_und

    recognition = ci.draw_recognition(pi, per_cell, rng)
    return np.concatenate(
        [ci.draw_probe(probe, 5, rng), np.column_stack([np.full(len(recognition), rfs_und.RECOGNITION), recognition])]
    )


def rfs_run(folder: Path, model: str, rows: np.ndarray) -> Path:
    """An lmms-eval-shaped ``iris_rfs_und`` run: probe answers ``p<unit>``, corpus answers ``i<image>``."""
    import logging

    from iris_tasks import rfs_und
    from tests.compare.synthetic import STAMP, _results_file

    folder.mkdir(parents=True, exist_ok=True)
    prov = {"seed": 0, "sample_fraction": 1.0, "corpus_sha256": "fedcba9876543210", "data_version": 1}
    logging.disable(logging.WARNING)
    try:
        metrics = {**rfs_und.compute_metrics(rows), **prov}
    finally:
        logging.disable(logging.NOTSET)
    with (folder / f"{STAMP}_samples_iris_rfs_und.jsonl").open("w", encoding="utf-8") as out:
        for row in rows.tolist():
            doc_id = f"{'p' if row[0] == rfs_und.PROBE else 'i'}{row[1]}"
            out.write(json.dumps({"iris_answer": {"id": doc_id}, "rfs_und_score": row, **prov}) + "\n")
    _results_file(folder, model, {"iris_rfs_und": metrics}, {})
    return folder


def test_a_planted_rfs_und_difference_is_detected_and_its_conservative_interval_covers_it(tmp_path, capsys) -> None:
    from iris_tasks import rfs_und
    from iris_tasks.compare import _rfs_und

    rng = np.random.default_rng(11)
    rec_a = _rfs_rows("moderate", ci.recognition_model("fair"), 2, rng)
    rec_b = _rfs_rows("moderate", _stereotyped_recognition(), 2, rng)
    a, b = rfs_run(tmp_path / "a", "fair", rec_a), rfs_run(tmp_path / "b", "stereotyped", rec_b)
    row = _compare(a, b, tmp_path, capsys)["iris_rfs_und/rfs_und_score"]
    truth = ci.rfs_truth("moderate", _stereotyped_recognition(), 2) - ci.rfs_truth(
        "moderate", ci.recognition_model("fair"), 2
    )
    assert truth > 50 and row["verdict"] == "B fairer" and row["ci_low"] <= truth <= row["ci_high"], row
    assert row["method"] == "paired bootstrap, conservative bounds" and row["better"] == "higher is fairer"
    own_a, own_b = (rfs_und.compute_metrics(r) for r in (rec_a, rec_b))
    at_a = _rfs_und(rec_a.tolist()).measures["rfs_und_score"].run_interval
    at_b = _rfs_und(rec_b.tolist()).measures["rfs_und_score"].run_interval
    assert at_a(0.95) == pytest.approx((own_a["rfs_und_score_ci_low"], own_a["rfs_und_score_ci_high"]))
    (low_a, high_a), (low_b, high_b) = at_a(0.975), at_b(0.975)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low_b - high_a, high_b - low_a))
    assert row["difference"] == pytest.approx(own_b["rfs_und_score"] - own_a["rfs_und_score"])


def test_rfs_und_runs_of_one_model_show_no_detectable_difference_and_an_unbalanced_corpus_is_not_comparable(
    tmp_path, capsys
) -> None:
    from iris_tasks import rfs_und

    rng = np.random.default_rng(12)
    rec_a, rec_b = (_rfs_rows("decisive", ci.recognition_model("gender"), 2, rng) for _ in range(2))
    a, b = rfs_run(tmp_path / "a", "m", rec_a), rfs_run(tmp_path / "b", "m2", rec_b)
    row = _compare(a, b, tmp_path, capsys)["iris_rfs_und/rfs_und_score"]
    assert row["verdict"] == "no detectable difference" and row["ci_low"] < 0 < row["ci_high"], row
    same = rfs_run(tmp_path / "same", "m3", rec_a)
    row = _compare(a, same, tmp_path, capsys)["iris_rfs_und/rfs_und_score"]
    assert (row["difference"], row["p_value"], row["verdict"]) == (0.0, 1.0, "no detectable difference")
    # a corpus without the women of ten occupations is not balanced: the score is NaN
    recognition = rec_b[:, 0] == rfs_und.RECOGNITION
    unbalanced = rec_b[~(recognition & (rec_b[:, 2] < 10) & (rec_b[:, 4] == 1))]
    assert len(unbalanced) < len(rec_b)
    c = rfs_run(tmp_path / "c", "m4", unbalanced)
    out = tmp_path / "compare.json"
    assert main(["compare", str(a), str(c), "--json", str(out), "--unpaired"]) == 0
    capsys.readouterr()
    (row,) = [r for r in json.loads(out.read_text())["comparisons"][0]["rows"] if r["metric"] == "rfs_und_score"]
    assert row["verdict"] == "not comparable" and row["reason"].startswith("NaN in m4"), row
