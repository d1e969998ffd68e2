"""What the image-generation tasks (Fact-or-Fair T2I, IRIS generation) share: the lmms-eval entry points, the readable
per-document record, and the assembly of coverages, intervals, nulls and provenance.

A task module binds these to its own statistics: :func:`doc_to_text` and :func:`doc_to_visual` as they are,
:class:`GenerationDocs` (``process_docs``) with its classifier and settings, :func:`process_results` with its record, the scoring module's
``aggregate_<metric>`` (:func:`fairness_evals.aggregation.metric_aggregations`) with its ``compute_metrics``. A configuration error becomes a one-document dataset whose ``doc_to_text`` raises it
(lmms-eval would otherwise retry a failing ``process_docs`` and report only "RetryError").

**The readable record** (:func:`readable_record`; package convention on compact sample logs): one per document, under
the task's carrier metric, every other headline metric holding ``None`` (:func:`fairness_evals.aggregation.payload`):
``id`` (the document), ``classifier`` (the spec that labelled the faces), ``images`` (one line per image the response
named: ``"<file>: <what was read>"``: the labels of its faces, ``no face``, or ``failed (<why>)``), ``rule`` (how the
task counts them) and ``record``, the numbers the aggregation reads (the task's image records, the images asked for,
and the run's settings). Every field keeps one JSON type across documents (W&B's tables require it).

**The scores' assembly** (:func:`compute_metrics`, with each task's :class:`Scoring`): :func:`apply_coverage`
(``<score>_coverage`` and the null below the minimum),
:func:`image_intervals` (the stratified bootstrap of the images within their prompts, spread-corrected),
:func:`report_intervals` (the interval ends of every statistic that has one, null where the value is, where the
coverage simulations withhold it, or where the method gave none, each with its reason in one
:class:`~fairness_evals.notes.Notes`), :func:`score_interval` (a dimension score's interval from its magnitude's);
:func:`image_counts` (the image accounting), :func:`provenance` (classifier, data version, documents hash, settings).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fairness_evals import aggregation, evidence
from fairness_evals.aggregation import provenance_value
from fairness_evals.generation.documents import documents_sha256
from fairness_evals.generation.image_outcomes import (
    STATUS_CODES,
    check_classifier,
    classifier_identity,
    classifier_setting,
    classify_response,
    validation_setting,
)
from fairness_evals.notes import Notes, plural
from fairness_evals.statistics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE, Coverage, Statistic

ERROR_FIELD = "error"
#: The document field carrying the run's settings (``--metadata``-style keys) from ``process_docs`` to the scores.
METADATA_FIELD = "fairness_evals_metadata"
#: The distribution of faces per image (images without a face are ``no_face_images``) and the faces whose
#: detection score is low (:data:`fairness_evals.faces.detection.LOW_CONFIDENCE`).
FACE_COUNTS = ("images_one_face", "images_two_faces", "images_three_or_more_faces", "low_confidence_faces")
#: The image and document counts every generation task reports (each task adds its own after these).
IMAGE_COUNTS = (
    "documents",
    "images",
    "images_expected",
    "faces_detected",
    "images_with_faces",
    "no_face_images",
    "failed_images",
    "missing_images",
    "documents_without_images",
    *FACE_COUNTS,
)
#: What every generation task records of how its numbers were made (:func:`provenance`; not metrics).
PROVENANCE = ("classifier", "classifier_version", "classifier_spec", "data_version", "documents_sha256")


# --------------------------------------------------------------------------- settings
def read_metadata(keys: Sequence[str], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings of a harness run: for each ``--metadata`` key (``iris_min_coverage``...) the environment variable
    of the same name in capitals (``IRIS_MIN_COVERAGE``), when set; lmms-eval 0.7.3 passes no task arguments (an
    lmms-eval ``--config`` file can set them under ``env:``). A number is read as a float, anything else as text."""
    env = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    for key in keys:
        raw = env.get(key.upper(), "").strip()
        if not raw:
            continue
        try:
            out[key] = float(raw)
        except ValueError:
            out[key] = raw
    return out


