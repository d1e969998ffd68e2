"""An offline labelled image set for calibrating the face detector, and the measurements taken on it.

Every image-generation score counts faces, so a face that is not there, or one person counted twice,
goes straight into the scores. This module builds images whose number of people is known by
construction, from pictures that ship inside the scikit-image and scikit-learn wheels (no download):

- **one person**: the 100 faces of ``skimage.data.lfw_subset()`` (Labeled Faces in the Wild, 25 x 25
  grey crops), each enlarged to a 128-px face and blended into a 384 x 384 crop of a natural photo
  without people (seeded); the astronaut photo (``skimage.data.astronaut()``, one woman, frontal);
- **no person**: the 100 non-face patches of ``lfw_subset`` (enlarged to 384 x 384), and natural photos
  without people (scikit-image's coffee, cat, rocket, coins, ..., scikit-learn's ``china.jpg`` and
  ``flower.jpg``, and the astronaut photo with her face covered, which leaves the mission patch that
  dlib's HOG detector takes for a weak face);
- **several people**: 2, 3 and 4 distinct LFW faces side by side on a natural background, and the
  two-astronaut collage.

Each base image comes in **variants**: ``png`` (the pixels as built), ``jpeg`` (encoded and decoded at
quality 75), ``grey`` (converted to luminance and back to RGB) and ``large`` (enlarged 2x, bicubic: the
768-1024 px of text-to-image models). Counts should not depend on the variant.

:func:`raw_detections` runs a detector once per image with a permissive threshold and keeps every
candidate with its score; :func:`measure` applies a selection rule
(:func:`fairness_evals.faces.detection.select_detections`: score threshold, overlap suppression, minimum face
size relative to the image) to those candidates and summarises (:class:`Measurement`). Lowering dlib's
threshold and filtering afterwards is exact: dlib's own non-maximum suppression keeps a candidate
unless a *higher*-scoring one overlaps it, so low-scoring candidates never remove a kept one.
``bench/faces.py`` prints the table in ``fairness_evals/faces/README.md``; the tests check the chosen
defaults on a subset. Needs ``scikit-image`` (and ``scikit-learn`` for its two photos).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fairness_evals.faces.detection import select_detections
from fairness_evals.faces.face import Box

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: Variants of every base image (see the module docstring).
VARIANTS: tuple[str, ...] = ("png", "jpeg", "grey", "large")
JPEG_QUALITY = 75
LARGE_FACTOR = 2
CANVAS = 384
FACE = 128
SEED = 0
#: Natural photos without people (scikit-image names, and scikit-learn's two photos).
NATURAL: tuple[str, ...] = (
    "coffee", "chelsea", "rocket", "coins", "brick", "grass", "gravel", "moon", "hubble_deep_field", "page",
    "text", "retina", "immunohistochemistry", "cell", "clock", "horse", "china", "flower",
)  # fmt: skip
#: Backgrounds of the composites (colour photos without people).
BACKGROUNDS: tuple[str, ...] = ("coffee", "rocket", "hubble_deep_field", "immunohistochemistry", "china", "flower",
                                "brick", "grass", "gravel")  # fmt: skip


@dataclass(frozen=True)
class CalibrationImage:
    """One labelled image: ``faces`` people by construction; ``base`` names the content, ``variant`` its form."""

    base: str
    variant: str
    faces: int
    source: str
    build: Callable[[], NDArray[np.uint8]] = field(repr=False, compare=False)
    #: Where the faces are (composites: the pasted face squares), for "is the detection on a face".
    face_boxes: tuple[Box, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.base}/{self.variant}"

    @property
    def kind(self) -> str:
        return "none" if self.faces == 0 else "one" if self.faces == 1 else "several"


# ------------------------------------------------------------------------------------------ pictures
def _rgb(array: Any) -> NDArray[np.uint8]:
    import numpy as np

    a = np.asarray(array)
    if a.dtype == bool:
        a = a.astype(np.uint8) * 255
    elif a.dtype != np.uint8:
        a = np.clip(np.round(a * 255.0), 0, 255).astype(np.uint8)
    if a.ndim == 2:
        a = np.repeat(a[..., None], 3, axis=2)
    if a.shape[2] == 4:
        a = a[..., :3]
    return np.ascontiguousarray(a)


def natural_photo(name: str) -> NDArray[np.uint8]:
    """A photo without people from the scikit-image (or, for ``china``/``flower``, scikit-learn) wheel, as RGB."""
    if name in ("china", "flower"):
        import importlib.util
        from pathlib import Path

        from PIL import Image

        spec = importlib.util.find_spec("sklearn")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("the calibration set needs scikit-learn for its sample photos", name="sklearn")
        path = Path(spec.submodule_search_locations[0]) / "datasets" / "images" / f"{name}.jpg"
        with Image.open(path) as image:
            return _rgb(image.convert("RGB"))
    from skimage import data

    return _rgb(getattr(data, name)())


def astronaut() -> NDArray[np.uint8]:
    from skimage import data

    return _rgb(data.astronaut())


#: The astronaut's face (dlib HOG's box, grown): covering it leaves a photo without a person's face.
ASTRONAUT_FACE: Box = (160, 60, 290, 200)


def astronaut_without_face() -> NDArray[np.uint8]:
    """The astronaut photo with her head covered by the mean colour of the surrounding pixels."""
    import numpy as np

    photo = astronaut().copy()
    left, top, right, bottom = ASTRONAUT_FACE
    ring = np.concatenate(
        [photo[top - 10 : top, left:right].reshape(-1, 3), photo[bottom : bottom + 10, left:right].reshape(-1, 3)]
    )
    photo[top:bottom, left:right] = ring.mean(axis=0).astype(np.uint8)
    return photo


def lfw() -> NDArray[np.float64]:
    """``skimage.data.lfw_subset()``: 200 grey 25 x 25 crops, the first 100 faces, the last 100 not."""
    from skimage import data

    return data.lfw_subset()


def _resize(rgb: NDArray[np.uint8], size: tuple[int, int]) -> NDArray[np.uint8]:
    from PIL import Image

    return _rgb(Image.fromarray(rgb).resize(size, Image.Resampling.BICUBIC))


def background(index: int, width: int, height: int) -> NDArray[np.uint8]:
    """A seeded ``width x height`` crop of one of :data:`BACKGROUNDS` (enlarged first when it is too small)."""
    import numpy as np

    rng = np.random.default_rng([SEED, index])
    photo = natural_photo(BACKGROUNDS[index % len(BACKGROUNDS)])
    scale = max(width / photo.shape[1], height / photo.shape[0], 1.0)
    if scale > 1.0:
        photo = _resize(photo, (math.ceil(photo.shape[1] * scale), math.ceil(photo.shape[0] * scale)))
    top = int(rng.integers(0, photo.shape[0] - height + 1))
    left = int(rng.integers(0, photo.shape[1] - width + 1))
    return np.ascontiguousarray(photo[top : top + height, left : left + width])


def _feather(size: int, border: float = 0.06) -> NDArray[np.float64]:
    """A square blending mask: 1 inside, falling linearly to 0 over the outer ``border`` of each side."""
    import numpy as np

    ramp = np.clip(np.minimum(np.arange(size) + 0.5, size - np.arange(size) - 0.5) / (border * size), 0.0, 1.0)
    return np.minimum(ramp[:, None], ramp[None, :])


def paste_faces(
    canvas: NDArray[np.uint8], faces: Sequence[int], corners: Sequence[tuple[int, int]]
) -> NDArray[np.uint8]:
    """LFW faces ``faces`` (indices 0..99) enlarged to :data:`FACE` px and blended in at ``corners`` (left, top)."""
    import numpy as np

    out = canvas.astype(np.float64)
    crops = lfw()
    mask = _feather(FACE)[..., None]
    for index, (left, top) in zip(faces, corners, strict=True):
        face = _resize(_rgb(crops[index]), (FACE, FACE)).astype(np.float64)
        region = out[top : top + FACE, left : left + FACE]
        out[top : top + FACE, left : left + FACE] = mask * face + (1.0 - mask) * region
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def _box(left: int, top: int) -> Box:
    return (left, top, left + FACE - 1, top + FACE - 1)


def portrait_layout(index: int) -> tuple[int, int]:
    """Where LFW face ``index`` goes in its portrait: the seeded (left, top) corner."""
    import numpy as np

    rng = np.random.default_rng([SEED, 1000 + index])
    left, top = (int(v) for v in rng.integers(0, CANVAS - FACE + 1, size=2))
    return left, top


def lfw_portrait(index: int) -> NDArray[np.uint8]:
    """LFW face ``index`` at a seeded place (:func:`portrait_layout`) in a :data:`CANVAS`-px natural background."""
    return paste_faces(background(index, CANVAS, CANVAS), [index], [portrait_layout(index)])


def group_layout(people: int, index: int) -> tuple[list[int], list[tuple[int, int]], tuple[int, int]]:
    """``people`` distinct LFW faces (seeded), their corners in a row a half face apart, and the canvas size."""
    import numpy as np

    rng = np.random.default_rng([SEED, 2000 + 10 * people + index])
    faces = [int(f) for f in rng.choice(100, size=people, replace=False)]
    gap = FACE // 2
    width = people * FACE + (people + 1) * gap
    corners = [(gap + i * (FACE + gap), int(rng.integers(gap // 2, FACE // 2 + 1))) for i in range(people)]
    return faces, corners, (width, 2 * FACE)


def lfw_group(people: int, index: int) -> NDArray[np.uint8]:
    """The composite of :func:`group_layout` on a natural background."""
    faces, corners, (width, height) = group_layout(people, index)
    return paste_faces(background(50 + 10 * people + index, width, height), faces, corners)


def lfw_nonface(index: int) -> NDArray[np.uint8]:
    """LFW non-face patch ``index`` (0..99) enlarged to :data:`CANVAS` px."""
    return _resize(_rgb(lfw()[100 + index]), (CANVAS, CANVAS))


def collage() -> NDArray[np.uint8]:
    """Two real faces: the astronaut's top 300 rows beside their mirror image (300 x 1024)."""
    import numpy as np

    top = astronaut()[:300]
    return np.ascontiguousarray(np.concatenate([top, top[:, ::-1]], axis=1))


