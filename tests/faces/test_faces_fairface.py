"""FairFace: the ResNet-34 against torchvision's, checkpoint loading, preprocessing and the label mapping.

No FairFace weights exist in this environment. Every test here runs **random or hand-set weights**:
they check architecture, key compatibility, preprocessing and post-processing (plumbing), never
whether FairFace's predictions are right.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from fairness_evals.faces import FaceDetector, FairFaceClassifier
from fairness_evals.faces.fairface import (
    IMAGENET_MEAN,
    IMAGENET_STD,
    build_model,
    load_state_dict,
    preprocess,
)
from fairness_evals.faces.labels import FAIRFACE_AGE_BINS, FAIRFACE_RACES
from fairness_evals.faces.resnet import resnet34

REFERENCE = json.loads((Path(__file__).parent / "data" / "torchvision_resnet34_fc18.json").read_text())


def deterministic_parameters(model: torch.nn.Module) -> torch.nn.Module:
    """Fill every parameter and buffer from a sine wave (no RNG), scaled so activations stay sane.

    The same function produced the reference logits with torchvision's own ResNet-34 (see the JSON).
    """
    new = {}
    for k, (name, tensor) in enumerate(model.state_dict().items()):
        if name.endswith("num_batches_tracked"):
            new[name] = torch.zeros_like(tensor)
            continue
        wave = torch.sin(torch.arange(tensor.numel(), dtype=torch.float64) * 0.37 + k).reshape(tensor.shape)
        if name.endswith("running_var"):
            value = 1.0 + 0.2 * wave
        elif name.endswith(("running_mean", "bias")):
            value = 0.1 * wave
        elif tensor.ndim == 1:
            value = 1.0 + 0.1 * wave
        elif tensor.ndim == 4:
            value = wave * math.sqrt(2.0 / (tensor.shape[1] * tensor.shape[2] * tensor.shape[3]))
        else:
            value = wave * 0.05
        new[name] = value.to(tensor.dtype)
    model.load_state_dict(new, strict=True)
    return model


def deterministic_inputs() -> torch.Tensor:
    i = torch.arange(3 * 224 * 224, dtype=torch.float64)
    return torch.stack(
        [torch.sin(i * 0.01).reshape(3, 224, 224), torch.cos(i * 0.003 + 1.0).reshape(3, 224, 224)]
    ).float()


def test_state_dict_names_and_shapes_are_torchvision_resnet34_with_18_outputs() -> None:
    ours = [[name, list(t.shape)] for name, t in resnet34(18).state_dict().items()]
    assert ours == REFERENCE["state_dict"]  # same names, same shapes, same order (218 entries)
    assert len(ours) == 218


def test_forward_pass_matches_torchvision_logits() -> None:
    """Same weights, same input: our network gives torchvision's logits (reference computed with torchvision 0.28)."""
    model = deterministic_parameters(resnet34(18)).eval()
    with torch.inference_mode():
        logits = model(deterministic_inputs())
    np.testing.assert_allclose(logits.numpy(), np.array(REFERENCE["forward_outputs"]), rtol=1e-4, atol=1e-4)


def test_random_checkpoint_round_trips_through_torch_save(random_fairface_weights: Path) -> None:
    """Plumbing only (random weights): a saved state dict loads strictly and reproduces the model."""
    state = load_state_dict(random_fairface_weights)
    model = build_model(state)
    assert not model.training
    reloaded = torch.load(random_fairface_weights, weights_only=True)
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, reloaded[name])


def test_data_parallel_prefix_and_wrapper_are_accepted(random_fairface_weights: Path, tmp_path: Path) -> None:
    state = torch.load(random_fairface_weights, weights_only=True)
    wrapped = tmp_path / "wrapped.pt"
    torch.save({"state_dict": {f"module.{k}": v for k, v in state.items()}}, wrapped)
    loaded = load_state_dict(wrapped)
    assert list(loaded) == list(state)
    build_model(loaded, source=str(wrapped))


def test_wrong_network_is_rejected_with_the_file_named(tmp_path: Path) -> None:
    """The 4-race FairFace head or another architecture must fail loudly, not load half the weights."""
    wrong_head = resnet34(9).state_dict()
    path = tmp_path / "res34_fair_align_multi_4.pt"
    torch.save(wrong_head, path)
    with pytest.raises(
        ValueError,
        match=r"res34_fair_align_multi_4\.pt is not a FairFace ResNet-34.*wrong shape \['fc\.weight', 'fc\.bias'\]",
    ):
        FairFaceClassifier(path)
    truncated = {k: v for k, v in resnet34(18).state_dict().items() if not k.startswith("layer4")}
    with pytest.raises(ValueError, match=r"missing \['layer4\.0\.conv1\.weight'"):
        build_model(truncated, source="truncated")


def test_bad_checkpoint_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="FairFace weights not found"):
        load_state_dict(tmp_path / "absent.pt")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x00\x01 not a torch file")
    with pytest.raises(ValueError, match=r"cannot load FairFace weights .*garbage\.pt"):
        load_state_dict(garbage)
    listing = tmp_path / "list.pt"
    torch.save([1, 2, 3], listing)
    with pytest.raises(ValueError, match="not a state dict of tensors"):
        load_state_dict(listing)