def doc_metadata(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The run's settings a document carries (:data:`METADATA_FIELD`, a JSON object as text); ``{}`` when none."""
    raw = doc.get(METADATA_FIELD) or "{}"
    try:
        value = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (json.JSONDecodeError, TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def record_metadata(records: Sequence[Mapping[str, Any]], task: str, log: logging.Logger) -> dict[str, Any]:
    """The settings the records carried (all records of one run carry the same; a mix is warned about and the first
    record's are used)."""
    seen = []
    for record in records:
        value = record.get("metadata") or {}
        if value not in seen:
            seen.append(value)
    if len(seen) > 1:
        log.warning("%s: documents carry different settings %s; using the first", task, seen[:3])
    return dict(seen[0]) if seen else {}


def min_coverage_setting(metadata: Mapping[str, Any], key: str, default: float) -> float:
    """``metadata[key]`` as a share in [0, 1] (``default`` when absent); ``ValueError`` naming the key otherwise."""
    value = metadata.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{key} must be a number in [0, 1] (the share of inputs a score needs), got {value!r}")
    return float(value)


def choice_setting(metadata: Mapping[str, Any], key: str, choices: Sequence[str]) -> str:
    """``metadata[key]``, one of ``choices`` (the first is the default); ``ValueError`` naming the key otherwise."""
    value = metadata.get(key, choices[0])
    if value not in choices:
        raise ValueError(f"{key} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return str(value)


# --------------------------------------------------------------------------- lmms-eval entry points
def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    if doc.get(ERROR_FIELD):
        raise ValueError(doc[ERROR_FIELD])
    return doc["prompt"]


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """No input image: text-to-image (lmms-eval's convention)."""
    if doc.get(ERROR_FIELD):
        raise ValueError(doc[ERROR_FIELD])
    return []


def error_dataset(message: str, log: logging.Logger) -> Any:
    """The one-document dataset that carries ``message`` to :func:`doc_to_text` (logged on ``log`` too)."""
    import datasets

    log.error(message)
    return datasets.Dataset.from_list([{ERROR_FIELD: message}])


@dataclasses.dataclass(frozen=True)
class GenerationDocs:
    """What lmms-eval's ``process_docs`` of one benchmark's generation tasks needs: the task of each kind and its
    ``documents(kind)``, the ``settings`` keys (:func:`read_metadata`) and their ``check`` (raises ``ValueError``
    naming a bad key), the face classifier's environment variable, the validation set's setting (its environment
    variable, or the shared one), and ``warning(spec, attributes it predicts)``: what the classifier cannot label
    (None: nothing to say)."""

    tasks: Mapping[str, str]
    documents: Callable[[str], Sequence[dict[str, Any]]]
    settings: Sequence[str]
    check: Callable[[dict[str, Any]], Any]
    classifier_env: str
    validation_key: str
    warning: Callable[[str, frozenset[str]], str | None]
    log: logging.Logger

    def hook(self, kind: str) -> Callable[[Any], Any]:
        """The ``process_docs`` entry point of the task of ``kind`` (the YAML names it)."""

        def process_docs(dataset: Any) -> Any:
            return self.process_docs(dataset, kind)

        process_docs.__doc__ = f"lmms-eval ``process_docs`` of ``{self.tasks[kind]}``."
        return process_docs

    def process_docs(self, dataset: Any, kind: str) -> Any:
        """The shipped prompt file must hold the task's documents; the face classifier is built before any image is
        generated; every document gets the classifier spec and the run's settings, the labelled validation set
        among them. A configuration error becomes :func:`error_dataset`."""
        task, expected, log = self.tasks[kind], self.documents(kind), self.log
        shipped = [(row.get("id"), row.get("prompt")) for row in dataset if row.get("task") == task]
        if shipped != [(d["id"], d["prompt"]) for d in expected]:
            return error_dataset(f"{task}: the prompt file lmms-eval loaded differs from the package's documents", log)
        try:
            metadata = read_metadata(self.settings)
            self.check(metadata)
        except ValueError as error:
            return error_dataset(f"{task}: {error}", log)
        spec, source = classifier_setting(self.classifier_env)
        try:
            _, _, attributes = check_classifier(spec)
        except Exception as error:  # bad spec, missing weights or package: stop before any image is generated
            return error_dataset(f"{task}: cannot build the face classifier {spec!r} (from {source}): {error}", log)
        message = self.warning(spec, attributes)
        if message:
            log.warning("%s: %s", task, message)
        validation = validation_setting(self.validation_key.upper())
        if validation:
            metadata[self.validation_key] = validation
        import datasets

        extra = {"classifier_spec": spec, METADATA_FIELD: json.dumps(metadata, sort_keys=True)}
        return datasets.Dataset.from_list([{**doc, **extra} for doc in expected])


def image_line(image: Any, labels: Callable[[Any], str]) -> str:
    """One image of the readable record: ``"<file>: <labels>"`` for an image with faces (``labels(image)``),
    ``"<file>: no face"``, or ``"<file>: failed (<why>)"``."""
    name = Path(str(image.path)).name
    if image.status == "failed":
        return f"{name}: failed ({image.error or 'unreadable'})"
    if image.status == "no_face":
        return f"{name}: no face"
    return f"{name}: {labels(image)}"


def outcome_record(doc: Mapping[str, Any], outcome: Any, images: list[list[int]]) -> dict[str, Any]:
    """What every generation record holds besides the task's own fields: its image records, the images asked for
    (-1: the response did not say; the images missing follow, :func:`missing_of`) and the run's settings from the
    document."""
    expected = outcome.response.expected
    return {"images": images, "expected": -1 if expected is None else int(expected), "metadata": doc_metadata(doc)}


def readable_record(doc: Mapping[str, Any], lines: list[str], rule: str, record: dict[str, Any]) -> dict[str, Any]:
    """The document's readable record (see the module docstring)."""
    return {
        "id": str(doc.get("id", "")),
        "classifier": str(doc.get("classifier_spec", "")),
        "images": lines,
        "rule": rule,
        "record": record,
    }


def process_results(
    doc: dict[str, Any],
    results: Sequence[Any],
    *,
    readable: Callable[[dict[str, Any], Any], dict[str, Any]],
    failure: Callable[[dict[str, Any], Exception], dict[str, Any]],
    carrier: str,
    names: Sequence[str],
) -> dict[str, Any]:
    """lmms-eval ``process_results``: classify the response's images (thread-safe, never raises).

    The document's readable record (``readable(doc, outcome)``, or ``failure(doc, error)`` when it cannot be scored
    at all) goes under ``carrier``, every other metric of ``names`` holds ``None``
    (:func:`fairness_evals.aggregation.payload`).
    """
    reply = results[0] if results else None
    try:
        outcome = classify_response(reply, doc["classifier_spec"], doc_index=int(doc["doc_index"]))
        record = readable(doc, outcome)
    except Exception as error:  # a malformed document: counted as a document without images, never a crash
        record = failure(doc, error)
    return aggregation.payload(carrier, record, names)


def failure_readable(doc: Mapping[str, Any], error: Exception, record: dict[str, Any], log: logging.Logger) -> dict:
    """The readable record of a document whose response could not be scored at all (a malformed document)."""
    log.error("%s: cannot score document %s: %r", doc.get("task") or "generation", doc.get("id"), error)
    return readable_record(doc, [], f"not scored: {type(error).__name__}: {error}", record)


def records_of(items: Sequence[Any], benchmark: str, carrier: str) -> list[dict[str, Any]]:
    """The records of the carrier's items (readable records), each with ``failed``, the images its item says failed
    (:func:`failed_of`); ``ValueError`` when they are not this version's."""
    try:
        return [{**item["record"], "failed": failed_of([item])} for item in items]
    except (TypeError, KeyError, ValueError):
        raise ValueError(
            f"{benchmark}: the {carrier} items are not this version's readable records (run the task again)"
        ) from None


def classifier_of(items: Sequence[Mapping[str, Any]]) -> str:
    """The classifier spec the readable records name (the first; all of one run name the same)."""
    return next((str(item.get("classifier")) for item in items if item.get("classifier")), "")


def failed_of(items: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """``[file, why]`` of every image the readable records say failed (:func:`image_line`'s ``failed (why)``)."""
    out = []
    for item in items:
        for line in item.get("images") or ():
            name, _, rest = str(line).partition(": ")
            if rest.startswith("failed (") and rest.endswith(")"):
                out.append([name, rest[len("failed (") : -1]])
    return out


# --------------------------------------------------------------------------- counts
@dataclasses.dataclass(frozen=True)
class Request:
    """What :func:`compute_metrics` was asked, as a task's ``scores`` reads it."""

    task: str
    metadata: Mapping[str, Any] | None
    classifier: str | None
    n_resamples: int
    seed: int
    notes: Notes


@dataclasses.dataclass(frozen=True)
class Scoring:
    """One generation task's part of :func:`compute_metrics`: its default task name, the statistics whose declared
    minima its estimates obey, its logger, and ``scores``, every value of the task from its records and the
    :class:`Request` (values, counts, coverages, intervals and diagnostics, the reason for each null noted in
    ``request.notes``)."""

    task: str
    statistics: Sequence[Statistic]
    log: logging.Logger
    scores: Callable[[Sequence[Mapping[str, Any]], Request], dict[str, Any]]


def compute_metrics(
    scoring: Scoring,
    records: Sequence[Mapping[str, Any]],
    *,
    task: str | None = None,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    metadata: Mapping[str, Any] | None = None,
    notes: Notes | None = None,
    classifier: str | None = None,
    design_size: int | None = None,
) -> dict[str, float]:
    """Every statistic of one generation task (``task``, default ``scoring.task``) from its per-document records:
    ``scoring.scores``, then the note of the images that could not be read, the declared minima of the estimates
    (:func:`fairness_evals.evidence.enforce_estimates`) and the task's one warning.

    ``metadata`` (``--metadata``-style keys) overrides the settings the records carried; ``classifier`` is the spec
    that labelled the faces (else the one the records carry). ``design_size``: the prompts of the task's design (the
    harness's and ``score``'s callers pass it; None: the records are the whole design); from fewer (a ``--limit``
    run) no value of the design is printed. The reason for every null is noted in ``notes`` (a new
    :class:`~fairness_evals.notes.Notes` when None) and logged as the task's one warning."""
    task = task or scoring.task
    notes = notes if notes is not None else Notes(task)
    out = scoring.scores(records, Request(task, metadata, classifier, n_resamples, seed, notes))
    failed_images_note([item for r in records for item in r.get("failed", ())], notes)
    evidence.enforce_estimates(out, scoring.statistics, evidence.design_counts(len(records), design_size), notes)
    notes.warn(scoring.log)
    return out


def image_counts(records: Sequence[Mapping[str, Any]], *, faces: int, low: int) -> dict[str, float]:
    """:data:`IMAGE_COUNTS` of the records, whose image records hold the status first, the faces found at ``faces``
    and the low-confidence faces at ``low``: ``documents`` = records, ``images`` = images returned,
    ``images_expected`` = images asked for (:func:`images_expected`), ``faces_detected`` = faces found, the images by
    status (with faces, without, failed), ``missing_images`` = asked for but not returned, the documents without an
    image, the images with 1, 2 and 3 or more faces and the low-confidence faces."""
    images = [image for r in records for image in r["images"]]
    status = [int(image[0]) for image in images]
    found = [int(image[faces]) for image in images if image[0] == STATUS_CODES["faces"]]
    return {
        "documents": float(len(records)),
        "images": float(len(images)),
        "images_expected": float(images_expected(records)),
        "faces_detected": float(sum(int(image[faces]) for image in images)),
        "images_with_faces": float(status.count(STATUS_CODES["faces"])),
        "no_face_images": float(status.count(STATUS_CODES["no_face"])),
        "failed_images": float(status.count(STATUS_CODES["failed"])),
        "missing_images": float(sum(missing_of(r) for r in records)),
        "documents_without_images": float(sum(not r["images"] for r in records)),
        "images_one_face": float(sum(n == 1 for n in found)),
        "images_two_faces": float(sum(n == 2 for n in found)),
        "images_three_or_more_faces": float(sum(n >= 3 for n in found)),
        "low_confidence_faces": float(sum(int(image[low]) for image in images if len(image) > low)),
    }


def missing_of(record: Mapping[str, Any]) -> int:
    """Images a record's response did not return: its ``missing`` when it says, else ``max(0, expected - returned)``
    (0 when the response did not say how many were asked)."""
    if "missing" in record:
        return int(record["missing"])
    expected = _asked(record)
    return 0 if expected is None else max(0, expected - len(record.get("images", ())))


def _asked(record: Mapping[str, Any]) -> int | None:
    expected = record.get("expected")
    return None if expected is None or int(expected) < 0 else int(expected)


def images_expected(records: Sequence[Mapping[str, Any]]) -> int:
    """Images the run asked for: per document the number the response said it was asked for, else the number
    it returned; a document that said neither and returned nothing counts the most any document was asked for."""
    fallback = max((n for n in map(_asked, records) if n is not None), default=0)
    total = 0
    for record in records:
        expected, returned = _asked(record), len(record.get("images", ()))
        total += max(expected, returned) if expected is not None else (returned or fallback)
    return total


# --------------------------------------------------------------------------- coverage, intervals, nulls
def apply_coverage(
    out: dict[str, Any],
    statistics: Sequence[Statistic],
    coverage: Coverage,
    counted: int,
    expected: int,
    *,
    threshold: float,
    notes: Notes,
    **values: str,
) -> float:
    """``<name>_coverage = counted / expected`` for every member of the statistics whose own coverage ``coverage``
    is (0 when nothing was asked for; with ``values``, e.g. ``axis="gender"``, the members whose placeholders take
    them): the share of the images asked for that counted, as the coverage says. Below ``threshold`` every statistic
    the coverage nulls (:func:`fairness_evals.evidence.covered_names`) is null with the reason noted
    (:func:`fairness_evals.evidence.enforce_coverage`, the rule every benchmark shares)."""
    share = counted / expected if expected else 0.0
    for _, member in evidence.covered_members(statistics, coverage, own=True, **values):
        out[f"{member}_coverage"] = share
    nulled = evidence.covered_names(statistics, coverage, **values)
    evidence.enforce_coverage(out, nulled, coverage, counted, expected, threshold, notes, **values)
    return share


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def stratum_correction(strata: Any) -> float:
    """``sqrt(n / (n - 1))`` for the median stratum size n (1 when n < 2).

    Resampling ``n`` images from a prompt's ``n`` gives its mean a variance ``(n - 1) / n`` of the unbiased one
    (Davison & Hinkley 1997, eq. 3.16): 5 % too small at 20 images per prompt, 20 % at 5. Spreading the
    bootstrap values around the estimate by this factor removes that (:func:`corrected_intervals`).
    """
    import numpy as np

    codes = np.asarray(strata)
    if codes.size == 0:
        return 1.0
    n = float(np.median(np.unique(codes, return_counts=True)[1]))
    return math.sqrt(n / (n - 1.0)) if n >= 2 else 1.0


def corrected_intervals(
    observed: Any, resampled: Any, specs: Mapping[str, Any], *, factor: float, confidence: float, seed: int
) -> dict[str, Any]:
    """Each statistic's interval from bootstrap values spread around its estimate: ``v' = t + factor (v - t)`` for
    every resampled value ``v`` (or, for ``max_t``, every component) and the estimate ``t`` on the observed counts
    (``factor`` from :func:`stratum_correction`), then the statistic's own method of :mod:`metrics.intervals`
    (percentile, basic = ``2 t - quantiles``, or max-t) on the spread values."""
    import numpy as np

    from metrics.intervals import interval, max_t_interval

    obs = np.asarray(observed, dtype=np.float64)[None, :]
    out = {}
    for name, spec in specs.items():
        point = np.asarray(spec.function(obs), dtype=np.float64)[0]
        values = np.asarray(spec.function(resampled), dtype=np.float64)
        with np.errstate(invalid="ignore"):
            spread = point + (values - point) * factor
        if spec.method == "max_t":
            out[name] = max_t_interval(
                point, spread, confidence=confidence, seed=seed, bounds=spec.bounds, transform=spec.transform
            )
        else:
            out[name] = interval(
                spec.method, spread, estimate=float(point), confidence=confidence, seed=seed, bounds=spec.bounds
            )
    return out


def image_intervals(
    design: Any, specs: Mapping[str, Any], *, n_resamples: int, seed: int, resample: bool = True
) -> dict[str, Any]:
    """Every interval of a task from one stratified bootstrap of its images (the units of its declared
    :class:`metrics.bootstrap.Design`: one row of counts per image, its prompt the stratum), spread by
    :func:`stratum_correction` (:func:`corrected_intervals`). Without images, or with ``resample=False``, the
    estimates on the observed counts only."""
    observed = design.observed()
    if resample and len(design.units):
        resampled, factor = design.resample(n_resamples, seed), stratum_correction(design.strata)
    else:
        resampled, factor = observed[None, :], 1.0
    return corrected_intervals(observed, resampled, specs, factor=factor, confidence=CONFIDENCE, seed=seed)


def score_interval(interval: Any, dimension: str) -> Any:
    """A dimension score's interval from its magnitude's: the score ``s = S exp(-K m)`` is decreasing in ``m``, so
    ``s_low = S exp(-K high)`` and ``s_high = S exp(-K low)`` of the magnitude's ``[low, high]`` (paper Table 9's K
    and S). An interval with a missing end is no interval: both ends are then NaN (a magnitude interval of the
    generation tasks never has one end only, and a half-known score interval would read as a bound)."""
    from metrics.iris import DIMENSION_PARAMETERS

    k, scale = DIMENSION_PARAMETERS[dimension]
    estimate = interval.estimate if _nan(interval.estimate) else scale * math.exp(-k * interval.estimate)
    if math.isnan(interval.low) or math.isnan(interval.high):
        return dataclasses.replace(interval, estimate=estimate, low=math.nan, high=math.nan)
    return dataclasses.replace(
        interval, estimate=estimate, low=scale * math.exp(-k * interval.high), high=scale * math.exp(-k * interval.low)
    )


def withheld_intervals(
    statistics: Iterable[Statistic], counts: Sequence[float] | None = None, members: Iterable[str] | None = None
) -> dict[str, str]:
    """The members of ``statistics`` (those of ``members`` where given) whose interval is not printed, and why: never
    where the interval declares so (``Interval.withheld``); else, where ``counts`` are given (per prompt, the images
    the minimum counts), below the interval's declared minimum (:func:`fairness_evals.evidence.interval_shortfall`).
    The coverage simulations back what is printed (README, coverage table)."""
    wanted = None if members is None else set(members)
    out = {}
    for statistic in statistics:
        for member in statistic.members if statistic.interval is not None else ():
            if wanted is not None and member not in wanted:
                continue
            if statistic.interval.withheld:
                out[member] = statistic.interval.withheld
            elif counts is not None and (why := evidence.interval_shortfall(statistic, member, counts)):
                out[member] = f"{why} (README, coverage table; generate more images per prompt)"
    return out


def report_intervals(
    out: dict[str, Any], found: Mapping[str, Any], names: Sequence[str], *, withheld: Mapping[str, str], notes: Notes
) -> None:
    """``<name>_ci_low`` and ``<name>_ci_high`` of every name from its interval ``found[name]``: null where the value is
    (with the value's reason), where the coverage simulations withhold it (``withheld``: name -> why) or where the
    method gave none (with the method's reason), each reason noted."""
    for name in names:
        interval = found[name]
        ends = [f"{name}_ci_low", f"{name}_ci_high"]
        low, high = interval.low, interval.high
        if _nan(out[name]):
            low = high = math.nan
            if name in notes.reasons:
                notes.null(ends, notes.reasons[name])
        elif name in withheld:
            low = high = math.nan
            notes.null(ends, withheld[name])
        elif math.isnan(low) and interval.reason:
            notes.null(ends, interval.reason)
        out[ends[0]], out[ends[1]] = low, high


def failed_images_note(failed: Sequence[Sequence[str]], notes: Notes, shown: int = 3) -> None:
    """Note "N images were unreadable and left out: file (why); ..." (nothing when all were read)."""
    if not failed:
        return
    listed = "; ".join(f"{path} ({reason})" for path, reason in list(failed)[:shown])
    more = f"; and {len(failed) - shown} more (the samples log names each)" if len(failed) > shown else ""
    verb = "was" if len(failed) == 1 else "were"
    notes.note(f"{plural(len(failed), 'image')} {verb} unreadable and left out (failed_images): {listed}{more}")


# --------------------------------------------------------------------------- documents and provenance
def provenance(docs: Iterable[Mapping[str, Any]], task: str) -> dict[str, Any]:
    """How one generation run's numbers were made, from its documents (as ``process_docs`` made them): the face
    classifier (the name and version of the instance that labelled the faces, and its spec), the data version and the
    documents hash (:data:`PROVENANCE`), each the value the documents share (NaN, with a warning, where they differ
    or there is none; :func:`fairness_evals.aggregation.provenance_value`)."""
    docs = list(docs)
    spec = provenance_value("classifier_spec", [[d.get("classifier_spec")] for d in docs], task=task)
    name, version = classifier_identity(spec) if isinstance(spec, str) else ("", "")
    return {
        "classifier": name,
        "classifier_version": version,
        "classifier_spec": spec,
        "data_version": provenance_value("data_version", [[d.get("data_version")] for d in docs], task=task),
        "documents_sha256": documents_sha256(d.get("doc_sha", "") for d in docs),
    }


def logged_documents(
    rows: Iterable[Mapping[str, Any]], carrier: str, documents: Mapping[str, Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The readable records of a task's ``--log_samples`` lines (under ``carrier``), and the documents they name as
    ``process_docs`` made them (the package's document with the classifier and the settings the record carries);
    a line without a readable record, or naming no document of ``documents``, is a ``ValueError`` naming it."""
    items, docs = [], []
    for number, row in enumerate(rows, start=1):
        item = row.get(carrier)
        if not isinstance(item, Mapping) or not isinstance(item.get("record"), Mapping):
            raise ValueError(f"line {number}: no readable record under {carrier} (task version 3 or later)")
        doc = documents.get(str(item.get("id")))
        if doc is None:
            raise ValueError(f"line {number}: {item.get('id')!r} is not a document of this task")
        items.append(dict(item))
        metadata = json.dumps(item["record"].get("metadata") or {}, sort_keys=True)
        docs.append({**doc, "classifier_spec": item.get("classifier", ""), METADATA_FIELD: metadata})
    return items, docs
