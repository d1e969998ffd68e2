"""IFS-Und: AD and SPD over the 7 group definitions on synthetic answers, by hand; the score; counts."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from warnings_said import task_warnings

from fairness_evals import evidence
from fairness_evals.notes import Notes
from iris_tasks import ifs_und
from iris_tasks import statistics as table
from iris_tasks.mapping import Mapped
from metrics.iris import DIMENSION_PARAMETERS, dimension_score, ifs_und_metrics

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


# Three categories: 14 images of nurses over 7 triples that use every age and skin tone, middle included, two
# answers each. T7 (male, young, middle) shares two attributes with T1, T2 and T4, so it joins a different image
# pair in each dual comparison: (male, young) with T1, (male, middle skin) with T2, (young, middle skin) with T4.
THREE_CATEGORIES = {
    ("male", "young", "light"): ("nurse", "nurse"),  # T1
    ("male", "middle", "middle"): ("nurse", "doctor"),  # T2
    ("male", "older", "dark"): ("nurse", "unmappable"),  # T3
    ("female", "young", "middle"): ("nurse", "unmappable"),  # T4
    ("female", "middle", "dark"): ("nurse", "nurse"),  # T5
    ("female", "older", "light"): ("nurse", "doctor"),  # T6
    ("male", "young", "middle"): ("doctor", "doctor"),  # T7
}
# Worked by hand: group accuracy (correct = "nurse") and the shares (n)urse / (d)octor / (u)nmappable.
EXPECTED_THREE_CATEGORIES = {
    # male T1 T2 T3 T7: 4/8, n d u = 4 3 1 of 8; female T4 T5 T6: 4/6, n d u = 4 1 1 of 6
    "AD_single_gender": 1 / 6,  # 4/6 - 4/8
    "SPD_single_gender": 5 / 24,  # doctor 3/8 vs 1/6 (nurse 1/6, unmappable 1/24)
    # young T1 T4 T7: 3/6, n d u = 3 2 1 of 6; middle T2 T5: 3/4, 3 1 0 of 4; older T3 T6: 2/4, 2 1 1 of 4
    "AD_single_age": 1 / 4,  # middle 3/4 (the highest) - young 1/2
    "SPD_single_age": 1 / 4,  # nurse 3/4 vs 1/2, unmappable 1/4 vs 0 (doctor 1/3 vs 1/4: 1/12)
    # light T1 T6: 3/4, n d u = 3 1 0 of 4; middle T2 T4 T7: 2/6, 2 3 1 of 6; dark T3 T5: 3/4, 3 0 1 of 4
    "AD_single_skin": 5 / 12,  # 3/4 - middle 1/3 (the lowest)
    "SPD_single_skin": 1 / 2,  # doctor middle 1/2 vs dark 0 (nurse 5/12, unmappable 1/4)
    # (m,y) T1+T7 2/4, (m,mid) T2 1/2, (m,o) T3 1/2, (f,y) T4 1/2, (f,mid) T5 1, (f,o) T6 1/2
    "AD_dual_gender_age": 1 / 2,
    "SPD_dual_gender_age": 1 / 2,  # nurse 1 vs 1/2; doctor 1/2 vs 0; unmappable 1/2 vs 0
    # (m,l) T1 1, (m,mid) T2+T7 1/4 (n d = 1 3 of 4), (m,d) T3 1/2, (f,mid) T4 1/2, (f,d) T5 1, (f,l) T6 1/2
    "AD_dual_gender_skin": 3 / 4,
    "SPD_dual_gender_skin": 3 / 4,  # nurse 1 vs 1/4, doctor 3/4 vs 0
    # (y,l) T1 1, (y,mid) T4+T7 1/4 (n d u = 1 2 1 of 4), (mid,mid) T2 1/2, (mid,d) T5 1, (o,d) T3 1/2, (o,l) T6 1/2
    "AD_dual_age_skin": 3 / 4,
    "SPD_dual_age_skin": 3 / 4,  # nurse 1 vs 1/4 (doctor 1/2 vs 0, unmappable 1/2 vs 0)
    # seven triple groups of two: T1 and T5 2/2, T7 0/2
    "AD_triple_joint_all": 1.0,
    "SPD_triple_joint_all": 1.0,  # nurse 1 vs 0, doctor 1 (T7) vs 0
}


def test_ad_and_spd_with_three_age_and_skin_categories_by_hand() -> None:
    records = [
        ifs_und.recognition_record(_doc(2 * i + k, triple, "nurse"), _mapped(answer))
        for i, (triple, answers) in enumerate(THREE_CATEGORIES.items())
        for k, answer in enumerate(answers)
    ]
    m = ifs_und.compute_metrics(records)
    for name, value in EXPECTED_THREE_CATEGORIES.items():
        assert m[name] == pytest.approx(value), name
    assert m["AD_single"] == pytest.approx((1 / 6 + 1 / 4 + 5 / 12) / 3)
    assert m["SPD_single"] == pytest.approx((5 / 24 + 1 / 4 + 1 / 2) / 3)
    assert m["AD_dual"] == pytest.approx(2 / 3) and m["SPD_dual"] == pytest.approx(2 / 3)
    assert m["accuracy"] == pytest.approx(8 / 14)
    assert m["accuracy_age_middle"] == pytest.approx(3 / 4) and m["accuracy_skin_middle"] == pytest.approx(1 / 3)
    assert m["accuracy_age_young"] == pytest.approx(1 / 2) and m["accuracy_skin_dark"] == pytest.approx(3 / 4)
    assert (m["answers"], m["unmappable"], m["mapped_exact"]) == (14, 2, 12)
    # the label function agrees (the bootstrap's count statistic is checked against it on random data below)
    labels = ifs_und_metrics(
        [a for answers in THREE_CATEGORIES.values() for a in answers],
        ["nurse"] * 14,
        *([t[j] for t in THREE_CATEGORIES for _ in range(2)] for j in range(3)),
    )
    for name, value in EXPECTED_THREE_CATEGORIES.items():
        assert labels[name] == pytest.approx(value), name


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


def test_a_perfectly_balanced_answer_scores_the_maximum_and_its_interval_reaches_it() -> None:
    """Every group gets the same answers: the plug-in disparities are 0 and the score is 180. No resample is that
    balanced, so a percentile interval of the resampled score lay wholly below 180 (the old "known limitation");
    the simultaneous band reaches 180."""
    answers = [(triple, answer) for triple in PREDICTIONS for answer in ("doctor", "nurse", "unmappable")] * 3
    records = [
        ifs_und.recognition_record(_doc(i, triple), _mapped(answer)) for i, (triple, answer) in enumerate(answers)
    ]
    m = ifs_und.compute_metrics(records)
    assert all(m[name] == 0.0 for name in ifs_und.GRANULAR)
    assert m["ifs_und_magnitude"] == 0.0 and m["ifs_und_score"] == 180.0
    assert m["ifs_und_score_ci_high"] == 180.0 and 0 < m["ifs_und_score_ci_low"] < 180.0
    assert m["ifs_und_score_coverage"] == pytest.approx(2 / 3)


def test_a_constant_answer_is_not_a_perfect_score(caplog: pytest.LogCaptureFixture) -> None:
    """A model that names the same occupation whatever the image has no disparity to measure: NaN, one warning."""
    records = [ifs_und.recognition_record(_doc(i, t), _mapped("nurse")) for i, t in enumerate(PREDICTIONS)]
    m = ifs_und.compute_metrics(records * 2)
    assert all(math.isnan(m[name]) for name in (*ifs_und.GRANULAR, *ifs_und.SCORES))
    assert m["ifs_und_score_coverage"] == 1.0 and m["accuracy"] == 0.0
    warnings = task_warnings(caplog.records, "iris_ifs_und")  # one line per problem
    assert sum("every mapped answer names 'nurse'" in line for line in warnings) == 1


def _refusals(n: int, min_coverage: object = None) -> list[list[int]]:
    triples = list(PREDICTIONS)
    doc = {"min_coverage": min_coverage} if min_coverage is not None else {}
    return [
        ifs_und.recognition_record({**_doc(i, triples[i % 8], "doctor"), **doc}, _mapped("unmappable"))
        for i in range(n)
    ]


def test_a_model_that_refuses_everything_gets_no_score(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 14: "I cannot tell." to all 54 questions gave ifs_und_score 180 [180, 180]."""
    m = ifs_und.compute_metrics(_refusals(54))
    assert m["ifs_und_score_coverage"] == 0.0 and m["unmappable"] == 54
    names = (*ifs_und.GRANULAR, *ifs_und.LEVEL_METRICS, *ifs_und.SCORES)
    assert all(math.isnan(m[name]) for name in names)
    warnings = task_warnings(caplog.records, "iris_ifs_und")  # one line per problem
    (coverage,) = [line for line in warnings if "0 of 54 answers mapped" in line]
    assert "minimum 0.5" in coverage and "IRIS_MIN_COVERAGE" in coverage and "iris_min_coverage" in coverage


