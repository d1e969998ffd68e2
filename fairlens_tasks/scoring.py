"""Per-document records and the lmms-eval aggregation of the FairLens closed-ended tasks.

``process_results`` normalises one reply (:mod:`fairlens_tasks.normalise`) and returns the document's readable
record (:func:`readable_record`: the document id, the option the reply maps to, the rule that decided, and
``record``, the ten small integers of :data:`RECORD_FIELDS` the aggregation reads) under the carrier metric
``unparsed_rate``, and ``None`` under each other headline metric (:mod:`fairness_evals.aggregation`). Every
metric of the YAML names its own aggregation, ``aggregate_<metric>``: the carrier's items give
:func:`compute_metrics` once per task run, which computes every statistic of :mod:`fairlens_tasks.statistics` from
:mod:`metrics.fairlens` (rates, gaps, ratios) with seeded bootstrap intervals from :mod:`metrics.bootstrap` (images
resampled within their sampling strata). ``fairness-evals score fairlens`` calls the same :func:`compute_metrics`, so
both report identical numbers under identical names; the harness prints the headline statistics only, ``score``
writes them all.

What each metric is, its formula and its paper section: ``fairness-evals metrics NAME`` (README "Metrics"). The
rules for nulls (fairlens_tasks/README.md, "Coverage and thresholds" and "Intervals"): below
``fairlens_min_coverage`` the parity and association scores are null with their intervals; an interval the coverage
simulations do not back is null and its estimate stays (:mod:`fairlens_tasks.withheld`); every reason is noted in
the task's :class:`~fairness_evals.notes.Notes` and logged as one warning. The corpus provenance (seed, sample
fraction, corpus hash, data version, image accounting) is not a metric: :func:`provenance` reads it from the
documents.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairlens_tasks import statistics as table
from fairlens_tasks.labels import AGE_BANDS, ATTRIBUTES, GENDERS, GROUPS, RACES, metric_group
from fairlens_tasks.normalise import Normalised, normalise
from fairlens_tasks.position_bias import position_diagnostics
from fairlens_tasks.prompts import prompt_for
from fairlens_tasks.questions import CANNOT_TELL, DOMAINS, closed_questions
from fairlens_tasks.settings import (
    POSITION_NULLS_KEY,
    Threshold,
    changed,
    coverage_threshold,
    position_nulls_on,
    recorded,
)
from fairlens_tasks.withheld import apply_minima, finish
from fairness_evals import aggregation, evidence, position
from fairness_evals.aggregation import provenance_value
from fairness_evals.notes import Notes
from fairness_evals.records import records_array
from fairness_evals.statistics import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CONFIDENCE,
    Statistic,
)
from metrics import bootstrap
from metrics import fairlens as fl
from metrics.bootstrap import StatisticSpec

log = logging.getLogger("fairness_evals.fairlens")

RECORD_FIELDS = (
    "question",  # index of the closed item, 0..37
    "status",  # 0 parsed, 1 unparsed
    "correct",  # 1 when the answer is the sound answer
    "adverse",  # 1 adverse answer, 0 not, -1 the item has no adverse label
    "non_neutral",  # 1 parsed and not "Cannot tell", 0 not, -1 the item is not association-tagged
    "gender",  # index into labels.GENDERS
    "race",  # index into labels.RACES
    "age_band",  # index into labels.AGE_BANDS
    "image",  # the image's unit number in the corpus (the bootstrap resamples these)
    "option",  # index of the chosen option in the item's list, -1 unparsed (position diagnostics)
)
_F = {name: i for i, name in enumerate(RECORD_FIELDS)}
_ATTRIBUTE_COLUMN = {"gender": _F["gender"], "race": _F["race"], "age": _F["age_band"]}

CARRIER = table.CARRIER
MIN_COVERAGE_KEY = table.THRESHOLD

#: The corpus provenance every document carries (:func:`provenance`); not metrics.
PROVENANCE = (
    "seed", "sample_fraction", "corpus_sha256", "data_version", "images_found", "images_loaded",
    "images_skipped", "images_duplicate", "images_eligible", "images_sampled", "groups_empty",
)  # fmt: skip

#: The provenance each logged record carries (lmms-eval logs no document): what names the corpus, its sample and the
#: item data; then the scoring settings the run changed from their defaults (:func:`fairlens_tasks.settings.changed`);
#: the corpus counts come with ``fairness-evals score fairlens --corpus`` (:func:`provenance`).
RECORD_PROVENANCE = ("corpus_sha256", "seed", "sample_fraction", "data_version")

_DOMAIN = table.task_of("fairlens_hiring")  # the three domain tasks declare the same statistics
_GROUP = table.task_of("fairlens")


def _members(*statistics: Statistic) -> tuple[str, ...]:
    return tuple(member for s in statistics for member in s.members)


#: Every statistic of a domain task, with its derived names, in the order ``score`` writes them.
RECORD_METRICS: tuple[str, ...] = tuple(_DOMAIN.all_metrics())
ALL_METRICS = RECORD_METRICS
#: What ``process_results`` returns besides the carrier: the harness's metric list (the YAML's, tested equal).
HEADLINE_METRICS: tuple[str, ...] = tuple(name for name, _ in _DOMAIN.harness_metrics())
#: The statistics with a bootstrap interval.
WITH_INTERVALS = _members(*(s for s in table.CLOSED_STATISTICS if s.interval is not None))
#: What the group ``fairlens`` reports (its headline roll-ups and, for ``score``, the rest).
ROLLUPS: tuple[str, ...] = tuple(_GROUP.all_metrics())


# --------------------------------------------------------------------------- records
def record_for(doc: Mapping[str, Any], answer: Normalised) -> list[int]:
    """The ten-integer record (:data:`RECORD_FIELDS`) of one document and its normalised answer."""
    option = answer.option
    adverse = -1 if not doc["adverse"] else int(option is not None and option in doc["adverse"])
    non_neutral = -1 if not doc["association"] else int(option is not None and option != CANNOT_TELL)
    return [
        int(doc["question_index"]),
        0 if option is not None else 1,
        int(option is not None and option == doc["sound_answer"]),
        adverse,
        non_neutral,
        GENDERS.index(doc["gender"]),
        RACES.index(doc["race"]),
        AGE_BANDS.index(doc["age_band"]),
        int(doc["image_unit"]),
        list(doc["options"]).index(option) if option is not None else -1,
    ]


def readable_record(doc: Mapping[str, Any], answer: Normalised) -> dict[str, Any]:
    """The document's record as it is logged: ``id`` (the document it answers), ``option`` (the option the reply
    maps to, ``""`` when unparsed), ``rule`` (the normalisation rule that decided) and ``record`` (the
    :data:`RECORD_FIELDS` integers the aggregation reads) and ``provenance`` (:data:`RECORD_PROVENANCE`: lmms-eval logs
    no document). Every field keeps one JSON type across documents, as W&B's tables require."""
    try:
        record = record_for(doc, answer)
    except Exception as error:  # a malformed document; the record marks the answer unparsed
        log.error("fairlens: cannot score document %s: %r", doc.get("id"), error)
        question, unit = int(doc.get("question_index", 0) or 0), int(doc.get("image_unit", 0) or 0)
        record = [question, 1, 0, -1, -1, 0, 0, 0, unit, -1]
    return {
        "id": str(doc.get("id") or ""), "option": answer.option or "", "rule": answer.rule, "record": record,
        "provenance": {**{name: doc.get(name) for name in RECORD_PROVENANCE}, **changed(doc, "closed")},
    }  # fmt: skip


