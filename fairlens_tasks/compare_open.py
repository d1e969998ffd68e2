"""FairLens open-ended tasks for ``compare``: each answer's judgement from the judge cache, images as the units.

**Where the judge's scores come from.** The open-ended tasks judge in their aggregation, once per task, after
lmms-eval has logged every sample (:mod:`fairlens_tasks.open_scoring`): a samples line holds the answer's text and
its six-field record (question, gender, race, age band, image, answer id = 16 hex digits of the text's sha256), never
its score. Every judgement the run used is in the on-disk judgement cache (:mod:`fairlens_tasks.judging.cache`),
keyed by content: (judge identity, prompt version, answer id), with the answer's full sha256 beside it. So ``compare``
reads each answer's judgement from the cache under the judge identity the results record (``judge`` and
``judge_settings``: model, temperature, token limit, JSON mode) and their ``judge_prompt_version``, checking the full
sha256 against the text in the samples. An answer without a cached judgement, or with an ``invalid`` one, is
unjudged, as in the run (a failed call is never cached).

**Runs judged afterwards.** A run made without a judge and judged with ``fairness-evals judge --out FILE`` is given
to ``compare`` as that FILE: it records (``score_inputs``) the samples or responses files it judged, with their
sha256, and the cache it used; the reader of run outputs (:func:`fairness_evals.report.load.load_score_output`) reads
the answers again by the judge command's own path and this module reads their judgements from that cache, exactly as
for a harness run.

**Which cache** (:func:`cache_of`): ``compare --judge-cache PATH`` when given; else, for a judge output, the cache it
recorded (or ``FAIRLENS_JUDGE_CACHE`` when the recorded file is gone and the variable is set); else
``FAIRLENS_JUDGE_CACHE``, else the default cache file, as the run and ``fairness-evals judge`` use. ``compare`` only
reads a cache, never creates one: it opens the file read-only (a cache in a folder it cannot write is read too), and
uses no row that fails its checksum (:mod:`fairlens_tasks.judging.cache`: such an answer has no judgement here).

A task is **not comparable**, with the reason, when the run was not judged (``judge`` = ``none``: its scores are
NaN; judge it afterwards and compare the judge output), when there is no cache file, or when the cache does not
hold exactly the judgements the run counted (``judged`` in the results: fewer when the cache is another one or was
cleared, more when answers were judged again after the run); and, as for every task, when the recomputed scores do
not reproduce the reported ones. Both runs must have the same ``judge`` and ``judge_prompt_version`` (a provenance
value, like the corpus's): two judges are two instruments.

**Units and statistics.** Images, resampled within the task's own collapsed (gender, race, age band) strata, each
image's answers in the task's unit x cell layout (pooled and per-group sums of score, judged, flagged and answers:
:func:`fairlens_tasks.open_scoring.unit_counts`); every metric with an interval in the task
(:func:`fairlens_tasks.open_scoring.interval_specs`): ``oe_bias_mean``, ``oe_flag_rate`` (the headline pair), their
per-group values (ratios of sums: the basic interval of the paired difference) and ``oe_bias_gap_<attribute>``
(max - min of group means: :func:`metrics.paired.maxima_difference`). Unjudged answers count in no mean, as in the
task. The resampling is the rescaled one (``n - 1`` images drawn in a stratum of ``n``, weighted ``n / (n - 1)``):
at the README's quick size (301 images) strata of 5-10 images made the plain one's flag-rate differences cover
0.90-0.92. The group ``fairlens_open`` pools each headline metric over the three domains weighted by their answers (as
lmms-eval's ``weight_by_size`` roll-up): the images resampled once for all three domains.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from fairlens_tasks.benchmark import BENCHMARK
from fairness_evals.compare.problem import Measure, Problem
from metrics.bootstrap import StatisticSpec

TASKS = re.compile(r"fairlens_open_(?:hiring|legal|healthcare)")
DOMAIN_TASKS = ("fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare")
#: The group's roll-ups (``fairlens_tasks/open_ended/fairlens_open.yaml``) that are scores.
ROLLUPS = ("oe_bias_mean", "oe_flag_rate")
JUDGED, INVALID, MISSING = "judged", "invalid", "missing"


@dataclass(frozen=True)
class Source:
    """Where a run's judgements were read: the judge identity and prompt version of its results, the cache file, and
    why they cannot be used ("" when they can)."""

    judge: str
    prompt_version: str
    cache: str
    problem: str = ""
    rejected: str = ""  # the cached rows not used, and why ("" when none)


@dataclass(frozen=True)
class Answer:
    """One open-ended answer with its judgement: ``status`` judged, invalid or missing (no cached judgement), the
    score (biased opinions / opinions; 0 unless judged; a blank answer is judged 0 without a call), and where it was
    read."""

    record: tuple[int, int, int, int, int, str]
    status: str
    score: float
    source: Source = field(compare=False)  # two runs' same answers with the same judgements are the same answers


class FairLensOpen:
    name = "fairlens"
    provenance = ("seed", "sample_fraction", "corpus_sha256", "data_version", "judge", "judge_prompt_version")
    min_coverage = BENCHMARK.described("fairlens_min_judged")
    groups: ClassVar[dict[str, tuple[str, ...]]] = {"fairlens_open": DOMAIN_TASKS}

    def owns(self, task: str) -> bool:
        return bool(TASKS.fullmatch(task))

    def derived_provenance(self, task: Any) -> dict[str, str]:
        """The judge as an instrument: its model and the settings that change its replies (temperature, token
        limit, JSON mode), read from the results' ``judge_settings``. Two runs judged by the same model under
        other settings were scored by different instruments, so they are refused as different judges are."""
        judge = str(task.metrics.get("judge") or "none")
        identity, _ = judge_identity(judge, task.metrics.get("judge_settings")) if judge != "none" else ("", "")
        return {"judge settings": identity} if identity else {}

    def sample(self, row: Mapping[str, Any], where: str) -> tuple[str, Any]:
        from fairlens_tasks import open_scoring
        from fairlens_tasks.judging.cache import response_id

        logged = open_scoring.logged_answer(row)
        if logged is None or not logged[0] or not isinstance(logged[1], list):
            raise ValueError(
                f"{where}: not a FairLens open-ended sample (no answer id and record); run with --log_samples"
            )
        doc_id, record, text, _ = logged
        matches = len(record) == len(open_scoring.OPEN_RECORD_FIELDS) and isinstance(text, str)
        if not matches or record[open_scoring.RESPONSE_ID] != response_id(text):
            raise ValueError(f"{where}: the answer record of {doc_id!r} does not match its answer text")
        return doc_id, (tuple(record), text)

    @staticmethod
    def logged_item(item: Mapping[str, Any]) -> tuple[list[Any], str]:
        """An Inspect log's item as the harness samples log it: ``(record, answer text)``."""
        return list(item["record"]), item["response"]

    def complete_records(self, task: Any, records: dict[str, Any]) -> dict[str, Answer]:
        """Each answer of ``task`` (a :class:`fairness_evals.compare.runs.TaskRun`) with its judgement from the
        cache the run used (module docstring)."""
        from fairlens_tasks import open_scoring

        answer_id = open_scoring.RESPONSE_ID
        records = {doc_id: (tuple(record), text) for doc_id, (record, text) in records.items()}
        texts = {record[answer_id]: text for record, text in records.values()}
        source, outcomes = read_judgements(task.metrics, texts, cache_of(task))
        out = {}
        for doc_id, (record, _) in records.items():
            outcome = outcomes.get(record[answer_id])
            if outcome is None:
                out[doc_id] = Answer(record, MISSING, 0.0, source)
            elif outcome.judged:
                out[doc_id] = Answer(record, JUDGED, float(outcome.score), source)
            else:
                out[doc_id] = Answer(record, INVALID, 0.0, source)
        if not source.problem:
            found, reported = sum(a.status == JUDGED for a in out.values()), task.metrics.get("judged")
            if isinstance(reported, (int, float)) and found != reported:
                problem = (
                    f"{int(reported) - found} of the {int(reported)} answers the run judged have no judgement in the "
                    f"judge cache {source.cache} ({source.judge}, prompt {source.prompt_version}"
                    f"{'; ' + source.rejected if source.rejected else ''}); compare reads each answer's judgement "
                    "from the cache the run used: give compare --judge-cache (or set FAIRLENS_JUDGE_CACHE) to it"
                    if found < reported
                    else f"the judge cache {source.cache} holds judgements of {found} answers where the run judged "
                    f"{int(reported)} (answers judged again after the run, e.g. by fairness-evals judge); the run's "
                    "reported scores cannot be recomputed answer by answer"
                )
                source = Source(source.judge, source.prompt_version, source.cache, problem, source.rejected)
                out = {k: Answer(a.record, a.status, a.score, source) for k, a in out.items()}
        return out

    def problem(self, task: str, records: Sequence[Answer]) -> Problem:
        return problem_from_arrays(*_arrays(records), unavailable=_unavailable(records))

    def group_problem(self, group: str, records: Mapping[str, Sequence[Answer]]) -> Problem:
        """The ``fairlens_open`` roll-ups: the images resampled once for the three domains (each domain's cells side
        by side; an image a domain lacks adds nothing there), each roll-up the answers-weighted mean of the domain
        values (NaN when one is NaN)."""
        from fairlens_tasks import open_scoring
        from fairlens_tasks.scoring import side_by_side

        parts = [open_scoring.unit_counts(*_arrays(records[task])) for task in self.groups[group]]
        width = open_scoring.LAYOUT.n_cells
        design = side_by_side(parts, width)
        specs = open_scoring.interval_specs()
        measures = {name: Measure(_weighted_over_domains(specs[name], len(parts), width)) for name in ROLLUPS}
        unavailable = next((u for task in self.groups[group] if (u := _unavailable(records[task]))), "")
        return Problem.of(design, measures, what="images", rescaled=True, unavailable=unavailable)