COLLAGE_FACES: tuple[Box, ...] = (
    ASTRONAUT_FACE,
    (1023 - ASTRONAUT_FACE[2], ASTRONAUT_FACE[1], 1023 - ASTRONAUT_FACE[0], ASTRONAUT_FACE[3]),
)


# ------------------------------------------------------------------------------------------ variants
def variant(rgb: NDArray[np.uint8], name: str) -> NDArray[np.uint8]:
    """``rgb`` as the ``name`` variant (:data:`VARIANTS`)."""
    from PIL import Image

    if name == "png":
        return rgb
    if name == "jpeg":
        buffer = io.BytesIO()
        Image.fromarray(rgb).save(buffer, format="JPEG", quality=JPEG_QUALITY)
        with Image.open(io.BytesIO(buffer.getvalue())) as image:
            return _rgb(image.convert("RGB"))
    if name == "grey":
        return _rgb(Image.fromarray(rgb).convert("L").convert("RGB"))
    if name == "large":
        return _resize(rgb, (rgb.shape[1] * LARGE_FACTOR, rgb.shape[0] * LARGE_FACTOR))
    raise ValueError(f"unknown variant {name!r}; known: {VARIANTS}")


def _scaled(boxes: Sequence[Box], name: str) -> tuple[Box, ...]:
    if name != "large":
        return tuple(boxes)
    f = LARGE_FACTOR
    return tuple((a * f, b * f, (c + 1) * f - 1, (d + 1) * f - 1) for a, b, c, d in boxes)


