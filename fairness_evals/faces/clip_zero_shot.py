"""CLIP zero-shot with prompt-ensemble text prototypes: the stand-in for IRIS's unavailable ARES.

IRIS classifies generated images with ARES, whose first-level experts include a CLIP ViT-B/16 with
learnable text prototypes over six age x gender classes ("young male" ...) and a fusion regressor for
skin tone (light / middle / dark). ARES's weights and model classes are not available, so this
classifier uses the user's CLIP checkpoint zero-shot, with **fixed** prototypes: for each class, the
normalised mean of the normalised text embeddings of :data:`AGE_GENDER_TEMPLATES` (age x gender) or
:data:`SKIN_TEMPLATES` (skin), built once at load time.

Per face: the image crop (the face box grown by ``crop_margin`` of its size on each side, clipped to
the image; the whole image with ``detector=none``) is embedded; class probabilities are
``softmax(logit_scale * cos(image, prototype))``. ``gender`` and ``age_group`` are those of the most
probable of the six joint classes (ARES predicts the joint class); their confidences are the marginal
probabilities of the predicted gender and age group. ``skin_group`` is the most probable of the three
skin classes, with its probability; there is no MST level. IRIS reports that a plain CLIP expert
reached about 75 % accuracy on ARES's curated set: validate on a labelled set
(:func:`fairness_evals.faces.disparity.classifier_disparity`) before trusting the numbers.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import FaceModel
from .face import Face
from .labels import AGE_GROUPS, GENDERS, SKIN_GROUPS

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .detection import DetectedFace, FaceDetector

#: Bumped whenever a template or class phrase changes (it is part of ``version``).
PROMPTS_VERSION = "1"
AGE_WORDS: dict[str, str] = {"young": "young", "middle": "middle-aged", "older": "older"}
GENDER_WORDS: dict[str, str] = {"male": "man", "female": "woman"}
SKIN_WORDS: dict[str, str] = {"light": "light", "middle": "medium", "dark": "dark"}
AGE_GENDER_TEMPLATES: tuple[str, ...] = (
    "a photo of a {}.",
    "a portrait photo of a {}.",
    "a close-up photo of the face of a {}.",
    "a cropped photo of a {}.",
    "a photo of the face of a {}.",
)
SKIN_TEMPLATES: tuple[str, ...] = (
    "a photo of a person with {} skin.",
    "a portrait of a person with a {} skin tone.",
    "a close-up photo of a face with {} skin.",
)
#: The six joint classes in a fixed order: (age group, gender), age-major.
JOINT_CLASSES: tuple[tuple[str, str], ...] = tuple((a, g) for a in AGE_GROUPS for g in GENDERS)


def age_gender_prompts() -> list[list[str]]:
    """The prompt ensemble of each joint class, in :data:`JOINT_CLASSES` order."""
    return [[t.format(f"{AGE_WORDS[a]} {GENDER_WORDS[g]}") for t in AGE_GENDER_TEMPLATES] for a, g in JOINT_CLASSES]


def skin_prompts() -> list[list[str]]:
    """The prompt ensemble of each skin group, in :data:`~fairness_evals.faces.labels.SKIN_GROUPS` order."""
    return [[t.format(SKIN_WORDS[s]) for t in SKIN_TEMPLATES] for s in SKIN_GROUPS]


def _embedding(output: Any) -> Any:
    """Projected embeddings from ``get_*_features`` (a tensor in transformers 4, an output object in 5)."""
    return output if hasattr(output, "norm") else output.pooler_output


def crop_box(box: tuple[int, int, int, int], margin: float, width: int, height: int) -> tuple[int, int, int, int]:
    """``box`` (inclusive) grown by ``margin`` x its width/height on each side, clipped; PIL crop tuple (exclusive)."""
    left, top, right, bottom = box
    w, h = right - left + 1, bottom - top + 1
    x0 = max(0, round(left - margin * w))
    y0 = max(0, round(top - margin * h))
    x1 = min(width, round(right + 1 + margin * w))
    y1 = min(height, round(bottom + 1 + margin * h))
    if x1 <= x0 or y1 <= y0:  # a box entirely off the image: fall back to the whole image
        return (0, 0, width, height)
    return (x0, y0, x1, y1)


class ClipClassifier(FaceModel):
    """Gender, IRIS age group and IRIS skin group from a CLIP model, zero-shot.

    Parameters
    ----------
    model : path
        A folder that ``transformers.CLIPModel.from_pretrained`` and ``CLIPProcessor.from_pretrained``
        load (e.g. a saved ``openai/clip-vit-base-patch16``).
    detector : FaceDetector, optional
        Defaults to dlib HOG (upsample 0); ``FaceDetector("none")`` classifies the whole image.
    crop_margin : float
        How much context around the face box goes to CLIP, as a fraction of the box size per side.
    device : str
        torch device.

    Thread-safe: the image forward pass runs under a lock, in eval mode, under ``torch.inference_mode``.
    """

    name = "clip"
    attributes = frozenset({"gender", "age", "skin"})

    def __init__(
        self,
        model: str | Path,
        detector: FaceDetector | None = None,
        crop_margin: float = 0.4,
        device: str = "cpu",
    ) -> None:
        import torch
        from transformers import CLIPModel, CLIPProcessor

        from .detection import FaceDetector

        if not 0.0 <= float(crop_margin) <= 5.0:
            raise ValueError(f"crop_margin must be in [0, 5], got {crop_margin!r}")
        path = Path(model)
        if not path.exists():
            raise FileNotFoundError(f"CLIP model folder not found: {path}")
        self.detector = detector if detector is not None else FaceDetector("hog")
        self.crop_margin = float(crop_margin)
        self.device = torch.device(device)
        self.model = CLIPModel.from_pretrained(str(path)).to(self.device).eval()
        self.processor = CLIPProcessor.from_pretrained(str(path))
        self._lock = threading.Lock()
        with torch.inference_mode():
            self._joint_prototypes = self._prototypes(age_gender_prompts())
            self._skin_prototypes = self._prototypes(skin_prompts())
            self._scale = float(self.model.logit_scale.exp())
        self.version = (
            f"CLIP zero-shot {path.name} ({sum(p.numel() for p in self.model.parameters())} parameters), prompts v"
            f"{PROMPTS_VERSION} ({len(AGE_GENDER_TEMPLATES)} age x gender, {len(SKIN_TEMPLATES)} skin templates), "
            f"crop margin {self.crop_margin:g}; {self.detector.describe()}"
        )

    def _prototypes(self, prompts: list[list[str]]) -> Any:
        import torch

        rows = []
        for ensemble in prompts:
            tokens = self.processor(text=ensemble, return_tensors="pt", padding=True).to(self.device)
            text = _embedding(self.model.get_text_features(**tokens))
            text = torch.nn.functional.normalize(text.float(), dim=-1).mean(dim=0)
            rows.append(torch.nn.functional.normalize(text, dim=0))
        return torch.stack(rows)

    def probabilities(self, crops: list[Any]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Joint (N, 6) and skin (N, 3) class probabilities for PIL image crops."""
        import torch

        pixels = self.processor(images=crops, return_tensors="pt")["pixel_values"].to(self.device)
        with self._lock, torch.inference_mode():
            image = _embedding(self.model.get_image_features(pixel_values=pixels)).float()
            image = torch.nn.functional.normalize(image, dim=-1)
            joint = torch.softmax(self._scale * image @ self._joint_prototypes.T, dim=-1)
            skin = torch.softmax(self._scale * image @ self._skin_prototypes.T, dim=-1)
        return joint.double().cpu().numpy(), skin.double().cpu().numpy()

    def classify_detections(self, rgb: NDArray[np.uint8], detections: list[DetectedFace]) -> list[Face]:
        """Gender, age group and skin group for each detection (one batched CLIP image pass)."""
        import numpy as np
        from PIL import Image

        if not detections:
            return []
        picture = Image.fromarray(rgb)
        height, width = rgb.shape[:2]
        crops = [picture.crop(crop_box(d.box, self.crop_margin, width, height)) for d in detections]
        joint_p, skin_p = self.probabilities(crops)
        faces = []
        for detection, jp, sp in zip(detections, joint_p, skin_p, strict=True):
            age_group, gender = JOINT_CLASSES[int(np.argmax(jp))]
            gender_mass = sum(float(p) for (_, g), p in zip(JOINT_CLASSES, jp, strict=True) if g == gender)
            age_mass = sum(float(p) for (a, _), p in zip(JOINT_CLASSES, jp, strict=True) if a == age_group)
            skin_index = int(np.argmax(sp))
            faces.append(
                Face(
                    box=detection.box,
                    gender=gender,
                    age_group=age_group,
                    skin_group=SKIN_GROUPS[skin_index],
                    confidences={"gender": gender_mass, "age": age_mass, "skin": float(sp[skin_index])},
                    sources={"gender": self.name, "age": self.name, "skin": self.name},
                    detection_score=detection.score,
                    details={
                        "age_gender_probabilities": {
                            f"{a} {g}": float(p) for (a, g), p in zip(JOINT_CLASSES, jp, strict=True)
                        },
                        "skin_probabilities": dict(zip(SKIN_GROUPS, map(float, sp), strict=True)),
                    },
                )
            )
        return faces