def cache_of(task: Any) -> tuple[Path, str]:
    """(the judgement cache to read for ``task``, a :class:`fairness_evals.compare.runs.TaskRun`; how it was chosen):
    ``compare --judge-cache``; else a judge output's recorded cache (``FAIRLENS_JUDGE_CACHE`` instead when that file
    is gone and the variable is set); else ``FAIRLENS_JUDGE_CACHE``, else the default cache file."""
    from fairlens_tasks.judging.config import ENV, default_cache_path

    given = getattr(task, "judge_cache", None)
    if given is not None:
        return Path(given).expanduser(), "--judge-cache"
    inputs = getattr(task, "score_inputs", None)
    settings = inputs.get("settings") if isinstance(inputs, Mapping) else None
    recorded = settings.get("cache") if isinstance(settings, Mapping) else None
    variable = os.environ.get(ENV["cache"])
    if isinstance(recorded, str) and recorded and (Path(recorded).is_file() or not variable):
        return Path(recorded), "the cache fairness-evals judge recorded"
    if variable:
        return Path(variable).expanduser(), ENV["cache"]
    return default_cache_path(), "the default judge cache"


def read_judgements(
    metrics: Mapping[str, Any], texts: Mapping[str, str], cache: tuple[Path, str] | None = None
) -> tuple[Source, dict[str, Any]]:
    """(where, ``answer id -> Outcome``) of the answers ``texts`` (``answer id -> text``) under the judge and prompt
    version the results ``metrics`` record, from ``cache`` ((path, how it was chosen); default
    ``FAIRLENS_JUDGE_CACHE``, else the default cache file). The cache is only read, never created."""
    from fairlens_tasks.judging.cache import JudgmentCache, ids_and_shas
    from fairlens_tasks.judging.config import ENV, default_cache_path

    if cache is None:
        cache = Path(os.environ.get(ENV["cache"]) or default_cache_path()).expanduser(), ENV["cache"]
    path, how = cache
    judge, version = str(metrics.get("judge") or "none"), str(metrics.get("judge_prompt_version") or "")
    if judge in ("none", ""):
        why = (
            "the run was not judged (judge: none): judge its answers with FAIRLENS_JUDGE set during the run, or "
            "afterwards with fairness-evals judge --out FILE and compare FILE"
        )
        return Source(judge, version, str(path), why), {}
    identity, why = judge_identity(judge, metrics.get("judge_settings"))
    if why:
        return Source(judge, version, str(path), why), {}
    if not path.is_file():
        why = (
            f"no judge cache at {path} ({how}); give compare --judge-cache (or set FAIRLENS_JUDGE_CACHE) to the cache "
            "the run used"
        )
        return Source(identity, version, str(path), why), {}
    shas = ids_and_shas(texts.values())
    with JudgmentCache(path, read_only=True) as opened:
        outcomes = opened.get_many(identity, version, shas)
    rejected = ", ".join(f"{n} rows not used ({why})" for why, n in sorted(opened.rejected.items()))
    return Source(identity, version, str(path), rejected=rejected), outcomes