def calibration_set(
    *, n_lfw: int = 100, variants: Sequence[str] = VARIANTS, natural: Sequence[str] = NATURAL, groups: int = 5
) -> list[CalibrationImage]:
    """Every labelled image (built lazily: call ``image.build()``), in a fixed order.

    ``n_lfw`` LFW faces and as many LFW non-faces, the astronaut, the natural photos without people,
    ``groups`` composites each of 2, 3 and 4 people and the two-astronaut collage, each in ``variants``.
    """
    Make = Callable[[], "NDArray[np.uint8]"]
    bases: list[tuple[str, int, str, Make, tuple[Box, ...]]] = []
    for i in range(n_lfw):
        bases.append((f"lfw-face-{i:03d}", 1, "lfw", lambda i=i: lfw_portrait(i), (_box(*portrait_layout(i)),)))
    bases.append(("astronaut", 1, "astronaut", astronaut, (ASTRONAUT_FACE,)))
    for i in range(n_lfw):
        bases.append((f"lfw-nonface-{i:03d}", 0, "lfw", lambda i=i: lfw_nonface(i), ()))
    for name in natural:
        bases.append((f"photo-{name}", 0, "natural", lambda name=name: natural_photo(name), ()))
    bases.append(("astronaut-face-covered", 0, "astronaut", astronaut_without_face, ()))
    for people in (2, 3, 4):
        for i in range(groups):
            _, corners, _ = group_layout(people, i)
            boxes = tuple(_box(*c) for c in corners)
            bases.append((f"group{people}-{i}", people, "lfw", lambda p=people, i=i: lfw_group(p, i), boxes))
    bases.append(("astronaut-collage", 2, "astronaut", collage, COLLAGE_FACES))
    out = []
    for base, faces, source, make, boxes in bases:
        for name in variants:

            def build(make: Make = make, name: str = name) -> NDArray[np.uint8]:
                return variant(make(), name)

            out.append(CalibrationImage(base, name, faces, source, build, _scaled(boxes, name)))
    return out


