"""FairFace (Kärkkäinen & Joo, 2021): the race, gender and age classifier of the Fact-or-Fair T2I study.

The pipeline of the released ``fairface`` predictor, which Fact-or-Fair runs on generated portraits:

1. detect faces: dlib's CNN detector ``mmod_human_face_detector.dat`` with 1 upsample, on a copy
   whose longer side is resized to 800 px (``detector=cnn``: the file from ``face-recognition-models``,
   or ``cnn_weights=...``; the default here is dlib HOG with the same upsample and resize, because the
   CNN takes seconds per image on a CPU);
2. align with the 5-point landmarks: ``dlib.get_face_chip(size=300, padding=0.25)``;
3. resize to 224 x 224 (PIL bilinear, as torchvision's ``Resize`` on a PIL image), scale to 0..1 and
   normalise with the ImageNet mean (0.485, 0.456, 0.406) and std (0.229, 0.224, 0.225);
4. ResNet-34 with an 18-way ``fc``: logits 0..6 race (7 classes), 7..8 gender, 9..17 age (9 bins),
   soft-maxed separately;
5. race: the most probable of the 7 labels that maps to Fact-or-Fair's 4 (Indian and Middle Eastern
   skipped, :func:`~fairness_evals.faces.labels.fairface_race_to_benchmark`); gender: argmax, lower-case
   ``male``/``female`` (one vocabulary for classifier and scorer: the released scorer looked up
   other spellings and scored 0); age: the argmax bin and its IRIS group.

Deviation: landmarks and chips are taken from the full-resolution image (the released code cuts them
from the 800-px copy), so the chip is never an upscaled copy of a small original.

Weights: ``res34_fair_align_multi_7_20190809.pt`` from dchen236/FairFace (CC BY 4.0), given by the user.
Confidences: race = the softmax probability of the chosen 7-class label; gender = its probability;
age = the summed probability of the bins in the chosen IRIS group.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import FaceModel
from .face import Face
from .labels import (
    FAIRFACE_AGE_BINS,
    FAIRFACE_BIN_TO_AGE_GROUP,
    FAIRFACE_GENDERS,
    FAIRFACE_RACES,
    fairface_race_to_benchmark,
)

if TYPE_CHECKING:
    import numpy as np
    import torch
    from numpy.typing import NDArray

    from .detection import DetectedFace, FaceDetector

CHIP_SIZE = 300
CHIP_PADDING = 0.25
INPUT_SIZE = 224
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
NUM_OUTPUTS = 18
RACE_SLICE = slice(0, 7)
GENDER_SLICE = slice(7, 9)
AGE_SLICE = slice(9, 18)


def preprocess(chips: list[NDArray[np.uint8]]) -> torch.Tensor:
    """FairFace's input tensor ``(N, 3, 224, 224)`` float32 from aligned ``300 x 300`` RGB chips (step 3)."""
    import numpy as np
    import torch
    from PIL import Image

    mean = np.asarray(IMAGENET_MEAN, dtype=np.float32)
    std = np.asarray(IMAGENET_STD, dtype=np.float32)
    batch = []
    for chip in chips:
        resized = Image.fromarray(chip).resize((INPUT_SIZE, INPUT_SIZE), Image.Resampling.BILINEAR)
        x = np.asarray(resized, dtype=np.float32) / 255.0
        batch.append(((x - mean) / std).transpose(2, 0, 1))
    return torch.from_numpy(np.ascontiguousarray(np.stack(batch)))


def load_state_dict(path: str | Path) -> dict[str, Any]:
    """The tensors of a FairFace checkpoint as a plain state dict.

    Accepts a bare state dict (the released file), a ``{"state_dict": ...}`` wrapper, and keys
    prefixed ``module.`` (a model saved from ``nn.DataParallel``). Loads with ``weights_only=True``
    (no code runs). Raises ``FileNotFoundError`` for a missing file and ``ValueError`` naming the file
    when it is not a state dict.
    """
    import torch

    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"FairFace weights not found: {file}")
    try:
        state = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as error:
        raise ValueError(f"cannot load FairFace weights {file}: {type(error).__name__}: {error}") from error
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{file} is not a state dict of tensors")
    if state and all(k.startswith("module.") for k in state):
        state = {k[len("module.") :]: v for k, v in state.items()}
    return state