def process_results(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """lmms-eval ``process_results`` (thread-safe, never raises): ``results[0]`` is the reply. The readable record
    under the carrier ``unparsed_rate`` (first), ``None`` under each other headline metric."""
    answer = normalise(aggregation.reply_of(results), doc.get("options") or [])
    return aggregation.payload(CARRIER, readable_record(doc, answer), HEADLINE_METRICS)


def logged_record(sample: Mapping[str, Any]) -> tuple[str, list[int]] | None:
    """(document id, record) of one ``--log_samples`` line of a closed task, or None when it holds none: the carrier's
    readable record (task version 3), or a version 2 line's ``fairlens_answer`` id and ``soundness`` record."""
    carried = sample.get(CARRIER)
    if isinstance(carried, Mapping):
        doc_id, record = carried.get("id"), carried.get("record")
    else:
        answer = sample.get("fairlens_answer")
        doc_id, record = (answer.get("id") if isinstance(answer, Mapping) else None), sample.get("soundness")
    if not doc_id or not isinstance(record, list):
        return None
    return str(doc_id), record


def provenance(docs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The corpus provenance of the documents scored, ``{name: value}`` for :data:`PROVENANCE`: the value the
    documents share (NaN, with a warning, where they disagree or there is none)."""
    docs = list(docs)
    task = str(docs[0].get("task") or "fairlens") if docs else "fairlens"
    return {name: provenance_value(name, [[doc.get(name)] for doc in docs], task=task) for name in PROVENANCE}


# --------------------------------------------------------------------------- prompts and visuals
def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    error = doc.get("fairlens_error")
    if error:
        raise ValueError(error)
    return prompt_for(doc["question_id"])


def doc_to_target(doc: dict[str, Any]) -> str:
    return doc.get("sound_answer") or ""


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The document's image as one decoded RGB ``PIL.Image`` (through the bounded decode cache)."""
    from fairlens_tasks import images

    if doc.get("hf_dataset"):
        split = doc.get("hf_split") or None
        return [images.load_hf(doc["hf_dataset"], split, doc["hf_image_column"], int(doc["image_index"]))]
    return [images.load_file(doc["image"])]


def doc_to_messages(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> list[dict]:
    """One user turn with the image and the prompt. ``image_position: after`` puts the text first (the
    released LLaVA-1.6 script's order); the default, ``before``, is the other released scripts' order."""
    text = {"type": "text", "text": doc_to_text(doc)}
    visuals = [{"type": "image", "url": image} for image in doc_to_visual(doc)]
    after = (lmms_eval_specific_kwargs or {}).get("image_position", "before") == "after"
    return [{"role": "user", "content": [text, *visuals] if after else [*visuals, text]}]


# --------------------------------------------------------------------------- metrics
def _records_array(records: Sequence[Sequence[int]] | np.ndarray) -> np.ndarray:
    return records_array(records, len(RECORD_FIELDS))


def task_of(records: np.ndarray) -> str:
    questions = np.unique(records[:, _F["question"]]) if len(records) else []
    domains = sorted({closed_questions()[int(i)].domain for i in questions})
    return f"fairlens_{domains[0]}" if len(domains) == 1 else "fairlens"


class _Layout:
    """Cell layout of the unit x cell count matrix the bootstrap resamples.

    Pooled cells: correct, answers, association non-neutral, association answers, then the parsed answers to the
    adverse-labelled and to the association-tagged items (the coverage numerators). Then, for each of the 10
    groups (gender, race, age band in order): correct, answers, adverse, adverse answers, non-neutral,
    association answers.
    """

    POOLED = ("correct", "answers", "non_neutral", "assoc_answers", "adverse_parsed", "assoc_parsed")
    PER_GROUP = ("correct", "answers", "adverse", "adverse_answers", "non_neutral", "assoc_answers")

    def __init__(self) -> None:
        self.groups = [(a, g) for a in ATTRIBUTES for g in range(len(GROUPS[a]))]
        self.n_cells = len(self.POOLED) + len(self.groups) * len(self.PER_GROUP)

    def pooled(self, name: str) -> int:
        return self.POOLED.index(name)

    def group_cells(self, attribute: str, name: str) -> list[int]:
        base, k = len(self.POOLED), len(self.PER_GROUP)
        return [base + i * k + self.PER_GROUP.index(name) for i, (a, _) in enumerate(self.groups) if a == attribute]


LAYOUT = _Layout()


def stratum_codes(gender: np.ndarray, race: np.ndarray, age_band: np.ndarray) -> np.ndarray:
    """The (gender, race, age band) sampling stratum of each row as one integer (0..29); -1 if a label is -1."""
    code = (gender * len(RACES) + race) * len(AGE_BANDS) + age_band
    return np.where((gender < 0) | (race < 0) | (age_band < 0), -1, code)


#: Resampling strata smaller than this are merged (:func:`resampling_strata`).
MIN_RESAMPLING_STRATUM = 5


def resampling_strata(codes: np.ndarray, minimum: int = MIN_RESAMPLING_STRATUM) -> np.ndarray:
    """The strata the bootstrap resamples within: the sampling strata, collapsed where they are small.

    The sampler draws images per (gender, race, age band) stratum, so the bootstrap resamples within those strata
    (Davison & Hinkley 1997, section 3.7). A stratum of ``n`` images resamples only ``(n - 1) / n`` of its
    variance, nothing for a single image; at the README's quick size (``--sample-fraction 0.02``, 301 images)
    the senior and Other strata hold 1-4 images and their groups' intervals covered 79-85%. So, as with
    collapsed strata in survey variance estimation: when a band of a (gender, race) cell has fewer than
    ``minimum`` images, the cell's three bands are resampled together; when a whole cell has fewer than
    ``minimum``, it joins the other such cells of its gender. The group sizes of race and age then vary a little
    between resamples, which the group rates (ratios) absorb. Codes ``-1`` (unknown labels) form one stratum.
    """
    codes = np.asarray(codes, dtype=np.int64)
    labels = codes.copy()
    bands = len(AGE_BANDS)
    present, counts = np.unique(codes[codes >= 0], return_counts=True)
    size = dict(zip(present.tolist(), counts.tolist(), strict=True))
    small_cells = []
    for cell in sorted({code // bands for code in size}):
        members = [cell * bands + b for b in range(bands) if cell * bands + b in size]
        if any(size[m] < minimum for m in members):
            labels[np.isin(codes, members)] = cell * bands
            if sum(size[m] for m in members) < minimum:
                small_cells.append(cell)
    for gender in sorted({cell // len(RACES) for cell in small_cells}):
        merged = [cell * bands for cell in small_cells if cell // len(RACES) == gender]
        labels[np.isin(labels, merged)] = merged[0]
    return labels


@dataclass(kw_only=True)
class ImageDesign(bootstrap.Design):
    """A task's declared design (:class:`metrics.bootstrap.Design`): its images (the units), their counts (a unit x
    cell matrix of :data:`LAYOUT`) and the strata the bootstrap resamples within (:func:`resampling_strata` of
    ``codes``, each image's sampling stratum code, kept for :func:`side_by_side`)."""

    codes: np.ndarray


def image_design(units: np.ndarray, matrix: np.ndarray, codes: np.ndarray) -> ImageDesign:
    return ImageDesign(
        units=units, strata=resampling_strata(codes), n_cells=matrix.shape[1], matrix=matrix, codes=codes
    )


def image_bootstrap(design: ImageDesign, specs: Mapping[str, StatisticSpec]) -> tuple[np.ndarray, dict[str, float]]:
    """One stratified bootstrap of the design's images, each stratum's rows first put together (cheaper resampling,
    same law): the matrix in that order, and ``<name>_ci_low`` and ``<name>_ci_high`` of every statistic of
    ``specs``."""
    order = np.argsort(design.strata, kind="stable")
    matrix, strata = design.matrix[order], design.strata[order]
    intervals = bootstrap.bootstrap_intervals(
        matrix, specs, n_resamples=BOOTSTRAP_RESAMPLES, confidence=CONFIDENCE, seed=BOOTSTRAP_SEED, strata=strata
    )
    ends = {}
    for name, interval in intervals.items():
        ends[f"{name}_ci_low"], ends[f"{name}_ci_high"] = float(interval.low), float(interval.high)
    return matrix, ends


def unit_counts(records: Sequence[Sequence[int]] | np.ndarray) -> ImageDesign:
    """The task's design from its records (each image's sampling stratum code: :func:`stratum_codes`). What
    :func:`compute_metrics` bootstraps (:func:`image_bootstrap`) and ``compare`` resamples paired
    (:mod:`fairlens_tasks.compare`).

    Each unit (image) is in one group of each attribute (the labels of its first record), so its per-group
    block is its own six counts placed at its group's position."""
    rec = _records_array(records)
    units, first, unit_index = np.unique(rec[:, _F["image"]], return_index=True, return_inverse=True)
    unit_index = unit_index.ravel()
    n_units = len(units)
    adverse_item = rec[:, _F["adverse"]] >= 0
    assoc_item = rec[:, _F["non_neutral"]] >= 0
    parsed = rec[:, _F["status"]] == 0

    def per_unit(values: np.ndarray) -> np.ndarray:
        return np.bincount(unit_index, weights=values.astype(np.float64), minlength=n_units)

    own = np.column_stack(
        [
            per_unit(rec[:, _F["correct"]]),
            np.bincount(unit_index, minlength=n_units).astype(np.float64),
            per_unit(rec[:, _F["adverse"]] == 1),
            per_unit(adverse_item),
            per_unit(rec[:, _F["non_neutral"]] == 1),
            per_unit(assoc_item),
        ]
    )  # columns in _Layout.PER_GROUP order
    matrix = np.zeros((n_units, LAYOUT.n_cells))
    for name, column in (("correct", 0), ("answers", 1), ("non_neutral", 4), ("assoc_answers", 5)):
        matrix[:, LAYOUT.pooled(name)] = own[:, column]
    matrix[:, LAYOUT.pooled("adverse_parsed")] = per_unit(adverse_item & parsed)
    matrix[:, LAYOUT.pooled("assoc_parsed")] = per_unit(assoc_item & parsed)
    rows = np.arange(n_units)[:, None]
    width = len(LAYOUT.PER_GROUP)
    for attribute in ATTRIBUTES:
        start = np.asarray(LAYOUT.group_cells(attribute, LAYOUT.PER_GROUP[0]))
        groups = rec[first, _ATTRIBUTE_COLUMN[attribute]]
        matrix[rows, start[groups][:, None] + np.arange(width)] = own
    return image_design(
        units, matrix, stratum_codes(*(rec[first, _F[name]] for name in ("gender", "race", "age_band")))
    )


def side_by_side(designs: Sequence[ImageDesign], width: int) -> ImageDesign:
    """Several domains' designs (:func:`unit_counts`, or the open task's) as one: the union of their images (sorted
    ids), each domain's ``width`` cells in its own block of columns (an image a domain lacks adds nothing there),
    and each image's stratum. The design of a roll-up over the domains, whose images are resampled once."""
    units = np.unique(np.concatenate([d.units for d in designs]))
    matrix = np.zeros((len(units), width * len(designs)))
    codes = np.zeros(len(units), dtype=np.int64)
    for i, design in enumerate(designs):
        rows = np.searchsorted(units, design.units)
        matrix[rows, i * width : (i + 1) * width] = design.matrix
        codes[rows] = design.codes
    return image_design(units, matrix, codes)


def _group_rates(counts: np.ndarray, attribute: str, events: str, totals: str) -> np.ndarray:
    """The rates of one attribute's groups (:func:`metrics.fairlens.rates_from_counts` of their cells)."""
    return fl.rates_from_counts(
        counts[:, LAYOUT.group_cells(attribute, events)], counts[:, LAYOUT.group_cells(attribute, totals)]
    )


def _pooled_rate(counts: np.ndarray, events: str, totals: str) -> np.ndarray:
    """A pooled rate (:func:`metrics.fairlens.rates_from_counts` of its cells)."""
    return fl.rates_from_counts(counts[:, LAYOUT.pooled(events)], counts[:, LAYOUT.pooled(totals)])


def interval_specs() -> dict[str, StatisticSpec]:
    """The statistic and interval method of every metric with an interval (README "Intervals" has the coverage
    measurements behind each choice): percentile intervals for the rates (shares of answers, unbiased and close
    to normal at these sizes); max-t intervals (:func:`metrics.intervals.max_t_interval`) for the max - min gaps
    (the maximum of the pairwise differences of group rates), the rate ratios (the exponential of the maximum of
    the pairwise log differences) and the means over attributes of the gaps (the maximum of the means of one
    pairwise difference per attribute), which reach a true gap of 0 where a percentile interval of the maximum
    never does."""
    unit = (0.0, 1.0)
    cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # per call: every spec reads the same count arrays

    def rates(c: np.ndarray, attribute: str, events: str, totals: str) -> np.ndarray:
        key = (id(c), attribute, events, totals)
        if key not in cache:
            cache[key] = (c, _group_rates(c, attribute, events, totals))  # c kept alive: its id stays unique
        return cache[key][1]

    def rate(name: str, events: str, totals: str) -> StatisticSpec:
        return StatisticSpec(lambda c: _pooled_rate(c, events, totals), _DOMAIN.bootstrap(name), unit)

    def group_rate(attribute: str, index: int, events: str, totals: str) -> StatisticSpec:
        method = _DOMAIN.bootstrap(f"adverse_rate_{attribute}_{metric_group(GROUPS[attribute][index])}")
        return StatisticSpec(lambda c: rates(c, attribute, events, totals)[:, index], method, unit)

    def differences(attribute: str, events: str, totals: str) -> Callable[[np.ndarray], np.ndarray]:
        return lambda c: fl.pairwise_differences(rates(c, attribute, events, totals))

    def mean_of_gaps(name: str, events: str, totals: str) -> StatisticSpec:
        # Without each attribute's 0 component (240 instead of 441 components): it only matters when an attribute
        # has a single group, whose intervals are withheld anyway.
        parts = [(lambda c, a=a: differences(a, events, totals)(c)[:, :-1]) for a in ATTRIBUTES]
        return StatisticSpec(
            lambda c: fl.mean_of_maxima_components(*(p(c) for p in parts)), _DOMAIN.bootstrap(name), unit
        )

    specs: dict[str, StatisticSpec] = {
        "soundness": rate("soundness", "correct", "answers"),
        "association_rate": rate("association_rate", "non_neutral", "assoc_answers"),
    }
    for a in ATTRIBUTES:
        for i, g in enumerate(GROUPS[a]):
            specs[f"adverse_rate_{a}_{metric_group(g)}"] = group_rate(a, i, "adverse", "adverse_answers")
        specs[f"parity_gap_{a}"] = StatisticSpec(
            differences(a, "adverse", "adverse_answers"), _DOMAIN.bootstrap(f"parity_gap_{a}"), unit
        )
        specs[f"rate_ratio_{a}"] = StatisticSpec(
            lambda c, a=a: fl.pairwise_log_ratios(_positive(rates(c, a, "adverse", "adverse_answers"))),
            _DOMAIN.bootstrap(f"rate_ratio_{a}"), (1.0, math.inf), math.exp,
        )  # fmt: skip
        specs[f"association_gap_{a}"] = StatisticSpec(
            differences(a, "non_neutral", "assoc_answers"), _DOMAIN.bootstrap(f"association_gap_{a}"), unit
        )
    specs["parity_gap"] = mean_of_gaps("parity_gap", "adverse", "adverse_answers")
    specs["association_gap"] = mean_of_gaps("association_gap", "non_neutral", "assoc_answers")
    return specs


def _positive(rates: np.ndarray) -> np.ndarray:
    """Rates with zeros as NaN: a resample in which a group has no adverse answer leaves that group out of the
    ratio's components (its log is -inf); intervals are withheld when the observed rates have too few events."""
    return np.where(rates > 0, rates, np.nan)


def _estimates(totals: np.ndarray) -> dict[str, float]:
    """The plug-in value of every count-based metric from the pooled cell counts (the released definitions)."""
    counts = totals[None, :]
    out: dict[str, float] = {
        "soundness": float(_pooled_rate(counts, "correct", "answers")[0]),
        "association_rate": float(_pooled_rate(counts, "non_neutral", "assoc_answers")[0]),
    }
    for attribute in ATTRIBUTES:
        adverse = _group_rates(counts, attribute, "adverse", "adverse_answers")[0]
        assoc = _group_rates(counts, attribute, "non_neutral", "assoc_answers")[0]
        sound = _group_rates(counts, attribute, "correct", "answers")[0]
        for i, group in enumerate(metric_group(g) for g in GROUPS[attribute]):
            out[f"soundness_{attribute}_{group}"] = float(sound[i])
            out[f"adverse_rate_{attribute}_{group}"] = float(adverse[i])
            out[f"association_rate_{attribute}_{group}"] = float(assoc[i])
        out[f"parity_gap_{attribute}"] = float(fl.gap_from_rates(adverse))
        out[f"rate_ratio_{attribute}"] = float(fl.ratio_from_rates(adverse))
        out[f"association_gap_{attribute}"] = float(fl.gap_from_rates(assoc))
    out["parity_gap"] = float(fl.domain_gap([out[f"parity_gap_{a}"] for a in ATTRIBUTES]))
    gaps = [out[f"association_gap_{a}"] for a in ATTRIBUTES]
    out["association_gap"] = float(fl.domain_gap(gaps))
    out["association_gap_max"] = float(fl.domain_gap(gaps, reduce="max"))
    return out


def point_estimates(records: Sequence[Sequence[int]] | np.ndarray) -> dict[str, float]:
    """Every count-based metric's plug-in value from one domain's records, before any rule nulls it (coverage, the
    declared minima) and without intervals: the estimator whose bias the simulations measure
    (``tests/support/coverage_fairlens.py``, ``bench/coverage.py --bias``)."""
    return _estimates(unit_counts(records).observed())


def apply_coverage(
    out: dict[str, float], totals: np.ndarray, parsed: int, n: int, threshold: Threshold, notes: Notes
) -> None:
    """The coverages ``k / n`` (the share of a score's answers whose reply was parsed) and the threshold on them.

    ``soundness_coverage`` = parsed answers / all answers (never a threshold: an unparsed answer is unsound by the
    paper's definition); ``parity_gap_coverage`` = parsed / all answers to the adverse-labelled items;
    ``association_rate_coverage`` = ``association_gap_coverage`` = parsed / all answers to the association-tagged
    items. Below ``threshold`` (``fairlens_min_coverage``, default 0.5) every statistic that the parity or association
    coverage nulls, as the statistics table declares (:func:`fairness_evals.evidence.covered_names`), is null with
    its interval, the reason noted in ``notes``."""
    adverse_parsed = int(totals[LAYOUT.pooled("adverse_parsed")])
    adverse_total = int(sum(totals[LAYOUT.group_cells("gender", "adverse_answers")]))
    assoc_parsed, assoc_total = int(totals[LAYOUT.pooled("assoc_parsed")]), int(totals[LAYOUT.pooled("assoc_answers")])
    out["soundness_coverage"] = parsed / n
    out["parity_gap_coverage"] = adverse_parsed / adverse_total if adverse_total else math.nan
    out["association_rate_coverage"] = out["association_gap_coverage"] = (
        assoc_parsed / assoc_total if assoc_total else math.nan
    )
    for coverage, covered, total in (
        (table.PARITY_INPUTS, adverse_parsed, adverse_total),
        (table.ASSOCIATION_INPUTS, assoc_parsed, assoc_total),
    ):
        nulled = evidence.covered_names(table.CLOSED_STATISTICS, coverage)
        evidence.enforce_coverage(out, nulled, coverage, covered, total, threshold.value, notes)


def _interval_checks() -> list[tuple[int, int, tuple[str, ...]]]:
    """The rates each statistic rests on (:func:`fairlens_tasks.withheld.apply_minima`): a rate of a group with too
    few images behind it withholds its own interval and that of every gap, ratio and mean of gaps over its attribute
    (this includes a group without answers, and a ratio whose smallest rate is 0), and a comparison of groups too few
    of which, or with too few images, hold answers is null."""
    checks = [
        (LAYOUT.pooled("correct"), LAYOUT.pooled("answers"), ("soundness",)),
        (LAYOUT.pooled("non_neutral"), LAYOUT.pooled("assoc_answers"), ("association_rate",)),
    ]
    for attribute in ATTRIBUTES:
        cells = zip(LAYOUT.group_cells(attribute, "adverse"), LAYOUT.group_cells(attribute, "adverse_answers"),
                    GROUPS[attribute], strict=True)  # fmt: skip
        for events, totals, group in cells:
            dependent = (f"adverse_rate_{attribute}_{metric_group(group)}", f"parity_gap_{attribute}",
                         f"rate_ratio_{attribute}", "parity_gap")  # fmt: skip
            checks.append((events, totals, dependent))
        for events, totals in zip(LAYOUT.group_cells(attribute, "non_neutral"),
                                  LAYOUT.group_cells(attribute, "assoc_answers"), strict=True):  # fmt: skip
            checks.append((events, totals, (f"association_gap_{attribute}", "association_gap", "association_gap_max")))
    return checks


_CHECKS = _interval_checks()
#: Each statistic of a domain by metric name (the declarations :func:`~fairlens_tasks.withheld.apply_minima` reads).
_DECLARED = {member: s for s in table.CLOSED_STATISTICS for member in s.members}
#: The means and maximum of gaps are null when a gap they need is null for too few images.
_NEEDS = {
    "parity_gap": tuple(f"parity_gap_{a}" for a in ATTRIBUTES),
    "association_gap": tuple(f"association_gap_{a}" for a in ATTRIBUTES),
    "association_gap_max": tuple(f"association_gap_{a}" for a in ATTRIBUTES),
}


def absent_groups(group_counts: Callable[[str], np.ndarray]) -> Iterator[tuple[str, str]]:
    """Each ``(attribute, group)`` (the group's metric-name form) whose count is 0: ``group_counts(attribute)`` gives
    one count per group of ``GROUPS[attribute]``."""
    for attribute in ATTRIBUTES:
        for group, count in zip(GROUPS[attribute], group_counts(attribute), strict=True):
            if count == 0:
                yield attribute, metric_group(group)


def _note_absent_groups(out: dict[str, float], totals: np.ndarray, notes: Notes) -> None:
    for attribute, group in absent_groups(lambda attribute: totals[LAYOUT.group_cells(attribute, "answers")]):
        notes.null(
            [f"{prefix}_{attribute}_{group}" for prefix in ("soundness", "adverse_rate", "association_rate")],
            f"no evaluated image of the group {attribute}={group} (the gaps and ratios compare the groups present)",
        )


def answer_counts(rec: np.ndarray) -> dict[str, float]:
    """The denominators of one task's records: ``answers`` = n documents scored, ``unparsed`` = the answers no
    normalisation rule maps to an option, ``unparsed_rate`` = unparsed / n (NaN for n = 0), ``images_evaluated`` =
    the distinct images among them."""
    n = len(rec)
    unparsed = int(np.sum(rec[:, _F["status"]] != 0))
    return {
        "unparsed": unparsed,
        "unparsed_rate": unparsed / n if n else math.nan,
        "answers": n,
        "images_evaluated": len(np.unique(rec[:, _F["image"]])),
    }


def compute_metrics(
    records: Sequence[Sequence[int]] | np.ndarray,
    *,
    task: str | None = None,
    min_coverage: float | None = None,
    notes: Notes | None = None,
    position_nulls: bool | None = None,
) -> dict[str, float]:
    """Every statistic of one domain (:data:`RECORD_METRICS`, declared in :mod:`fairlens_tasks.statistics`) from its
    records, as Python numbers.

    ``min_coverage`` is the ``fairlens_min_coverage`` setting (None: its declared default, 0.5):
    below it the parity and association scores, and their intervals, are NaN. Where the position test finds that the
    answers follow the option position, the scores the statistics table declares ``position`` are NaN
    (:func:`fairness_evals.position.apply`), unless ``position_nulls`` (the ``fairlens_position_nulls``
    setting; None: true) is false. The reason for every NaN is noted in ``notes`` (a
    new :class:`~fairness_evals.notes.Notes` when None) and logged as the task's one warning.
    """
    threshold = coverage_threshold(MIN_COVERAGE_KEY, min_coverage)
    rec = _records_array(records)
    task = task or task_of(rec)
    notes = notes if notes is not None else Notes(task)
    n = len(rec)
    if n == 0:
        out: dict[str, float] = dict.fromkeys(RECORD_METRICS, math.nan)
        out.update(unparsed=0, answers=0, images_evaluated=0)
        notes.null([name for name, value in out.items() if math.isnan(value)], "no documents were evaluated")
        notes.warn(log)
        return out
    matrix, ends = image_bootstrap(unit_counts(rec), interval_specs())
    totals = matrix.sum(axis=0)
    out = {**_estimates(totals), **ends}
    counts = answer_counts(rec)
    apply_coverage(out, totals, n - int(counts["unparsed"]), n, threshold, notes)
    _note_absent_groups(out, totals, notes)
    apply_minima(out, matrix, _CHECKS, _DECLARED, notes, _NEEDS)
    positions = position_diagnostics(rec[:, _F["question"]], rec[:, _F["option"]])
    out.update(positions)
    out.update(counts)
    keep = not position_nulls_on(position_nulls)
    position.apply(out, table.CLOSED_STATISTICS, notes, keep=keep, setting=POSITION_NULLS_KEY)
    explained = dict.fromkeys(positions, "no parsed answer")
    return finish(out, RECORD_METRICS, notes, log, "no evaluated answer to the items it is computed on", explained)


def _compute_for_items(items: list[Any]) -> dict[str, float]:
    """:func:`compute_metrics` of one task's carrier items (:func:`readable_record`), the task named from them, under
    the scoring settings their provenance records."""
    try:
        records = [item["record"] for item in items]
    except (TypeError, KeyError):
        raise ValueError(
            f"fairlens: the {CARRIER} items are not this version's document records (run the task again)"
        ) from None
    rec = _records_array(records)
    task = task_of(rec) if len(rec) else None
    settings = recorded([item.get("provenance") for item in items], "closed", task or "fairlens")
    return compute_metrics(rec, task=task, **settings)


#: lmms-eval's aggregation of each FairLens closed-ended metric in the YAMLs, ``aggregate_<metric>``:
#: :func:`fairness_evals.aggregation.aggregate` of :func:`compute_metrics`, its carrier ``unparsed_rate``. What each
#: metric is, with its formula and paper section: ``fairness-evals metrics NAME`` (:mod:`fairlens_tasks.statistics`).
__getattr__ = aggregation.metric_aggregations(__name__, "fairlens", _compute_for_items, {CARRIER})


def model_level_mean(values: Sequence[float], sizes: Sequence[int], weight_by_size: bool = False) -> float:
    """Group roll-up: the unweighted mean over the domain tasks of one metric, ``v = (1/3) sum_d v_d`` (paper
    Table 2, :func:`metrics.fairlens.unweighted_mean`).

    Soundness and association rate: the mean of the three domain values (verified on Table 2, which reproduces
    from Table 3 this way). Parity gap: the mean over domains of the per-domain mean over attributes, i.e. the
    mean over domains x attributes. Coverage: the mean of the domain coverages, as the score weighs the domains. A
    domain whose value is NaN (nothing evaluated, or its coverage below the threshold) makes the roll-up NaN, with
    a warning: the model-level number is a mean over the three domains, and a mean over fewer is a different
    number. ``sizes`` and ``weight_by_size`` are lmms-eval's arguments, unused (the domains weigh equally).
    """
    del sizes, weight_by_size
    finite = finite_domain_values(values, "fairlens")
    return math.nan if finite is None else fl.unweighted_mean(finite)


def finite_domain_values(values: Sequence[float], task: str) -> dict[int, float] | None:
    """The domain values of a model-level roll-up by position, or None when there are none or any is NaN (a roll-up
    over fewer domains is a different number); None is logged as ``task``'s warning."""
    finite = {i: float(v) for i, v in enumerate(values) if isinstance(v, (int, float)) and math.isfinite(v)}
    if values and len(finite) == len(values):
        return finite
    missing = len(values) - len(finite)
    log.warning("%s: %d of %d domain values are NaN; the model-level roll-up is NaN", task, missing, len(values))
    return None


__all__ = [
    "ALL_METRICS",
    "CARRIER",
    "DOMAINS",
    "HEADLINE_METRICS",
    "PROVENANCE",
    "RECORD_FIELDS",
    "RECORD_METRICS",
    "absent_groups",
    "compute_metrics",
    "doc_to_messages",
    "doc_to_target",
    "doc_to_text",
    "doc_to_visual",
    "finite_domain_values",
    "image_bootstrap",
    "interval_specs",
    "logged_record",
    "model_level_mean",
    "process_results",
    "provenance",
    "readable_record",
    "record_for",
    "resampling_strata",
    "side_by_side",
]