# ------------------------------------------------------------------------------------------ detection
#: A detector configuration to calibrate: kind, upsample, resize_longest (None: native size).
@dataclass(frozen=True)
class DetectorConfig:
    kind: str
    upsample: int = 0
    resize_longest: int | None = None

    @property
    def label(self) -> str:
        size = "native" if self.resize_longest is None else f"{self.resize_longest}px"
        return f"{self.kind} up{self.upsample} {size}"


#: The permissive thresholds the raw candidates are collected at (HOG's SVM margin; dlib's CNN returns
#: only positive confidences).
RAW_THRESHOLD = {"hog": -0.5, "cnn": 0.0}


@dataclass(frozen=True)
class RawDetections:
    """Every candidate a detector found in one image: boxes (original pixels), scores, the image size, seconds."""

    name: str
    boxes: tuple[Box, ...]
    scores: tuple[float, ...]
    shape: tuple[int, int]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "boxes": [list(b) for b in self.boxes], "scores": list(self.scores),
                "shape": list(self.shape), "seconds": self.seconds}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RawDetections:
        return cls(data["name"], tuple(tuple(b) for b in data["boxes"]), tuple(data["scores"]),  # type: ignore[misc]
                   tuple(data["shape"]), float(data["seconds"]))  # type: ignore[arg-type]  # fmt: skip


def raw_detections(
    config: DetectorConfig, image: CalibrationImage, rgb: NDArray[np.uint8] | None = None
) -> RawDetections:
    """Every candidate of ``config`` in ``image`` at the permissive :data:`RAW_THRESHOLD` (no other selection)."""
    import time

    from .detection import FaceDetector

    detector = FaceDetector(config.kind, upsample=config.upsample, resize_longest=config.resize_longest,
                            min_score=RAW_THRESHOLD[config.kind], min_size=0.0, overlap=1.0)  # fmt: skip
    pixels = image.build() if rgb is None else rgb
    start = time.perf_counter()
    found = detector.candidates(pixels)
    seconds = time.perf_counter() - start
    return RawDetections(image.name, tuple(b for b, _ in found), tuple(float(s) for _, s in found),
                         (int(pixels.shape[0]), int(pixels.shape[1])), seconds)  # fmt: skip


# ------------------------------------------------------------------------------------------ measurement
@dataclass(frozen=True)
class Rule:
    """A selection rule: keep candidates scoring above ``min_score``, at least ``min_size`` of the shorter
    image side wide, after dropping the lower-scoring of two boxes whose overlap (IoU) exceeds ``overlap``."""

    min_score: float
    min_size: float = 0.0
    overlap: float = 1.0

    @property
    def label(self) -> str:
        parts = [f"score>{self.min_score:g}"]
        if self.min_size:
            parts.append(f"size>={self.min_size:g}")
        if self.overlap < 1.0:
            parts.append(f"iou<={self.overlap:g}")
        return " ".join(parts)