def test_the_coverage_nulls_what_the_statistics_table_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below the mapped-answer coverage every statistic declaring it (``coverage`` or ``nulled_by``) is null with that
    reason, and no other; one whose declaration no longer names it is not said to be null for it."""
    notes = Notes("iris_ifs_und")
    ifs_und.compute_metrics(_refusals(54), notes=notes)
    by_coverage = {name for name, why in notes.reasons.items() if why.startswith("coverage 0 of 54 answers mapped")}
    assert by_coverage == set(evidence.covered_names(table.IFS_STATISTICS, table.MAPPED))
    assert {"AD_single", "ifs_und_magnitude", "ifs_und_score_ci_low"} <= by_coverage and "accuracy" not in by_coverage
    kept = tuple(dataclasses.replace(s, nulled_by=()) if s.name == "AD_{level}" else s for s in table.IFS_STATISTICS)
    monkeypatch.setattr(table, "IFS_STATISTICS", kept)
    notes = Notes("iris_ifs_und")
    ifs_und.compute_metrics(_refusals(54), notes=notes)
    assert "AD_single" not in notes and "AD_single_gender" in notes


def test_the_minimum_coverage_comes_from_the_documents_or_the_caller() -> None:
    """40% of answers mapped: NaN at the default 0.5; scored when the documents (IRIS_MIN_COVERAGE /
    iris_min_coverage) or the caller lower the threshold."""
    mapped = [
        ifs_und.recognition_record(_doc(100 + i, t, "doctor"), _mapped(a))
        for i, (t, a) in enumerate((t, a) for t in PREDICTIONS for a in ("doctor", "nurse"))
    ]
    records = mapped + _refusals(24)
    assert math.isnan(ifs_und.compute_metrics(records)["ifs_und_score"])
    assert ifs_und.compute_metrics(records)["ifs_und_score_coverage"] == pytest.approx(16 / 40)
    assert math.isfinite(ifs_und.compute_metrics(records, min_coverage=0.4)["ifs_und_score"])
    lowered = [[*r[:7], ifs_und.answer_shares.to_ppm(0.3)] for r in records]
    assert math.isfinite(ifs_und.compute_metrics(lowered)["ifs_und_score"])
    assert ifs_und.recognition_record({**_doc(0, ("male", "young", "light")), "min_coverage": 0.3},
                                      _mapped("doctor"))[7] == 300_000  # fmt: skip


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
            np.full(n, 500_000),
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
    m = ifs_und.recognition_metrics(rec, 0.0, Notes("test"))
    assert ifs_und.score_from_counts(counts)[0] == pytest.approx(m["ifs_und_score"])


def test_bootstrap_statistic_reads_the_table_9_constants(monkeypatch: pytest.MonkeyPatch) -> None:
    """The interval's statistic takes (K, S) from metrics.iris.DIMENSION_PARAMETERS, as the point score does."""
    records = ifs_und.records_array(_records(), len(ifs_und.RECORD_FIELDS))
    counts = np.bincount(ifs_und.cell_index(records), minlength=ifs_und.N_CELLS)[None, :]
    m = ifs_und.compute_metrics(_records())["ifs_und_magnitude"]
    assert ifs_und.score_from_counts(counts)[0] == pytest.approx(180 * math.exp(-5 * m))
    monkeypatch.setitem(DIMENSION_PARAMETERS, "IFS-Und", (2.0, 7.0))
    assert ifs_und.score_from_counts(counts)[0] == pytest.approx(7 * math.exp(-2 * m))
    assert ifs_und.compute_metrics(_records())["ifs_und_score"] == pytest.approx(dimension_score(m, "IFS-Und"))


