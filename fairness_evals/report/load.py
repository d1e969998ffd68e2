"""Reading lm-eval and lmms-eval results files, and Inspect logs, into :class:`Run` records.

An Inspect log (``.eval`` or ``.json``: :mod:`fairness_evals.inspect.logs`) is one :class:`Run` (:func:`load_log`),
harness ``inspect``: each task's headlines are the log's metrics, completed by the statistics, nulls and provenance
``fairness-evals score`` computes from the replies it holds (:func:`fairness_evals.detail.log_detail`), as a harness
run's headlines are completed by the detail of its samples files (:func:`with_detail`)."""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_evals import centres, jsonio
from fairness_evals.benchmarks import coverage_settings
from fairness_evals.benchmarks import ours as is_ours
from fairness_evals.report.model import Cell, number, share, shorten, shown, text

#: The benchmarks' logger, held back while a run's detail is read: each null carries its reason there, and the
#: warning that said it when the run was scored would repeat it once per task.
QUIET = ("fairness_evals",)
#: The provenance tables' caption on the "Limited run" column (:meth:`Run.limited_cell`).
NOT_A_RESULT = "A limited run (--limit, --offset) or a subset run (--samples) is not a benchmark result."
#: The task-metadata keys of each benchmark's minimum coverage (package convention 2).


class ReportInputError(ValueError):
    """A folder or file that cannot be reported; the message is one line naming it."""


class ForeignLog(ReportInputError):
    """An Inspect log of a task that is not ours: skipped in a folder, an error when given by name."""


