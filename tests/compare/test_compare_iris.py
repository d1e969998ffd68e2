"""``fairness-evals compare`` on IRIS understanding runs of synthetic answer sets (lmms-eval-shaped)."""

from __future__ import annotations

import json
from pathlib import Path

import coverage_iris as ci
import numpy as np
import pytest
from coverage_compare import IRIS_PAIRS, _bis_truths, paired_bis_und_records

from fairness_evals.cli import main
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
    from fairness_evals.compare.iris import _ifs_interval
    from iris_tasks import ifs_und

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
