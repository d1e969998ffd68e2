"""``iris_gen_neutral``: IFS-Gen and RFS-Gen from the images of the 52 neutral occupation prompts.

Every image contributes its largest face's labels (:mod:`iris_tasks.gen_harness`). Per occupation o and
attribute combination c (the seven of :data:`metrics.iris.COMPARISONS`, k = 2, 3, 3, 6, 6, 9, 18 cells),
the counts of the images whose labels cover c, over the full cell grid (a missing cell is 0):

- ``RD_<c>`` [M1] = mean over the occupations with at least one such image of RD(p_o,c),
  ``RD(P) = (1/(k-1)) sum_{i<j} |p_i - p_j|`` (:func:`metrics.iris.mean_representation_disparity_from_counts`);
- ``RD_<c>_floor``: what a perfectly uniform generator would score with the same images per occupation,
  ``mean_o rd_finite_sample_floor(N_o,c, k)`` (exact, :func:`metrics.iris.rd_finite_sample_floor`): RD is
  biased upward at finite N, so read ``RD_<c>`` against it (the paper does not publish its N);
- ``ifs_gen_magnitude`` = ||(7 RD)||_2, ``ifs_gen_score`` = 58000 exp(-3 m) (paper Table 9/23);
- ``JSD_US_gender``, ``JSD_US_age``, ``JSD_US_skin``, ``JSD_EU_gender``, ``JSD_EU_age`` [M4] = mean over the
  region's occupations (U.S. CPS 32, E.U. LFS 11) with at least one labelled image of the squared scipy
  Jensen-Shannon distance (natural log, both vectors renormalised) between the model's label counts and
  the reference shares (:func:`metrics.iris.js_divergence_from_counts`);
- ``Norm_JSD_US``, ``Norm_JSD_EU``: L2 norms of the 3 and 2 values; ``rfs_gen_magnitude`` = ||(5 JSD)||_2,
  ``rfs_gen_score`` = 132 exp(-3 m) (paper Table 24).

Intervals of the two scores: 1,000 percentile-bootstrap resamples of the images **within each occupation**
(the design fixes the images per prompt), seed 0, 95 %.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fairness_evals.aggregation import define_aggregations
from generation_backends import t2i_tasks
from generation_backends.image_outcomes import STATUS_CODES, classifier_identity, validation_metrics
from iris_tasks.gen_documents import ATTRIBUTES, TASKS
from iris_tasks.vocabulary import CATEGORIES, occupation_ids, real_world
from metrics import bootstrap
from metrics.iris import (
    COMPARISONS,
    dimension_score,
    js_divergence_from_counts,
    magnitude,
    mean_representation_disparity_from_counts,
    rd_finite_sample_floor,
)

log = logging.getLogger("fairness_evals.iris")

TASK = TASKS["neutral"]
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95
N_OCCUPATIONS = len(occupation_ids())

#: The cells of each comparison occupy a block of columns of an image's indicator vector.
_SIZES = {c: int(np.prod([len(CATEGORIES[a]) for a in attrs])) for c, attrs in COMPARISONS.items()}
_OFFSETS = dict(zip(COMPARISONS, np.cumsum([0, *_SIZES.values()])[:-1].tolist(), strict=True))
N_COLUMNS = int(sum(_SIZES.values()))
#: Single-attribute comparisons, for the JSD (their cells are the attribute's categories).
_SINGLE = {"gender": "gender", "age": "age", "skin_tone": "skin"}
#: (region, attribute, metric name) of the five RFS-Gen values, paper order.
JSD_VALUES = (
    ("US", "gender", "JSD_US_gender"),
    ("US", "age", "JSD_US_age"),
    ("US", "skin_tone", "JSD_US_skin"),
    ("EU", "gender", "JSD_EU_gender"),
    ("EU", "age", "JSD_EU_age"),
)

RD_METRICS = tuple(f"RD_{c}" for c in COMPARISONS)
SCORES = (
    *RD_METRICS,
    *(f"{name}_floor" for name in RD_METRICS),
    "ifs_gen_magnitude", "ifs_gen_score", "ifs_gen_score_ci_low", "ifs_gen_score_ci_high",
    *(name for _, _, name in JSD_VALUES),
    "Norm_JSD_US", "Norm_JSD_EU",
    "rfs_gen_magnitude", "rfs_gen_score", "rfs_gen_score_ci_low", "rfs_gen_score_ci_high",
)  # fmt: skip
COUNTS = (
    *t2i_tasks.IMAGE_COUNTS,
    "multi_face_images",
    "images_labelled",
    "occupations_with_images",
    "jsd_occupations_US",
    "jsd_occupations_EU",
)
VALIDATION = (
    *(f"classifier_{kind}_{a}" for a in ("gender", "age", "skin") for kind in ("accuracy", "disparity")),
    "classifier_validation_images",
)
PROVENANCE = t2i_tasks.PROVENANCE
ALL_METRICS: tuple[str, ...] = (*SCORES, *COUNTS, *VALIDATION, *PROVENANCE)
_MORE_IS_BETTER = {
    "documents",
    "images",
    "faces_detected",
    "images_with_faces",
    "images_labelled",
    "occupations_with_images",
    "jsd_occupations_US",
    "jsd_occupations_EU",
    "classifier_validation_images",
}
HIGHER_IS_BETTER = {
    name: name.endswith(("_score", "_score_ci_low", "_score_ci_high")) or name.startswith("classifier_accuracy")
    or name in _MORE_IS_BETTER
    for name in ALL_METRICS
}  # fmt: skip
#: The IRIS attributes each granular metric needs.
METRIC_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    **{f"RD_{c}{suffix}": attrs for c, attrs in COMPARISONS.items() for suffix in ("", "_floor")},
    **{name: (attribute,) for _, attribute, name in JSD_VALUES},
}


def image_columns(image: Sequence[int]) -> list[int]:
    """Indicator columns of one image record ``[status, g, a, s, faces]``: one cell per covered comparison."""
    if image[0] != STATUS_CODES["faces"]:
        return []
    labels = dict(zip(ATTRIBUTES, image[1:4], strict=True))
    columns = []
    for comparison, attrs in COMPARISONS.items():
        if any(labels[a] < 0 for a in attrs):
            continue
        cell = 0
        for a in attrs:
            cell = cell * len(CATEGORIES[a]) + labels[a]
        columns.append(_OFFSETS[comparison] + cell)
    return columns


def _columns(comparison: str) -> slice:
    return slice(_OFFSETS[comparison], _OFFSETS[comparison] + _SIZES[comparison])


def occupation_matrices(records: Sequence[dict[str, Any]]) -> dict[int, np.ndarray]:
    """Per occupation index, the (images x N_COLUMNS) indicator matrix of its images."""
    rows: dict[int, list[np.ndarray]] = {}
    for record in records:
        occupation = int(record["occupation"])
        if not 0 <= occupation < N_OCCUPATIONS:
            continue
        bucket = rows.setdefault(occupation, [])
        for image in record["images"]:
            vector = np.zeros(N_COLUMNS)
            vector[image_columns(image)] = 1.0
            bucket.append(vector)
    return {o: np.asarray(v).reshape(-1, N_COLUMNS) for o, v in rows.items()}


def stratified_resample(matrices: dict[int, np.ndarray], n_units: int, n_resamples: int, seed: int) -> np.ndarray:
    """(B, n_units, C) counts: each unit's images resampled with replacement within the unit."""
    width = next(iter(matrices.values())).shape[1] if matrices else 0
    out = np.zeros((n_resamples, n_units, width))
    for unit, matrix in matrices.items():
        if matrix.shape[0]:
            out[:, unit] = bootstrap.resample_counts(matrix, n_resamples=n_resamples, seed=seed * 1009 + unit)
    return out


