"""CLIP zero-shot (the ARES stand-in) with a tiny **randomly initialised** CLIP built locally.

No CLIP weights exist in this environment: these tests check loading, prompts, cropping and the
decision rule (plumbing), never whether CLIP's answers are right.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from fairness_evals.faces import ClipClassifier, FaceDetector
from fairness_evals.faces.clip_zero_shot import (
    AGE_GENDER_TEMPLATES,
    JOINT_CLASSES,
    SKIN_TEMPLATES,
    age_gender_prompts,
    crop_box,
    skin_prompts,
)


@pytest.fixture(scope="module")
def clip(tiny_clip: Path) -> ClipClassifier:
    return ClipClassifier(tiny_clip)


def test_prompt_ensembles_cover_the_six_ares_classes_and_three_skin_groups() -> None:
    joint = age_gender_prompts()
    assert JOINT_CLASSES == (
        ("young", "male"),
        ("young", "female"),
        ("middle", "male"),
        ("middle", "female"),
        ("older", "male"),
        ("older", "female"),
    )
    assert [len(e) for e in joint] == [len(AGE_GENDER_TEMPLATES)] * 6
    assert joint[3][0] == "a photo of a middle-aged woman."
    assert joint[4][2] == "a close-up photo of the face of a older man."
    skin = skin_prompts()
    assert [len(e) for e in skin] == [len(SKIN_TEMPLATES)] * 3
    assert skin[1][0] == "a photo of a person with medium skin."


def test_prototypes_are_unit_vectors_one_per_class(clip: ClipClassifier) -> None:
    assert clip._joint_prototypes.shape == (6, 16) and clip._skin_prototypes.shape == (3, 16)
    norms = torch.linalg.vector_norm(clip._joint_prototypes, dim=1)
    assert torch.allclose(norms, torch.ones(6), atol=1e-6)


def test_astronaut_plumbing_only(clip: ClipClassifier, astronaut: np.ndarray) -> None:
    """Random weights: one face, labels from the IRIS vocabularies, probabilities that add up."""
    (face,) = clip.classify(astronaut)
    assert face.box == (179, 83, 266, 170)
    assert face.gender in ("male", "female") and face.age_group in ("young", "middle", "older")
    assert face.skin_group in ("light", "middle", "dark") and face.skin_mst is None and face.race is None
    joint = face.details["age_gender_probabilities"]
    assert math.isclose(sum(joint.values()), 1.0, abs_tol=1e-6)
    assert max(joint, key=joint.get) == f"{face.age_group} {face.gender}"
    gender_mass = sum(p for k, p in joint.items() if k.endswith(f" {face.gender}"))
    assert math.isclose(face.confidences["gender"], gender_mass, rel_tol=1e-9)
    skin = face.details["skin_probabilities"]
    assert math.isclose(sum(skin.values()), 1.0, abs_tol=1e-6)
    assert face.confidences["skin"] == max(skin.values())
    assert face.sources == {"gender": "clip", "age": "clip", "skin": "clip"}
    assert clip.classify(astronaut) == [face]  # deterministic


def test_decision_rule_picks_the_class_whose_prototype_matches_the_image(
    tiny_clip: Path, astronaut: np.ndarray
) -> None:
    """Point the 'older woman' and 'dark' prototypes at the face crop's own embedding: they must win."""
    from PIL import Image

    clip = ClipClassifier(tiny_clip)
    (detection,) = clip.detector.detect(astronaut)
    crop = Image.fromarray(astronaut).crop(crop_box(detection.box, clip.crop_margin, 512, 512))
    pixels = clip.processor(images=[crop], return_tensors="pt")["pixel_values"]
    with torch.inference_mode():
        out = clip.model.get_image_features(pixel_values=pixels)
        embedding = torch.nn.functional.normalize(getattr(out, "pooler_output", out)[0].float(), dim=0)
    clip._joint_prototypes = clip._joint_prototypes.clone()
    clip._joint_prototypes[5] = embedding
    clip._skin_prototypes = clip._skin_prototypes.clone()
    clip._skin_prototypes[2] = embedding
    (face,) = clip.classify(astronaut)
    assert (face.age_group, face.gender, face.skin_group) == ("older", "female", "dark")


def test_whole_image_mode_and_batched_faces(tiny_clip: Path, astronaut: np.ndarray, collage: np.ndarray) -> None:
    whole = ClipClassifier(tiny_clip, detector=FaceDetector("none"))
    (face,) = whole.classify(astronaut)
    assert face.box == (0, 0, 511, 511) and face.detection_score is None
    faces = ClipClassifier(tiny_clip).classify(collage)
    assert len(faces) == 2


def test_no_face_gives_an_empty_list(clip: ClipClassifier, blank: np.ndarray) -> None:
    assert clip.classify(blank) == []


def test_version_names_model_prompts_and_detector(clip: ClipClassifier, tiny_clip: Path) -> None:
    assert clip.version.startswith(f"CLIP zero-shot {tiny_clip.name} (")
    assert "prompts v1 (5 age x gender, 3 skin templates), crop margin 0.4; detector hog upsample=0" in clip.version


@pytest.mark.parametrize(
    ("box", "margin", "expected"),
    [
        ((10, 10, 19, 19), 0.0, (10, 10, 20, 20)),
        ((10, 10, 19, 19), 0.5, (5, 5, 25, 25)),
        ((0, 0, 9, 9), 1.0, (0, 0, 20, 20)),  # clipped at the top-left
        ((95, 95, 104, 104), 0.5, (90, 90, 100, 100)),  # clipped at the bottom-right of a 100 x 100 image
        ((200, 200, 220, 220), 0.0, (0, 0, 100, 100)),  # entirely outside: whole image
    ],
)
def test_crop_box(box: tuple[int, int, int, int], margin: float, expected: tuple[int, int, int, int]) -> None:
    assert crop_box(box, margin, 100, 100) == expected


def test_bad_arguments(tmp_path: Path, tiny_clip: Path) -> None:
    with pytest.raises(FileNotFoundError, match="CLIP model folder not found"):
        ClipClassifier(tmp_path / "absent")
    with pytest.raises(ValueError, match="crop_margin"):
        ClipClassifier(tiny_clip, crop_margin=-1)
