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

**Intervals** (estimand: the values of the generator's population of images for these 52 prompts; the prompts
are fixed, the images per prompt are the sample) for the two scores and the 12 granular values: 1,000 bootstrap
resamples of the images **within each occupation** (stratified, :func:`metrics.bootstrap.resample_counts`), seed
0, 95 %, methods in :data:`INTERVAL_METHODS` (a score's interval is its magnitude's, mapped through the decreasing
``S exp(-K m)``). None reaches the bar in the coverage simulations (``tests/support/coverage_generation.py``), so
:func:`withheld` withholds them all, each with its reason in the task's warning.

**Coverage** (CONVENTIONS 1-2): ``ifs_gen_score_coverage`` = ``rfs_gen_score_coverage`` = images whose largest
face has all three labels / images asked for; below ``iris_min_coverage`` (default
:data:`DEFAULT_MIN_COVERAGE`) both scores and their intervals are NaN, with one warning per task naming every
problem (coverage, NaN values and why, withheld intervals, unreadable images).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse

from fairness_evals.aggregation import define_aggregations
from fairness_evals.generation import t2i_tasks
from fairness_evals.generation.image_outcomes import STATUS_CODES, classifier_identity, validation_metrics
from iris_tasks.gen_documents import ATTRIBUTES, TASKS
from iris_tasks.gen_settings import (
    DEFAULT_MIN_COVERAGE,
    MIN_COVERAGE_KEY,
    attribute_hint,
    missing_attributes,
)
from iris_tasks.vocabulary import CATEGORIES, occupation_ids, real_world
from metrics import bootstrap
from metrics.bootstrap import StatisticSpec
from metrics.iris import (
    COMPARISONS,
    DIMENSION_PARAMETERS,
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
#: Interval method per value, chosen by the coverage simulations (README table).
#: A score's interval is its magnitude's (basic), mapped through the decreasing S exp(-K m).
INTERVAL_METHODS = {"RD": "basic", "JSD": "basic", "ifs_gen_magnitude": "basic", "rfs_gen_magnitude": "basic"}

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
    "ifs_gen_score_coverage", "rfs_gen_score_coverage",
)  # fmt: skip
#: The granular values that carry an interval.
GRANULAR = (*RD_METRICS, *(name for _, _, name in JSD_VALUES))
GRANULAR_INTERVALS = tuple(f"{name}{end}" for name in GRANULAR for end in ("_ci_low", "_ci_high"))
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
SETTINGS = ("min_coverage",)
ALL_METRICS: tuple[str, ...] = (*SCORES, *GRANULAR_INTERVALS, *COUNTS, *VALIDATION, *SETTINGS, *PROVENANCE)
_MORE_IS_BETTER = {
    "documents",
    "images",
    "images_expected",
    "images_one_face",
    "faces_detected",
    "images_with_faces",
    "images_labelled",
    "occupations_with_images",
    "jsd_occupations_US",
    "jsd_occupations_EU",
    "classifier_validation_images",
}
HIGHER_IS_BETTER = {
    name: name.endswith(("_score", "_score_ci_low", "_score_ci_high", "_coverage"))
    or name.startswith("classifier_accuracy") or name in _MORE_IS_BETTER
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


@dataclass(frozen=True)
class Design:
    """The sample: one row per readable image (its indicator columns, in its occupation's block), the stratum
    (occupation) of each image, and the images asked for."""

    units: scipy.sparse.csr_array  # (images, N_OCCUPATIONS * N_COLUMNS)
    strata: np.ndarray  # (images,)

    @property
    def observed(self) -> np.ndarray:
        """Counts (1, N_OCCUPATIONS, N_COLUMNS) of the whole sample."""
        return np.asarray(self.units.sum(axis=0), dtype=np.float64).reshape(1, N_OCCUPATIONS, N_COLUMNS)


def design(records: Sequence[dict[str, Any]]) -> Design:
    """The :class:`Design` of ``iris_gen_neutral``'s records (failed images are not part of the sample)."""
    rows, cols, strata = [], [], []
    n = 0
    for record in sorted(records, key=lambda r: (int(r["occupation"]), str(r.get("doc_sha", "")))):  # arrival order
        occupation = int(record["occupation"])
        if not 0 <= occupation < N_OCCUPATIONS:
            continue
        for image in record["images"]:
            if image[0] == STATUS_CODES["failed"]:
                continue
            for column in image_columns(image):
                rows.append(n)
                cols.append(occupation * N_COLUMNS + column)
            strata.append(occupation)
            n += 1
    units = scipy.sparse.csr_array(
        (np.ones(len(rows)), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
        shape=(n, N_OCCUPATIONS * N_COLUMNS),
    )
    return Design(units, np.asarray(strata, dtype=np.int64))


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


def score_of(values: np.ndarray, dimension: str) -> np.ndarray:
    """Vectorised ``dimension_score(magnitude(v), dimension)`` over the last axis; NaN where a value is NaN."""
    k, s = DIMENSION_PARAMETERS[dimension]
    return s * np.exp(-k * np.sqrt(np.sum(values * values, axis=-1)))


def score_arrays(counts: np.ndarray) -> dict[str, np.ndarray]:
    """Per row of ``counts`` (n, N_OCCUPATIONS, N_COLUMNS): the 7 RD, 5 JSD and the two dimension scores."""
    out = {f"RD_{c}": rd(counts, c) for c in COMPARISONS}
    for region, attribute, name in JSD_VALUES:
        out[name] = jsd(counts, region, attribute)
    rd7 = np.stack([out[n] for n in RD_METRICS], axis=-1)
    jsd5 = np.stack([out[n] for _, _, n in JSD_VALUES], axis=-1)
    out["ifs_gen_magnitude"] = np.sqrt(np.sum(rd7 * rd7, axis=-1))
    out["rfs_gen_magnitude"] = np.sqrt(np.sum(jsd5 * jsd5, axis=-1))
    out["ifs_gen_score"] = score_of(rd7, "IFS-Gen")
    out["rfs_gen_score"] = score_of(jsd5, "RFS-Gen")
    return out


def statistic_specs() -> dict[str, StatisticSpec]:
    """The 12 granular values and the two scores over flat counts (n, N_OCCUPATIONS * N_COLUMNS), with methods.

    All fourteen come from one :func:`score_arrays` call per counts array (the last two arrays are remembered:
    the observed counts and the resamples).
    """
    seen: list[tuple[np.ndarray, dict[str, np.ndarray]]] = []

    def values(counts: np.ndarray) -> dict[str, np.ndarray]:
        for array, result in seen:
            if array is counts:
                return result
        result = score_arrays(counts.reshape(counts.shape[0], N_OCCUPATIONS, N_COLUMNS))
        seen[:] = [*seen[-1:], (counts, result)]
        return result

    def one(name: str) -> StatisticSpec:
        method = INTERVAL_METHODS[name] if name in INTERVAL_METHODS else INTERVAL_METHODS[name.split("_")[0]]
        upper = {"RD": 1.0, "JSD": math.log(2)}.get(name.split("_")[0], math.inf)
        return StatisticSpec(lambda c: values(c)[name], method=method, bounds=(0.0, float(upper)))  # type: ignore[arg-type]

    return {name: one(name) for name in (*GRANULAR, "ifs_gen_magnitude", "rfs_gen_magnitude")}


def intervals(data: Design, n_resamples: int, seed: int) -> dict[str, bootstrap.BootstrapInterval]:
    """Every interval of the task (before :func:`withheld`), from one stratified resampling."""
    specs = statistic_specs()
    observed = data.observed.reshape(-1)
    if not data.units.shape[0]:
        return bootstrap.intervals_from_counts(observed, observed[None], specs, confidence=CONFIDENCE, seed=seed)
    resampled = bootstrap.resample_counts(data.units, n_resamples=n_resamples, seed=seed, strata=data.strata)
    factor = t2i_tasks.stratum_correction(data.strata)
    return t2i_tasks.corrected_intervals(observed, resampled, specs, factor=factor, confidence=CONFIDENCE, seed=seed)


def withheld(observed: np.ndarray) -> dict[str, str]:
    """Values whose interval is not printed, and why (the coverage simulations; README, coverage table).

    RD and IFS-Gen: RD's finite-sample bias (``RD_<c>_floor``) shrinks like ``1/sqrt(N)`` with N images per
    occupation, and so does the spread of one occupation's RD; averaged over 52 occupations the spread shrinks
    ``sqrt(52)`` times more, so the bias is several standard errors at every N and no resampling interval covers
    the generator's RD (coverage 0-0.3 for a fair and for a realistic simulated generator). The JSD values and
    RFS-Gen: the reflected interval covers 0.89-0.99 at 20 and 30 images per occupation and 0.73-0.97 at 10; for a
    stereotyped generator it stays at 0.89-0.93, below the bar, at every size simulated. ``observed`` is kept for
    a rule that depends on the run.
    """
    del observed
    rd_reason = (
        "RD's finite-sample bias (RD_<c>_floor) exceeds its sampling spread at every number of images per prompt, so "
        "no interval covers the generator's RD (README, coverage table); compare RD_<c> with RD_<c>_floor"
    )
    jsd_reason = (
        "the reflected interval covers only 0.89-0.93 for a stereotyped generator at 10-30 images per prompt, below "
        "the 0.93 bar (README, coverage table)"
    )
    out = dict.fromkeys((*RD_METRICS, "ifs_gen_score"), rd_reason)
    out.update(dict.fromkeys((*(n for _, _, n in JSD_VALUES), "rfs_gen_score"), jsd_reason))
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
        "images_expected": float(t2i_tasks.images_expected(records)),
        **t2i_tasks.face_counts(images, status=0, faces=4, low=5),
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


def _nan_reasons(out: dict[str, Any], counts: dict[str, float], spec: str) -> dict[str, str]:
    from fairness_evals.generation.image_outcomes import check_classifier

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
        if math.isnan(out[name]) and name not in nan:
            nan[name] = f"it needs all of {', '.join(parts)}"
    return nan


def grouped(reasons: dict[str, str]) -> str:
    """``"a, b: reason; c: other reason"``."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in reasons.items():
        by_reason.setdefault(reason, []).append(name)
    return "; ".join(f"{', '.join(names)}: {reason}" for reason, names in by_reason.items())


def report_problems(task: str, nan: dict[str, str], no_interval: dict[str, str], problems: list[str],
                    records: Sequence[dict[str, Any]]) -> None:  # fmt: skip
    """One warning for the task: coverage, NaN values and why, withheld intervals, unreadable images."""
    if nan:
        problems.append(f"{len(nan)} metrics are NaN. {grouped(nan)}")
    if no_interval:
        problems.append(f"{len(no_interval)} intervals withheld (NaN). {grouped(no_interval)}")
    failed = t2i_tasks.failed_images_note(records)
    if failed:
        problems.append(failed)
    t2i_tasks.warn_once(log, task, problems)


def min_coverage(records: Sequence[dict[str, Any]], metadata: Mapping[str, Any] | None, task: str) -> float:
    """The ``iris_min_coverage`` setting: ``metadata`` over what the documents carried, else the default."""
    merged = {**t2i_tasks.record_metadata(records, task, log), **(metadata or {})}
    return t2i_tasks.min_coverage_setting(merged, MIN_COVERAGE_KEY, DEFAULT_MIN_COVERAGE)


def compute_metrics(
    records: Sequence[dict[str, Any]], *, task: str = TASK, n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED, metadata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Every metric of ``iris_gen_neutral`` from its per-document records (see the module docstring).

    ``metadata`` (``--metadata``-style keys) overrides the settings the documents carried.
    """
    threshold = min_coverage(records, metadata, task)
    data = design(records)
    observed = data.observed
    point = {name: float(values[0]) for name, values in score_arrays(observed).items()}
    out: dict[str, Any] = {name: point[name] for name in RD_METRICS}
    out.update({f"{name}_floor": rd_floor(observed, name.removeprefix("RD_")) for name in RD_METRICS})
    out["ifs_gen_magnitude"], out["ifs_gen_score"] = _score([point[n] for n in RD_METRICS], "IFS-Gen")
    out.update({name: point[name] for _, _, name in JSD_VALUES})
    us = [point[n] for r, _, n in JSD_VALUES if r == "US"]
    eu = [point[n] for r, _, n in JSD_VALUES if r == "EU"]
    out["Norm_JSD_US"] = math.nan if any(map(math.isnan, us)) else magnitude(us)
    out["Norm_JSD_EU"] = math.nan if any(map(math.isnan, eu)) else magnitude(eu)
    out["rfs_gen_magnitude"], out["rfs_gen_score"] = _score([point[n] for _, _, n in JSD_VALUES], "RFS-Gen")
    counts = image_counts(records)
    gender = observed[0, :, _columns("gender")].sum(axis=-1)
    counts["occupations_with_images"] = float(np.sum(gender > 0))
    for region in ("US", "EU"):
        occupations, _ = _reference(region, "gender")
        counts[f"jsd_occupations_{region}"] = float(np.sum(gender[occupations] > 0))
    out.update(counts)
    prov = provenance(records, task)
    out.update(prov)
    nan = _nan_reasons(out, counts, prov["classifier_spec"])
    problems: list[str] = []
    expected = int(counts["images_expected"])
    coverage = counts["images_labelled"] / expected if expected else 0.0
    out["ifs_gen_score_coverage"] = out["rfs_gen_score_coverage"] = coverage
    out["min_coverage"] = threshold
    scores = ("ifs_gen_score", "rfs_gen_score", "ifs_gen_magnitude", "rfs_gen_magnitude")
    if coverage < threshold and not all(math.isnan(out[n]) for n in scores):
        problems.append(t2i_tasks.coverage_note(
            ["ifs_gen_score", "rfs_gen_score"], int(counts["images_labelled"]), expected,
            "images with all three labels", threshold, MIN_COVERAGE_KEY,
        ))  # fmt: skip
        out.update(dict.fromkeys(scores, math.nan))
    found = intervals(data, n_resamples, seed)
    hidden = withheld(observed)
    no_interval: dict[str, str] = {}
    for name in (*GRANULAR, "ifs_gen_score", "rfs_gen_score"):
        interval = found[name.replace("_score", "_magnitude")]
        low, high = interval.low, interval.high
        if name.endswith("_score"):  # S exp(-K m) is decreasing in the magnitude m
            k, scale = DIMENSION_PARAMETERS["IFS-Gen" if name.startswith("ifs") else "RFS-Gen"]
            low, high = scale * math.exp(-k * high), scale * math.exp(-k * low)
        if math.isnan(out[name]):
            low = high = math.nan
        elif name in hidden:
            no_interval[name] = hidden[name]
            low = high = math.nan
        elif math.isnan(low) and interval.reason:
            no_interval[name] = interval.reason
        out[f"{name}_ci_low"], out[f"{name}_ci_high"] = low, high
    report_problems(task, nan, no_interval, problems, records)
    return out


define_aggregations(globals(), TASK, ALL_METRICS, compute_metrics)