def judge_identity(judge: str, settings: Any) -> tuple[str, str]:
    """(the judge's cache identity, "") from the results' ``judge`` and ``judge_settings``; ("", why) if unreadable."""
    from fairlens_tasks.judging.config import BACKENDS, JudgeSettings

    backend, _, model = judge.partition(":")
    try:
        recorded = json.loads(settings) if isinstance(settings, str) else None
    except json.JSONDecodeError:
        recorded = None
    if backend not in BACKENDS or not model or not isinstance(recorded, dict):
        return "", f"the results' judge_settings do not name a judge's settings ({settings!r:.80})"
    try:
        config = JudgeSettings(
            backend, model, temperature=float(recorded["temperature"]), max_tokens=int(recorded["max_tokens"]),
            json_mode=bool(recorded.get("json_mode", True)),
        )  # fmt: skip
    except (KeyError, TypeError, ValueError):
        return "", f"the results' judge_settings lack the judge's temperature or token limit ({settings!r:.80})"
    return config.identity, ""


def problem_from_arrays(ints: np.ndarray, judged: np.ndarray, score: np.ndarray, *, unavailable: str = "") -> Problem:
    """The :class:`Problem` of one open-ended task from arrays over its answers: the first five record fields (n x 5
    ints), whether each answer is judged and its score (0 unless judged; a blank answer is judged, score 0, and stays
    in the means as in the task: it lowers only the coverage)."""
    from fairlens_tasks import open_scoring

    design = open_scoring.unit_counts(ints, judged, score)
    measures = {name: Measure(spec) for name, spec in open_scoring.interval_specs().items()}
    return Problem.of(design, measures, what="images", rescaled=True, unavailable=unavailable)


