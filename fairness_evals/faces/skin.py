"""A weight-free, **approximate** skin-tone estimate on the Monk Skin Tone (MST) scale.

Method (``fairness_evals/faces/README.md`` discusses its limits):

1. Align the face by its 5 landmarks (``dlib.get_face_chip``, 150 px, padding 0.25) and take three
   patches that are skin on almost every face: both cheeks and the bridge of the nose
   (:data:`SKIN_PATCHES`, fractions of the chip). Forehead (hair), eyes and mouth are left out.
2. Convert to CIELAB (sRGB, D65) and keep skin-coloured pixels: chroma ``C* >= 2`` (drops grey
   background, eye whites) and hue angle ``h`` in 20..100 degrees (skin of every MST swatch is
   orange to yellow: 49..89 degrees; drops blue, green, purple, lips and deep shadow).
3. Drop the darkest and brightest 10 % of those by ``L*`` (shadow and specular highlight).
4. Individual Typology Angle ``ITA = atan2(L* - 50, b*)`` of the median ``L*`` and median ``b*``.
5. MST level = the swatch whose own ITA is nearest (the swatch ITAs fall monotonically, 83 deg for
   MST 1 to -84 deg for MST 10), IRIS group = :data:`~fairness_evals.faces.labels.MST_TO_SKIN_GROUP`.

The confidence is the share of kept pixels whose own ITA falls in the same IRIS group (how uniform the
evidence is), not a calibrated probability. Estimates are none (``None``) when fewer than
:data:`MIN_SKIN_PIXELS` pixels pass step 2, e.g. for a greyscale image.

It is approximate: a photograph shades skin, so the median pixel is darker than the colour a human
rater matches to a swatch (the astronaut photo, a light-skinned woman, comes out MST 4); lighting
colour, white balance, make-up and image filters all move it. Only numpy is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .base import FaceModel
from .face import Face
from .labels import MST_TO_SKIN_GROUP

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .detection import DetectedFace, FaceDetector

#: The ten Monk Skin Tone swatches (Monk 2019; skintone.google), MST 1 (lightest) to MST 10.
MST_SWATCHES_HEX: tuple[str, ...] = (
    "#f6ede4",
    "#f3e7db",
    "#f7ead0",
    "#eadaba",
    "#d7bd96",
    "#a07e56",
    "#825c43",
    "#604134",
    "#3a312a",
    "#292420",
)

#: Patches of the aligned chip used as skin, ``(x0, y0, x1, y1)`` as fractions of the chip side:
#: left cheek, right cheek, bridge of the nose (``dlib.get_face_chip`` layout with padding 0.25).
SKIN_PATCHES: tuple[tuple[float, float, float, float], ...] = (
    (0.20, 0.40, 0.38, 0.56),
    (0.62, 0.40, 0.80, 0.56),
    (0.43, 0.30, 0.57, 0.42),
)
CHIP_SIZE = 150
CHIP_PADDING = 0.25
#: Pixel filter (step 2): minimum chroma and the hue-angle window, in degrees.
MIN_CHROMA = 2.0
HUE_RANGE = (20.0, 100.0)
#: Share of pixels trimmed at each end of the ``L*`` range (step 3).
LIGHTNESS_TRIM = 0.10
#: Fewer skin pixels than this and there is no estimate.
MIN_SKIN_PIXELS = 20


def srgb_to_lab(rgb: NDArray[Any]) -> NDArray[np.float64]:
    """CIELAB (D65 white, 2-degree observer) of sRGB colours; ``rgb`` is ``(..., 3)`` uint8 or 0..255 floats.

    Standard formulas: sRGB companding removed, linear RGB -> XYZ (IEC 61966-2-1 matrix), XYZ -> Lab.
    Returns ``(..., 3)`` float64 with ``L*`` in 0..100.
    """
    import numpy as np

    c = np.asarray(rgb, dtype=np.float64) / 255.0
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    matrix = np.array(
        [
            [0.4124564, 0.3575761, 0.1804375],
            [0.2126729, 0.7151522, 0.0721750],
            [0.0193339, 0.1191920, 0.9503041],
        ]
    )
    xyz = linear @ matrix.T
    white = np.array([0.95047, 1.0, 1.08883])
    t = xyz / white
    delta = 6.0 / 29.0
    f = np.where(t > delta**3, np.cbrt(t), t / (3 * delta**2) + 4.0 / 29.0)
    lightness = 116.0 * f[..., 1] - 16.0
    a = 500.0 * (f[..., 0] - f[..., 1])
    b = 200.0 * (f[..., 1] - f[..., 2])
    return np.stack([lightness, a, b], axis=-1)


def ita_degrees(lightness: Any, b: Any) -> Any:
    """Individual Typology Angle ``atan2(L* - 50, b*)`` in degrees (Chardon et al. 1991); vectorised."""
    import numpy as np

    return np.degrees(np.arctan2(np.asarray(lightness, dtype=np.float64) - 50.0, np.asarray(b, dtype=np.float64)))


@lru_cache(maxsize=1)
def _swatch_ita() -> Any:
    """The ITA of each MST swatch, degrees, MST 1..10 (strictly decreasing; read-only)."""
    import numpy as np

    rgb = np.array([[int(h[i : i + 2], 16) for i in (1, 3, 5)] for h in MST_SWATCHES_HEX], dtype=np.uint8)
    lab = srgb_to_lab(rgb)
    ita = ita_degrees(lab[:, 0], lab[:, 2])
    ita.setflags(write=False)
    return ita


def mst_from_ita(ita: Any) -> Any:
    """MST level 1..10 of the swatch nearest in ITA (ties go to the lighter level); vectorised."""
    import numpy as np

    swatches = _swatch_ita()
    values = np.asarray(ita, dtype=np.float64)
    index = np.argmin(np.abs(values[..., None] - swatches), axis=-1)
    return index + 1


@dataclass(frozen=True)
class SkinEstimate:
    """The skin estimate of one face: MST level, IRIS group, evidence share, and what it rests on."""

    mst: int
    group: str
    confidence: float
    ita: float
    median_lab: tuple[float, float, float]
    n_pixels: int


def estimate_from_pixels(pixels: NDArray[Any]) -> SkinEstimate | None:
    """Skin estimate from candidate skin pixels (``(N, 3)`` or ``(..., 3)`` RGB uint8), steps 2-5.

    Returns None when fewer than :data:`MIN_SKIN_PIXELS` pixels pass the skin-colour filter.
    A patch of one uniform swatch colour returns that swatch's level with confidence 1.
    """
    import numpy as np

    flat = np.asarray(pixels).reshape(-1, 3)
    lab = srgb_to_lab(flat)
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1]))
    keep = (chroma >= MIN_CHROMA) & (hue >= HUE_RANGE[0]) & (hue <= HUE_RANGE[1])
    lab = lab[keep]
    if lab.shape[0] < MIN_SKIN_PIXELS:
        return None
    low, high = np.quantile(lab[:, 0], [LIGHTNESS_TRIM, 1.0 - LIGHTNESS_TRIM])
    trimmed = lab[(lab[:, 0] >= low) & (lab[:, 0] <= high)]
    median = np.median(trimmed, axis=0)
    ita = float(ita_degrees(median[0], median[2]))
    mst = int(mst_from_ita(ita))
    group = MST_TO_SKIN_GROUP[mst]
    pixel_groups = np.array([MST_TO_SKIN_GROUP[int(m)] for m in range(1, 11)])[
        mst_from_ita(ita_degrees(trimmed[:, 0], trimmed[:, 2])) - 1
    ]
    return SkinEstimate(
        mst=mst,
        group=group,
        confidence=float(np.mean(pixel_groups == group)),
        ita=ita,
        median_lab=(float(median[0]), float(median[1]), float(median[2])),
        n_pixels=int(trimmed.shape[0]),
    )


def skin_patch_pixels(chip: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The pixels of :data:`SKIN_PATCHES` in an aligned chip, stacked as ``(N, 3)``."""
    import numpy as np

    side_y, side_x = chip.shape[:2]
    parts = [
        chip[round(y0 * side_y) : round(y1 * side_y), round(x0 * side_x) : round(x1 * side_x)].reshape(-1, 3)
        for x0, y0, x1, y1 in SKIN_PATCHES
    ]
    return np.concatenate(parts, axis=0)