@dataclass
class Run:
    """One harness results file."""

    source: Path
    harness: str  # "lm-eval" or "lmms-eval"
    model: str
    date: str
    limit: float | None  # config.limit (--limit), None when absent or -1 (lmms-eval's "no limit")
    results: dict[str, dict[str, Any]]  # task or group -> metric -> value ("metric,none" keys stripped)
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    n_samples: dict[str, dict[str, int]] = field(default_factory=dict)
    index: int = 0  # position in the report's list of sources
    offset: int = 0  # lmms-eval's config.offset (--offset): the documents before it were not evaluated
    #: Why each null of the detail is null (task -> metric -> reason), from :mod:`fairness_evals.detail`.
    nulls: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Why the detail of the run's samples files could not be read (one line), "" when it was.
    detail_problem: str = ""
    #: How the run left documents out when it says so itself (an Inspect log: ``LoggedTask.limited``), "" otherwise.
    limited: str = ""
    #: An Inspect log's tasks (task -> :class:`fairness_evals.inspect.logs.LoggedTask`): their records are the log's
    #: replies (:meth:`records`), not a samples file's.
    logged: dict[str, Any] = field(default_factory=dict)
    #: The tasks of ours the harness gave few-shot examples (:func:`fairness_evals.detail.shots`): task -> n.
    shots: dict[str, int] = field(default_factory=dict)
    #: A score output's ``score_inputs`` entry (the files it scored, their sha256 and its settings; a judge output's
    #: judgement cache too), None for a harness run or an Inspect log (:func:`load_score_output`).
    score_inputs: dict[str, Any] | None = None
    _records: dict[str, list[tuple[str, list[Any]]]] = field(default_factory=dict, repr=False)

    def left_out(self, task: str) -> str:
        """How the run left out documents of ``task``, "" when it evaluated them all.

        ``--limit N: n of N' documents`` (``config.limit``; a limit at least the task's size cuts nothing),
        ``--offset N`` (lmms-eval's ``config.offset``), or ``--samples: n of N' documents``: lm-eval's ``--samples``
        leaves no trace in ``config`` (0.4.13), only in ``n-samples``, which then counts fewer documents
        ``effective`` than the task's ``original`` without a limit.
        """
        counts = self.n_samples.get(task, {})
        effective, original = counts.get("effective"), counts.get("original")
        known = all(isinstance(v, int) and not isinstance(v, bool) for v in (effective, original))
        fewer = known and effective < original
        of = f": {effective} of {original} documents" if known else ""
        if self.limited:
            return self.limited
        if self.offset:
            return f"--offset {self.offset}" + (f", --limit {self.limit:g}" if self.limit else "")
        if self.limit and (fewer or not known):
            return f"--limit {self.limit:g}{of}"
        return f"--samples{of}" if fewer else ""

    def partial(self) -> str:
        """The run as a whole when it left documents out of a task of ours, "" when it did not: ``a limited run
        (--limit 4; fact_or_fair_objective: 4 of 198 documents, and 5 other tasks)``, or ``a subset run
        (--samples; ...)`` (:meth:`left_out`; only the tasks ``n-samples`` counts where it counts any of ours)."""
        ours = [task for task in self.results if is_ours(task)]
        counted = [task for task in ours if task in self.n_samples] or ours
        cut = {task: how for task in sorted(counted) if (how := self.left_out(task))}
        if not cut:
            return ""
        first, how = next(iter(cut.items()))
        flags, _, counts = how.partition(": ")
        kind = "a subset run" if flags.startswith("--samples") else "a limited run"
        others = len(cut) - 1
        more = f", and {others} other task{'s' if others > 1 else ''}" if others else ""
        return f"{kind} ({flags}; {shorten(first)}{': ' + counts if counts else ''}{more})"

    def few_shot(self) -> str:
        """The run as a whole when a task of ours ran few-shot (:attr:`shots`), "" when none did: ``a few-shot run
        (n-shot 5; fact_or_fair_objective, and 4 other tasks)``."""
        if not self.shots:
            return ""
        first, n = next(iter(sorted(self.shots.items())))
        others = len(self.shots) - 1
        more = f", and {others} other task{'s' if others > 1 else ''}" if others else ""
        return f"a few-shot run (n-shot {n}; {shorten(first)}{more})"

    def limited_cell(self, task: str) -> Cell:
        """The provenance tables' "Limited run" cell of ``task``: "no", "yes" (``--limit``, ``--offset``) or
        "subset" (``--samples``), with :meth:`left_out` on hover."""
        how = self.left_out(task)
        if not how:
            return text("no")
        return text("subset" if how.startswith("--samples") else "yes", note=how)

    def source_of(self, task: str, name: str) -> str:
        """Where a copied number comes from, for the HTML ``data-source`` attribute."""
        return f"{self.index}|{task}|{name}" if self.has(task) and name in self.results[task] else ""

    def cell(self, task: str, name: str, note: str = "", scale: bool = True, n: str = "", digits: int = 2) -> Cell:
        """The metric with its ``_ci_low``/``_ci_high`` interval when the results carry one (with its declared method
        for the caption, and, where it excludes the estimate, its ``_ci_centre`` and why: :mod:`fairness_evals.centres`),
        its ``_coverage`` (package convention 1) when they carry that, and, for an undefined value, why
        (:meth:`nan_reason`)."""
        metrics = self.results.get(task, {})
        has_interval = f"{name}_ci_low" in metrics
        low = self.metric(task, f"{name}_ci_low") if has_interval else None
        high = self.metric(task, f"{name}_ci_high") if has_interval else None
        source = self.source_of(task, name)
        value = self.metric(task, name)
        coverage = self.metric(task, f"{name}_coverage") if f"{name}_coverage" in metrics else None
        reason = self.nan_reason(task, name) if self.has(task) and math.isnan(value) else ""
        if math.isinf(value) and coverage is not None:  # a headline score (package convention 1) is never infinite
            reason = "infinite in the results: not a score"
        if not reason and not math.isnan(value):
            reason = self.position_mark(task, name)
        if reason:
            note = f"{reason}. {note}" if note else reason
        statistic = centres.declared(task, name) if has_interval else None
        drawn = low is not None and high is not None and not (math.isnan(low) or math.isnan(high))
        interval = (statistic.name, statistic.interval.method) if statistic and statistic.interval and drawn else None
        beside = centres.why(task, name, metrics, lambda v: shown(v, scale, digits)) if has_interval else ""
        if beside:
            note = f"{beside}. {note}" if note else beside
        centre = self.metric(task, f"{name}{centres.CENTRE}") if beside else None
        return number(
            value, low, high, note=note, scale=scale, source=source, n=n, digits=digits, coverage=coverage,
            reason=reason, centre=centre, interval=interval,
        )  # fmt: skip

    def denominator(self, task: str, name: str) -> str:
        """``n = 90 of 90``: the metric's denominator (``<name>_counted``, the inputs that counted) of its inputs
        (``<name>_inputs``), where the results carry both; "" otherwise."""
        counted, inputs = self.metric(task, f"{name}_counted"), self.metric(task, f"{name}_inputs")
        if math.isnan(counted) or math.isnan(inputs):
            return ""
        return f"n = {counted:.0f} of {inputs:.0f}"

    def position_mark(self, task: str, name: str) -> str:
        """Why a number the task kept is not a result: its answers follow the option position
        (:func:`fairness_evals.position.finding`) and ``name`` is one of the scores that finding nulls unless a
        setting keeps them; "" otherwise."""
        from fairness_evals import position

        found = position.finding(self.results.get(task, {}))
        return f"not a result, kept for study: {found}" if found and name in position.sensitive_of(task) else ""

    def nan_reason(self, task: str, name: str) -> str:
        """Why ``name`` is undefined, as far as the results tell: a recorded ``<name>_reason`` text, else its
        coverage against the task's minimum (``*_min_coverage`` / ``fairlens_min_judged`` task metadata, or a
        recorded ``min_coverage``), else "" (the run's warning says why)."""
        metrics = self.results.get(task, {})
        if name not in metrics:
            return "not in the results"
        value = metrics[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            shown = repr(value) if isinstance(value, (str, bool)) else type(value).__name__
            return f"not a number in the results: {shorten(shown, 60)}"
        recorded = self.nulls.get(task, {}).get(name) or metrics.get(f"{name}_reason")
        if isinstance(recorded, str) and recorded.strip():
            return recorded.strip()
        coverage = self.metric(task, f"{name}_coverage")
        if f"{name}_coverage" not in metrics:
            return ""
        if math.isnan(coverage) or coverage == 0:
            return "withheld: no input counted (coverage 0)"
        minimum, key = self.min_coverage(task)
        if minimum is not None and coverage < minimum:
            return f"withheld: coverage {share(coverage)} is below the minimum {share(minimum)} ({key})"
        return ""

    def min_coverage(self, task: str) -> tuple[float | None, str]:
        """The task's minimum coverage and where it was set: its task metadata (the key), else the ``min_coverage``
        its results record; ``(None, "")`` when neither is a finite number. ``check`` and the report read it here."""
        meta = self.metadata(task)
        for key in coverage_settings():
            value = meta.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                return float(value), key
        recorded = self.results.get(task, {}).get("min_coverage")
        if isinstance(recorded, (int, float)) and not isinstance(recorded, bool) and math.isfinite(recorded):
            return float(recorded), "min_coverage"
        return None, ""

    def metric(self, task: str, name: str) -> float:
        """A numeric metric, NaN when the task or metric is absent or not a number."""
        value = self.results.get(task, {}).get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return math.nan
        return float(value)

    def has(self, task: str) -> bool:
        return task in self.results

    def metadata(self, task: str) -> dict[str, Any]:
        meta = self.configs.get(task, {}).get("metadata", {})
        return meta if isinstance(meta, dict) else {}

    def records(self, task: str) -> list[tuple[str, list[Any]]] | None:
        """``(document id, record)`` of each answer of ``task`` in an Inspect log (every epoch's; read once:
        :meth:`fairness_evals.inspect.logs.LoggedTask.records`) or rebuilt from a score output's responses
        (:func:`load_score_output`); None for a harness run, whose records are in its samples file
        (:meth:`samples_file`), and for a score output's task without records."""
        if self.score_inputs is not None:
            return self._records.get(task)
        entry = self.logged.get(task)
        if entry is None:
            return None
        if task not in self._records:
            self._records[task] = entry.records()
        return self._records[task]

    def samples_file(self, task: str) -> Path | None:
        """The ``--log_samples`` file of ``task`` written next to this results file, if there is one.

        lmms-eval writes ``<stamp>_samples_<task>.jsonl`` beside ``<stamp>_results.json``; lm-eval writes
        ``samples_<task>_<date>.jsonl`` beside ``results_<date>.json``.
        """
        name = self.source.name
        if name.endswith("_results.json"):
            candidate = self.source.with_name(f"{name.removesuffix('_results.json')}_samples_{task}.jsonl")
        elif name.startswith("results_"):
            candidate = self.source.with_name(
                f"samples_{task}_{name.removeprefix('results_').removesuffix('.json')}.jsonl"
            )
        else:
            return None
        try:
            return candidate if candidate.is_file() else None
        except OSError:  # a name too long for the file system: no such file was written
            return None


@dataclass
class ModelRuns:
    """Every run of one model, seen as one: each task is read from the (only) run that has it.

    :func:`load_runs` guarantees that no two runs of one model report the same task (or the same IRIS
    dimension score), so each number still comes from exactly one results file (``source_of``).
    """

    name: str
    runs: list[Run]

    def run_of(self, task: str) -> Run | None:
        return next((run for run in self.runs if run.has(task)), None)

    def has(self, task: str) -> bool:
        return self.run_of(task) is not None

    def metric(self, task: str, name: str) -> float:
        run = self.run_of(task)
        return run.metric(task, name) if run else math.nan

    def raw(self, task: str, name: str, default: Any = "–") -> Any:
        """A results value as stored (text or number), ``default`` when absent."""
        run = self.run_of(task)
        return run.results[task].get(name, default) if run else default

    def cell(self, task: str, name: str, note: str = "", scale: bool = True, n: str = "", digits: int = 2) -> Cell:
        run = self.run_of(task)
        if run is None:
            return number(math.nan, note=note or "not run", scale=scale, n=n, digits=digits)
        return run.cell(task, name, note=note, scale=scale, n=n, digits=digits)

    def source_of(self, task: str, name: str) -> str:
        run = self.run_of(task)
        return run.source_of(task, name) if run else ""

    def denominator(self, task: str, name: str) -> str:
        run = self.run_of(task)
        return run.denominator(task, name) if run else ""

    def metadata(self, task: str) -> dict[str, Any]:
        run = self.run_of(task)
        return run.metadata(task) if run else {}

    def n_samples(self, task: str) -> dict[str, int]:
        run = self.run_of(task)
        return run.n_samples.get(task, {}) if run else {}

    @property
    def sources(self) -> str:
        return "; ".join(f"{run.harness} {run.source}" for run in self.runs)


def models(runs: list[Run]) -> list[ModelRuns]:
    """The runs grouped by (disambiguated) model name, in the order of first appearance."""
    grouped: dict[str, list[Run]] = {}
    for run in runs:
        grouped.setdefault(run.model, []).append(run)
    return [ModelRuns(name, members) for name, members in grouped.items()]


def _is_results_file(path: Path) -> bool:
    name = path.name
    return name.endswith(".json") and (name.startswith("results") or name.endswith("_results.json"))


def _model_name(data: dict[str, Any]) -> str:
    config = data.get("config", {}) if isinstance(data.get("config"), dict) else {}
    args = config.get("model_args")
    pretrained = None
    if isinstance(args, dict):
        pretrained = args.get("pretrained") or args.get("model") or args.get("model_name")
    elif isinstance(args, str):
        for part in args.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model", "model_name") and value:
                pretrained = value.strip()
                break
    return _shown_model(str(pretrained or data.get("model_name") or config.get("model") or "unknown model"))


def _shown_model(name: str) -> str:
    """A model as the report names it: a local folder by its name, a hub id as is."""
    name = name.rstrip("/")
    return Path(name).name if Path(name).is_absolute() else name


def _log_model(entry: Any) -> str:
    """The model of an Inspect log as a harness run of it is named: a local model's folder (``-M model_path``), else
    Inspect's model name without its provider (``openai/gpt-4o-mini``: ``gpt-4o-mini``;
    ``openai-api/<service>/<model>``: ``<model>``; ``vllm/<hub id>``: the hub id)."""
    path = entry.model_args.get("model_path")
    if isinstance(path, str) and path:
        return _shown_model(path)
    provider, _, name = str(entry.model).partition("/")
    if provider == "openai-api":
        name = name.partition("/")[2] or name
    return _shown_model(name or str(entry.model))


def _strip(metrics: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in metrics.items():
        name, _, filt = key.partition(",")
        if filt in ("", "none"):
            out.setdefault(name, value)
    return out


def load_results_file(path: Path, *, detail: bool = True) -> Run:
    """The :class:`Run` of one results file, completed by its samples' detail (:func:`with_detail`; not with
    ``detail=False``: the results file alone); an unreadable or malformed file is a :class:`ReportInputError`
    naming the file and what is wrong with it."""
    from fairness_evals import detail

    try:  # the harnesses write NaN as a bare NaN: read it (but strict UTF-8, and numbers a reader can hold)
        text = jsonio.read_text(path, "results file")
    except ValueError as error:  # unreadable, or not UTF-8
        message = str(error)
        raise ReportInputError(message if message.startswith(str(path)) else f"{path}: {message}") from None
    try:
        data = jsonio.loads_line(text, str(path), allow_nan=True)
    except ValueError as error:
        raise ReportInputError(
            f"{path}: not a readable results file ({str(error).removeprefix(f'{path}: ')})"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ReportInputError(f"{path}: not an lm-eval or lmms-eval results file (no 'results' table)")
    for name in ("groups", "configs", "n-samples", "config"):
        if data.get(name) is not None and not isinstance(data[name], dict):
            raise ReportInputError(
                f"{path}: malformed results file: '{name}' is a {type(data[name]).__name__}, expected an object"
            )
    results = {task: _strip(m) for task, m in data["results"].items() if isinstance(m, dict)}
    for group, metrics in (data.get("groups") or {}).items():
        if isinstance(metrics, dict):
            results.setdefault(group, {}).update(_strip(metrics))
    config = data.get("config") or {}
    harness = "lmms-eval" if "lmms_eval_version" in data or path.name.endswith("_results.json") else "lm-eval"
    limit, offset = (_positive(config.get(key)) for key in ("limit", "offset"))
    run = Run(
        source=path,
        harness=harness,
        model=_model_name(data),
        date=str(data.get("date", "")),
        limit=limit,
        results=results,
        configs={k: v for k, v in (data.get("configs") or {}).items() if isinstance(v, dict)},
        n_samples={k: v for k, v in (data.get("n-samples") or {}).items() if isinstance(v, dict)},
        offset=int(offset or 0),
        shots=detail.shots(data),
    )
    if detail:
        with_detail(run)
    return run


def with_detail(run: Run) -> None:
    """``run`` completed with its detail: the harness prints each task's headline statistics only, and every other
    statistic, the reason for each null and the provenance come from the run's ``--log_samples`` files
    (:func:`fairness_evals.detail.detail`, what ``fairness-evals score`` writes). Without samples files the run keeps
    its headlines only; the harness's own values stand where both have one, and a task the harness did not score
    (``--predict_only``) gets no detail. A samples file that cannot be scored leaves the run its headlines and
    :attr:`Run.detail_problem` the line that names it (the report shows it; check counts it)."""
    from fairness_evals import detail
    from fairness_evals.harness_logging import silenced

    files = [f for task in run.results if is_ours(task) and (f := run.samples_file(task)) is not None]
    if not files:
        return
    try:
        with silenced(QUIET):
            found, _ = detail.detail([str(f) for f in files])
    except ValueError as error:
        run.detail_problem = (
            f"{run.source}: its samples cannot be scored, so only its headlines show: {shorten(str(error), 400)}"
        )
        return
    merge_detail(run, found)


def merge_detail(run: Run, found: Any) -> None:
    """``run``'s results completed by the :class:`fairness_evals.detail.Detail` ``found``: every statistic, the
    provenance and the nulls' reasons of each task the results hold, the results' own values standing where both
    have one; a task the harness did not score (``--predict_only``) gets none."""
    for task, metrics in found.results.items():
        reported = run.results.get(task, {})
        if task not in run.results or any(name.startswith("bypass") for name in reported):
            continue  # not in these results, or an lm-eval --predict_only run: it scored nothing
        merged = {**metrics, **reported}
        for key, value in found.provenance.get(task, {}).items():
            merged.setdefault(key, value)
        run.results[task] = merged
    run.nulls.update(found.nulls)


def load_log(path: Path) -> Run:
    """The :class:`Run` of one Inspect log (see the module docstring): each task's (a group's log: the group's, then
    each member's) headlines as the log holds them (NaN where it leaves one out), its settings as task metadata, its
    documents as ``n-samples``, and how it left documents out (:attr:`Run.limited`). A log that cannot be read is a
    :class:`ReportInputError` naming it; replies that cannot be scored leave the run its headlines and
    :attr:`Run.detail_problem` the line that names it."""
    from fairness_evals import detail
    from fairness_evals.harness_logging import silenced
    from fairness_evals.inspect.logs import NotOurs, read_log

    try:
        entries = read_log(path)
    except NotOurs as error:
        raise ForeignLog(str(error)) from None
    except ValueError as error:
        raise ReportInputError(str(error)) from None
    first = entries[0]
    run = Run(
        source=path,
        harness=first.harness,
        model=_log_model(first),
        date=first.run,
        limit=None,
        results={e.name: dict(e.metrics) for e in entries},
        configs={e.name: {"metadata": dict(e.settings)} for e in entries},
        n_samples={e.name: _log_counts(e) for e in entries},
        limited=first.limited,
        logged={e.name: e for e in entries},
    )
    try:
        with silenced(QUIET):
            found = detail.log_detail(entries)
    except ValueError as error:
        run.detail_problem = (
            f"{path}: its replies cannot be scored, so only its headlines show: {shorten(str(error), 400)}"
        )
        return run
    merge_detail(run, found)
    return run


def load_judge_output(path: Path) -> Run | None:
    """The :class:`Run` of a judge's output (a ``score_inputs`` benchmark a benchmark declares in its
    ``judged_outputs``, e.g. ``fairness-evals judge --out``; the harness is the command that made it), None for any
    other path: every statistic of its open-ended tasks as judged, the model and run of the samples it judged (a responses
    file: its name), each task's minimum coverage as task metadata (the ``--metadata`` the judge recorded, else the
    statistic's declared default: ``fairlens_min_judged`` 0.8) and, as the output records no reasons, each null's
    reason from its own counts when its coverage is below that minimum (how many answers declined or are unjudged)."""
    from fairness_evals import statistics
    from fairness_evals.run_files import SCORE_INPUTS

    if path.suffix != ".json" or not path.is_file():
        return None
    try:
        data = jsonio.loads_strict(jsonio.read_text(path, "judge output"))
    except (ValueError, RecursionError):
        return None  # not strict JSON: a harness results file (bare NaN) or not ours; its own reader says why
    recorded = data.get(SCORE_INPUTS) if isinstance(data, dict) else None
    from fairness_evals import benchmarks

    made_by = {name: by for b in benchmarks.registry().values() for name, by in b.judged_outputs.items()}
    if not isinstance(recorded, dict) or recorded.get("benchmark") not in made_by:
        return None
    settings = recorded.get("settings") if isinstance(recorded.get("settings"), dict) else {}
    metadata = settings.get("metadata") if isinstance(settings.get("metadata"), dict) else {}
    judged = [e for e in recorded.get("responses") or [] if isinstance(e, dict)]
    first = judged[0] if judged else {}
    model = first.get("model") or Path(str(first.get("path") or path)).stem
    results = {task: dict(m) for task, m in data.items() if task != SCORE_INPUTS and isinstance(m, dict)}
    date = str(first.get("run") or "")
    run = Run(source=path, harness=made_by[recorded["benchmark"]], model=_shown_model(str(model)), date=date, limit=None,
              results=results)  # fmt: skip
    for task, metrics in results.items():
        try:
            declared = statistics.task(task).statistics
        except KeyError:
            continue
        for coverage in (s.coverage for s in declared if s.coverage is not None and s.coverage.threshold):
            value = metadata.get(coverage.threshold)
            given = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            minimum = float(value) if given else coverage.default
            run.configs[task] = {"metadata": {coverage.threshold: minimum}}
            run.nulls[task] = _judged_nulls(metrics, coverage.threshold, minimum)
            break
    return run


def _judged_nulls(metrics: dict[str, Any], key: str, minimum: float | None) -> dict[str, str]:
    """Why each null of a judge output's task is null, from its own counts, when its coverage is below ``minimum``."""

    def known(name: str) -> float | None:
        value = metrics.get(name)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    coverage = next((known(n) for n in metrics if n.endswith("_coverage") and known(n) is not None), None)
    answers = known("answers")
    if coverage is None or answers is None or minimum is None or coverage >= minimum:
        return {}
    counts = [(known(name), what) for name, what in (("declined", "decline"), ("unjudged", "are unjudged"))]
    shown = ", ".join(f"{n:.0f} {what}" for n, what in counts if n)
    reason = f"withheld: coverage {coverage:.3f} is below {key} {minimum:g}" + (
        f" (of {answers:.0f} answers, {shown})" if shown else ""
    )
    return {name: reason for name, value in metrics.items() if value is None}


#: What ``fairness-evals score <run folder>`` records as its benchmark (:func:`fairness_evals.detail.write`).
RUN_SCORE = "run"


def score_modules() -> dict[str, str]:
    """Every benchmark's ``score_outputs``: the benchmark a score output records -> the module that reads it."""
    from fairness_evals import benchmarks

    return {name: module for b in benchmarks.registry().values() for name, module in b.score_outputs.items()}


def load_score_output(path: Path) -> Run | None:
    """The :class:`Run` of a score output (the JSON ``fairness-evals score <benchmark> --out FILE`` or ``judge --out``
    writes), None for any other path (a folder, a harness results file, a file that is not strict JSON).

    A score output records what it scored under ``"score_inputs"`` (:func:`fairness_evals.run_files.score_inputs`):
    the responses or samples files with their sha256, and the settings. Its tasks' metrics are as reported; their
    records (:meth:`Run.records`) are rebuilt from those files, each checked against its recorded hash, by the
    benchmark's own ``score`` path (the module its ``score_outputs`` names: ``compare_records``); the model is the
    output's file name (without ``.json``). An output that records no responses, the score of a harness run folder
    (which records none to score again), and responses that no longer score as recorded are a
    :class:`ReportInputError` saying what to give instead."""
    import importlib

    from fairness_evals.run_files import SCORE_INPUTS, recorded_files

    if not path.is_file() or path.suffix != ".json":
        return None
    try:
        data = jsonio.read_json(path, "score output")
    except ValueError:
        return None  # not strict JSON: a harness results file (bare NaN) or not ours; its own reader says why
    if not isinstance(data, dict) or "results" in data:
        return None
    if SCORE_INPUTS not in data:
        if any(isinstance(v, dict) and "judge_prompt_version" in v for v in data.values()):
            raise ReportInputError(
                f"{path}: a fairness-evals judge output that does not record the answers it judged ({SCORE_INPUTS}); "
                "judge them again with this version of fairness-evals, which records them (answers already in the "
                "judgement cache are not sent to the judge again), to compare it"
            )
        if data and all(isinstance(v, dict) for v in data.values()) and any(is_ours(str(k)) for k in data):
            raise ReportInputError(
                f"{path}: a score output that does not record its responses ({SCORE_INPUTS}); score them again with "
                "this version of fairness-evals, which records them, to compare it"
            )
        return None
    recorded = data[SCORE_INPUTS]
    benchmark = recorded.get("benchmark") if isinstance(recorded, dict) else None
    modules = score_modules()
    if benchmark == RUN_SCORE:
        raise ReportInputError(
            f"{path}: the score of a harness run folder, which records no responses to score again; compare the run "
            "folder itself, or the output of `fairness-evals score <benchmark> --responses <run folder>`"
        )
    if benchmark not in modules:
        raise ReportInputError(f"{path}: {SCORE_INPUTS} names no benchmark compare reads ({benchmark!r})")
    module = importlib.import_module(modules[benchmark])
    try:
        files = recorded_files(recorded, path)
    except ValueError as error:
        raise ReportInputError(str(error)) from None
    try:
        records = module.compare_records(recorded, files)
    except ValueError as error:
        raise ReportInputError(f"{path}: its responses no longer score as recorded: {error}") from None
    results = {task: metrics for task, metrics in data.items() if task != SCORE_INPUTS and isinstance(metrics, dict)}
    run = Run(source=path, harness="fairness-evals", model=path.name.removesuffix(".json"), date="", limit=None,
              results=results, score_inputs=recorded)  # fmt: skip
    run._records = {task: list(dict(found).items()) for task, found in records.items() if task in results}
    return run


def _log_counts(entry: Any) -> dict[str, int]:
    """An Inspect task's ``n-samples``: the documents run (``effective``) and, where the log counts them, the
    documents the task has (``original``)."""
    counts = {"effective": len(entry.samples) // max(int(entry.epochs), 1)}
    if entry.documents is not None:
        counts["original"] = int(entry.documents)
    return counts


def _positive(value: Any) -> float | None:
    """A ``config.limit`` or ``config.offset`` that limits: a finite number above 0 (lmms-eval writes -1 for none)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)


#: The names the harnesses give their results files: lm-eval ``results_<ISO date>.json``, lmms-eval
#: ``<%Y%m%d_%H%M%S>_results.json``. A broken file of such a name is an error; another ``results*.json`` found in a
#: folder (a ``results_summary.json`` of some other tool) that is not a results file is skipped with a note.
_HARNESS_RESULTS = re.compile(r"results_\d{4}-\d\d-\d\dT[\d\-.]+\.json|\d{8}_\d{6}_results\.json")


def run_files(path: Path) -> tuple[list[Path], list[Path]]:
    """(the results files, the Inspect logs) at ``path``: a file as given (a log when it is one, else a results
    file), or those below a folder."""
    from fairness_evals.inspect.logs import find_logs, is_inspect_log

    if path.is_file():
        return ([], [path]) if is_inspect_log(path) else ([path], [])
    return sorted(p for p in path.rglob("*.json") if _is_results_file(p)), find_logs([path])


#: What a folder without runs lacks (an error line's end).
NO_RUNS = "no lm-eval or lmms-eval results file (results_*.json, *_results.json) and no Inspect log (.eval)"


def load_runs(paths: list[str | Path]) -> list[Run]:
    """Every results file and Inspect log under the given folders (or files) that holds at least one task of ours.

    Raises :class:`ReportInputError` for a path that does not exist, a folder without results files or logs, a
    results file named as the harnesses name them that is broken, a log that cannot be read, a file given by name
    that is not a results file, or results of unrelated tasks only. Other files found in a folder that are not
    results files (a ``results_summary.json``) are skipped, each with one note on standard error.
    """
    runs: list[Run] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise ReportInputError(f"{path}: no such file or folder")
        files, logs = run_files(path)
        if not files and not logs:
            raise ReportInputError(f"{path}: {NO_RUNS}")
        found: list[Run] = []
        skipped: list[str] = []
        judged = load_judge_output(path)
        if judged is not None:
            runs.append(judged)
            continue
        for log in logs:
            try:
                found.append(load_log(log))
            except ForeignLog as error:
                if log == path:
                    raise
                skipped.append(str(error))
        for file in files:
            try:
                found.append(load_results_file(file))
            except ReportInputError as error:
                if file == path or _HARNESS_RESULTS.fullmatch(file.name):
                    raise
                skipped.append(str(error))
        for reason in skipped:
            print(f"fairness-evals report: skipped {reason}", file=sys.stderr)
        ours = [run for run in found if any(is_ours(task) for task in run.results)]
        if not ours:
            tasks = sorted({task for run in found for task in run.results})
            shown = ", ".join(shorten(task, 80) for task in tasks[:5]) + (", ..." if len(tasks) > 5 else "")
            raise ReportInputError(f"{path}: no fairness-evals task in its results (tasks: {shown or 'none'})")
        runs.extend(ours)
    _disambiguate(runs)
    for index, run in enumerate(runs):
        run.index = index
    return runs


def _keys(run: Run) -> set[str]:
    """What two runs of one model must not both report: our tasks and groups, and every benchmark's
    ``one_per_model`` metrics (IRIS's dimension scores: two runs that report one are two runs of one dimension)."""
    from fairness_evals import benchmarks

    unique = {m for b in benchmarks.registry().values() for m in b.one_per_model}
    keys = {task for task in run.results if is_ours(task)}
    keys |= {f"metric {m}" for metrics in run.results.values() for m in unique if m in metrics}
    return keys


def _stamp(run: Run) -> str:
    stamp = re.search(r"(\d{4}-?\d\d-?\d\d)[T_](\d\d)[-:]?(\d\d)[-:]?(\d\d)", run.source.name)
    if not stamp:
        return run.source.stem
    day = stamp.group(1)
    day = day if "-" in day else f"{day[:4]}-{day[4:6]}-{day[6:]}"
    return f"{day} {stamp.group(2)}:{stamp.group(3)}:{stamp.group(4)}"


def _disambiguate(runs: list[Run]) -> None:
    """Merge the runs of one model that cover different tasks; tell apart those that repeat a task.

    The runs of each model name are placed, in the order given, into the first group none of whose runs
    reports one of the same tasks (or IRIS dimension scores); each group is one model row of the report.
    When a model needs more than one group, each is named ``model @ <its first run's time stamp>`` (or
    file name, or path, whichever tells the groups apart).
    """
    by_model: dict[str, list[list[Run]]] = {}
    for run in runs:
        slots = by_model.setdefault(run.model, [])
        keys = _keys(run)
        for slot in slots:
            if not any(keys & _keys(other) for other in slot):
                slot.append(run)
                break
        else:
            slots.append([run])
    for model, slots in by_model.items():
        if len(slots) == 1:
            continue
        for namer in (
            _stamp,
            lambda r: r.source.stem,
            lambda r: f"{r.source.parent.name}/{r.source.name}",
            lambda r: str(r.source),
        ):
            labels = [namer(slot[0]) for slot in slots]
            if len(set(labels)) == len(labels):
                break
        else:
            labels = [f"run {i + 1}" for i in range(len(slots))]
        for slot, label in zip(slots, labels, strict=True):
            for run in slot:
                run.model = f"{model} @ {label}"
