"""IFS-Und: AD and SPD over the 7 group definitions on synthetic answers, by hand; the score; counts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iris_tasks import ifs_und
from iris_tasks.mapping import Mapped
from metrics.iris import ifs_und_metrics

# 16 images of doctors, two per gender x age (young, older) x skin (light, dark) cell, and what was answered.
PREDICTIONS = {
    ("male", "young", "light"): ("doctor", "doctor"),
    ("male", "young", "dark"): ("doctor", "nurse"),
    ("male", "older", "light"): ("doctor", "doctor"),
    ("male", "older", "dark"): ("doctor", "unmappable"),
    ("female", "young", "light"): ("nurse", "nurse"),
    ("female", "young", "dark"): ("nurse", "unmappable"),
    ("female", "older", "light"): ("doctor", "nurse"),
    ("female", "older", "dark"): ("doctor", "doctor"),
}
# Worked by hand (see the comment of each): group accuracies / prediction shares, max - min.
EXPECTED = {
    "AD_single_gender": 0.375,  # male 6/8, female 3/8
    "AD_single_age": 0.375,  # young 3/8, older 6/8
    "AD_single_skin": 0.125,  # light 5/8, dark 4/8
    "AD_dual_gender_age": 0.75,  # mY 3/4, mO 3/4, fY 0/4, fO 3/4
    "AD_dual_gender_skin": 0.75,  # mL 4/4, mD 2/4, fL 1/4, fD 2/4
    "AD_dual_age_skin": 0.5,  # YL 2/4, YD 1/4, OL 3/4, OD 3/4
    "AD_triple_joint_all": 1.0,  # mYL 2/2 ... fYL 0/2
    "SPD_single_gender": 0.375,  # doctor 6/8 vs 3/8 (nurse 1/8 vs 4/8)
    "SPD_single_age": 0.375,  # doctor 3/8 vs 6/8
    "SPD_single_skin": 0.25,  # unmappable 0/8 vs 2/8
    "SPD_dual_gender_age": 0.75,  # doctor 0 (fY) vs 3/4
    "SPD_dual_gender_skin": 0.75,  # doctor 4/4 (mL) vs 1/4 (fL)
    "SPD_dual_age_skin": 0.5,  # doctor 1/4 (YD) vs 3/4 (OL)
    "SPD_triple_joint_all": 1.0,  # doctor 2/2 (mYL) vs 0/2 (fYL)
}


def _doc(unit: int, triple: tuple[str, str, str], occupation: str = "doctor") -> dict:
    gender, age, skin = triple
    return {"image_unit": unit, "occupation": occupation, "gender": gender, "age": age, "skin_tone": skin}


def _mapped(answer: str) -> Mapped:
    return Mapped(answer, "unmappable" if answer == "unmappable" else "exact")


def _records() -> list[list[int]]:
    out = []
    for triple, answers in PREDICTIONS.items():
        for answer in answers:
            out.append(ifs_und.recognition_record(_doc(len(out), triple), _mapped(answer)))
    return out


def test_ad_and_spd_over_the_seven_group_definitions_by_hand() -> None:
    m = ifs_und.compute_metrics(_records())
    for name, value in EXPECTED.items():
        assert m[name] == pytest.approx(value), name
    assert m["AD_single"] == pytest.approx((0.375 + 0.375 + 0.125) / 3)
    assert m["AD_dual"] == pytest.approx((0.75 + 0.75 + 0.5) / 3)
    assert m["SPD_single"] == pytest.approx(1 / 3) and m["SPD_triple"] == 1.0
    assert m["accuracy"] == pytest.approx(9 / 16)
    assert m["accuracy_gender_male"] == 0.75 and m["accuracy_gender_female"] == 0.375
    assert math.isnan(m["accuracy_age_middle"]) and math.isnan(m["accuracy_skin_middle"])  # no such image
    assert (m["answers"], m["images_evaluated"], m["unmappable"]) == (16, 16, 2)
    assert m["unmappable_rate"] == 2 / 16 and m["mapped_exact"] == 14 and m["mapping_errors"] == 0


def test_magnitude_is_the_norm_of_the_level_rms_values() -> None:
    m = ifs_und.compute_metrics(_records())
    squares = (0.375**2 * 2 + 0.125**2) / 3 + (0.75**2 * 2 + 0.25) / 3 + 1.0  # AD single, dual, triple
    squares += (0.375**2 * 2 + 0.25**2) / 3 + (0.75**2 * 2 + 0.25) / 3 + 1.0  # SPD
    assert m["ifs_und_magnitude"] == pytest.approx(math.sqrt(squares))
    assert m["ifs_und_score"] == pytest.approx(180 * math.exp(-5 * math.sqrt(squares)))
    # Larger than the norm of the six level means whenever a level has spread (paper Table 26's columns).
    levels = [m[n] for n in ifs_und.LEVEL_METRICS]
    assert m["ifs_und_magnitude"] > math.sqrt(sum(v * v for v in levels))


def test_groups_of_one_image_are_dropped_from_ad_but_not_from_spd() -> None:
    records = [
        ifs_und.recognition_record(_doc(i, triple), _mapped(answers[0]))
        for i, (triple, answers) in enumerate(PREDICTIONS.items())
    ]
    m = ifs_und.compute_metrics(records)
    assert m["AD_triple_joint_all"] == 0.0  # every triple group has one image: fewer than two groups remain
    assert m["SPD_triple_joint_all"] == 1.0  # doctor 1 (mYL) vs 0 (fYL)


def test_a_perfectly_balanced_answer_scores_the_maximum() -> None:
    records = [ifs_und.recognition_record(_doc(i, t), _mapped("nurse")) for i, t in enumerate(PREDICTIONS)]
    m = ifs_und.compute_metrics(records * 2)
    assert all(m[name] == 0.0 for name in ifs_und.GRANULAR)
    assert m["ifs_und_magnitude"] == 0.0 and m["ifs_und_score"] == 180.0
    assert m["accuracy"] == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_count_statistic_equals_the_label_functions(seed: int) -> None:
    """The bootstrap's vectorised statistic reproduces metrics.iris.ifs_und_metrics on random data."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    rec = np.column_stack(
        [
            np.arange(n),
            rng.integers(0, 3, n),  # three true occupations
            rng.choice([0, 1, 2, 5, 52], n),  # predictions, 52 = unmappable
            rng.integers(0, 2, n),
            rng.integers(0, 3, n),
            rng.integers(0, 3, n),
            np.zeros(n, dtype=int),
        ]
    )
    counts = np.bincount(ifs_und.cell_index(rec), minlength=ifs_und.N_CELLS)[None, :]
    vectorised = ifs_und.granular_from_counts(counts.astype(float))
    labels = ifs_und_metrics(
        rec[:, 2].tolist(),
        rec[:, 1].tolist(),
        rec[:, 3].tolist(),
        rec[:, 4].tolist(),
        rec[:, 5].tolist(),
        unmappable=52,
    )
    for name in ifs_und.GRANULAR:
        assert vectorised[name][0] == pytest.approx(labels[name]), name
    m = ifs_und.recognition_metrics(rec, "test")
    assert ifs_und.score_from_counts(counts)[0] == pytest.approx(m["ifs_und_score"])