def estimate_face(rgb: NDArray[np.uint8], face: DetectedFace) -> SkinEstimate | None:
    """Skin estimate of one detected face of ``rgb`` (steps 1-5)."""
    from .detection import face_chip

    chip = face_chip(rgb, face, CHIP_SIZE, CHIP_PADDING)
    return estimate_from_pixels(skin_patch_pixels(chip))


class SkinToneClassifier(FaceModel):
    """Skin tone only (MST level and IRIS group) for every detected face; no weights beyond dlib's.

    ``detector`` defaults to dlib HOG (upsample 0). A face whose estimate had too few skin-coloured
    pixels keeps ``skin_mst = skin_group = None`` and says so in ``details["skin_estimate"]``.
    Thread-safe (the detector serialises; the estimate is pure numpy).
    """

    name = "skin"
    attributes = frozenset({"skin"})

    def __init__(self, detector: FaceDetector | None = None) -> None:
        from .detection import FaceDetector

        self.detector = detector if detector is not None else FaceDetector("hog")
        self.version = (
            f"ITA nearest-MST-swatch estimate on cheek/nose patches (chroma>={MIN_CHROMA:g}, "
            f"hue {HUE_RANGE[0]:g}-{HUE_RANGE[1]:g} deg, L* trim {LIGHTNESS_TRIM:g}); {self.detector.describe()}"
        )

    def classify_detections(self, rgb: NDArray[np.uint8], detections: list[DetectedFace]) -> list[Face]:
        """One Face per detection with ``skin_mst``, ``skin_group`` and the skin confidence."""
        faces = []
        for detection in detections:
            estimate = estimate_face(rgb, detection)
            if estimate is None:
                faces.append(
                    Face(
                        box=detection.box,
                        detection_score=detection.score,
                        sources={"skin": self.name},
                        details={"skin_estimate": f"fewer than {MIN_SKIN_PIXELS} skin-coloured pixels"},
                    )
                )
                continue
            faces.append(
                Face(
                    box=detection.box,
                    skin_mst=estimate.mst,
                    skin_group=estimate.group,
                    confidences={"skin": estimate.confidence},
                    sources={"skin": self.name},
                    detection_score=detection.score,
                    details={
                        "skin_ita": estimate.ita,
                        "skin_median_lab": list(estimate.median_lab),
                        "skin_pixels": estimate.n_pixels,
                    },
                )
            )
        return faces