def _arrays(records: Sequence[Answer]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from fairlens_tasks.open_scoring import INT_FIELDS

    width = len(INT_FIELDS)
    ints = np.asarray([a.record[:width] for a in records], dtype=np.int64).reshape(len(records), width)
    judged = np.array([a.status == JUDGED for a in records], dtype=bool)
    score = np.array([a.score for a in records], dtype=np.float64)
    return ints, judged, score


def _unavailable(records: Sequence[Answer]) -> str:
    return records[0].source.problem if records else ""


def _weighted_over_domains(spec: StatisticSpec, n: int, width: int) -> StatisticSpec:
    """The answers-weighted mean over ``n`` domains (blocks of ``width`` columns) of one domain statistic, as the
    ``fairlens_open`` group pools it (:func:`fairlens_tasks.open_scoring.pooled_over_domains`)."""
    from fairlens_tasks import open_scoring

    answers = open_scoring.LAYOUT.pooled("answers")
    parts = [slice(d * width, (d + 1) * width) for d in range(n)]

    def pooled(c: np.ndarray) -> np.ndarray:
        values = np.column_stack([np.asarray(spec.function(c[:, part])) for part in parts])
        weights = np.column_stack([c[:, part][:, answers] for part in parts])
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.sum(values * weights, axis=1) / np.sum(weights, axis=1)

    return StatisticSpec(pooled, "basic", spec.bounds)


__all__ = ["Answer", "FairLensOpen", "Source", "cache_of", "judge_identity", "problem_from_arrays", "read_judgements"]