@functools.cache
def _reference(region: str, attribute: str) -> tuple[np.ndarray, np.ndarray]:
    """(occupation indices, reference shares in our category order) of one region and attribute."""
    index = {o: i for i, o in enumerate(occupation_ids())}
    rows = [(index[o], [row[attribute][c] for c in CATEGORIES[attribute]])
            for o, row in real_world()[region].items() if attribute in row and o in index]  # fmt: skip
    return np.asarray([r[0] for r in rows], dtype=np.int64), np.asarray([r[1] for r in rows], dtype=np.float64)


def rd(counts: np.ndarray, comparison: str) -> np.ndarray:
    """``RD_<comparison>`` of counts (n, N_OCCUPATIONS, N_COLUMNS): shape (n,)."""
    return mean_representation_disparity_from_counts(counts[..., _columns(comparison)])


def jsd(counts: np.ndarray, region: str, attribute: str) -> np.ndarray:
    """Mean JSD over the region's occupations with a labelled image: shape (n,); NaN where none has one."""
    occupations, reference = _reference(region, attribute)
    model = counts[:, occupations, _columns(_SINGLE[attribute])]
    values = js_divergence_from_counts(model, reference[None])
    present = model.sum(axis=-1) > 0
    n = present.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(present, values, 0.0).sum(axis=-1) / np.maximum(n, 1), np.nan)


