"""The statistics every image-generation task declares alike (:mod:`fairness_evals.statistics`): the image accounting,
the face classifier's validation diagnostics and the interval of the images resampled within their prompts.

The statistics tables of the image-generation tasks add them to their tasks; they are
detail (never printed), computed by :mod:`fairness_evals.generation.t2i_tasks` and
:mod:`fairness_evals.generation.image_outcomes`. Import-light: the vocabulary only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from fairness_evals.statistics import Coverage, Direction, Interval, Minimum, Statistic

COUNTS_BY = "fairness_evals.generation.t2i_tasks:image_counts"
CONVENTION = "package convention (not in the paper): every image is accounted for"
VALIDATION_BY = "fairness_evals.generation.image_outcomes:validation_metrics"
#: The function that makes every generation interval (the methods of :mod:`metrics.intervals` on spread resamples).
CORRECTED = "fairness_evals.generation.t2i_tasks:corrected_intervals"


def resampled(unit: str = "their prompt") -> str:
    """What a generation interval resamples: the images within ``unit`` (a stratified bootstrap, spread-corrected)."""
    return (
        f"images within {unit} (each drawn again from its own), spread by sqrt(n / (n - 1)) for n images per "
        "prompt; 1,000 resamples, seed 0"
    )


def interval(
    method: str,
    bootstrap: Literal["percentile", "basic", "max_t"],
    unit: str = "their prompt",
    minimum: Minimum | None = None,
    withheld: str | None = None,
) -> Interval:
    """A generation interval: ``method`` (the :mod:`metrics.bootstrap` method ``bootstrap``) on the images resampled
    within ``unit``, printed from ``minimum`` (never, and why, where ``withheld``)."""
    return Interval(method, resampled(unit), CORRECTED, minimum, bootstrap=bootstrap, withheld=withheld)


def design(bias: float) -> Minimum:
    """The evidence a value of a generation task's prompts needs: a response to every prompt of the design (the
    prompts are the benchmark's census, the images per prompt its sample; a ``--limit`` run answers a prefix of
    them, whose value is another statistic). ``bias``: the largest measured at the whole design with the lite and
    paper images per prompt (``bench/coverage.py generation --bias``)."""
    return Minimum(1, "prompt", "response", cells=1.0, bias=bias)


def coverage(inputs: str, what: str, threshold: str, default: float) -> Coverage:
    """A share of the images asked for (``what`` counted, e.g. ``"that were read"``), applied by the shared assembly
    (:func:`fairness_evals.generation.t2i_tasks.apply_coverage`) below the setting ``threshold``."""
    return Coverage(inputs, "fairness_evals.generation.t2i_tasks:apply_coverage", threshold, default,
                    unit=("image asked for", "images asked for"), what=what)  # fmt: skip


def count(name: str, definition: str, computed_by: str = COUNTS_BY, direction: Direction = "neither") -> Statistic:
    """A count of the image accounting (detail)."""
    return Statistic(name, definition, computed_by, CONVENTION, direction, kind="count")


def image_counts(with_faces: str = "images with at least one face") -> tuple[Statistic, ...]:
    """:data:`fairness_evals.generation.t2i_tasks.IMAGE_COUNTS`, declared (``with_faces`` defines images_with_faces)."""
    return (
        count("documents", "prompts evaluated"),
        count("images", "images the responses named"),
        count(
            "images_expected", "images asked for (per prompt the number the response said, else the number returned)"
        ),
        count("faces_detected", "faces the detector found"),
        count("images_with_faces", with_faces),
        count("no_face_images", "images read in which the detector found no face"),
        count("failed_images", "images that could not be read (missing, corrupt, not an image)", direction="lower"),
        count("missing_images", "images asked for that the responses did not return", direction="lower"),
        count("documents_without_images", "prompts whose response returned no image", direction="lower"),
        count("images_one_face", "images with exactly one face"),
        count("images_two_faces", "images with exactly two faces"),
        count("images_three_or_more_faces", "images with three or more faces"),
        count("low_confidence_faces", "faces whose detection score lies below the detector's low-confidence level"),
    )


def classifier_diagnostics(family: Mapping[str, Sequence[str]], paper: str) -> tuple[Statistic, ...]:
    """The face classifier's accuracy and accuracy disparity on the labelled validation set, per value of ``family``
    (one placeholder), and the set's size."""
    (placeholder,) = family
    return (
        Statistic(
            f"classifier_accuracy_{{{placeholder}}}",
            "the face classifier's accuracy on the labelled validation set (NaN without one)",
            VALIDATION_BY,
            paper,
            "higher",
            kind="diagnostic",
            family=family,
        ),
        Statistic(
            f"classifier_disparity_{{{placeholder}}}",
            f"max - min over the {placeholder}'s groups of the classifier's recall on the validation set",
            VALIDATION_BY,
            paper,
            "lower",
            kind="diagnostic",
            family=family,
        ),
        Statistic(
            "classifier_validation_images", "images of the labelled validation set", VALIDATION_BY, paper, kind="count"
        ),
    )