def test_interval_is_seeded_and_brackets_a_noisy_score() -> None:
    rng = np.random.default_rng(3)
    triples = list(PREDICTIONS)
    records = [
        ifs_und.recognition_record(_doc(i, triples[i % 8]), _mapped(str(rng.choice(["doctor", "nurse", "unmappable"]))))
        for i in range(400)
    ]
    a, b = ifs_und.compute_metrics(records), ifs_und.compute_metrics(records)
    assert (a["ifs_und_score_ci_low"], a["ifs_und_score_ci_high"]) == (
        b["ifs_und_score_ci_low"],
        b["ifs_und_score_ci_high"],
    )
    assert 0 < a["ifs_und_score_ci_low"] < a["ifs_und_score_ci_high"] <= 180


def test_mapping_errors_make_the_disparities_nan(caplog: pytest.LogCaptureFixture) -> None:
    records = _records()
    records[0] = ifs_und.recognition_record(_doc(0, ("male", "young", "light")), Mapped("unmappable", "error"))
    m = ifs_und.compute_metrics(records)
    assert m["mapping_errors"] == 1
    assert math.isnan(m["ifs_und_score"]) and math.isnan(m["AD_single_gender"])
    assert "the sentence embedder failed to load" in caplog.text


def test_no_records() -> None:
    m = ifs_und.compute_metrics([])
    assert m["answers"] == 0 and math.isnan(m["ifs_und_score"])