@dataclass(frozen=True)
class Measurement:
    """What a detector configuration and rule do on the calibration set.

    - ``one_face``: share of one-person images with exactly one detection, and it on the face;
    - ``one_person_recall``: share of one-person images with a detection on the face;
    - ``extra_faces``: detections beyond the first per one-person image, per image;
    - ``false_face_images``: share of images without a person that get a detection;
    - ``false_faces``: detections per image without a person;
    - ``several_exact``: share of several-person images counted exactly; ``several_recall``: detections
      (at most the true number) over people;
    - ``invariant``: share of base images whose count is the same in every variant (``png``, ``jpeg``,
      ``grey``, ``large``); ``variant_changes`` lists the bases that change;
    - ``seconds_per_image``: mean detection time (of the raw run).
    """

    detector: str
    rule: str
    images: int
    one_person: int
    one_face: float
    one_person_recall: float
    extra_faces: float
    no_person: int
    false_face_images: float
    false_faces: float
    several: int
    several_exact: float
    several_recall: float
    invariant: float
    variant_changes: tuple[str, ...]
    seconds_per_image: float

    def meets_targets(self) -> bool:
        """The issue's targets: one face per one-person image >= 99 %, <= 1 % false faces, invariant counts."""
        return self.one_face >= 0.99 and self.false_faces <= 0.01 and self.invariant == 1.0

    def row(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def kept(raw: RawDetections, rule: Rule) -> list[tuple[Box, float | None]]:
    """The candidates of ``raw`` that ``rule`` keeps (:func:`fairness_evals.faces.detection.select_detections`)."""
    return select_detections(list(zip(raw.boxes, raw.scores, strict=True)), raw.shape, min_score=rule.min_score,
                             min_size=rule.min_size, overlap=rule.overlap)  # fmt: skip


def _on(box: Box, truth: Box) -> bool:
    """Whether the centre of ``box`` lies inside ``truth``."""
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return truth[0] <= x <= truth[2] and truth[1] <= y <= truth[3]


def measure(
    images: Sequence[CalibrationImage], raws: Sequence[RawDetections], rule: Rule, *, detector: str = ""
) -> Measurement:
    """Summarise ``rule`` applied to the raw candidates of ``images`` (same order)."""
    import numpy as np

    if len(images) != len(raws):
        raise ValueError(f"{len(images)} images but {len(raws)} raw detection lists")
    found = [[box for box, _ in kept(r, rule)] for r in raws]
    one = [(im, f) for im, f in zip(images, found, strict=True) if im.kind == "one"]
    none = [len(f) for im, f in zip(images, found, strict=True) if im.kind == "none"]
    several = [(im.faces, len(f)) for im, f in zip(images, found, strict=True) if im.kind == "several"]
    per_base: dict[str, set[int]] = {}
    for im, f in zip(images, found, strict=True):
        per_base.setdefault(im.base, set()).add(len(f))
    changes = tuple(sorted(b for b, seen in per_base.items() if len(seen) > 1))

    def mean(values: Sequence[float]) -> float:
        return float(np.mean(values)) if values else math.nan

    return Measurement(
        detector=detector,
        rule=rule.label,
        images=len(images),
        one_person=len(one),
        one_face=mean([len(f) == 1 and _on(f[0], im.face_boxes[0]) for im, f in one]),
        one_person_recall=mean([any(_on(b, im.face_boxes[0]) for b in f) for im, f in one]),
        extra_faces=mean([max(0, len(f) - 1) for _, f in one]),
        no_person=len(none),
        false_face_images=mean([c > 0 for c in none]),
        false_faces=mean(none),
        several=len(several),
        several_exact=mean([c == n for n, c in several]),
        several_recall=float(sum(min(c, n) for n, c in several) / sum(n for n, _ in several)) if several else math.nan,
        invariant=1.0 - len(changes) / len(per_base) if per_base else math.nan,
        variant_changes=changes,
        seconds_per_image=mean([r.seconds for r in raws]),
    )