def test_preprocessing_is_resize_scale_and_imagenet_normalisation() -> None:
    chip = np.zeros((300, 300, 3), dtype=np.uint8)
    chip[:] = (255, 128, 0)
    x = preprocess([chip, chip])
    assert x.shape == (2, 3, 224, 224) and x.dtype == torch.float32
    expected = [(c / 255.0 - m) / s for c, m, s in zip((255, 128, 0), IMAGENET_MEAN, IMAGENET_STD, strict=True)]
    for channel in range(3):
        assert torch.allclose(x[0, channel], torch.full((224, 224), expected[channel]), atol=1e-6)
    # A left-right ramp stays a ramp after the bilinear resize (the axes are not swapped).
    ramp = np.repeat(np.linspace(0, 255, 300, dtype=np.uint8)[None, :, None], 300, axis=0).repeat(3, axis=2)
    y = preprocess([ramp])[0, 0]
    assert torch.all(y[:, 1:] >= y[:, :-1]) and torch.all(y[1:] == y[:-1])


def _fixed_output_model(logits: list[float]) -> torch.nn.Module:
    """A ResNet-34 whose fc ignores its input: weights 0, bias = ``logits`` (hand-set, not trained)."""
    model = resnet34(18)
    with torch.no_grad():
        model.fc.weight.zero_()
        model.fc.bias.copy_(torch.tensor(logits))
    return model.eval()


def _logits(race: dict[str, float], gender: tuple[float, float], age: dict[str, float]) -> list[float]:
    out = [0.0] * 18
    for name, value in race.items():
        out[FAIRFACE_RACES.index(name)] = value
    out[7:9] = gender
    for name, value in age.items():
        out[9 + FAIRFACE_AGE_BINS.index(name)] = value
    return out


def test_classify_maps_indian_to_the_next_best_benchmark_race(astronaut: np.ndarray) -> None:
    """Hand-set logits through the full pipeline (detect, align, preprocess, forward, map)."""
    logits = _logits({"Indian": 5.0, "Latino_Hispanic": 3.0, "White": 1.0}, (0.0, 2.0), {"40-49": 4.0, "50-59": 3.0})
    classifier = FairFaceClassifier.from_model(_fixed_output_model(logits), version="hand-set logits")
    (face,) = classifier.classify(astronaut)
    assert face.race == "Hispanic"
    assert face.details["race7"] == "Latino_Hispanic" and face.details["race7_top"] == "Indian"
    race_p = np.exp(logits[:7]) / np.exp(logits[:7]).sum()
    assert math.isclose(face.confidences["race"], race_p[2], rel_tol=1e-4)
    assert face.gender == "female"
    assert math.isclose(face.confidences["gender"], 1 / (1 + math.exp(-2.0)), rel_tol=1e-4)
    assert face.age_bin == "40-49" and face.age_group == "middle"
    age_p = np.exp(logits[9:]) / np.exp(logits[9:]).sum()
    assert math.isclose(face.confidences["age"], age_p[5] + age_p[6], rel_tol=1e-4)
    assert face.age_years is None
    assert face.sources == {"race": "fairface", "gender": "fairface", "age": "fairface"}
    assert set(face.details["race7_probabilities"]) == set(FAIRFACE_RACES)


@pytest.mark.parametrize(
    ("race_logits", "expected"),
    [
        ({"Middle Eastern": 4.0, "East Asian": 2.0}, "Asian"),
        ({"Southeast Asian": 3.0}, "Asian"),
        ({"Black": 3.0, "Indian": 2.9}, "Black"),
        ({"White": 1.0}, "White"),
    ],
)
def test_every_face_gets_one_of_the_four_benchmark_races(
    collage: np.ndarray, race_logits: dict[str, float], expected: str
) -> None:
    model = _fixed_output_model(_logits(race_logits, (2.0, 0.0), {"70+": 3.0}))
    faces = FairFaceClassifier.from_model(model, version="hand-set logits").classify(collage)
    assert len(faces) == 2  # several faces: each counts
    assert {f.race for f in faces} == {expected}
    assert {f.gender for f in faces} == {"male"} and {f.age_group for f in faces} == {"older"}


def test_random_weights_classifier_from_a_file_plumbing_only(
    random_fairface_weights: Path, astronaut: np.ndarray, blank: np.ndarray
) -> None:
    """Plumbing only (random weights): loads from a path, labels are in the benchmark vocabularies, deterministic."""
    classifier = FairFaceClassifier(random_fairface_weights, detector=FaceDetector("hog"))
    assert classifier.version.startswith("FairFace ResNet-34 7-race random_res34_fair_align_multi_7.pt sha256:")
    first = classifier.classify(astronaut)
    assert len(first) == 1
    face = first[0]
    assert face.race in ("Asian", "Black", "White", "Hispanic")
    assert face.gender in ("male", "female") and face.age_bin in FAIRFACE_AGE_BINS
    assert classifier.classify(astronaut) == first
    assert classifier.classify(blank) == []


def test_default_detector_is_the_released_pipeline_with_hog(random_fairface_weights: Path) -> None:
    classifier = FairFaceClassifier(random_fairface_weights)
    assert classifier.detector.describe() == "detector hog upsample=1 resize_longest=800 min_score=0.2"