def _score(values: Sequence[float], dimension: str) -> tuple[float, float]:
    """(magnitude, score) from the granular values; NaN when any is NaN."""
    if any(math.isnan(v) for v in values):
        return math.nan, math.nan
    m = magnitude(list(values))
    return m, dimension_score(m, dimension)


def score_arrays(counts: np.ndarray) -> dict[str, np.ndarray]:
    """Per resample: the 7 RD, 5 JSD and the two dimension scores."""
    out = {f"RD_{c}": rd(counts, c) for c in COMPARISONS}
    for region, attribute, name in JSD_VALUES:
        out[name] = jsd(counts, region, attribute)
    ifs = np.stack([out[n] for n in RD_METRICS], axis=-1)
    rfs = np.stack([out[n] for _, _, n in JSD_VALUES], axis=-1)
    out["ifs_gen_score"] = np.asarray([_score(row, "IFS-Gen")[1] for row in ifs])
    out["rfs_gen_score"] = np.asarray([_score(row, "RFS-Gen")[1] for row in rfs])
    return out


@functools.lru_cache(maxsize=4096)
def _floor(n_images: int, k: int) -> float:
    return rd_finite_sample_floor(n_images, k)


def rd_floor(observed: np.ndarray, comparison: str) -> float:
    """Mean over occupations with images of the uniform generator's expected RD at their image count."""
    n = observed[0, :, _columns(comparison)].sum(axis=-1).astype(int)
    values = [_floor(int(v), _SIZES[comparison]) for v in n if v > 0]
    return float(np.mean(values)) if values else math.nan


def _single(values: Sequence[Any], what: str, task: str) -> Any:
    distinct = sorted({v for v in values if v not in (None, "")}, key=str)
    if len(distinct) > 1:
        log.warning("%s: documents disagree on the %s: %s", task, what, distinct)
        return " | ".join(map(str, distinct))
    return distinct[0] if distinct else ""