def build_model(state_dict: dict[str, Any], *, source: str = "state dict") -> torch.nn.Module:
    """The FairFace ResNet-34 (``fc`` -> 18) with ``state_dict`` loaded strictly, in eval mode.

    Raises ``ValueError`` naming ``source`` and the first mismatching keys when the checkpoint is not a
    7-race FairFace ResNet-34 (e.g. the 4-race model or a different architecture).
    """
    from .resnet import resnet34

    model = resnet34(NUM_OUTPUTS)
    expected = model.state_dict()
    missing = [k for k in expected if k not in state_dict]
    unexpected = [k for k in state_dict if k not in expected]
    wrong = [k for k in expected if k in state_dict and tuple(state_dict[k].shape) != tuple(expected[k].shape)]
    if missing or unexpected or wrong:
        raise ValueError(
            f"{source} is not a FairFace ResNet-34 with an 18-way fc: "
            f"missing {missing[:3]}{'...' if len(missing) > 3 else ''}, "
            f"unexpected {unexpected[:3]}{'...' if len(unexpected) > 3 else ''}, "
            f"wrong shape {wrong[:3]}{'...' if len(wrong) > 3 else ''}"
        )
    model.load_state_dict(state_dict, strict=True)
    return model.eval()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class FairFaceClassifier(FaceModel):
    """Race (Fact-or-Fair's 4), gender and age band per face with the user's FairFace weights.

    Parameters
    ----------
    weights : path
        ``res34_fair_align_multi_7_20190809.pt`` (or any state dict of the same network).
    detector : FaceDetector, optional
        Defaults to dlib HOG, upsample 1, longer side resized to 800; pass a ``cnn`` detector
        (``mmod_human_face_detector.dat``) for the released pipeline's detector.
    device : str
        torch device for the ResNet (``"cpu"`` default).

    Thread-safe: the forward pass runs under a lock, in eval mode, under ``torch.inference_mode``.
    """

    name = "fairface"
    attributes = frozenset({"gender", "race", "age"})

    def __init__(self, weights: str | Path, detector: FaceDetector | None = None, device: str = "cpu") -> None:
        import torch

        from .detection import FaceDetector

        path = Path(weights)
        self.detector = detector if detector is not None else FaceDetector("hog", upsample=1, resize_longest=800)
        self.device = torch.device(device)
        self.model = build_model(load_state_dict(path), source=str(path)).to(self.device)
        self._lock = threading.Lock()
        self.version = (
            f"FairFace ResNet-34 7-race {path.name} sha256:{_sha256(path)[:12]}; chip {CHIP_SIZE}px "
            f"padding {CHIP_PADDING:g} -> {INPUT_SIZE}px; {self.detector.describe()}"
        )

    @classmethod
    def from_model(
        cls, model: torch.nn.Module, *, version: str, detector: FaceDetector | None = None
    ) -> FairFaceClassifier:
        """A classifier around an already built network (e.g. random weights in tests); ``version`` names it."""
        from .detection import FaceDetector

        self = cls.__new__(cls)
        self.detector = detector if detector is not None else FaceDetector("hog", upsample=1, resize_longest=800)
        self.device = next(model.parameters()).device
        self.model = model.eval()
        self._lock = threading.Lock()
        self.version = f"{version}; {self.detector.describe()}"
        return self

    def logits(self, chips: list[NDArray[np.uint8]]) -> NDArray[np.float32]:
        """The 18 raw outputs per aligned ``300 x 300`` chip, ``(N, 18)`` float32."""
        import torch

        inputs = preprocess(chips).to(self.device)
        with self._lock, torch.inference_mode():
            return self.model(inputs).float().cpu().numpy()

    def classify_detections(self, rgb: NDArray[np.uint8], detections: list[DetectedFace]) -> list[Face]:
        """Race, gender and age band for each detection (one batched forward pass)."""
        from .detection import face_chip

        if not detections:
            return []
        chips = [face_chip(rgb, d, CHIP_SIZE, CHIP_PADDING) for d in detections]
        return [self._face(d, row) for d, row in zip(detections, self.logits(chips), strict=True)]

    def _face(self, detection: DetectedFace, logits: NDArray[np.float32]) -> Face:
        import numpy as np

        def softmax(x: NDArray[np.float32]) -> NDArray[np.float64]:
            z = np.asarray(x, dtype=np.float64)
            e = np.exp(z - z.max())
            return e / e.sum()

        race_p = softmax(logits[RACE_SLICE])
        gender_p = softmax(logits[GENDER_SLICE])
        age_p = softmax(logits[AGE_SLICE])
        race, race_index = fairface_race_to_benchmark(race_p.tolist())
        gender_index = int(np.argmax(gender_p))
        age_bin = FAIRFACE_AGE_BINS[int(np.argmax(age_p))]
        age_group = FAIRFACE_BIN_TO_AGE_GROUP[age_bin]
        group_mass = sum(
            float(p) for b, p in zip(FAIRFACE_AGE_BINS, age_p, strict=True) if FAIRFACE_BIN_TO_AGE_GROUP[b] == age_group
        )
        return Face(
            box=detection.box,
            gender=FAIRFACE_GENDERS[gender_index],
            race=race,
            age_bin=age_bin,
            age_group=age_group,
            confidences={"race": float(race_p[race_index]), "gender": float(gender_p[gender_index]), "age": group_mass},
            sources={"race": self.name, "gender": self.name, "age": self.name},
            detection_score=detection.score,
            details={
                "race7": FAIRFACE_RACES[race_index],
                "race7_top": FAIRFACE_RACES[int(np.argmax(race_p))],
                "race7_probabilities": dict(zip(FAIRFACE_RACES, map(float, race_p), strict=True)),
                "age_bin_probabilities": dict(zip(FAIRFACE_AGE_BINS, map(float, age_p), strict=True)),
            },
        )