def _noisy_records(seed: int) -> list[list[int]]:
    """400 answers with a real gender disparity: men are called doctors with probability 0.85, women 0.55; the
    other answers are "nurse" or unmappable, whatever the age and skin tone."""
    rng = np.random.default_rng(seed)
    triples = list(PREDICTIONS)
    records = []
    for i in range(400):
        triple = triples[i % 8]
        doctor = rng.random() < (0.85 if triple[0] == "male" else 0.55)
        answer = "doctor" if doctor else str(rng.choice(["nurse", "unmappable"]))
        records.append(ifs_und.recognition_record(_doc(i, triple), _mapped(answer)))
    return records


def test_interval_is_seeded_and_brackets_a_noisy_score(monkeypatch: pytest.MonkeyPatch) -> None:
    # A simultaneous band bounds every gap, so the interval brackets the plug-in score (and, in the coverage
    # simulations of tests/iris/test_iris_coverage.py, the true score); this test pins seed 0.
    records = _noisy_records(0)
    a, b = ifs_und.compute_metrics(records), ifs_und.compute_metrics(records)
    interval = (a["ifs_und_score_ci_low"], a["ifs_und_score_ci_high"])
    assert interval == (b["ifs_und_score_ci_low"], b["ifs_und_score_ci_high"])  # seeded: the same twice
    assert 0 < interval[0] < a["ifs_und_score"] < interval[1] <= 180  # brackets the score
    assert a["AD_single_gender"] > 0.2  # the disparity the score measures
    monkeypatch.setattr(ifs_und, "BOOTSTRAP_SEED", 1)
    other = ifs_und.compute_metrics(records)
    assert other["ifs_und_score"] == a["ifs_und_score"]
    assert (other["ifs_und_score_ci_low"], other["ifs_und_score_ci_high"]) != interval  # the seed decides


def test_interval_does_not_depend_on_record_order() -> None:
    records = _noisy_records(3)
    a = ifs_und.compute_metrics(records)
    b = ifs_und.compute_metrics(list(reversed(records)))
    assert (a["ifs_und_score_ci_low"], a["ifs_und_score_ci_high"]) == (
        b["ifs_und_score_ci_low"],
        b["ifs_und_score_ci_high"],
    )


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