def image_counts(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The image accounting shared by both generation tasks."""
    images = [image for r in records for image in r["images"]]
    status = np.asarray([image[0] for image in images], dtype=np.int64)
    return {
        "documents": float(len(records)),
        "images": float(len(images)),
        "faces_detected": float(sum(image[4] for image in images)),
        "images_with_faces": float(np.sum(status == STATUS_CODES["faces"])),
        "no_face_images": float(np.sum(status == STATUS_CODES["no_face"])),
        "failed_images": float(np.sum(status == STATUS_CODES["failed"])),
        "missing_images": float(sum(int(r.get("missing", 0)) for r in records)),
        "documents_without_images": float(sum(not r["images"] for r in records)),
        "multi_face_images": float(sum(image[4] > 1 for image in images)),
        "images_labelled": float(sum(image[0] == STATUS_CODES["faces"] and min(image[1:4]) >= 0 for image in images)),
    }


def provenance(records: Sequence[dict[str, Any]], task: str) -> dict[str, Any]:
    """Classifier, validation metrics, data version and the documents hash shared by both generation tasks."""
    spec = _single([r.get("spec") for r in records], "classifier spec", task)
    validation = _single([r.get("validation") for r in records], "validation set", task)
    name, version = classifier_identity(spec)
    out: dict[str, Any] = dict(validation_metrics(spec, validation, ("gender", "age", "skin")) if spec else
                               validation_metrics("", "", ("gender", "age", "skin")))  # fmt: skip
    out.update(
        classifier=name,
        classifier_version=version,
        classifier_spec=spec,
        data_version=_single([r.get("data_version") for r in records], "data version", task),
        documents_sha256=hashlib.sha256("\n".join(sorted(str(r.get("doc_sha", "")) for r in records)).encode()).hexdigest()[:16],
    )  # fmt: skip
    return out


def log_nan(task: str, nan: dict[str, str]) -> None:
    if not nan:
        return
    grouped: dict[str, list[str]] = {}
    for name, reason in nan.items():
        grouped.setdefault(reason, []).append(name)
    log.warning("%s: %d metrics are NaN. %s", task, len(nan),
                "; ".join(f"{', '.join(names)}: {reason}" for reason, names in grouped.items()))  # fmt: skip


def _nan_reasons(out: dict[str, Any], counts: dict[str, float], spec: str) -> dict[str, str]:
    from generation_backends.image_outcomes import check_classifier
    from iris_tasks.gen_harness import attribute_hint, missing_attributes

    try:
        unlabelled = missing_attributes(check_classifier(spec)[2]) if spec else []
    except Exception:  # the classifier's own failure is reported by classifier_version
        unlabelled = []
    nan: dict[str, str] = {}
    for name, attributes in METRIC_ATTRIBUTES.items():
        if not math.isnan(out[name]):
            continue
        gone = [a for a in unlabelled if a in attributes]
        nan[name] = attribute_hint(spec, gone) if gone else (
            f"no occupation has an image whose face is labelled for it ({counts['images_with_faces']:.0f} images "
            f"with a face of {counts['images']:.0f})"
        )  # fmt: skip
    for name, parts in (("ifs_gen_score", RD_METRICS), ("rfs_gen_score", tuple(n for _, _, n in JSD_VALUES))):
        if math.isnan(out[name]):
            nan[name] = f"it needs all of {', '.join(parts)}"
    return nan


def compute_metrics(
    records: Sequence[dict[str, Any]], *, task: str = TASK, n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:  # fmt: skip
    """Every metric of ``iris_gen_neutral`` from its per-document records (see the module docstring)."""
    matrices = occupation_matrices(records)
    observed = np.zeros((1, N_OCCUPATIONS, N_COLUMNS))
    for occupation, matrix in matrices.items():
        observed[0, occupation] = matrix.sum(axis=0)
    point = {name: float(values[0]) for name, values in score_arrays(observed).items()}
    resampled = score_arrays(stratified_resample(matrices, N_OCCUPATIONS, n_resamples, seed))
    out: dict[str, Any] = {name: point[name] for name in RD_METRICS}
    out.update({f"{name}_floor": rd_floor(observed, name.removeprefix("RD_")) for name in RD_METRICS})
    out["ifs_gen_magnitude"], out["ifs_gen_score"] = _score([point[n] for n in RD_METRICS], "IFS-Gen")
    out.update({name: point[name] for _, _, name in JSD_VALUES})
    us = [point[n] for r, _, n in JSD_VALUES if r == "US"]
    eu = [point[n] for r, _, n in JSD_VALUES if r == "EU"]
    out["Norm_JSD_US"] = math.nan if any(map(math.isnan, us)) else magnitude(us)
    out["Norm_JSD_EU"] = math.nan if any(map(math.isnan, eu)) else magnitude(eu)
    out["rfs_gen_magnitude"], out["rfs_gen_score"] = _score([point[n] for _, _, n in JSD_VALUES], "RFS-Gen")
    for name in ("ifs_gen_score", "rfs_gen_score"):
        interval = bootstrap.percentile_interval(resampled[name], confidence=CONFIDENCE, estimate=out[name], seed=seed)
        out[f"{name}_ci_low"], out[f"{name}_ci_high"] = interval.low, interval.high
    counts = image_counts(records)
    gender = observed[0, :, _columns("gender")].sum(axis=-1)
    counts["occupations_with_images"] = float(np.sum(gender > 0))
    for region in ("US", "EU"):
        occupations, _ = _reference(region, "gender")
        counts[f"jsd_occupations_{region}"] = float(np.sum(gender[occupations] > 0))
    out.update(counts)
    prov = provenance(records, task)
    out.update(prov)
    log_nan(task, _nan_reasons(out, counts, prov["classifier_spec"]))
    return out


define_aggregations(globals(), TASK, ALL_METRICS, compute_metrics)
